"""Where to look, best first: the places a report points at in the repository.

Deterministic and model-free; the offline investigator reads these in order, and any
model can be given them as a starting point. `rank_candidates` puts together, strongest
first:

- **Frames** (`diagnoser.frames`): the in-app frames of the trace, innermost first — an
  input check after its caller, the frame file the headline points at lifted, the caller
  first when it handed over a null value, and after an explicit raise under an `if` the
  functions that computed what the condition tests (`diagnoser.crash_site`).
- **Relevance** of every other file (`diagnoser.relevance`): a weighted sum of BM25 of
  the report and of its headline against what each file names and says
  (`diagnoser.term_indexes`), and files and definitions the report names
  (`diagnoser.named`). Such a file is placed here at the function the report names,
  else at the function that fits the report best (inside a named class).
- **Meaning**, for a store review (`diagnoser.passages`): a review names no identifier,
  and in German or Japanese its words match nothing in English code, so the files are
  ordered by reciprocal rank fusion (`diagnoser.rank_fusion`; on the reviews with gold
  locations, K 1, 10 and 60 and a meaning weight of 0.5, 1 or 2 were within a few cases
  of each other) of the relevance order and the order of each file's function nearest
  the review in meaning (the bundled multilingual encoder over each
  function's name, comments and strings); a file it brings is placed at that function.
- **Native before managed** when the report names a failure of memory safety (a
  segfault, a double free, a sanitizer's error: `diagnoser.native`): C, C++ and Rust files
  go before the Python or JavaScript wrapper beside them, in each group.
- Test files by each ecosystem's convention (`test_*.py`, `*_test.go`, `testdata/`,
  `*.spec.ts`, `__tests__/`, Rust `benches/`, `src/test/`, `src/androidTest/`,
  `FooTest.java`, `*_spec.rb`, `Foo.Tests/`, Swift `Tests/`, `fixtures/`…), examples, docs
  and build scripts, and copies of code whose implementation is elsewhere — vendored,
  contributed or minified (`vendor/`, `third_party/`, a root `contrib/`, `deps/`,
  `*.min.js`, `jquery-3.5.1.js`, a line of 1,000+ characters), generated (`*.pb.go`,
  `*_generated.go`, `*.g.dart`), amalgamated or single-header (`single_include/`,
  `*_amalgamation.c`), declarations (`.d.ts`), bundles (`dist/`) and build output beside
  its `src/` twin (`lib/x.js` for `src/x.ts`) — come after everything else
  (`diagnoser.file_roles.is_secondary`): fixes rarely land there. They stay in the list
  as context, first only when nothing else matches.

Every weight and rule was chosen leave-one-project-out (bench/localize_lopo.py: choose on
all projects but one, measure on that one) — first on the developer benchmark's three
projects, then re-checked over 289 cases from 74 projects in eight languages (the
developer benchmark, `bench/cases_extra.jsonl`, `bench/data/multilang/`), where no fold
moved a constant; a rule that hurt a project without helping another was dropped.
docs/benchmarks.md has the numbers.
"""

from __future__ import annotations

import functools
import heapq
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

from diagnoser.candidate import CONTEXT_LINES, Candidate, Source, span
from diagnoser.encoder import encoder
from diagnoser.errors import ToolError
from diagnoser.file_roles import is_secondary
from diagnoser.frames import frame_candidates, ordered_frames
from diagnoser.intake.classify import Prior
from diagnoser.intake.prototypes import review_text
from diagnoser.intake.report import Report
from diagnoser.native import describes_native_failure, is_native
from diagnoser.passages import passage_index
from diagnoser.rank_fusion import fused_order
from diagnoser.relevance import Relevance, file_relevance, innermost, is_function
from diagnoser.term_indexes import term_index
from diagnoser.workspace import Workspace
from repomap import Definition, Repository
from repomap.copies import is_vendored, source_stems
from repomap.terms import BM25_K1
from repomap.words import terms

