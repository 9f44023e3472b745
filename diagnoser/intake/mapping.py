"""Frames → repository files and their enclosing definitions.

A frame maps by the longest path suffix it shares with a repository file (so
`/home/u/.venv/…/myapp/views.py` finds `src/myapp/views.py`), else by its dotted module
(`myapp.views` → `myapp/views.py`, Java `com.acme.Cart` → `…/com/acme/Cart.java`). A
frame that gives only a bare file name (JVM: `Cart.java`) maps by its module first, so the
package picks between same-named files in different packages.
Library and runtime frames (site-packages, node_modules, the JDK, Go's runtime, Rust's
std, .NET's System.*, C's /usr/include, glibc and the sanitizer runtime) are not in-app
— unless the repository is that very package: a
`…/site-packages/django/db/models/query.py` frame maps when the whole part after
`site-packages/` is a repository path (diagnosing Django itself), or when it is filed
under one of the packages the repository's manifests name (`packages`: `node_modules/
axios/lib/x.js` → `lib/x.js` in axios, `…/pkg/mod/github.com/spf13/cobra@v1.6.1/
command.go`, `…/toml-0.5.9/src/de.rs`, `…/gems/rack-2.2.3/lib/rack/utils.rb`; in a monorepo
under that package's folder). A runtime-looking module (`tokio::…`, `kotlinx.…`) is in-app
when it is one of the repository's own (its crate, JVM group, Go module) or the repository
holds its whole path (`kotlinx/coroutines/Job.kt` for `kotlinx.coroutines.JobSupport`).
A frame that names no file at all (a stripped native build) maps by the function it
names, when exactly one repository file defines it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from diagnoser.intake.packages import NO_PACKAGES, Packages
from diagnoser.intake.report import Frame, MappedFrame
from repomap import Definition, MatchKind, SymbolIndex

LIBRARY_PATHS = re.compile(
    # separators are looked at, not consumed, so every marker of a path is found
    r"(?<![^/])(?:site-packages|dist-packages|node_modules|bower_components|vendor|"
    r"gems|\.cargo|rustc|go/src|pkg/mod|lib/python\d[\d.]*|Frameworks|"
    # C and C++: system headers and libraries, glibc's sources, the sanitizer runtime
    r"usr/include|usr/lib|sysdeps|compiler-rt|libstdc\+\+[\w.-]*|libc\.so[\d.]*)(?=/|$)"
    r"|^<[^>]*>$|^(?:node:|internal/|bits/)|^\[native code\]$"
)
"""Where installed or runtime code lives (paths are in `/` form by then)."""
LIBRARY_MODULES = re.compile(
    r"^(?:java|javax|jdk|sun|kotlin|kotlinx|android|androidx|com\.android|dalvik|"
    r"System|Microsoft|runtime|reflect|std|core|alloc|tokio)(?:\.|::|$)"
)
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://[^/]*")
_JVM_SOURCE = re.compile(r"\.(?:java|kt|kts|scala|groovy)$")
_VERSION = r"(?:v?\d[\w.+-]*|[0-9a-f]{7,40})"
"""How installers file a release beside its name: `cobra@v1.6.1`, `toml-0.5.9`,
`rack-2.2.3`, a git checkout's `rack-1a2b3c4`."""
MIN_DEFINED_NAME = 5
"""A frame without a file maps by the function it names only when the name is this long."""
_NAME = re.compile(r"[A-Za-z_][\w$]*")
_HEADERS = (".h", ".hh", ".hpp", ".hxx", ".h++")
_GO_ESCAPE = re.compile(r"!([a-z])")
"""The Go module cache spells an upper-case letter `!` + lower case (`!azure` = `Azure`)."""


