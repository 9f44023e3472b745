"""`Workspace`: the one gate to a repository's files. Read-only by construction.

Every path a tool receives is repo-relative and goes through `resolve`, which refuses:
NUL bytes, text that is not valid UTF-8 and over-long paths; absolute, home-relative and
drive paths; any `..` component (also after Unicode NFKC folding and %-decoding, so
look-alikes and encoded dots cannot sneak one in); symlinks whose target lies outside the
root; files on the secrets deny-list (by the requested path and by the symlink target); a
hard-linked file the walk did not list (it may be a second name of a secret); and
anything that is not a regular file or directory (devices, FIFOs, sockets). Files are
opened `O_RDONLY | O_NOFOLLOW | O_NONBLOCK`; there is no method that writes.

The deny rule is one `repomap.DenyList` (`Settings.deny_list()`), the same object the
walk behind `files` and `repository` applies, so the map, the symbol index and every
tool agree on what is secret.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
import stat
import threading
import unicodedata
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from urllib.parse import unquote

from rapidfuzz import fuzz, process

from diagnoser.constants import BINARY_SNIFF_BYTES, MAX_PATH_CHARS
from diagnoser.errors import PathRefused, ToolError
from diagnoser.intake.packages import (
    MAX_MANIFEST_BYTES,
    MAX_MANIFESTS,
    Packages,
    is_manifest,
    read_packages,
)
from diagnoser.settings import Settings
from repomap import DenyList, Repository
from repomap.deny import is_utf8
from repomap.files import FileEntry, walk_files

MAX_NAME_BYTES = 255
"""Longest file name component most file systems allow."""
MAX_PATH_SUGGESTIONS = 3
_DRIVE = re.compile(r"^[A-Za-z]:")
BINARY_SUFFIXES = (
    ".png", ".jpg", ".jpeg", ".gif", ".ico", ".webp", ".bmp", ".mo", ".woff", ".woff2",
    ".ttf", ".otf", ".eot", ".zip", ".gz", ".bz2", ".xz", ".tar", ".pdf", ".so", ".dll",
    ".dylib", ".pyc", ".class", ".jar", ".exe", ".bin", ".sqlite", ".db",
)  # fmt: skip
"""Never scanned by grep: binary by name, so not even opened."""
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class Kind(StrEnum):
    FILE = "file"
    DIRECTORY = "directory"


@dataclass(frozen=True, slots=True)
class Resolved:
    """A path that passed every check."""

    rel: str
    """Repo-relative, `/`-separated ("" for the root)."""
    path: Path | str
    """Absolute, symlinks resolved, inside the root."""
    kind: Kind


class Workspace:
    """A sandboxed, read-only view of one repository."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        settings: Settings | None = None,
        *,
        repository: Repository | None = None,
        home: Path | None = None,
        commit: str | None = None,
        note: str = "",
        seed: Path | None = None,
    ) -> None:
        """`commit`: the commit `root` is a snapshot of (`diagnoser.mirror`; None: a
        folder, whose checked-out commit provenance reads); `note`: what a reader must
        know about the tree diagnosed (a release that did not resolve); `seed`: another
        snapshot of the same repository, whose index the unchanged files reuse."""
        self.root = Path(root).resolve()
        self.commit = commit
        self.note = note
        self._seed = seed
        if not self.root.is_dir():
            raise ToolError(f"not a directory: {root}")
        if not is_utf8(str(self.root)):
            raise ToolError(f"the repository's path is not valid UTF-8: {root!r}")
        self.settings = settings or Settings()
        self.deny: DenyList = self.settings.deny_list()
        """The secrets rule: the walk behind `files` and `repository` applies it too."""
        self._repository = repository
        self._home = home
        self._opening = threading.Lock()  # several worker threads may ask for the index at once
        self._warming = threading.Lock()  # one `warm` at a time: see there
        self._unreadable: set[str] = set()  # listed files found binary or unreadable once

    @property
    def repository(self) -> Repository:
        """The repo map's index of this repository (built or loaded on first use)."""
        if self._repository is None:
            with self._opening:
                if self._repository is None:  # secrets stay out of the index, so the map
                    self._repository = Repository.open(
                        self.root, home=self._home, deny=self.deny, seed=self._seed
                    )
        return self._repository

    def warm(self) -> None:
        """Walk the tree, build (or load) the index and make the symbol tables every run
        looks names up in, now rather than in the first run. Blocking: parses in a
        process pool when the cache is cold. (Made inside the first run, the tables raised
        the peak of a 20,000-file diagnosis from 274 to 303 MB: docs/benchmarks.md, "Memory".)

        One at a time, and a no-op once done: a job that starts while the service's start-up
        warm still runs waits here for it, rather than building the term indexes while the
        symbol tables are made (both at once were the service's cold peak on a 20,000-file
        tree: docs/benchmarks/memory.md)."""
        with self._warming:
            self.repository.index.prepare()
            self.file_paths  # noqa: B018

    @property
    def is_warm(self) -> bool:
        """Whether the file list and the index are in memory (a run starts at once)."""
        return self._repository is not None and "file_paths" in self.__dict__

    @functools.cached_property
    def files(self) -> list[FileEntry]:
        """Every file the tools may see: the repo map's walk, ignore rules and deny-list
        (by name, by symlink target, by hard link) included."""
        return walk_files(self.root, deny=self.deny).files

    @functools.cached_property
    def file_paths(self) -> frozenset[str]:
        return frozenset(f.path for f in self.files)

    @functools.cached_property
    def packages(self) -> Packages:
        """The packages the repository's manifests name (`diagnoser.intake.packages`), read
        once: at most MAX_MANIFESTS, each at most MAX_MANIFEST_BYTES, unreadable ones
        skipped."""
        texts: dict[str, str] = {}
        for path in sorted(p for p in self.file_paths if is_manifest(p))[:MAX_MANIFESTS]:
            try:
                data = self.read_bytes(path)[1]
            except ToolError:
                continue
            if len(data) <= MAX_MANIFEST_BYTES:
                texts[path] = data.decode("utf-8", "replace")
        return read_packages(texts)

    @functools.cached_property
    def _listed_contents(self) -> frozenset[str]:
        """Repo-relative real paths of the listed files (a symlink's target): without
        symlinks, the very set of `file_paths` (not a second one of every path)."""
        if all(f.target is None for f in self.files):
            return self.file_paths
        return frozenset(f.target or f.path for f in self.files)

    def denied(self, rel: str, *, is_dir: bool = False) -> bool:
        """Whether `rel` (or a folder above it) is on the secrets deny-list."""
        return self.deny.denies(rel, is_dir=is_dir)

    def resolve(self, path: str, kind: Kind = Kind.FILE) -> Resolved:
        """Check `path` and return where it really is, or raise PathRefused / ToolError."""
        rel = _normalise(path, self.root)
        if self.denied(rel) or self.denied(rel, is_dir=True):
            raise PathRefused(f"refused: {rel} is on the secrets deny-list")
        real = Path(os.path.realpath(self.root / rel))
        if real != self.root and not real.is_relative_to(self.root):
            raise PathRefused(f"refused: {rel} leads outside the repository (symlink)")
        real_rel = real.relative_to(self.root).as_posix() if real != self.root else ""
        if self.denied(real_rel) or self.denied(real_rel, is_dir=True):
            raise PathRefused(f"refused: {rel} points at a file on the secrets deny-list")
        try:
            info = real.stat()
        except FileNotFoundError:
            raise ToolError(self._missing(rel, kind)) from None
        except OSError as exc:
            raise ToolError(f"cannot open {rel}: {exc.strerror}") from None
        if stat.S_ISDIR(info.st_mode):
            if kind is Kind.FILE:
                raise ToolError(f"{rel or '.'} is a directory; use list_dir")
            return Resolved(real_rel, real, Kind.DIRECTORY)
        if not stat.S_ISREG(info.st_mode):
            raise PathRefused(f"refused: {rel} is not a regular file (device, FIFO or socket)")
        if kind is Kind.DIRECTORY:
            raise ToolError(f"{rel} is a file, not a directory; use read_range")
        if info.st_nlink > 1 and real_rel not in self._listed_contents:
            # The walk checked its other names against the deny-list; unlisted, it may
            # be a second name of a secret (or lie in an ignored folder): refuse.
            raise PathRefused(f"refused: {rel} is a hard link to a file that is not listed")
        return Resolved(real_rel, real, Kind.FILE)

    def read_bytes(self, path: str) -> tuple[Resolved, bytes]:
        """The whole content of a text file (size-capped, binary refused)."""
        resolved = self.resolve(path)
        data = self._read(resolved)
        if b"\0" in data[:BINARY_SNIFF_BYTES]:
            raise ToolError(f"{resolved.rel} is a binary file")
        return resolved, data

    def read_text_lines(self, path: str) -> tuple[Resolved, list[str]]:
        resolved, data = self.read_bytes(path)
        return resolved, data.decode("utf-8", errors="replace").splitlines()

    def read_listed(self, entry: FileEntry) -> bytes | None:
        """Content of a file from `files` for a scan (grep); None when skipped (size, binary)."""
        if entry.size > self.settings.max_file_bytes or entry.path in self._unreadable:
            return None
        if entry.path.endswith(BINARY_SUFFIXES):
            self._unreadable.add(entry.path)
            return None
        real = entry.target or entry.path  # the walk resolved symlinks inside the root
        try:
            # A plain string path: this runs for every file of every grep.
            data = self._read(Resolved(entry.path, os.path.join(self.root, real), Kind.FILE))
        except ToolError:
            self._unreadable.add(entry.path)
            return None
        if b"\0" in data[:BINARY_SNIFF_BYTES]:
            self._unreadable.add(entry.path)
            return None
        return data

    def _read(self, resolved: Resolved) -> bytes:
        try:
            fd = os.open(resolved.path, _OPEN_FLAGS)
        except OSError as exc:
            raise ToolError(f"cannot open {resolved.rel}: {exc.strerror}") from None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise PathRefused(f"refused: {resolved.rel} is not a regular file")
            if info.st_size > self.settings.max_file_bytes:
                raise ToolError(
                    f"{resolved.rel} is {info.st_size // 1000} kB, over the "
                    f"{self.settings.max_file_bytes // 1000} kB cap; grep it instead"
                )
            return handle.read(self.settings.max_file_bytes + 1)[: self.settings.max_file_bytes]

    def _missing(self, rel: str, kind: Kind) -> str:
        near = self.suggest_paths(rel)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        return f"no such {kind.value}: {rel}{hint}"

    def suggest_paths(self, rel: str) -> list[str]:
        """Listed paths closest to `rel` (same file name first)."""
        name = rel.rsplit("/", 1)[-1]
        same_name = sorted(p for p in self.file_paths if p.rsplit("/", 1)[-1] == name)
        if same_name:
            return same_name[:MAX_PATH_SUGGESTIONS]
        found = process.extract(
            rel, sorted(self.file_paths), scorer=fuzz.WRatio, limit=MAX_PATH_SUGGESTIONS
        )
        return [match for match, score, _ in found if score >= 60]


