"""`Workspaces`: the configured repositories by name, each served as a `Workspace` of its
tree as it is now.

    workspaces = Workspaces.from_settings(settings)     # DIAGNOSER_REPOS
    workspaces.warm("demo")                             # build the index (blocking)
    workspace = workspaces.get("demo")                  # after a pull: a new Workspace

A `Workspace` caches its file list and index for its lifetime, so a long-running service
holding one would serve the tree of the day it started. The registry notes each tree's
state and hands out a new `Workspace` when it changed; the repo map's on-disk incremental
cache makes re-opening cost one walk and the changed files only. The state is
(`TreeState`):

- in a git checkout, the HEAD commit plus the modification time of the git index (read
  from `.git` directly, no git process: `diagnoser.commit`) — so a pull, a checkout or a
  commit shows, an edit that is neither committed nor staged does not;
- otherwise a hash of every listed file's path, size and mtime (one walk).

It is looked at no more than once every `REFRESH_SECONDS` per repository. Thread-safe:
the service calls it from worker threads; a lock per repository makes concurrent callers
wait for one check instead of walking the tree side by side.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from diagnoser.commit import git_dir, head_commit
from diagnoser.errors import UnknownRepo
from diagnoser.settings import Settings
from diagnoser.workspace import Workspace
from repomap import DenyList
from repomap.files import walk_files

REFRESH_SECONDS = 2.0
"""A repository's tree state is looked at most this often: a walk of a large tree costs
tens of milliseconds, and a report rarely follows a pull by less."""


@dataclass(frozen=True, slots=True)
class TreeState:
    """What a repository's tree looked like when last checked."""

    commit: str | None
    """HEAD's commit in a git checkout (None: not git, or no commit yet)."""
    signature: str
    """Changes whenever the tree does (as far as the check can see, see the module)."""


def tree_state(root: Path, deny: DenyList) -> TreeState:
    """The state of the tree at `root` now: git's HEAD and index, else a walk."""
    commit = head_commit(root)
    directory = git_dir(root)
    if commit is not None and directory is not None:
        try:
            index = (directory / "index").stat().st_mtime_ns
        except OSError:
            index = 0
        return TreeState(commit, f"git:{commit}:{index}")
    return TreeState(None, f"walk:{walk_signature(root, deny)}")


def walk_signature(root: Path, deny: DenyList) -> str:
    """A hash of (path, size, mtime) of every file the walk lists (what a workspace sees)."""
    digest = hashlib.blake2b(digest_size=16)
    for entry in walk_files(root, deny=deny).files:
        line = f"{entry.path}\0{entry.size}\0{entry.mtime_ns}\n"
        digest.update(line.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


@dataclass(slots=True)
class _Entry:
    root: Path
    lock: threading.Lock = field(default_factory=threading.Lock)
    workspace: Workspace | None = None
    state: TreeState | None = None
    checked: float = -math.inf


class Workspaces:
    """A registry of repositories by name (name → root), each a `Workspace` of its current
    tree. Names are fixed at construction; `Settings.repos` validated them."""

    def __init__(
        self,
        repos: Mapping[str, Path],
        settings: Settings,
        *,
        home: Path | None = None,
        refresh_seconds: float = REFRESH_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._entries = {name: _Entry(Path(root)) for name, root in repos.items()}
        self._settings = settings
        self._deny = settings.deny_list()
        self._home = home
        self._refresh = refresh_seconds
        self._clock = clock

    @classmethod
    def from_settings(cls, settings: Settings, *, home: Path | None = None) -> Workspaces:
        """The repositories of `settings.repos` (`DIAGNOSER_REPOS`)."""
        return cls(settings.repos, settings, home=home)

    def names(self) -> list[str]:
        """The configured names, sorted."""
        return sorted(self._entries)

    def root(self, name: str) -> Path:
        """Where repository `name` lives (as configured)."""
        return self._entry(name).root

    def get(self, name: str) -> Workspace:
        """The workspace of `name`'s current tree: the same object while the tree is
        unchanged, a new one (not yet warm) after it changed.

        Raises UnknownRepo for a name not configured, ToolError if the root is gone."""
        return self._current(name)[0]

    def state(self, name: str) -> TreeState:
        """`name`'s tree state as of the last check (checking again when it is due)."""
        return self._current(name)[1]

    def warm(self, name: str) -> Workspace:
        """Walk and index `name`'s current tree now (blocking: call it off the event loop)."""
        workspace = self.get(name)
        workspace.warm()
        return workspace

    def is_warm(self, name: str) -> bool:
        """Whether `name`'s current tree is walked and indexed (False again after a change)."""
        return self.get(name).is_warm

    def _entry(self, name: str) -> _Entry:
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(self.names()) or "none"
            raise UnknownRepo(f"no repository named {name!r}; configured: {known}") from None

    def _current(self, name: str) -> tuple[Workspace, TreeState]:
        entry = self._entry(name)
        with entry.lock:
            now = self._clock()
            due = now - entry.checked >= self._refresh
            if entry.workspace is None or entry.state is None or due:
                state = tree_state(entry.root, self._deny)
                if entry.workspace is None or state != entry.state:
                    entry.workspace = Workspace(entry.root, self._settings, home=self._home)
                entry.state, entry.checked = state, now
            return entry.workspace, entry.state
