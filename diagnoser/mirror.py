"""A git repository the service reads from its own mirror, at the exact commit a report
names: `DIAGNOSER_REPOS=shop=https://git.example.com/shop.git` (or `file://…`, `ssh://…`,
`git@host:path`, a local bare repository; `#ref` after it names the default ref).

    mirror = Mirror("shop", "https://…/shop.git", home / "git")
    found = mirror.resolve("v1.2.3")      # a SHA, a prefix, a tag, a ref, a version…
    tree = mirror.snapshot(found.commit)  # a read-only tree of that commit

The mirror is a bare `git clone --mirror` in the data directory, fetched when a revision
it lacks is asked for and at most every `FETCH_SECONDS` for the default ref. A snapshot is
`git archive` of one commit unpacked into the data directory and made read-only: git
plumbing only, never a checkout, so neither the user's tree nor the mirror's refs are
written by a diagnosis. Snapshots are kept least-recently-used within a disk budget.

A revision comes from a report, so it is untrusted: only a short string of the
characters refs and versions use reaches git, after `--end-of-options`. Git never
prompts (`GIT_TERMINAL_PROMPT=0`): credentials come from the environment or a credential
helper, and a URL's password never appears in a message (`redact_url`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import stat
import subprocess
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from diagnoser.constants import MAX_REVISION_CHARS
from diagnoser.errors import ToolError
from diagnoser.redact import redact_url, scrub

log = logging.getLogger(__name__)
FETCH_SECONDS = 300.0
"""The default ref is fetched again when it was last fetched longer ago than this."""
FRUITLESS_FETCH_SECONDS = 30.0
"""After a fetch that did not find a revision a report named, revisions that are not
there are not fetched for again for this long: reports naming made-up releases (anyone
can send a webhook) cost one fetch per repository per interval, not one each."""
GIT_SECONDS = 600.0
"""A clone, fetch or archive taking longer is stopped (a hang guard)."""
_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/@+~^-]*")
"""What a SHA, a ref, a tag or a release version is made of (no `..`, checked apart)."""
_HEX = re.compile(r"[0-9a-f]{7,64}")
_URL = re.compile(r"[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:")
"""A URL git fetches from, or scp-like `user@host:path`."""
SIZE_FILE = ".size"
"""In a snapshot's folder: its size in bytes, written at creation (eviction reads it)."""


def is_git_source(value: str) -> bool:
    """Whether a `DIAGNOSER_REPOS` value names a git repository to mirror (a URL, or a
    local bare repository) rather than a folder to read as it is."""
    location = value.partition("#")[0]
    if _URL.match(location):
        return True
    path = Path(location).expanduser()
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


@dataclass(frozen=True, slots=True)
class Resolved:
    """The commit a diagnosis reads, and what was asked for."""

    commit: str
    asked: str | None
    """The revision the report named (None: none, the default ref)."""
    note: str = ""
    """Set when `asked` could not be resolved: what was diagnosed instead, and why."""


