"""Build (or refresh) the tags of a whole repository, using and updating the cache.

An unchanged file (same size and mtime) is taken from the cache without being read;
one whose mtime moved but whose content hash is unchanged is too. With a `seed` (another
tree of the same repository, e.g. the snapshot of another commit), a file this tree's
cache lacks is taken from the seed's cache when its content hash is the one there: a
new commit costs its changed files, not a cold build. Everything else is read and
parsed — in a process pool across cores when there is enough to parse.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from repomap import cache, wordsfile
from repomap.constants import (
    BINARY_SNIFF_BYTES,
    GENERATED_MARKERS,
    GENERATED_SNIFF_BYTES,
    MAX_FILE_BYTES,
    MAX_LINE_CHARS,
    MIN_FILES_FOR_POOL,
    PARSE_CHUNK_FILES,
    WORKER_STOP_SECONDS,
)
from repomap.coverage import check_coverage
from repomap.deny import DenyList
from repomap.files import FileEntry, Skipped, resolve_root, walk_files
from repomap.spill import Spill, spill_in
from repomap.tags import FileTags, extract_tags, file_words

Progress = Callable[[int, int], None]
"""Called as `progress(done, total)` while files are parsed."""


@dataclass(frozen=True, slots=True)
class BuildStats:
    files: int
    """Files with a supported language that were considered."""
    parsed: int
    """Files read and parsed this time (cache misses)."""
    reused: int
    """Files taken from the cache."""
    seconds: float
    cache_dir: str


@dataclass(slots=True)
class BuildResult:
    root: Path
    tags: Mapping[str, FileTags]
    """Repo-relative path → tags, for every mapped file (decoded on first access)."""
    stats: BuildStats
    warnings: list[Skipped] = field(default_factory=list)
    content_key: int | None = None
    """Names the content these tags come from (None without a cache): keys derived caches,
    so touching a file (mtime only) does not invalidate them."""


def build(
    path: str | os.PathLike[str],
    *,
    home: Path | None = None,
    use_cache: bool = True,
    progress: Progress | None = None,
    workers: int | None = None,
    deny: DenyList | None = None,
    seed: Path | None = None,
) -> BuildResult:
    """Tags of every supported file under `path`, reusing the cache in `home`.

    `deny` keeps secret files out (`repomap.deny`; default: the default list). `seed`:
    another tree of the same repository whose cached tags a file with the same content
    reuses (see the module).
    """
    started = time.perf_counter()
    root = resolve_root(path)
    directory = cache.cache_dir_for(root, home)
    state = cache.load(directory) if use_cache else cache.CacheState()
    seed_dir = _seed_dir(seed, home, root) if use_cache and not state.files else None
    seeded = dict(cache.load(seed_dir).files) if seed_dir is not None else {}
    walked = walk_files(root, mapped_only=True, deny=deny)
    entries = walked.files

    fresh: dict[str, cache.CachedFile] = {}
    to_parse: list[FileEntry] = []
    moved = False  # a file's mtime changed but not its content: save, or we re-hash every run
    for entry in entries:
        cached = state.files.get(entry.path)
        hit = _reuse(root, entry, cached)
        if hit is None and entry.path in seeded:
            hit = _reuse(root, entry, seeded[entry.path], trust_mtime=False)
            cached = None  # from another tree: this one's cache must be saved
        if hit is None:
            to_parse.append(entry)
        else:
            fresh[entry.path] = hit
            moved = moved or hit is not cached
    spill = spill_in(directory) if use_cache and to_parse else None
    parsed_all = _parse_all(root, to_parse, progress, workers, spill)
    for entry, parsed in zip(to_parse, parsed_all, strict=True):
        fresh[entry.path] = parsed

    warnings = list(walked.skipped)
    if use_cache and (to_parse or moved or state.problem or fresh.keys() != state.files.keys()):
        try:
            cache.save(directory, fresh, seeds=[seed_dir] if seed_dir is not None else [])
        except OSError as exc:  # a full disk or read-only data dir must not cost the map
            warnings.append(Skipped(str(directory), f"cache not saved: {exc.strerror or exc}"))
    if state.problem:
        warnings.insert(0, Skipped(str(directory), state.problem))
    indexed = sum(1 for cached in fresh.values() if not cached.skip_reason)
    few = check_coverage(root, indexed, walked)
    if few is not None:
        warnings.insert(0, Skipped(".", few))
    for path_, cached in sorted(fresh.items()):
        if cached.skip_reason:
            warnings.append(Skipped(path_, cached.skip_reason))
        warnings.extend(Skipped(path_, note) for note in cached.notes)
    stats = BuildStats(
        files=len(entries),
        parsed=len(to_parse),
        reused=len(entries) - len(to_parse),
        seconds=time.perf_counter() - started,
        cache_dir=str(directory),
    )
    key = cache.content_key(fresh) if use_cache else None
    repair = _repairer(root, deny, fresh, warnings, directory if use_cache else None)
    return BuildResult(root, cache.TagsView(fresh, repair), stats, warnings, key)


def _reuse(
    root: Path, entry: FileEntry, cached: cache.CachedFile | None, *, trust_mtime: bool = True
) -> cache.CachedFile | None:
    """The cached tags when the file is unchanged (the same size, and the same mtime or
    content hash), else None. `trust_mtime=False` for another tree's cache (a seed's):
    its mtimes say nothing of this tree's files, so only the hash settles it."""
    if cached is None or cached.size != entry.size:
        return None
    if trust_mtime and cached.mtime_ns == entry.mtime_ns:
        return cached
    try:
        digest = cache.content_digest((root / entry.path).read_bytes())
    except OSError:
        return None
    return cached.moved(entry.mtime_ns) if digest == cached.digest else None


