"""`Repository`: the repo map's front door — build the index (cached), then map it.

repo = Repository.open("path/to/repo")            # walks, parses what changed, caches
text = repo.map(focus=["query.py:248", "QuerySet"], tokens=2048)
repo.index.find("QuerySet.filter")
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from repomap import allocator, cache
from repomap.build import BuildResult, BuildStats, Progress, build
from repomap.cachefile import CacheError
from repomap.constants import DEFAULT_MAP_TOKENS
from repomap.deny import DenyList
from repomap.files import Skipped
from repomap.focus import Focus, resolve_focus
from repomap.graph import ReferenceGraph, build_graph
from repomap.index import SymbolIndex
from repomap.rank import Ranking, rank
from repomap.render import render_map
from repomap.tags import FileTags, file_words
from repomap.words import NO_WORDS, Words

T = TypeVar("T")

NO_FILES_MESSAGE = "no supported source files found (languages: see `python -m repomap --help`)"


class Repository:
    """An indexed repository: its tags, symbol index and reference graph, all cached."""

    def __init__(self, result: BuildResult) -> None:
        self.root: Path = result.root
        self.tags: Mapping[str, FileTags] = result.tags
        self.index = SymbolIndex(result.tags)
        self.warnings: list[Skipped] = result.warnings
        self.stats: BuildStats = result.stats
        self._content_key = result.content_key

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        home: Path | None = None,
        use_cache: bool = True,
        progress: Progress | None = None,
        workers: int | None = None,
        deny: DenyList | None = None,
        seed: Path | None = None,
    ) -> Repository:
        """Index the repository at `path`; raises InvalidRepoError for a bad path.
        `deny` keeps secret files out of the index (default: the default deny-list);
        `seed` is another tree of the same repository whose cached tags unchanged files
        reuse (`repomap.build`)."""
        repository = cls(
            build(
                path, home=home, use_cache=use_cache, progress=progress, workers=workers,
                deny=deny, seed=seed,
            )
        )  # fmt: skip
        allocator.release()  # the cache file's bytes, the parse results: freed, still resident
        return repository

    def focus(self, items: Sequence[str]) -> Focus:
        return resolve_focus(items, self.tags)

    @functools.cached_property
    def graph(self) -> ReferenceGraph:
        """The reference graph: from the cache when it was saved for these very tags.
        A cached graph that is damaged or does not fit the tags is rebuilt, with a warning."""
        return self.derived(
            cache.GRAPH_FILE,
            lambda: build_graph(self.tags),
            encode=ReferenceGraph.to_payload,
            decode=lambda payload: _fitting(ReferenceGraph.from_payload(payload), self.tags),
        )

    def derived(
        self,
        name: str,
        build: Callable[[], T],
        *,
        encode: Callable[[T], object],
        decode: Callable[[Any], T | None],
        leave: frozenset[str] = frozenset(),
    ) -> T:
        """A value derived from these tags alone, kept in the cache directory as `name`:
        read back (`decode`) when it was saved for these very tags, else built and saved
        (`encode`). `decode` returns None for a payload made another way (by other code:
        rebuilt, silently) and raises ValueError for one it cannot trust (rebuilt, with a
        warning); a file that cannot be written only means it is built again next time.
        The payload's large parts named in `leave` stay in the file (`cachefile.Part`),
        and a value just built is read back from the file it was saved to, so the build
        lets go of them too. Not cached in memory: that is the caller's choice."""
        if self._content_key is None:
            return build()
        directory = Path(self.stats.cache_dir)
        found: T | None = None
        try:
            found = self._load(directory, name, decode, leave)
        except CacheError as exc:  # the file itself, or a decoder's own words
            self.warnings.append(Skipped(str(directory), f"{exc}; rebuilt"))
        except ValueError as exc:
            self.warnings.append(Skipped(str(directory), f"{name} was corrupt ({exc}); rebuilt"))
        if found is None:
            found = build()
            with contextlib.suppress(OSError):  # unsaved only means rebuilt next time
                cache.save_blob(directory, name, encode(found), key=self._content_key)
                if leave:
                    with contextlib.suppress(ValueError):  # CacheError too: keep the built
                        found = self._load(directory, name, decode, leave) or found
        allocator.release()  # the file's bytes or the build's temporaries
        return found

    def _load(
        self, directory: Path, name: str, decode: Callable[[Any], T | None], leave: frozenset[str]
    ) -> T | None:
        assert self._content_key is not None
        payload = cache.load_blob(directory, name, key=self._content_key, leave=leave)
        return None if payload is None else decode(payload)

    def words(self) -> Mapping[str, Words]:
        """Each file's word counts (`repomap.tags.file_words`), the text index's documents:
        read from the cache's words.bin when first asked and held only as long as the
        mapping returned is — not with the tags, of which they would be half."""
        assert isinstance(self.tags, cache.TagsView)  # what `build` makes
        return cache.WordsView(self.tags, self.cache_dir, recount=self._count_words)

    @property
    def cache_dir(self) -> Path | None:
        """The directory this repository's cache lives in (None: built without one), where
        derived values are kept and a build may set its temporaries aside."""
        return Path(self.stats.cache_dir) if self._content_key is not None else None

    def _count_words(self, path: str) -> Words:
        """A file's words counted again (words.bin lacks them): the file as it is now."""
        try:
            return file_words((self.root / path).read_bytes())
        except OSError:
            return NO_WORDS

    def rank(self, focus: Sequence[str] = (), *, limit: int | None = None) -> Ranking:
        return rank(self.graph, self.tags, self.focus(focus), limit=limit)

    def map(self, *, focus: Sequence[str] = (), tokens: int = DEFAULT_MAP_TOKENS) -> str:
        """The ranked map text, at most `tokens` long, with a warnings section if any."""
        warnings = [f"{w.path}: {w.reason}" for w in self.warnings]
        if not self.tags:
            warnings.insert(0, NO_FILES_MESSAGE)
        # A definition's line costs at least one token, so `tokens` bounds how many can fit.
        ranking = self.rank(focus, limit=tokens)
        return render_map(ranking, self.tags, tokens=tokens, warnings=warnings)


def _fitting(graph: ReferenceGraph | None, tags: Mapping[str, FileTags]) -> ReferenceGraph | None:
    """`graph` if it fits `tags` (None stays None: a graph laid out another way); CacheError
    otherwise (a key is only a checksum of paths and content hashes: it can be forged)."""
    if graph is None:
        return None
    paths = tuple(sorted(tags))
    counts = (
        tags.definition_counts(paths)
        if isinstance(tags, cache.TagsView)
        else [len(tags[path].definitions) for path in paths]
    )
    # Ranking looks definitions up by position in their file: the counts must agree.
    if graph.paths != paths or np.bincount(graph.def_file, minlength=len(paths)).tolist() != counts:
        raise CacheError(f"{cache.GRAPH_FILE} does not fit the tags it was saved for")
    return dataclasses.replace(graph, paths=paths)  # the tags' own path strings, not a copy
