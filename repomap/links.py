"""Hard links to denied files: the part of the deny rule a file name cannot show.

`innocent.py` and `.env` can be two names of one inode; there is no target to resolve.
The walk records every listed file whose inode has more than one name (`st_nlink`, from
the stat it makes anyway). When the walk did not see all of an inode's names, the tree
is scanned for the rest — into ignored and denied folders too, never through a symlink —
comparing inode numbers (`DirEntry.inode()`, free from `readdir`); a listed file is denied
when another of its names is. Trees without hard links pay nothing, and the scan stops as
soon as every name is found (bounded by `MAX_LINK_SCAN_ENTRIES`). Names outside the tree
cannot be found this way: see `repomap.deny`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from repomap.constants import MAX_LINK_SCAN_ENTRIES, MAX_WALK_DEPTH
from repomap.deny import DenyList

Inode = tuple[int, int]
"""(st_dev, st_ino): what a file is, whatever its names."""


@dataclass(slots=True)
class Linked:
    """An inode with several names, shown by at least one listed file."""

    links: int
    """How many names the file system says it has (`st_nlink`)."""
    names: set[str] = field(default_factory=set)
    """Its names found so far (regular files; a symlink is not a name)."""
    shown_as: list[str] = field(default_factory=list)
    """Listed paths that show its content: its names and symlinks to it."""


@dataclass(frozen=True, slots=True)
class LinkCheck:
    denied: frozenset[str]
    """Listed paths whose content is also a denied file's."""
    complete: bool
    """False when the scan hit its cap before finding every name."""


def check_links(root: str, linked: dict[Inode, Linked], deny: DenyList) -> LinkCheck:
    """Which listed paths share their inode with a denied file in the tree under `root`."""
    pending = {inode: item for inode, item in linked.items() if len(item.names) < item.links}
    denied: set[Inode] = set()
    complete = _scan(root, pending, deny, denied) if pending else True
    paths = frozenset(path for inode in denied for path in linked[inode].shown_as)
    return LinkCheck(paths, complete)


def _scan(root: str, pending: dict[Inode, Linked], deny: DenyList, denied: set[Inode]) -> bool:
    """Find the other names of `pending` inodes; True when the scan did not hit its cap."""
    numbers = {ino for _, ino in pending}
    stack: list[tuple[str, int]] = [("", 0)]
    seen = 0
    while stack and pending:
        rel_dir, depth = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel_dir) if rel_dir else root) as listing:
                entries = list(listing)
        except OSError:
            continue
        seen += len(entries)
        if seen > MAX_LINK_SCAN_ENTRIES:
            return False
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth < MAX_WALK_DEPTH:
                        stack.append((rel, depth + 1))
                elif entry.inode() in numbers and entry.is_file(follow_symlinks=False):
                    _found(rel, entry.stat(follow_symlinks=False), pending, deny, denied)
            except OSError:
                continue
    return True


def _found(
    rel: str, info: os.stat_result, pending: dict[Inode, Linked], deny: DenyList, denied: set[Inode]
) -> None:
    inode = (info.st_dev, info.st_ino)
    item = pending.get(inode)
    if item is None:
        return
    item.names.add(rel)
    if deny.denies(rel):
        denied.add(inode)
        del pending[inode]  # decided: no need to find its other names
    elif len(item.names) >= item.links:
        del pending[inode]
