"""Which files of a repository the map covers.

Walks the tree without following directory symlinks (so no loops, and nothing outside
the root), honours every `.gitignore` on the way and `.git/info/exclude` as git does
(`repomap.gitignore`: a deeper file overrides its parents, `!` re-includes, a folder git
excludes is not entered) plus the default ignores in `constants`, and stats each file
once. The secrets deny-list (`repomap.deny`) is applied here, so everything built on the
walk obeys it: denied folders are not entered, denied files, symlinks to them (by the
link's path and by its target) and hard links to them (`repomap.links`) are left out,
silently — listing a secret's name would only invite a reader to ask for it. Names that
are not valid UTF-8 are skipped with a warning (nothing downstream could print, match or
cache them). Content checks (binary, minified, size) happen when a file is read for
parsing, in `build`.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from repomap.constants import DEFAULT_IGNORED_DIRS, MAX_WALK_DEPTH, MINIFIED_SUFFIXES
from repomap.deny import DenyList, is_utf8
from repomap.errors import InvalidRepoError
from repomap.gitignore import Rules, ignore_verdict
from repomap.languages import language_for
from repomap.links import Inode, Linked, check_links

NOT_UTF8 = "file name is not valid UTF-8"
LINKS_UNCHECKED = "too many files to check every hard link against the deny-list"


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One file found by the walk."""

    path: str
    """Repo-relative, `/`-separated."""
    size: int
    mtime_ns: int
    language: str | None
    """None for files the map has no grammar for."""
    target: str | None = None
    """For a symlink (always to a file inside the root): the repo-relative real path."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A path left out of the map, and why (shown in the map's warnings section)."""

    path: str
    reason: str


@dataclass(slots=True)
class WalkResult:
    files: list[FileEntry] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    """Folders not entered because an ignore rule or the deny-list excludes them (not the
    default ignored folders): `repomap.coverage` counts what they hold."""
    excluded: int = 0
    """Files in a mapped language left out by an ignore rule or the deny-list."""


_Ignore = tuple[str, Rules]
"""An ignore file's repo-relative folder ("" for the root) and its patterns."""


def resolve_root(path: str | os.PathLike[str]) -> Path:
    """The absolute repository root, or InvalidRepoError saying what is wrong with it."""
    root = Path(path).expanduser()
    if not root.exists():
        raise InvalidRepoError(f"no such directory: {path}")
    if not root.is_dir():
        raise InvalidRepoError(f"not a directory (give the repository's folder): {path}")
    if not os.access(root, os.R_OK | os.X_OK):
        raise InvalidRepoError(f"cannot read directory: {path}")
    resolved = root.resolve()
    if not is_utf8(str(resolved)):  # the cache is keyed by it, and every message shows it
        raise InvalidRepoError(
            f"the repository's path is not valid UTF-8: {escaped(str(resolved))}"
        )
    return resolved


def walk_files(
    root: Path, *, mapped_only: bool = False, deny: DenyList | None = None
) -> WalkResult:
    """Every non-ignored, non-denied regular file under `root` (sorted), and what was skipped.

    With `mapped_only`, only files in a language the map parses (the others are not
    even stat-ed: most of a large tree is docs, data and assets). `deny` defaults to
    the default deny-list; `DenyList(())` denies nothing.
    """
    result = WalkResult()
    walk = _Walk(root, mapped_only, DenyList.default() if deny is None else deny, result)
    _walk(walk, "", _info_exclude(root, result), 0)
    if walk.linked:
        check = check_links(str(root), walk.linked, walk.deny)
        if check.denied:
            result.files = [f for f in result.files if f.path not in check.denied]
        if not check.complete:
            result.skipped.append(Skipped(".", LINKS_UNCHECKED))
    result.files.sort(key=lambda f: f.path)
    result.skipped.sort(key=lambda s: s.path)
    return result


