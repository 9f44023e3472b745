"""Copies of code whose implementation is elsewhere, by their paths.

Vendored and minified code, generated code, single-header and amalgamated builds,
TypeScript declarations, bundles, and a package's build output beside the `src/` it was
built from. Nobody fixes a bug there: the candidate ranking (`diagnoser.candidates`) puts
them after the implementation and the map's PageRank (`rank`) gives them little of the
rank their uses would send (COPY_EDGE_WEIGHT) — a single header that defines every
name would otherwise collect the rank of all of them. They stay in both as context.
"""

from __future__ import annotations

import re
from collections.abc import Collection

_VENDORED = re.compile(
    r"(?:^|/)(?:vendor|vendored|_vendor|third_party|thirdparty|externals?|bower_components|"
    r"node_modules)/"
    r"|(?:^|/)static/(?:[^/]+/)*lib/"
    r"|[.-]min\.(?:js|css|mjs)$"
    r"|-v?\d+\.\d+(?:\.\d+)*(?:[.-][\w]+)?\.(?:js|css|mjs)$"
    r"|(?:^|/)[A-Za-z][\w.-]*-v?\d+(?:\.\d+)+(?:[-.+~]?(?:rc|alpha|beta|dev|post)\.?\d*)?/"
)
"""Code copied in from elsewhere: vendor folders, minified or versioned bundles
(`jquery-3.5.1.js`, `d3.min.js`), a static folder's `lib/`, and a folder named for a
release (`include/cargo/rustversion-1.0.14/`, `pyo3-build-config-0.20.2/`, `zlib-1.2.13/`:
an unpacked copy of someone's package; `log4j-1.2-api/` does not end with its version and
is a module)."""

_COPY = re.compile(
    r"(?:^|/)(?:single_include|amalgamation|amalgamated|dist)/"
    r"|[._-]amalgamat(?:ed|ion)\.\w+$"
    r"|\.d\.[cm]?ts$|\.pyi$"
    r"|\.pb(?:\.gw)?\.(?:go|cc|h|c)$|_pb2(?:_grpc)?\.pyi?$"
    r"|[._-]generated\.\w+$|(?:^|/)zz_generated[^/]*$|\.(?:g|freezed)\.dart$"
    r"|^(?:contrib|external)/|(?:^|/)deps/"
)
"""A copy of code whose source is elsewhere: single-header and amalgamated builds
(`single_include/`, `sqlite3_amalgamation.c`, `amalgamation/`), TypeScript declarations
(`.d.ts`, `.d.cts`, `.d.mts`) and Python stubs (`.pyi`: a native module's `_core.pyi`
declares what its C or Rust code defines), `dist/` bundles, generated code (`*.pb.go`,
`*_pb2.py`, `*_generated.go`, `zz_generated.deepcopy.go`, `*.g.dart`), and contributed or
fetched code in a root `contrib/` or `external/` or any `deps/` (a nested `contrib/` is
product code: `django/contrib/admin/`). Files whose header says they are generated ("Code
generated … DO NOT EDIT") are not even indexed (`repomap.constants.GENERATED_MARKERS`)."""
_BUILD_DIR = re.compile(r"(?:^|/)(?:lib|build|out|es|esm|cjs|umd)/")
"""Folders a package's build writes its output to. A file there is a copy only when the
same file (by name without extension) exists under `src/` beside the folder: an npm
package's `lib/index.js` compiled from `src/index.ts`; a `lib/` without a `src/` twin is
the implementation (Ruby's `lib/`, matplotlib's `lib/matplotlib/`)."""
_COMPILED = re.compile(r"\.[cm]?js$")
"""JavaScript that a package may have compiled from a `src/` twin at its root."""
_EXTENSIONS = re.compile(r"(?:\.d)?\.[A-Za-z0-9]+$")


def is_copy(path: str, stems: Collection[str] = ()) -> bool:
    """A copy of code whose implementation is elsewhere (or not ours): vendored
    (`is_vendored`), generated, amalgamated, declarations, bundles (`_COPY`), or a build
    output whose source twin is in `stems` (`source_stems`: `lib/x.js` beside
    `src/x.ts`)."""
    if is_vendored(path) or _COPY.search(path):
        return True
    if _COMPILED.search(path) and f"src/{_stem(path)}" in stems:
        return True  # zod's `v3/types.js` beside `src/v3/types.ts`
    return any(
        f"{path[: m.start()]}{'/' if m.start() else ''}src/{_stem(path[m.end() :])}" in stems
        for m in _BUILD_DIR.finditer(path)
    )


def is_vendored(path: str) -> bool:
    """Code copied in from elsewhere, by its path (see `_VENDORED`)."""
    return bool(_VENDORED.search(path))


def source_stems(files: Collection[str]) -> frozenset[str]:
    """Files under a `src/` folder, without their extensions (`pkg/src/x`)."""
    return frozenset(_stem(path) for path in files if path.startswith("src/") or "/src/" in path)


def _stem(path: str) -> str:
    return _EXTENSIONS.sub("", path)