MAX_CANDIDATES = 5
NAME_MATCH_WEIGHT = 3
"""Inside a file, a report term in a definition's name counts this many times a term in
its body (identifiers, comments, strings)."""
FUNCTION_B = 0.75
"""BM25's length normalisation among a file's functions (their mean length)."""
EXTRA_PLACES = 2
"""The first place, when the report's words or names put its file first, is followed by
the file's next EXTRA_PLACES functions that fit the report best: the file is right far
more often than the function its words point at first (on the multi-language set, the
gold file first with its gold function second or third in 13 of 156 cases). Not after
a frame: the trace's next frame goes second (expanding a frame's file too: +3 cases on
the developer benchmark, −1 on the multi-language set, at the cost of the frames'
order). File rankings are unchanged: the places are in the same file. Chosen over 1 and
3 and over expanding the first two files, on the function Acc@5 of the three sets
(docs/benchmarks.md, "Suspects")."""
MINIFIED_LINE_CHARS = 1000
"""A line this long is generated or minified code, not something a person edits."""
MINIFIED_SCAN_CHARS = 32_000
"""How much of a file is looked at for such a line (bytes)."""
SECONDARY_BEFORE_CUT = True
"""Tests, docs and copies (`is_secondary`, by path) go after the other files *before* the
list is cut to the best `2 × limit`, not only after: a repository that vendors many
crates or headers matching the report's words otherwise fills the list with them, and
the file that was fixed, 21st by its words, never shows."""
PLAIN_SLOT = 5
"""The plain word ranking's best file — BM25 of the whole report against every file's
whole text, what a plain ranker puts first — is the ranking's PLAIN_SLOT-th file when
the structural signals (frames, names, the weighted words) have not put it higher: a
rank fusion that keeps their first four and guarantees the plain ranker's first in the
first five, so Acc@5 is never below plain BM25's Acc@1 (issue 27: on public trackers
plain BM25 is much stronger than on our sets). 0 = off. Slots 2–4 and two slots (4th and
5th) were simulated on the three sets' rankings: Acc@1 the same for all, Acc@5 within a
case of each other per set, the two slots 3–4 points lower on two sets; measured, the 5th
slot gives 91 → 92 on the developer benchmark and 87 → 86 on the multi-language set
(docs/benchmarks.md, "Suspects")."""
PLAIN_LOOK = 5
"""How far down the plain ranking to look for its best file that is not a test, doc or
copy."""
MEANING_LOOK = 200
"""The functions nearest a review in meaning that are looked at: their files, ranked by
their nearest function, are the meaning's list."""
NATIVE_FAILURE_FIRST = True
"""When the report names a failure of memory safety (a segfault, a double free, a
sanitizer's report: `diagnoser.native`), native files (C, C++, Rust) go before the
managed code beside them (a Python or JavaScript wrapper) in each group: the managed
runtime cannot fail so. A rule, not a weight: it reorders, it adds no score."""


class Meant(NamedTuple):
    """A file's function nearest a review in meaning, and why it is listed."""

    definition: Definition
    why: str


def rank_candidates(
    report: Report, workspace: Workspace, *, limit: int = MAX_CANDIDATES
) -> list[Candidate]:
    """Up to `limit` places to look, best first."""
    repository = workspace.repository
    index = repository.index
    frames = frame_candidates(report, index)
    relevance = file_relevance(report, repository)
    frames, priors = ordered_frames(report, frames, workspace, headline=relevance.headline)
    framed = {c.path for c in frames if c.source is Source.FRAME}
    meant = {p: m for p, m in _meant(report, workspace).items() if p not in framed}
    managed = _managed_last(report)
    twins = source_stems(index.files)
    others = sorted(
        (p for p in relevance.total if p not in framed),
        key=lambda p: (
            SECONDARY_BEFORE_CUT and is_secondary(p, twins),
            managed(p),
            -relevance.total[p],
        ),
    )
    if meant:
        others = fused_order(others, list(meant))
    ranked = [
        *frames,
        *(_place(path, relevance, repository, meant.get(path)) for path in others[: limit * 2]),
    ]

    @functools.cache
    def aside(path: str) -> bool:
        """A test, doc or copy (by its path, or a line no person writes): last."""
        return is_secondary(path, twins) or _is_copied(path, workspace)

    ranked.sort(key=lambda c: (aside(c.path), managed(c.path)))  # stable: order kept within
    ranked = _with_plain_best(ranked, relevance, repository, aside)
    ranked[1:1] = _also_fitting(ranked, relevance, workspace)
    return _scored(ranked[:limit], priors, relevance.total)