def _normalise(path: str, root: Path) -> str:
    """The repo-relative form of `path`, or PathRefused naming what is wrong with it."""
    if not isinstance(path, str):
        raise PathRefused("refused: a path must be a string")
    raw = path.strip()
    if "\0" in raw:
        raise PathRefused("refused: the path contains a NUL byte")
    if not is_utf8(raw):  # a lone surrogate would reach the file system as a raw byte
        raise PathRefused("refused: the path is not valid UTF-8")
    if len(raw) > MAX_PATH_CHARS or any(
        len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES for part in raw.split("/")
    ):
        raise PathRefused(
            f"refused: path longer than {MAX_PATH_CHARS} characters or a name too long"
        )
    folded = unicodedata.normalize("NFKC", raw)
    for variant in {raw, folded, unquote(raw), unquote(folded)}:
        candidate = variant.replace("\\", "/")
        if candidate.startswith(("/", "~")) or _DRIVE.match(candidate):
            inside = _relative_hint(candidate, root)
            raise PathRefused(
                "refused: paths are relative to the repository root"
                + (f"; use {inside}" if inside else "")
            )
        if ".." in candidate.split("/"):
            raise PathRefused("refused: '..' is not allowed; paths stay inside the repository")
    rel = posixpath.normpath(raw.replace("\\", "/"))
    return "" if rel == "." else rel


def _relative_hint(candidate: str, root: Path) -> str:
    prefix = root.as_posix().rstrip("/") + "/"
    return candidate[len(prefix) :] if candidate.startswith(prefix) else ""
