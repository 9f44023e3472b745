"""The checked-out commit of a repository, read from `.git` directly: no git process,
nothing of the repository run.

    head_commit(root)   # "3f2a…" (40 or 64 hex digits), or None
    git_dir(root)       # the folder holding HEAD and index (a worktree's own), or None

Handles a `.git` folder and a `.git` file (`gitdir: …`, as in worktrees and submodules,
with refs in the `commondir`), loose and packed refs, and a detached HEAD. The files are
the repository's, so not trusted: each is opened non-blocking and must be a small regular
file (a FIFO named HEAD cannot hang us), a ref must look like `refs/…` without `..`, and
only a hex object name is ever returned (a HEAD pointing at another file cannot leak it).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

MAX_GIT_FILE_BYTES = 64 << 20
"""`packed-refs` of a very large repository is tens of MB; anything bigger is not git's."""
_OBJECT_NAME = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1 or SHA-256
_REF = re.compile(r"refs/[^\s\x00]+")
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def git_dir(root: Path) -> Path | None:
    """The git directory of the checkout at `root`: `.git`, or where a `.git` file points."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    text = read_small(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:") :].strip())
    target = target if target.is_absolute() else root / target
    return target if target.is_dir() else None


def head_commit(root: Path) -> str | None:
    """The commit HEAD names, or None (not a git checkout, no commit yet, unreadable)."""
    directory = git_dir(root)
    head = read_small(directory / "HEAD") if directory else None
    if directory is None or head is None:
        return None
    head = head.strip()
    if not head.startswith("ref: "):
        return _object_name(head)
    ref = head[len("ref: ") :].strip()
    if not _REF.fullmatch(ref) or ".." in ref.split("/"):
        return None
    for base in dict.fromkeys((directory, _common_dir(directory))):
        loose = read_small(base / ref)
        if loose is not None:
            return _object_name(loose.strip())
    packed = read_small(_common_dir(directory) / "packed-refs") or ""
    for line in packed.splitlines():
        name, _, packed_ref = line.partition(" ")
        if packed_ref == ref:
            return _object_name(name)
    return None


def read_small(path: Path) -> str | None:
    """A small regular file's text; None for anything else (missing, FIFO, too large)."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_GIT_FILE_BYTES:
            return None
        try:
            return handle.read(MAX_GIT_FILE_BYTES).decode("utf-8", errors="replace")
        except OSError:
            return None


def _common_dir(directory: Path) -> Path:
    """Where a worktree's shared refs live (`commondir`), else the git directory itself."""
    common = read_small(directory / "commondir")
    if common is None or not common.strip():
        return directory
    target = Path(common.strip())
    return target if target.is_absolute() else directory / target


def _object_name(text: str) -> str | None:
    return text if _OBJECT_NAME.fullmatch(text) else None
