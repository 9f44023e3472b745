"""The plain rankers the investigator is measured against, beside it in the same run.

    bm25 = Bm25.build({path: text, ...})                # once per release
    ranked = bm25.rank(report_text)                     # every file, best first
    order = mentions_order(ranked, files=[...], definers=[{...}, ...])

- BM25 over files: identifier-split tokens of the content, plus the path's tokens
  (`PATH_WEIGHT` times); the developer benchmark's ranker since issue 5.
- "Mentions, then BM25" (issue 12): the files the report names (matched by path suffix:
  `node_modules/postcss/lib/parser.js` and `parser.js` both reach `lib/parser.js`), then
  the files defining the names it mentions, in the report's order, then BM25 order for
  the rest. A mention that fits several files keeps its BM25-best `MAX_PER_MENTION`.

Pure standard library: values in, ranked paths out.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

BM25_K1 = 1.2
BM25_B = 0.75
PATH_WEIGHT = 3
"""A token of the file's path counts as this many occurrences in its content."""
MIN_TOKEN = 3
"""Tokens shorter than this (`id`, `fn`, `ok`) are dropped."""
MAX_PER_MENTION = 3
"""A named file or name that fits more files than this (`index.js`, `parse`) keeps only
its BM25-best few: a mention that fits everything says nothing."""
_TOKEN = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])")


def tokens(text: str) -> list[str]:
    """Lower-cased words of identifiers (`parseHTTPHeader_v2` → parse, http, header)."""
    return [t.lower() for t in _TOKEN.findall(text) if len(t) >= MIN_TOKEN]


@dataclass(frozen=True, slots=True)
class Bm25:
    """Term counts of a release's files, to rank them against any number of reports."""

    docs: Mapping[str, Counter[str]]
    average: float
    """Mean document length in tokens."""
    frequency: Counter[str]
    """How many documents hold each term."""

    @classmethod
    def build(cls, texts: Mapping[str, str]) -> Bm25:
        docs = {
            path: Counter(tokens(text) + tokens(path) * PATH_WEIGHT) for path, text in texts.items()
        }
        average = sum(sum(d.values()) for d in docs.values()) / max(len(docs), 1)
        frequency = Counter(t for d in docs.values() for t in d)
        return cls(docs=docs, average=average, frequency=frequency)

    def scores(self, query: str) -> dict[str, float]:
        terms = set(tokens(query))
        total = len(self.docs)
        scores = {}
        for path, doc in self.docs.items():
            length = sum(doc.values())
            score = 0.0
            for term in terms & doc.keys():
                often = self.frequency[term]
                idf = math.log(1 + (total - often + 0.5) / (often + 0.5))
                tf = doc[term]
                norm = BM25_K1 * (1 - BM25_B + BM25_B * length / self.average)
                score += idf * tf * (BM25_K1 + 1) / (tf + norm)
            scores[path] = score
        return scores

    def rank(self, query: str) -> list[str]:
        """Every file, best score first, ties by path."""
        scores = self.scores(query)
        return sorted(scores, key=lambda p: (-scores[p], p))


def suffix_matches(mention: str, paths: Iterable[str]) -> list[str]:
    """The paths sharing the longest run of trailing components with a path the report
    wrote (at least the file name), in their given order; [] when none shares it."""
    wanted = [p for p in re.split(r"[/\\]+", mention) if p not in ("", ".", "..")]
    if not wanted:
        return []
    best, found = 0, []
    for path in paths:
        parts = path.split("/")
        common = 0
        while common < min(len(parts), len(wanted)) and parts[-1 - common] == wanted[-1 - common]:
            common += 1
        if common and common > best:
            best, found = common, [path]
        elif common and common == best:
            found.append(path)
    return found


def mentions_order(
    ranked: Sequence[str], *, files: Sequence[str], definers: Sequence[Iterable[str]]
) -> list[str]:
    """Named files (each mention's matches), then each mentioned name's defining files,
    then the rest — each group in `ranked` order (BM25), only files that are in `ranked`.

    Args:
        ranked: the candidate files, best first.
        files: paths as the report wrote them, in its order.
        definers: for each name the report mentions, in its order, the files defining it.
    """
    position = {path: i for i, path in enumerate(ranked)}
    by_name: dict[str, list[str]] = {}
    for path in ranked:
        by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    order: list[str] = []
    for mention in files:
        same_name = by_name.get(re.split(r"[/\\]", mention)[-1], [])
        order.extend(suffix_matches(mention, same_name)[:MAX_PER_MENTION])
    for defining in definers:
        known = sorted((p for p in set(defining) if p in position), key=position.__getitem__)
        order.extend(known[:MAX_PER_MENTION])
    order.extend(ranked)
    return list(dict.fromkeys(order))


def rank_of(ranked: Sequence[str], gold: Iterable[str]) -> int | None:
    """1-based position of the first gold file, None when none is ranked."""
    wanted = set(gold)
    return next((i for i, path in enumerate(ranked, 1) if path in wanted), None)