def _seed_dir(seed: Path | None, home: Path | None, root: Path) -> Path | None:
    """The seed tree's cache directory (None when there is no seed, or it is this tree)."""
    if seed is None:
        return None
    try:
        seed_root = resolve_root(seed)
    except Exception:  # a seed that is gone only means a colder build
        return None
    return None if seed_root == root else cache.cache_dir_for(seed_root, home)


def _repairer(
    root: Path,
    deny: DenyList | None,
    files: dict[str, cache.CachedFile],
    warnings: list[Skipped],
    directory: Path | None,
) -> cache.Repair:
    """What `TagsView` calls when cached tags do not decode: re-parse those files, say so,
    and save the cache (when there is one) so the next run finds them sound. It walks the
    tree again to find them (a damaged cache is rare): holding the build's walk for that,
    as long as the tags lived, cost 20,000 entries on a 20,000-file tree."""

    def repair(paths: Sequence[str]) -> dict[str, cache.CachedFile]:
        wanted = set(paths)
        entries = walk_files(root, mapped_only=True, deny=deny).files
        walked = {entry.path: entry for entry in entries if entry.path in wanted}
        fresh = {path: tag_file(root, walked[path]) for path in paths if path in walked}
        files.update(fresh)
        warnings.extend(Skipped(path, "cached tags were damaged; re-parsed") for path in fresh)
        if directory is not None:
            try:
                cache.save(directory, files)
            except OSError as exc:
                warnings.append(Skipped(str(directory), f"cache not saved: {exc.strerror or exc}"))
        return fresh

    return repair


def _parse_all(
    root: Path,
    entries: list[FileEntry],
    progress: Progress | None,
    workers: int | None,
    spill: Spill | None = None,
) -> list[cache.CachedFile]:
    """Tag `entries` (in order), in a process pool when there are enough of them; each
    file's words go to `spill` as it arrives.

    A list, not a generator: an exception that interrupts the build (Ctrl-C, SIGTERM
    turned into SystemExit) then always lands in here while the pool is alive, where it
    tears the pool down, rather than in the caller's loop with the pool left running.
    """
    total = len(entries)
    if progress:
        progress(0, total)
    workers = workers or os.cpu_count() or 1
    if total < MIN_FILES_FOR_POOL or workers == 1:
        tagged = []
        for done, entry in enumerate(entries, 1):
            tagged.append(_spilled(tag_file(root, entry), spill))
            if progress:
                progress(done, total)
        return tagged
    chunks = [entries[i : i + PARSE_CHUNK_FILES] for i in range(0, total, PARSE_CHUNK_FILES)]
    pool = concurrent.futures.ProcessPoolExecutor(
        workers, mp_context=_pool_context(), initializer=_init_worker
    )
    tagged = []
    try:
        for results in pool.map(_tag_chunk, [root] * len(chunks), chunks):
            tagged.extend(_spilled(cached, spill) for cached in results)
            if progress:
                progress(len(tagged), total)
    except BaseException:
        _stop_now(pool)
        raise
    pool.shutdown()
    return tagged


def _spilled(cached: cache.CachedFile, spill: Spill | None) -> cache.CachedFile:
    if spill is not None and isinstance(cached.words, bytes):
        cached.words = spill.add(cached.words)
    return cached