def uses_meaning(report: Report, workspace: Workspace) -> bool:
    """A store review, and the encoder on (`Settings.review_encoder`): its ranking fuses
    the meaning of the repository's functions."""
    return report.classification.prior == Prior.REVIEW and workspace.settings.review_encoder


def _meant(report: Report, workspace: Workspace) -> dict[str, Meant]:
    """For a store review (`uses_meaning`): each file holding one of the MEANING_LOOK
    functions nearest the review in meaning → its nearest and why, best file first. Else
    empty."""
    if not uses_meaning(report, workspace):
        return {}
    model = encoder()
    if model is None:
        return {}
    index = passage_index(workspace, model)
    nearest = index.nearest(model.query([review_text(report)]), limit=MEANING_LOOK)
    why = "what it says (its name, comments and strings) is nearest the review's meaning"
    if not index.complete:
        why += f" (of the {index.embedded:,} functions of {len(index.places):,} read so far)"
    meant: dict[str, Meant] = {}
    for path, definition, _ in nearest:
        meant.setdefault(path, Meant(definition, why))
    return meant


def _with_plain_best(
    ranked: list[Candidate],
    relevance: Relevance,
    repository: Repository,
    aside: Callable[[str], bool],
) -> list[Candidate]:
    """`ranked` with the plain word ranking's best file (`Relevance.plain`, not `aside`:
    a test, doc or copy) as its PLAIN_SLOT-th file, when it is not among the files before."""
    if not PLAIN_SLOT:
        return ranked
    plain = relevance.plain
    top = heapq.nsmallest(PLAIN_LOOK, plain, key=lambda p: (-plain[p], p))
    best = next((p for p in top if not aside(p)), None)
    files = list(dict.fromkeys(c.path for c in ranked))
    if best is None or best in files[: PLAIN_SLOT - 1]:
        return ranked
    placed = [c for c in ranked if c.path == best] or [_place(best, relevance, repository)]
    kept = [c for c in ranked if c.path != best]
    later = set(files[: PLAIN_SLOT - 1])
    at = next((n for n, c in enumerate(kept) if c.path not in later), len(kept))
    return [*kept[:at], placed[0], *kept[at:]]


def _managed_last(report: Report) -> Callable[[str], bool]:
    """Whether a path goes after the native files: managed code, when the report names a
    failure only native code can have (NATIVE_FAILURE_FIRST); else nothing does."""
    text = f"{report.title or ''}\n{report.text}"
    if NATIVE_FAILURE_FIRST and describes_native_failure(text):
        return lambda path: not is_native(path)
    return lambda path: False


def _scored(
    ranked: list[Candidate], priors: dict[str, float], relevance: dict[str, float]
) -> list[Candidate]:
    """Each candidate with its `score`: a frame's file prior, else its file's relevance."""
    return [
        replace(c, score=round(priors.get(c.path, 0.0) if c.source is Source.FRAME
                               else relevance.get(c.path, 0.0), 4))
        for c in ranked
    ]  # fmt: skip


def _is_copied(path: str, workspace: Workspace) -> bool:
    """Vendored by its path, or generated/minified by a line no person writes."""
    if is_vendored(path):
        return True
    try:
        data = workspace.read_bytes(path)[1][:MINIFIED_SCAN_CHARS]
    except ToolError:
        return False
    return any(len(line) >= MINIFIED_LINE_CHARS for line in data.splitlines())


def _place(
    path: str, relevance: Relevance, repository: Repository, meant: Meant | None = None
) -> Candidate:
    """A relevant file at the function the report names, else at the one nearest a
    review in meaning (`meant`, when the report names nothing in the file), else at the
    one that best fits the report — inside the class it names, if it names one. On the
    reviews with gold locations, the meaning's function before the words' did better at
    file Acc@5 (a first place by meaning takes no extra places from its file, so more
    files fit in the first five: 60 and 79 against 58 and 67, in the review's language
    and in English) and at function Acc@5 in English (32 against 28 and 21), worse in
    other languages (18 against 23)."""
    named = relevance.named.get(path)
    if named is not None and is_function(named):
        return span(path, named, named.line, Source.MENTION, f"the report names `{named.name}`")
    if meant is not None and named is None and path not in relevance.named_files:
        at = meant.definition
        return span(path, at, at.line, Source.MEANING, meant.why)
    best = _best_function(path, named, relevance.query, repository) or named
    if named is None and path not in relevance.named_files:
        why = "its names and code share the report's words (no trace or name leads here)"
        source = Source.WORDS
    else:
        why = f"the report names `{named.name}`" if named else "the report names this file"
        if best is not None and best is not named:
            why += f"; `{best.name}` in it fits the report's words best"
        source = Source.MENTION
    if best is None:
        return Candidate(path, 1, 1, CONTEXT_LINES, None, source, why)
    return span(path, best, best.line, source, why)


