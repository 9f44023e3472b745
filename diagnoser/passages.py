"""A repository's functions as short passages of what they say, embedded by the bundled
encoder: what a store review in any language is matched against.

    index = passage_index(workspace, model)       # cached by content, built in slices
    index.nearest(model.query([review]))          # [(path, Definition, similarity)], best first

A review names no identifier — "Beim Exportieren der Wiedergabeliste bekomme ich eine leere
Datei" — and the words of a German, Spanish or Japanese one match nothing in English code.
Its meaning can: each function of a source file (not a test, doc or copy) becomes one
passage — its qualified name split into words, then the prose inside it (docstrings,
comments and string literals: the messages and labels the user sees), cut to
PASSAGE_CHARS — and the multilingual encoder puts the review and the passages in one space.

Cost (bench/review_locations_bench.py, docs/benchmarks.md): the encoder embeds ~40–60
passages a second on two cores, so a repository of 13,000 functions takes minutes the
first time: the first review embeds for BUDGET_SECONDS at most, the most central files
first, and a background thread does the rest. Vectors are kept by the passage's hash
in the repository's cache directory (`passages.npz`): a new revision embeds only the
passages that changed.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from diagnoser.encoder import DIMENSION, ENCODER_NAME, Encoder, Vectors
from diagnoser.errors import ToolError
from diagnoser.file_roles import is_secondary
from diagnoser.relevance import innermost, is_function
from diagnoser.workspace import Workspace
from repomap import Definition, Repository
from repomap.copies import is_vendored, source_stems
from repomap.words import words

__all__ = [
    "BUDGET_SECONDS", "CACHE_FILE", "PASSAGE_CHARS", "PassageIndex", "passage", "passage_index",
    "pending",
]  # fmt: skip

PASSAGE_CHARS = 200
"""A passage's length at most (~40 tokens): the name and the first of what it says. The
encoder's cost grows with the tokens (~100 passages/s at 16 tokens, ~8/s at 140)."""
MIN_PROSE_LETTERS = 3
"""A string or comment with fewer letters in a row says nothing ("%s", "\\n", "id")."""
CACHE_FILE = "passages.npz"
BATCH = 32
"""Passages embedded per call: the engine is no faster on bigger batches (measured: 64/s
at 16, 47/s at 256), and a small one keeps the budget's overshoot short."""
MAX_PASSAGES = 20_000
"""Functions listed at most, the most central files' first: ~16 MB of vectors and ~6
minutes to embed on two cores; the 227,000 definitions of a 20,000-file tree would take
hours and 170 MB. A review's meaning is looked for among these only."""
CHUNK = 4096
"""Rows compared with a query at a time, in single precision: a bounded temporary."""
SAVE_EVERY = 1024
"""Passages between saves of a long build: a process that ends mid-build loses less."""
BUDGET_SECONDS = 30.0
"""Embedding one call may spend: a repository of 13,000 functions takes ~4 minutes from
scratch, longer than a run should wait, so a run embeds for this long (the functions of the
repository's most central files first: its map's PageRank), ranks among what is embedded,
and a background thread embeds the rest while the process lives (saved as it goes, so the
next process goes on from there)."""

_PROSE = re.compile(
    r'"""(.*?)"""|\'\'\'(.*?)\'\'\'|"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\''
    r"|`([^`\n]*)`|(?:#|//|--|/\*)\s*([^\n]*)",
    re.DOTALL,
)
_LETTERS = re.compile(rf"[^\W\d_]{{{MIN_PROSE_LETTERS},}}")
_SPACES = re.compile(r"\s+")
_INDEXES: weakref.WeakKeyDictionary[Repository, PassageIndex] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


@dataclass(slots=True)
class PassageIndex:
    """One row per function, the most central files' first: where it is, its passage, and
    its vector once embedded (`ready`)."""

    places: tuple[tuple[str, Definition], ...]
    texts: tuple[str, ...]
    keys: tuple[bytes, ...]
    """Each passage's hash with the encoder's name: its vector's key in the cache."""
    vectors: npt.NDArray[np.float16]
    """Half precision, as cached: 0.8 KB a function (10 MB for Gramps' 13,000)."""
    ready: npt.NDArray[np.bool_]
    started: bool = False
    """Whether a call began embedding what is missing: one call does, the others never wait."""

    @property
    def embedded(self) -> int:
        return int(self.ready.sum())

    @property
    def complete(self) -> bool:
        return bool(self.ready.all())

    def nearest(self, query: Vectors, limit: int = 50) -> list[tuple[str, Definition, float]]:
        """The `limit` embedded functions nearest in meaning to one query vector, best
        first (ties: path, then line)."""
        if not self.ready.any():
            return []
        vector = query.reshape(-1).astype(np.float32)
        similar = np.concatenate(
            [
                self.vectors[start : start + CHUNK].astype(np.float32) @ vector
                for start in range(0, len(self.places), CHUNK)
            ]
        )
        similar[~self.ready] = -np.inf
        count = min(limit, self.embedded)
        top = np.argpartition(-similar, count - 1)[:count]
        order = sorted(top, key=lambda i: (-float(similar[i]), self.places[i][0], i))
        return [(*self.places[i], float(similar[i])) for i in order]