@dataclass(frozen=True, slots=True)
class _Files:
    by_name: dict[str, list[str]]

    @classmethod
    def of(cls, files: Collection[str]) -> _Files:
        by_name: dict[str, list[str]] = {}
        for path in sorted(files):
            by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
        return cls(by_name)

    def by_suffix(self, path: str) -> str | None:
        """The repo file sharing the longest tail of components with `path` (ties: shortest)."""
        parts = [p for p in path.split("/") if p and p != "."]
        if not parts:
            return None
        best: tuple[int, int, str] | None = None
        for candidate in self.by_name.get(parts[-1], ()):
            shared = _shared_tail(candidate.split("/"), parts)
            key = (shared, -len(candidate), candidate)
            if best is None or key > best:
                best = key
        return best[2] if best else None

    def has(self, path: str) -> bool:
        return path in self.by_name.get(path.rsplit("/", 1)[-1], ())


def map_frames(
    frames: Sequence[Frame],
    files: Collection[str],
    index: SymbolIndex | None = None,
    packages: Packages = NO_PACKAGES,
) -> list[MappedFrame]:
    """Each frame with its repository file, enclosing definition and in-app verdict;
    `packages` are the repository's own (`diagnoser.intake.packages`)."""
    table = _Files.of(files)
    return [_map(frame, table, index, packages) for frame in frames]


def _map(frame: Frame, table: _Files, index: SymbolIndex | None, packages: Packages) -> MappedFrame:
    path = _clean(frame.file) if frame.file else ""
    # The last marker counts: `…/lib/python3.11/site-packages/django/…` → `django/…`.
    library = next(reversed(list(LIBRARY_PATHS.finditer(path))), None)
    if library:
        # Installed code is the repository's own only when the repository *is* that
        # package: the whole path after `site-packages/` must be a repository path.
        inside = path[library.end() :].lstrip("/")
        found = table.by_suffix(inside) if inside else None
        if found is None or not _is_package_path(found, inside):
            found = _own_installed(inside, packages, table)
        if found is None:
            return MappedFrame(frame=frame, unmapped_reason="library or runtime frame")
        return _located(frame, found, index)
    if (
        frame.module
        and LIBRARY_MODULES.match(frame.module)
        and not packages.owns_module(frame.module)
        and _by_module(frame, table, whole=True) is None
    ):
        return MappedFrame(frame=frame, unmapped_reason="library or runtime frame")
    if frame.in_app is False and not path:
        return MappedFrame(frame=frame, unmapped_reason="marked not in-app by the source")
    if frame.module and "/" not in path:
        # A bare file name (`NumberUtils.java`) says less than the frame's package does:
        # `org.apache.commons.lang.math.NumberUtils` picks …/lang/math/NumberUtils.java
        # over a same-named file in another package.
        repo_path = _by_module(frame, table) or (table.by_suffix(path) if path else None)
    else:
        repo_path = (table.by_suffix(path) if path else None) or _by_module(frame, table)
    if repo_path is None:
        return (None if path else _by_definition(frame, index)) or _unmapped(frame, path)
    return _located(frame, repo_path, index)


def _unmapped(frame: Frame, path: str) -> MappedFrame:
    reason = (
        f"no repository file matches {path or frame.module!r}"
        if (path or frame.module)
        else "the frame names no file or module"
    )
    return MappedFrame(frame=frame, unmapped_reason=reason)


def _by_definition(frame: Frame, index: SymbolIndex | None) -> MappedFrame | None:
    """The frame mapped onto the one repository file defining the function it names,
    for a frame without a file (a stripped native build: `#4 0x… in
    objecthandle_equal(QPDFObjectHandle) ()`). C and C++ headers count only when no
    source file defines it (their prototypes are definitions too); a name defined
    elsewhere as well, or shorter than MIN_DEFINED_NAME (`main`, `run`), says nothing."""
    function = (frame.function or "").strip()
    if index is None or len(function) < MIN_DEFINED_NAME or not _NAME.fullmatch(function):
        return None
    name = f"{frame.module}.{function}" if frame.module else function
    lookup = index.find(name.replace("::", "."))
    if lookup.how is not MatchKind.EXACT and lookup.how is not MatchKind.QUALIFIED:
        return None
    found: dict[str, Definition] = {}
    for symbol in lookup.matches:
        found.setdefault(symbol.path, symbol.definition)
    sources = {p: d for p, d in found.items() if not p.endswith(_HEADERS)}
    found = sources or found
    if len(found) != 1:
        return None
    ((path, definition),) = found.items()
    return MappedFrame(frame=frame, repo_path=path, symbol=definition.qualified, in_app=True)