def _pool_context() -> multiprocessing.context.BaseContext:
    # forkserver: safe in a process that runs threads (the API server), unlike fork; the
    # server imports the parsing code once, so each worker starts with it loaded.
    if "forkserver" in multiprocessing.get_all_start_methods():
        multiprocessing.set_forkserver_preload([__name__])
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")  # Windows


def _init_worker() -> None:
    """Make a parse worker leave interruptions to its parent and die with it."""
    # Ctrl-C reaches the whole process group: only the parent acts on it (and stops us).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()


def _exit_with(parent: multiprocessing.process.BaseProcess) -> None:
    """Wait for the parent's death, then exit at once, whatever this worker is doing.

    Without this a parent killed with SIGKILL (or a default-action SIGTERM) leaves its
    workers blocked on the task queue for ever, and with them the fork server and the
    resource tracker, which both live until the last worker closes its end of their pipes.
    The parent's sentinel is the one signal that is right on every start method: with
    forkserver it is a pipe whose write end only the parent holds (CPython keeps a dup of
    it for exactly this, `popen_forkserver`), so it turns ready when the parent dies,
    however it dies; with spawn on Windows it is the parent's process handle. The
    alternatives are wrong here: PR_SET_PDEATHSIG fires on the death of the OS parent,
    which for forkserver is the fork server, not the process that wants the tags; polling
    `os.getppid()` has the same flaw; `pidfd_open` is Linux-only. `tests/hostile/
    test_stops.py` kills a real parent and checks that every descendant is gone.
    """
    multiprocessing.connection.wait([parent.sentinel])
    os._exit(1)  # no cleanup to do: results go to a parent that is gone


def _stop_now(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Tear the pool down without waiting for the chunks already queued or running."""
    # Private attributes, but 3.11 has no public way to stop busy workers
    # (`terminate_workers` arrives in 3.14); both are None once the pool is shut down.
    workers = list((getattr(pool, "_processes", None) or {}).values())
    results = getattr(pool, "_result_queue", None)
    manager = getattr(pool, "_executor_manager_thread", None)
    pending: dict[int, object] = getattr(pool, "_pending_work_items", None) or {}
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.join(WORKER_STOP_SECONDS)
        if worker.is_alive():
            worker.kill()
            worker.join()
    # A worker stopped halfway through sending its result leaves half a message in the
    # result pipe: the pool's manager thread, reading it, would wait for the rest for
    # ever, and the interpreter joins that thread on exit. With every worker gone, our
    # own write end is the last one: closing it turns that wait into end-of-file.
    # It then fails every pending future, and 3.11 raises InvalidStateError in that thread
    # for the ones we cancelled (fixed in 3.12): nobody waits for them, so forget them.
    pending.clear()
    if results is not None:
        results._writer.close()
    # Let that thread see the end and wind the pool down now: left running, it races the
    # interpreter's exit and may print a stray `OSError` after our one line.
    if manager is not None:
        manager.join(WORKER_STOP_SECONDS)


def _tag_chunk(root: Path, entries: list[FileEntry]) -> list[cache.CachedFile]:
    return [tag_file(root, entry) for entry in entries]


def tag_file(root: Path, entry: FileEntry) -> cache.CachedFile:
    """Read one file and extract its tags, or record why it was skipped."""

    def skipped(reason: str, digest: str = "") -> cache.CachedFile:
        return cache.CachedFile(entry.size, entry.mtime_ns, digest, None, skip_reason=reason)

    if entry.size > MAX_FILE_BYTES:
        return skipped(f"larger than {MAX_FILE_BYTES // 1000} kB")
    try:
        data = (root / entry.path).read_bytes()
    except OSError as exc:
        return skipped(f"unreadable: {exc.strerror}")
    digest = cache.content_digest(data)
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return skipped("binary content", digest)
    head = data[:GENERATED_SNIFF_BYTES]
    if any(marker in head for marker in GENERATED_MARKERS):
        return skipped("generated code (its header says so)", digest)
    if _longest_line(data) > MAX_LINE_CHARS:
        return skipped(f"a line over {MAX_LINE_CHARS} characters (minified or generated)", digest)
    notes: list[str] = []
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        notes.append("invalid UTF-8; undecodable bytes shown as U+FFFD")
    assert entry.language is not None
    tags = extract_tags(data, entry.language)
    if tags.syntax_error:
        notes.append("syntax errors; definitions are best-effort")
    words = wordsfile.pack_words(file_words(data))
    return cache.CachedFile(
        entry.size, entry.mtime_ns, digest, tags, notes=tuple(notes), words=words
    )


def _longest_line(data: bytes) -> int:
    if len(data) <= MAX_LINE_CHARS:
        return len(data)
    return max(map(len, data.split(b"\n")))