class Mirror:
    """One git repository's mirror and snapshots, in `home` (the data directory's)."""

    def __init__(
        self, name: str, source: str, home: Path, *, budget_bytes: int,
        fetch_seconds: float = FETCH_SECONDS, evicted: Callable[[Path], None] | None = None,
    ) -> None:  # fmt: skip
        """`evicted` is called with each snapshot removed (to remove what was derived from
        it: its index cache)."""
        location, _, ref = source.partition("#")
        self.name = name
        self.url = location if _URL.match(location) else str(Path(location).expanduser())
        self.default_ref = ref or "HEAD"
        digest = hashlib.sha256(self.url.encode()).hexdigest()[:12]
        self.path = home / "mirrors" / f"{name}-{digest}.git"
        self.snapshots = home / "snapshots" / f"{name}-{digest}"
        self.budget_bytes = budget_bytes
        self.fetch_seconds = fetch_seconds
        self.evicted = evicted
        self._fetched = -float("inf")
        self._fruitless = -float("inf")
        self._lock = threading.Lock()

    @property
    def shown(self) -> str:
        """The URL as messages show it (no password)."""
        return redact_url(self.url)

    def resolve(self, asked: str | None) -> Resolved:
        """The commit for `asked` (None: the default ref): fetched first when the mirror
        lacks it. One that cannot be found is the default ref's, with a note saying so.
        ToolError when the repository cannot be reached or has no default ref."""
        with self._lock:
            self._ensure()
            if asked is None or not asked.strip():
                if time.monotonic() - self._fetched > self.fetch_seconds:
                    self._refresh()
                return Resolved(self._default(), None)
            asked = asked.strip()
            found = self._find(asked)
            unfetched = ""
            if found is None and time.monotonic() - self._fruitless >= FRUITLESS_FETCH_SECONDS:
                unfetched = self._refresh()
                found = self._find(asked)
                if found is None:
                    self._fruitless = time.monotonic()
            if found is not None:
                return Resolved(found, asked)
            default = self._default()
            why = f" (fetching failed: {unfetched})" if unfetched else ""
            note = (
                f"the release or commit {asked[:MAX_REVISION_CHARS]!r} is not in {self.name} "
                f"({self.shown}){why}: diagnosed {self.default_ref} at {default[:12]} instead"
            )
            return Resolved(default, asked, note)

    def snapshot(self, commit: str) -> Path:
        """A read-only tree of `commit` in the data directory (made once, then reused);
        older snapshots past the disk budget are removed."""
        if not _HEX.fullmatch(commit):
            raise ToolError(f"not a commit name: {commit!r}")
        target = self.snapshots / commit
        with self._lock:
            if target.is_dir():
                os.utime(target)  # recently used
                return target
            self._ensure()
            self.snapshots.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".new-", dir=self.snapshots))
            try:
                size = self._unpack(commit, staging)
                (staging / SIZE_FILE).write_text(str(size))
                _read_only(staging)
                staging.rename(target)
            except BaseException:
                _remove(staging)
                raise
            self._evict(keep=target)
            return target

    def recent(self, *, besides: Path | None = None) -> Path | None:
        """The most recently used snapshot other than `besides` (a new snapshot's index
        borrows its unchanged files' tags: `repomap.build`'s seed)."""
        found = [
            (folder.stat().st_mtime, folder)
            for folder in (self.snapshots.iterdir() if self.snapshots.is_dir() else ())
            if folder != besides and not folder.name.startswith(".") and folder.is_dir()
        ]
        return max(found)[1] if found else None

    # ---- git ------------------------------------------------------------------------

    def _ensure(self) -> None:
        if (self.path / "HEAD").is_file():
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".clone-", dir=self.path.parent))
        try:
            _git(None, "clone", "--mirror", "--quiet", "--", self.url, str(staging / "m"),
                 what=f"clone {self.shown}", url=self.url)  # fmt: skip
            (staging / "m").rename(self.path)
        finally:
            _remove(staging)
        self._fetched = time.monotonic()

    def _refresh(self) -> str:
        """Fetch; when the remote does not answer, go on with what the mirror has (a
        stale tree beats a failed diagnosis) and return why, else ""."""
        try:
            self._fetch()
        except ToolError as exc:
            log.warning("%s: %s; using the mirror as last fetched", self.name, exc)
            return str(exc)
        return ""

    def _fetch(self) -> None:
        _git(self.path, "fetch", "--prune", "--quiet", "origin", what=f"fetch {self.shown}",
             url=self.url)  # fmt: skip
        self._fetched = time.monotonic()

    def _default(self) -> str:
        found = self._rev_parse(self.default_ref)
        if found is None:
            raise ToolError(f"{self.name}: {self.default_ref!r} names no commit in {self.shown}")
        return found

    def _find(self, asked: str) -> str | None:
        """`asked` as git names it (a SHA, a prefix, a ref, a tag), else as a release
        version: `v1.2.3` / `1.2.3` tags, also after an `app@` prefix or before a
        `+build` suffix."""
        if len(asked) > MAX_REVISION_CHARS or not _REVISION.fullmatch(asked) or ".." in asked:
            return None
        for candidate in _candidates(asked):
            found = self._rev_parse(candidate)
            if found is not None:
                return found
        return None

    def _rev_parse(self, revision: str) -> str | None:
        done = _git(self.path, "rev-parse", "--verify", "--quiet", "--end-of-options",
                    f"{revision}^{{commit}}", what="rev-parse", check=False)  # fmt: skip
        name = done.stdout.strip()
        return name if done.returncode == 0 and _HEX.fullmatch(name) else None

    def _unpack(self, commit: str, into: Path) -> int:
        """`git archive` of `commit`, streamed into `into`; the bytes unpacked."""
        command = ["git", "archive", "--format=tar", commit]
        with subprocess.Popen(command, cwd=self.path, env=_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL) as archive:  # fmt: skip
            assert archive.stdout is not None
            size = 0
            with tarfile.open(fileobj=archive.stdout, mode="r|") as tar:
                for member in tar:
                    try:  # a link out of the tree, a device: left out, as the walk would
                        tar.extract(member, into, filter="data")
                    except tarfile.FilterError:
                        continue
                    size += member.size
            if archive.wait(timeout=GIT_SECONDS) != 0:
                raise ToolError(f"{self.name}: git archive of {commit[:12]} failed")
        return size

    def _evict(self, *, keep: Path) -> None:
        """Remove the least recently used snapshots while all are over the budget."""
        found = []
        for folder in self.snapshots.iterdir():
            if folder.name.startswith(".") or not folder.is_dir():
                continue
            try:
                size = int((folder / SIZE_FILE).read_text())
                used = folder.stat().st_mtime
            except (OSError, ValueError):
                continue
            found.append((used, size, folder))
        total = sum(size for _, size, _ in found)
        for _, size, folder in sorted(found):
            if total <= self.budget_bytes:
                break
            if folder != keep:
                _remove(folder)
                total -= size
                if self.evicted is not None:
                    self.evicted(folder)


