"""What the caller wants the map to centre on: files, lines in them, and identifiers.

Pure: raw strings (`django/db/models/query.py`, `query.py:248`, `QuerySet.filter`,
`_fetch_all`) are resolved against the repository's file list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from repomap.languages import language_for

_LINE_SUFFIX = re.compile(r"^(?P<path>.+?):(?P<line>\d+)(?::\d+)?$")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class Focus:
    files: frozenset[str] = frozenset()
    """Repo-relative paths the caller named."""
    lines: dict[str, frozenset[int]] = field(default_factory=dict)
    """Lines named in those files (stack frames): their enclosing definitions are shown."""
    idents: frozenset[str] = frozenset()
    """Bare identifiers the caller named (`QuerySet.filter` contributes both parts)."""

    def __bool__(self) -> bool:
        return bool(self.files or self.idents)


def resolve_focus(items: Iterable[str], files: Iterable[str]) -> Focus:
    """Sort each item into a file (by exact path or unique path suffix), a line, or identifiers."""
    known = list(files)
    by_path = set(known)
    found_files: set[str] = set()
    lines: dict[str, set[int]] = {}
    idents: set[str] = set()
    for raw in items:
        item = raw.strip().replace("\\", "/")
        if not item:
            continue
        line = None
        matched = _LINE_SUFFIX.match(item)
        if matched:
            item, line = matched["path"], int(matched["line"])
        path = _match_path(item, by_path, known)
        if path is not None:
            found_files.add(path)
            if line is not None:
                lines.setdefault(path, set()).add(line)
        elif "/" in item or language_for(item):
            idents.update(_IDENT.findall(PurePosixPath(item).stem))  # an unknown file: its stem
        else:
            idents.update(_IDENT.findall(item))
    return Focus(
        files=frozenset(found_files),
        lines={path: frozenset(found) for path, found in lines.items()},
        idents=frozenset(idents),
    )


def _match_path(item: str, by_path: set[str], known: list[str]) -> str | None:
    """The repo file `item` names: exactly, as a tail of it (an absolute frame path),
    or by a tail of its own (`models/query.py`)."""
    item = item.removeprefix("./")
    if item in by_path:
        return item
    if "/" not in item and "." not in item:
        return None  # a bare word is an identifier, not a file
    tail = "/" + item.lstrip("/")
    inside = [path for path in known if tail.endswith("/" + path)]
    if inside:
        return max(inside, key=len)  # the longest repo path the frame path ends with
    partial = [path for path in known if ("/" + path).endswith(tail)]
    return min(partial, key=len) if partial else None  # the least nested, the likeliest
