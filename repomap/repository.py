"""`Repository`: the repo map's front door — build the index (cached), then map it.

repo = Repository.open("path/to/repo")            # walks, parses what changed, caches
text = repo.map(focus=["query.py:248", "QuerySet"], tokens=2048)
repo.index.find("QuerySet.filter")
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from repomap.build import BuildStats, Progress, build
from repomap.constants import DEFAULT_MAP_TOKENS
from repomap.files import Skipped
from repomap.focus import Focus, resolve_focus
from repomap.graph import ReferenceGraph, build_graph
from repomap.index import SymbolIndex
from repomap.rank import Ranking, rank
from repomap.render import render_map
from repomap.tags import FileTags

NO_FILES_MESSAGE = "no supported source files found (languages: see `python -m repomap --help`)"


@dataclass
class Repository:
    root: Path
    tags: dict[str, FileTags]
    index: SymbolIndex
    warnings: list[Skipped]
    stats: BuildStats

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        home: Path | None = None,
        use_cache: bool = True,
        progress: Progress | None = None,
        workers: int | None = None,
    ) -> Repository:
        """Index the repository at `path`; raises InvalidRepoError for a bad path."""
        result = build(path, home=home, use_cache=use_cache, progress=progress, workers=workers)
        assert result.stats is not None
        return cls(
            result.root, result.tags, SymbolIndex(result.tags), result.warnings, result.stats
        )

    def focus(self, items: Sequence[str]) -> Focus:
        return resolve_focus(items, self.tags)

    @functools.cached_property
    def graph(self) -> ReferenceGraph:
        return build_graph(self.tags)

    def rank(self, focus: Sequence[str] = (), *, limit: int | None = None) -> Ranking:
        return rank(self.graph, self.focus(focus), limit=limit)

    def map(self, *, focus: Sequence[str] = (), tokens: int = DEFAULT_MAP_TOKENS) -> str:
        """The ranked map text, at most `tokens` long, with a warnings section if any."""
        warnings = [f"{w.path}: {w.reason}" for w in self.warnings]
        if not self.tags:
            warnings.insert(0, NO_FILES_MESSAGE)
        # A definition's line costs at least one token, so `tokens` bounds how many can fit.
        ranking = self.rank(focus, limit=tokens)
        return render_map(ranking, self.tags, tokens=tokens, warnings=warnings)
