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

from collections.abc import Callable
from dataclasses import replace

from diagnoser.candidate import CONTEXT_LINES, Candidate, Source, span
from diagnoser.errors import ToolError
from diagnoser.file_roles import is_secondary
from diagnoser.frames import frame_candidates, ordered_frames
from diagnoser.intake.report import Report
from diagnoser.native import describes_native_failure, is_native
from diagnoser.relevance import Relevance, file_relevance, is_function
from diagnoser.term_indexes import term_index
from diagnoser.workspace import Workspace
from repomap import Definition, Repository
from repomap.copies import is_vendored, source_stems
from repomap.words import terms

MAX_CANDIDATES = 5
NAME_MATCH_WEIGHT = 3
"""Inside a file, a report term in a definition's name counts this many times a term in
the identifiers its body uses."""
MINIFIED_LINE_CHARS = 1000
"""A line this long is generated or minified code, not something a person edits."""
MINIFIED_SCAN_CHARS = 32_000
"""How much of a file is looked at for such a line (bytes)."""
SECONDARY_BEFORE_CUT = True
"""Tests, docs and copies (`is_secondary`, by path) go after the other files *before* the
list is cut to the best `2 × limit`, not only after: a repository that vendors many
crates or headers matching the report's words otherwise fills the list with them, and
the file that was fixed, 21st by its words, never shows."""
NATIVE_FAILURE_FIRST = True
"""When the report names a failure of memory safety (a segfault, a double free, a
sanitizer's report: `diagnoser.native`), native files (C, C++, Rust) go before the
managed code beside them (a Python or JavaScript wrapper) in each group: the managed
runtime cannot fail so. A rule, not a weight: it reorders, it adds no score."""


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
    ranked = [
        *frames,
        *(_place(path, relevance, repository) for path in others[: limit * 2]),
    ]
    # stable: order kept within each group
    ranked.sort(
        key=lambda c: (
            is_secondary(c.path, twins) or _is_copied(c.path, workspace),
            managed(c.path),
        )
    )
    return _scored(ranked[:limit], priors, relevance.total)


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


def _place(path: str, relevance: Relevance, repository: Repository) -> Candidate:
    """A relevant file at the function the report names, else at the one that best fits
    the report — inside the class it names, if it names one."""
    named = relevance.named.get(path)
    if named is not None and is_function(named):
        return span(path, named, named.line, Source.MENTION, f"the report names `{named.name}`")
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
    inside = [
        d for d in tags.definitions
        if within is None or within.start_line <= d.start_line <= d.end_line <= within.end_line
    ]  # fmt: skip
    if not inside:
        return None
    # innermost definitions only: a class's body holds every method's words
    leaves = [d for d, after in zip(inside, [*inside[1:], None], strict=True)
              if after is None or after.start_line > d.end_line]  # fmt: skip
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
            for t in query & (own | body)
        )

    scored = [(score(d), -d.line, d) for d in leaves]
    best = max(scored, key=lambda item: (item[0], item[1]))
    return best[2] if best[0] > 0 else within