def _candidates(asked: str) -> list[str]:
    names = [asked]
    version = asked.rpartition("@")[2].partition("+")[0]  # `app@1.2.3+45` → 1.2.3
    for bare in dict.fromkeys([version, version.removeprefix("v")]):
        if bare:
            names += [f"refs/tags/v{bare}", f"refs/tags/{bare}"]
    return list(dict.fromkeys(names))


def _env() -> dict[str, str]:
    """Git's environment: ours (credentials from it or a credential helper), never
    prompting on a terminal."""
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0"}


def _git(
    cwd: Path | None, *args: str, what: str, url: str = "", check: bool = True
) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, env=_env(), capture_output=True, text=True,
            timeout=GIT_SECONDS, check=False,
        )  # fmt: skip
    except FileNotFoundError:
        raise ToolError("git is not installed: a git repository cannot be mirrored") from None
    except subprocess.TimeoutExpired:
        raise ToolError(f"git {what}: no answer within {GIT_SECONDS:g} s") from None
    if check and done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["failed"])[-1]
        raise ToolError(f"git {what}: {scrub(reason, url) if url else reason}")
    return done


def _read_only(root: Path) -> None:
    for folder, dirs, files in os.walk(root):
        for name in files:
            path = Path(folder, name)
            if not path.is_symlink():
                path.chmod(stat.S_IMODE(path.stat().st_mode) & ~0o222)
        for name in dirs:
            path = Path(folder, name)
            if not path.is_symlink():
                path.chmod(0o555)
    root.chmod(0o555)


def _remove(root: Path) -> None:
    """Remove a (read-only) tree."""
    if not root.exists():
        return
    for folder, dirs, _files in os.walk(root):
        for name in dirs:
            path = Path(folder, name)
            if not path.is_symlink():
                path.chmod(0o755)
    root.chmod(0o755)
    shutil.rmtree(root, ignore_errors=True)