def escaped(path: str) -> str:
    """`path` printable: bytes that are not UTF-8 shown as `\\xff`."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


@dataclass(frozen=True, slots=True)
class _Walk:
    root: Path
    mapped_only: bool
    deny: DenyList
    out: WalkResult
    linked: dict[Inode, Linked] = field(default_factory=dict)
    """Listed files whose inode has other names (hard links), for `links.check_links`."""

    def add(self, entry: FileEntry, info: os.stat_result, *, name: bool) -> None:
        """List `entry`; `info` is the stat of its content (the target, for a symlink)."""
        self.out.files.append(entry)
        if info.st_nlink > 1:
            item = self.linked.setdefault((info.st_dev, info.st_ino), Linked(info.st_nlink))
            item.shown_as.append(entry.path)
            if name:
                item.names.add(entry.path)


def _walk(walk: _Walk, rel_dir: str, ignores: list[_Ignore], depth: int) -> None:
    # Plain strings, not Path objects: this runs once per directory of a large tree.
    out = walk.out
    directory = os.path.join(walk.root, rel_dir) if rel_dir else str(walk.root)
    if depth > MAX_WALK_DEPTH:
        out.skipped.append(Skipped(rel_dir, "nested too deep"))
        return
    try:
        with os.scandir(directory) as listing:
            entries = list(listing)  # unsorted: the result is sorted once, at the end
    except OSError as exc:
        out.skipped.append(Skipped(rel_dir or ".", f"cannot list directory: {exc.strerror}"))
        return
    if any(entry.name == ".gitignore" for entry in entries):
        ignores = _with_gitignore(directory, rel_dir, ignores, out)
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        if not is_utf8(entry.name):  # the folder's own name was checked on the way down
            out.skipped.append(Skipped(escaped(rel), NOT_UTF8))
            continue
        try:
            if entry.is_symlink():
                _add_symlink(walk, entry, rel, ignores)
            elif entry.is_dir(follow_symlinks=False):
                if is_default_ignored_dir(entry.name):
                    continue
                if ignore_verdict(rel, is_dir=True, stack=ignores) or walk.deny.matches(
                    rel, is_dir=True
                ):
                    out.pruned.append(rel)
                else:
                    _walk(walk, rel, ignores, depth + 1)
            elif entry.is_file(follow_symlinks=False):
                _add_file(walk, entry, rel, ignores)
        except OSError as exc:
            out.skipped.append(Skipped(rel, f"cannot stat: {exc.strerror}"))


def _add_file(walk: _Walk, entry: os.DirEntry[str], rel: str, ignores: list[_Ignore]) -> None:
    language = language_for(rel)
    if not (language or not walk.mapped_only) or entry.name.endswith(MINIFIED_SUFFIXES):
        return
    if ignore_verdict(rel, is_dir=False, stack=ignores) or walk.deny.matches(rel):
        walk.out.excluded += language is not None
        return
    st = entry.stat(follow_symlinks=False)
    # Interned: one string per path across the walks, the cache and the indexes.
    walk.add(FileEntry(sys.intern(rel), st.st_size, st.st_mtime_ns, language), st, name=True)


def _add_symlink(walk: _Walk, entry: os.DirEntry[str], rel: str, ignores: list[_Ignore]) -> None:
    """File symlinks that stay inside the root are mapped, unless their path or their
    target is denied; directory symlinks never are."""
    root, out, language = walk.root, walk.out, language_for(rel)
    if (walk.mapped_only and not language) or walk.deny.matches(rel):
        return
    try:
        target = Path(entry.path).resolve(strict=True)
    except (OSError, RuntimeError):
        out.skipped.append(Skipped(rel, "broken or looping symlink"))
        return
    if not target.is_relative_to(root):
        out.skipped.append(Skipped(rel, "symlink points outside the repository"))
        return
    real = target.relative_to(root).as_posix()
    if not is_utf8(real):
        out.skipped.append(Skipped(rel, f"symlink target's {NOT_UTF8}"))
        return
    st = target.stat()
    if (
        stat.S_ISREG(st.st_mode)
        and not _ignored_file(entry.name, rel, ignores)
        and not walk.deny.denies(real)  # the target's folders were not necessarily walked
    ):
        walk.add(FileEntry(rel, st.st_size, st.st_mtime_ns, language, target=real), st, name=False)


def _info_exclude(root: Path, out: WalkResult) -> list[_Ignore]:
    """The repository's `.git/info/exclude` (patterns as in the root `.gitignore`, at the
    lowest precedence), when it has one."""
    rules = _read_ignore(os.path.join(root, ".git", "info", "exclude"), ".git/info/exclude", out)
    return [] if rules is None else [("", rules)]


def _with_gitignore(
    directory: str, rel_dir: str, ignores: list[_Ignore], out: WalkResult
) -> list[_Ignore]:
    rel = f"{rel_dir}/.gitignore".lstrip("/")
    rules = _read_ignore(os.path.join(directory, ".gitignore"), rel, out)
    return ignores if rules is None else [*ignores, (rel_dir, rules)]


def _read_ignore(path: str, rel: str, out: WalkResult) -> Rules | None:
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return Rules.parse(handle.read().splitlines())
    except OSError as exc:
        out.skipped.append(Skipped(rel, f"unreadable: {exc}"))
        return None


def is_default_ignored_dir(name: str) -> bool:
    """A folder never entered, whatever the ignore rules say (`DEFAULT_IGNORED_DIRS`)."""
    return name in DEFAULT_IGNORED_DIRS or name.startswith(".") or name.endswith(".egg-info")


def _ignored_file(name: str, rel: str, ignores: list[_Ignore]) -> bool:
    if name.endswith(MINIFIED_SUFFIXES):
        return True
    return ignore_verdict(rel, is_dir=False, stack=ignores)
