"""`Scratch`: a throwaway copy of a repository's tree in the data directory — the only
place a sandboxed run may write. The user's tree is never written.

    with Scratch().copy(workspace) as copy:  # copy: Path of the copied tree
        sandbox.run(..., copy=copy)
    # gone

What is copied: regular files and directories the workspace lists as readable — files
on the secrets deny-list are not (so a run cannot read them either), nor version-control
folders, caches and virtual environments (`SKIPPED_DIRS`), nor a symlink that leaves the
tree. Bounded: a tree over `MAX_COPY_FILES` files or `MAX_COPY_BYTES` bytes is refused
(`ScratchTooLarge`). Copies a crash left behind are removed the next time one is made.
"""

from __future__ import annotations

import os
import shutil
import stat
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from diagnoser.workspace import Workspace
from repomap import data_home

SCRATCH_DIR = "verify/scratch"
"""Below the data directory."""
MAX_COPY_FILES = 50_000
MAX_COPY_BYTES = 1024**3
STALE_SECONDS = 6 * 3600
"""A copy older than this belongs to no live run (a run is bounded far below it)."""
SKIPPED_DIRS = frozenset({
    ".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".eggs",
})  # fmt: skip


class ScratchTooLarge(Exception):
    """The tree is over the copy's bounds."""


class Scratch:
    """Where throwaway copies are made."""

    def __init__(self, home: Path | None = None) -> None:
        self.top = (home or data_home()) / SCRATCH_DIR

    @contextmanager
    def copy(self, workspace: Workspace) -> Iterator[Path]:
        """A fresh copy of `workspace`'s tree, removed on exit whatever happened."""
        self._sweep()
        place = self.top / uuid.uuid4().hex
        tree = place / "repo"
        tree.mkdir(parents=True)
        try:
            _copy_tree(workspace, tree)
            yield tree
        finally:
            shutil.rmtree(place, ignore_errors=True)

    def _sweep(self) -> None:
        if not self.top.is_dir():
            return
        cutoff = time.time() - STALE_SECONDS
        for entry in self.top.iterdir():
            try:
                if entry.stat().st_mtime < cutoff:
                    shutil.rmtree(entry, ignore_errors=True)
            except OSError:
                continue


def _copy_tree(workspace: Workspace, target: Path) -> None:
    root = workspace.root
    files = size = 0
    for folder, dirs, names in os.walk(root):
        base = Path(folder)
        rel_dir = base.relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not _skipped(workspace, base / d,
                   f"{rel_dir}/{d}".lstrip("/"), is_dir=True)]  # fmt: skip
        for name in dirs:
            (target / rel_dir / name).mkdir()
        for name in names:
            rel = f"{rel_dir}/{name}".lstrip("/")
            source = base / name
            if _skipped(workspace, source, rel, is_dir=False):
                continue
            files += 1
            size += source.stat().st_size
            if files > MAX_COPY_FILES or size > MAX_COPY_BYTES:
                raise ScratchTooLarge(
                    f"the repository is over {MAX_COPY_FILES:,} files or "
                    f"{MAX_COPY_BYTES // 1024**2:,} MB: too large to copy for a run"
                )
            shutil.copyfile(source, target / rel, follow_symlinks=True)
            os.chmod(target / rel, source.stat().st_mode & 0o755 | 0o600)


def _skipped(workspace: Workspace, path: Path, rel: str, *, is_dir: bool) -> bool:
    """Denied, not a regular file or folder, or a symlink whose target leaves the tree."""
    if workspace.denied(rel, is_dir=is_dir):
        return True
    try:
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode):
            real = path.resolve(strict=True)
            if not real.is_relative_to(workspace.root) or workspace.denied(
                real.relative_to(workspace.root).as_posix(), is_dir=real.is_dir()
            ):
                return True
            mode = real.stat().st_mode
            if is_dir:
                return True  # walked through its real place; never twice
    except (OSError, RuntimeError):
        return True
    return not (stat.S_ISDIR(mode) if is_dir else stat.S_ISREG(mode))
