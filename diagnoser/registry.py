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

A git repository (`Settings.git_repos`) is served from its mirror instead, at the commit
a report names (`get(name, revision)`: a SHA, a tag, a release version; the default ref
without one): a `Workspace` of that commit's read-only snapshot (`diagnoser.mirror`),
the last `KEPT_SNAPSHOTS` of each repository kept open.
"""

from __future__ import annotations

import hashlib
import math
import shutil
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from diagnoser.commit import git_dir, head_commit
from diagnoser.errors import UnknownRepo
from diagnoser.intake.report import ReportIn, revision
from diagnoser.mirror import Mirror
from diagnoser.settings import Settings
from diagnoser.workspace import Workspace
from repomap import DenyList, data_home
from repomap.cache import cache_dir_for
from repomap.files import walk_files

KEPT_SNAPSHOTS = 4
"""Workspaces of a git repository's commits kept open (each holds its index in memory)."""
MIRRORS = "git"
"""In the data directory: the git repositories' mirrors and snapshots."""
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


@dataclass(slots=True)
class _GitEntry:
    mirror: Mirror
    lock: threading.Lock = field(default_factory=threading.Lock)
    open: OrderedDict[str, Workspace] = field(default_factory=OrderedDict)
    """Workspaces by commit, least recently used first."""
    default: Workspace | None = None
    """The default ref's, as last resolved."""


class Workspaces:
    """A registry of repositories by name (name → root, or a git repository's mirror),
    each a `Workspace` of its current tree or of the commit asked for. Names are fixed at
    construction; `Settings.repos` and `Settings.git_repos` validated them."""

    def __init__(
        self,
        repos: Mapping[str, Path],
        settings: Settings,
        *,
        home: Path | None = None,
        refresh_seconds: float = REFRESH_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        git_repos: Mapping[str, str] | None = None,
    ) -> None:
        self._entries = {name: _Entry(Path(root)) for name, root in repos.items()}
        mirrors = (home or data_home()) / MIRRORS
        budget = settings.snapshot_budget_bytes
        self._git = {
            name: _GitEntry(Mirror(name, source, mirrors, budget_bytes=budget, evicted=self._gone))
            for name, source in (git_repos or {}).items()
        }
        self._settings = settings
        self._deny = settings.deny_list()
        self._home = home
        self._refresh = refresh_seconds
        self._clock = clock

    @classmethod
    def from_settings(cls, settings: Settings, *, home: Path | None = None) -> Workspaces:
        """The repositories of `settings.repos` and `settings.git_repos`
        (`DIAGNOSER_REPOS`)."""
        return cls(settings.repos, settings, home=home, git_repos=settings.git_repos)

    def names(self) -> list[str]:
        """The configured names, sorted."""
        return sorted([*self._entries, *self._git])

    def root(self, name: str) -> Path:
        """Where repository `name` lives: its folder, or its default ref's snapshot."""
        if name in self._git:
            return self.current(name).root
        return self._entry(name).root

    def pinned_revision(self, name: str, report: ReportIn) -> str | None:
        """The revision `report` is diagnosed at in `name` (`intake.report.revision`):
        a git repository's; None for a folder, diagnosed as its tree is now."""
        return revision(report) if name in self._git else None

    def source(self, name: str) -> str:
        """What `name` is read from, as shown to an operator (a URL without password)."""
        if name in self._git:
            return self._git[name].mirror.shown
        return str(self._entry(name).root)

    def get(self, name: str, revision: str | None = None) -> Workspace:
        """The workspace of `name`'s current tree: the same object while the tree is
        unchanged, a new one (not yet warm) after it changed. For a git repository, the
        workspace of the commit `revision` names (the default ref's without one, or with
        a note when it names none the mirror has); `revision` is ignored for a folder.

        Raises UnknownRepo for a name not configured, ToolError if the root is gone or
        the git repository cannot be read."""
        if name in self._git:
            return self._snapshot(self._git[name], revision)
        return self._current(name)[0]

    def current(self, name: str) -> Workspace:
        """`get(name)`, but for a git repository the default ref's workspace as last
        resolved, with no fetch (the request path and health checks must not wait on a
        remote); resolved now only the first time."""
        entry = self._git.get(name)
        if entry is not None and entry.default is not None:
            return entry.default
        return self.get(name)

    def state(self, name: str) -> TreeState:
        """`name`'s tree state as of the last check (checking again when it is due)."""
        if name in self._git:
            commit = self.current(name).commit
            return TreeState(commit, f"git:{commit}")
        return self._current(name)[1]

    def _snapshot(self, entry: _GitEntry, revision: str | None) -> Workspace:
        found = entry.mirror.resolve(revision)
        with entry.lock:
            workspace = entry.open.get(found.commit)
            if workspace is None or workspace.note != found.note:
                root = entry.mirror.snapshot(found.commit)
                seed = entry.mirror.recent(besides=root)
                settings = self._settings.for_repo(entry.mirror.name)
                workspace = Workspace(
                    root, settings, home=self._home, commit=found.commit, note=found.note,
                    seed=seed,
                )  # fmt: skip
                entry.open[found.commit] = workspace
            entry.open.move_to_end(found.commit)
            while len(entry.open) > KEPT_SNAPSHOTS:
                entry.open.popitem(last=False)
            if revision is None:
                entry.default = workspace
            return workspace

    def warm(self, name: str) -> Workspace:
        """Walk and index `name`'s current tree now (blocking: call it off the event loop)."""
        workspace = self.get(name)
        workspace.warm()
        return workspace

    def is_warm(self, name: str) -> bool:
        """Whether `name`'s current tree is walked and indexed (False again after a change;
        for a git repository, its default ref's as last resolved)."""
        entry = self._git.get(name)
        if entry is not None:
            return entry.default is not None and entry.default.is_warm
        return self.get(name).is_warm

    def _gone(self, snapshot: Path) -> None:
        """A snapshot was evicted: its index cache goes with it."""
        shutil.rmtree(cache_dir_for(snapshot.resolve(), self._home), ignore_errors=True)

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
                    entry.workspace = Workspace(
                        entry.root, self._settings.for_repo(name), home=self._home
                    )
                entry.state, entry.checked = state, now
            return entry.workspace, entry.state