def _also_fitting(
    ranked: list[Candidate], relevance: Relevance, workspace: Workspace
) -> list[Candidate]:
    """The next EXTRA_PLACES functions of the first place's file that fit the report's
    words best and are not on the list yet, to go right after it, with its source — when
    words or a name put the file first (a trace's frames keep their order: the next
    frame says more than another function of the first's file)."""
    if not EXTRA_PLACES or not ranked or ranked[0].source not in (Source.WORDS, Source.MENTION):
        return []
    first = ranked[0]
    listed = {c.symbol for c in ranked if c.path == first.path}
    fitting = _fitting_functions(first.path, relevance.query, workspace)
    also = [d for d in fitting if d.qualified not in listed][:EXTRA_PLACES]
    why = "in the same file, it too fits the report's words"
    return [span(first.path, d, d.line, first.source, why) for d in also]


def _fitting_functions(path: str, query: frozenset[str], workspace: Workspace) -> list[Definition]:
    """A file's innermost functions (else its innermost definitions) that share the
    report's terms, best first, by BM25 of the report against each one's whole text — its
    name NAME_MATCH_WEIGHT times, its body's identifiers, comments and strings — each term
    weighed by its rarity in the repository: a second opinion beside `_best_function`'s
    (names only), so the places it adds differ in kind from the first. Empty when nothing
    matches (or nothing is defined)."""
    repository = workspace.repository
    tags = repository.tags.get(path)
    if tags is None:
        return []
    leaves = innermost(tags.definitions, None)
    leaves = [d for d in leaves if is_function(d)] or leaves
    if not leaves:
        return []
    try:
        lines = workspace.read_text_lines(path)[1]
    except ToolError:
        return []
    documents = []
    for definition in leaves:
        document = Counter(terms("\n".join(lines[definition.start_line - 1 : definition.end_line])))
        for term in terms(definition.name):
            document[term] += NAME_MATCH_WEIGHT
        documents.append(document)
    average = sum(sum(d.values()) for d in documents) / len(documents) or 1.0
    idf = term_index(repository).idf

    def score(document: Counter[str]) -> float:
        norm = BM25_K1 * (1 - FUNCTION_B + FUNCTION_B * sum(document.values()) / average)
        return sum(
            idf(t) * document[t] * (BM25_K1 + 1) / (document[t] + norm)
            for t in sorted(query & document.keys())  # one order: the same sums every run
        )

    scored = sorted(
        ((score(doc), -d.line, d) for doc, d in zip(documents, leaves, strict=True)),
        key=lambda item: (item[0], item[1]),
        reverse=True,
    )
    return [d for value, _, d in scored if value > 0]


def _best_function(
    path: str, within: Definition | None, query: frozenset[str], repository: Repository
) -> Definition | None:
    """BM25-style choice among a file's definitions (inside `within`): the report's terms
    in a definition's name weigh NAME_MATCH_WEIGHT, in the identifiers its body uses 1,
    each times the term's rarity. None when nothing matches (or nothing is defined)."""
    index = term_index(repository)
    tags = repository.tags.get(path)
    if tags is None:
        return None
    leaves = innermost(tags.definitions, within)
    if not leaves:
        return None
    used: dict[int, set[str]] = {}
    for name, lines in tags.references.uses():
        for line in lines:
            used.setdefault(line, set()).update(terms(name))

    def score(definition: Definition) -> float:
        body: set[str] = set()
        for line in range(definition.start_line, definition.end_line + 1):
            body |= used.get(line, set())
        own = set(terms(definition.name))
        return sum(
            index.idf(t) * (NAME_MATCH_WEIGHT * (t in own) + (t in body))
            for t in sorted(query & (own | body))  # one order: the same sums every run
        )

    scored = [(score(d), -d.line, d) for d in leaves]
    best = max(scored, key=lambda item: (item[0], item[1]))
    return best[2] if best[0] > 0 else within