def passage(path: str, definition: Definition, body: Sequence[str]) -> str:
    """What one function says: its qualified name in words (as written when it has none
    of MIN_WORD letters), the file's name, then its docstrings, comments and strings that
    hold words, each once, cut to PASSAGE_CHARS."""
    name = " ".join(words(definition.qualified)) or definition.qualified
    stem = " ".join(words(Path(path).stem)) or Path(path).stem
    said: dict[str, None] = {}
    for match in _PROSE.finditer("\n".join(body)):
        fragment = _SPACES.sub(" ", next(g for g in match.groups() if g is not None)).strip()
        if _LETTERS.search(fragment) and (" " in fragment or len(said) < 3):
            said[fragment] = None
    text = f"{name} ({stem}): {'; '.join(said)}" if said else f"{name} ({stem})"
    return text[:PASSAGE_CHARS]


def passage_index(
    workspace: Workspace, model: Encoder, *, budget: float | None = BUDGET_SECONDS
) -> PassageIndex:
    """The repository's functions and their vectors, kept per Repository while it lives:
    read back from the cache directory by passage hash; the first call embeds what is
    missing for at most `budget` seconds (None: all), then hands the rest to a background
    thread and returns — later calls rank among what is embedded so far, never wait for
    it. Thread-safe."""
    index = _read(workspace)
    with _lock:
        first = not index.complete and not index.started
        index.started = index.started or first
    if first:
        cache = _cache_of(workspace)
        _embed(index, model, budget, cache)
        if not index.complete:
            rest = threading.Thread(
                target=_embed, args=(index, model, None, cache), name="passages", daemon=True
            )
            rest.start()
    return index


def pending(workspace: Workspace) -> bool:
    """Whether some of this repository's functions are not embedded yet, in this process
    or in the cache directory: a review may wait for them (up to BUDGET_SECONDS). Lists
    them and reads the cache back the first time (what `passage_index` does first)."""
    return not _read(workspace).complete


def _read(workspace: Workspace) -> PassageIndex:
    """The repository's index, listed and read back from the cache once per Repository."""
    repository = workspace.repository
    with _lock:
        index = _INDEXES.get(repository)
        if index is None:
            index = _INDEXES[repository] = _listed(workspace)
            _read_back(index, _cache_of(workspace))
        return index


def _cache_of(workspace: Workspace) -> Path:
    return Path(workspace.repository.stats.cache_dir) / CACHE_FILE


def _listed(workspace: Workspace) -> PassageIndex:
    """Every function of the source files (no test, doc or copy) with its passage, the
    files in the order of the repository map's PageRank, up to MAX_PASSAGES."""
    repository = workspace.repository
    twins = source_stems(repository.index.files)
    central = [path for path, _ in repository.rank(limit=0).files]
    order = {path: n for n, path in enumerate(central)}
    places: list[tuple[str, Definition]] = []
    texts: list[str] = []
    for path in sorted(repository.tags, key=lambda p: (order.get(p, len(order)), p)):
        if is_secondary(path, twins) or is_vendored(path):
            continue
        defined = innermost(repository.tags[path].definitions, None)
        functions = [d for d in defined if is_function(d)]
        if not functions:
            continue
        try:
            lines = workspace.read_text_lines(path)[1]
        except ToolError:
            continue
        if len(places) + len(functions) > MAX_PASSAGES:
            break
        for definition in functions:
            places.append((path, definition))
            texts.append(
                passage(path, definition, lines[definition.start_line - 1 : definition.end_line])
            )
    keys = tuple(hashlib.sha1(f"{ENCODER_NAME}\0{t}".encode()).digest() for t in texts)
    vectors = np.zeros((len(texts), DIMENSION), dtype=np.float16)
    return PassageIndex(tuple(places), tuple(texts), keys, vectors, np.zeros(len(texts), bool))


def _read_back(index: PassageIndex, cache: Path) -> None:
    known = _cached(cache)
    for row, key in enumerate(index.keys):
        vector = known.get(key)
        if vector is not None and vector.shape == (DIMENSION,):
            index.vectors[row] = vector
            index.ready[row] = True


def _embed(index: PassageIndex, model: Encoder, budget: float | None, cache: Path) -> None:
    """Embed the missing passages in order until `budget` is spent (a row is marked ready
    after its vector is written: a reader never sees half of one), saving what is done
    every SAVE_EVERY passages and at the end."""
    started = time.monotonic()
    missing = np.flatnonzero(~index.ready)
    for start in range(0, missing.size, BATCH):
        rows = missing[start : start + BATCH]
        index.vectors[rows] = model.passage([index.texts[row] for row in rows])
        index.ready[rows] = True
        if budget is not None and time.monotonic() - started >= budget:
            break
        if (start + BATCH) % SAVE_EVERY == 0:
            _save(cache, index)
    _save(cache, index)


def _cached(cache: Path) -> dict[bytes, np.ndarray]:
    try:
        with np.load(cache) as data:
            return dict(zip((bytes(k) for k in data["keys"]), data["vectors"], strict=True))
    except (OSError, ValueError, KeyError):
        return {}


def _save(cache: Path, index: PassageIndex) -> None:
    done = np.flatnonzero(index.ready)
    keys = np.array([index.keys[row] for row in done], dtype="S20")
    matrix = index.vectors[done]
    temporary = cache.with_name(f".{CACHE_FILE}.tmp.npz")
    try:
        np.savez(temporary, keys=keys, vectors=matrix)
        temporary.replace(cache)
    except OSError:  # unsaved only means embedded again next time
        temporary.unlink(missing_ok=True)