def _own_installed(inside: str, packages: Packages, table: _Files) -> str | None:
    """The repository file an installed copy of one of its own packages stands for:
    `axios/lib/utils.js` → `lib/utils.js`, `registry/src/index…/toml-0.5.9/src/de.rs` →
    `src/de.rs` (in the package's folder), when that file exists."""
    parts = _GO_ESCAPE.sub(lambda m: m.group(1).upper(), inside).split("/")
    for package in sorted(packages.packages, key=lambda p: -len(p.name)):
        name = package.name.split("/")
        for start in range(len(parts) - len(name)):
            *head, last = parts[start : start + len(name)]
            if head == name[:-1] and re.fullmatch(
                rf"{re.escape(name[-1])}(?:[@-]{_VERSION})?", last
            ):
                rest = "/".join(parts[start + len(name) :])
                path = f"{package.folder}/{rest}" if package.folder else rest
                if table.has(path):
                    return path
    return None


def _is_package_path(found: str, inside: str) -> bool:
    """`found` ends with the whole installed path, and that path is more than a bare name."""
    return ("/" + found).endswith("/" + inside) and ("/" in inside or found == inside)


def _located(frame: Frame, repo_path: str, index: SymbolIndex | None) -> MappedFrame:
    symbol = None
    if index is not None and frame.line:
        definition = index.enclosing(repo_path, frame.line)
        symbol = definition.qualified if definition else None
    return MappedFrame(frame=frame, repo_path=repo_path, symbol=symbol, in_app=True)


def _by_module(frame: Frame, table: _Files, *, whole: bool = False) -> str | None:
    """`a.b.c` → `a/b/c.py` or `a/b/c/__init__.py`; Java `com.x.Y` + `Y.java` → `com/x/Y.java`.
    `whole`: the file's path must end with the module's whole path (the repository
    defines `java.util.ArrayList` itself: it is the JDK)."""
    if not frame.module:
        return None
    dotted = frame.module.replace("::", ".").strip(".")
    stem = dotted.replace(".", "/")
    file_name = _clean(frame.file).rsplit("/", 1)[-1] if frame.file else ""
    candidates = [f"{stem}.py", f"{stem}/__init__.py", f"{stem}.rb", f"{stem}.php"]
    if _JVM_SOURCE.search(file_name):  # the module is package.Class: swap the class for the file
        candidates.insert(0, f"{stem.rsplit('/', 1)[0]}/{file_name}")
    for candidate in candidates:
        found = table.by_suffix(candidate)
        parts = candidate.split("/")
        if found and _shared_tail(found.split("/"), parts) >= (
            len(parts) if whole else min(2, len(parts))
        ):
            return found
    return None


def _clean(path: str) -> str:
    """A frame path in `/` form without URL scheme and host, webpack prefix or `./`."""
    path = path.strip().replace("\\", "/")
    path = _SCHEME.sub("", path)
    path = re.sub(r"^webpack:/*(?:[^/]*/)?\.?/?", "", path)
    path = re.sub(r"[?#].*$", "", path)
    return path[:-1] if path.endswith((".pyc", ".pyo")) else path  # Python 2 tracebacks


def _shared_tail(a: list[str], b: list[str]) -> int:
    shared = 0
    for x, y in zip(reversed(a), reversed(b), strict=False):
        if x != y:
            break
        shared += 1
    return shared
