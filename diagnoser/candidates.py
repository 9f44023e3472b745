"""Where to look, best first: the places a report points at in the repository.

Deterministic and model-free; the offline investigator reads these in order, and any
model can be given them as a starting point. Signals, strongest first:

- **Frames**: the in-app frames of the trace, innermost first — except that frames in
  shared utility modules (`utils`, `helpers`, `common`, `compat`, `_api`) go after the
  others (a helper that checked its input and raised is rarely where the fix goes; its
  caller passed the bad value), a frame file the headline points at moves up, and a
  null dereference (`'NoneType' object has no attribute 'email'`, `reading 'title'`) of
  a value that arrived as an argument puts the caller first: the value came from there.
  When the failing line is an explicit raise under an `if`, the functions that computed
  what the condition tests come right after it (the check is often right, its input
  wrong).
- **Relevance** of every other file, a weighted sum of: BM25 of the whole report against
  what each file defines and uses (`repomap.terms`), BM25 of the headline alone (the
  title, or the first line: a person's one-line summary names the broken part more
  often than the details do), files the report names by path or module, and definitions
  of names it mentions that few files define. Such a file is placed at the function the
  report names, else at the function that fits the report best (inside a named class).
- Test files, examples, docs and build scripts come after everything else: fixes rarely
  land there.

The weights were chosen on the developer benchmark (bench/localize_bench.py) where
accuracy is flat around them; docs/benchmarks.md has the numbers.
"""

from __future__ import annotations

import re
import weakref
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from enum import StrEnum

from diagnoser.errors import ToolError
from diagnoser.intake.report import MappedFrame, Report
from diagnoser.workspace import Workspace
from repomap import Definition, Repository, SymbolIndex
from repomap.focus import resolve_focus
from repomap.terms import TermIndex, terms

MAX_CANDIDATES = 5
FRAMES_PER_FILE = 2
"""Two functions of one file may both be on the stack; other signals give one place."""
MAX_DEFINERS = 3
"""A mentioned name defined in more files than this is too common to point anywhere."""
CONTEXT_LINES = 12
"""Lines around a frame line worth reading when its definition is long."""
MAX_HEADLINE_CHARS = 200

FRAME_DECAY = 0.5
"""A frame's prior is 1 / (1 + depth) ** FRAME_DECAY, depth 0 = innermost in-app file."""
UTILITY_PENALTY = 1.0
"""Subtracted from a utility module's frame prior (≥ any prior: after the other frames)."""
FRAME_HEADLINE_WEIGHT = 1.5
"""How far the headline's relevance lifts a frame file."""
TEXT_WEIGHT = 1.0
HEADLINE_WEIGHT = 0.7
NAMED_FILE_WEIGHT = 0.6
NAMED_DEFINITION_WEIGHT = 0.2
"""Shared among the files defining the name."""
FUNCTION_KINDS = frozenset({"function", "method"})
"""Definition kinds that are a place on their own; others (classes…) hold places."""
NAME_MATCH_WEIGHT = 3
"""Inside a file, a report term in a definition's name counts this many times a term in
the identifiers its body uses."""

_UTILITY = re.compile(r"(?:^|/)(?:utils?|helpers?|common|compat|_api)(?:/|\.[A-Za-z]+$)")
_AUXILIARY = re.compile(
    r"^(?:examples?|docs?|benchmarks?|tutorials?|galleries|demos?|scripts?)/"
    r"|(?:^|/)(?:setup|conftest)\.py$"
)
"""Top-level folders only: `com/demo/notes/` is a package, not a demo."""
ON_THE_PATH = "on the failing path (trace frame)"
MAX_GUARD_INPUTS = 2
"""At most this many functions whose results an explicit raise's guard tested."""
_RAISE = re.compile(r"^\s*(?:raise|throw)\b")
_GUARD = re.compile(r"^(\s*)(?:if|elif|else\s+if|unless|when)\b(.*)$")
_NAME = re.compile(r"[A-Za-z_$][\w$]*")
SIGNATURE_LINES = 8
"""How many lines a signature may span when looking for a parameter."""
_NULL_MEMBER = (
    re.compile(r"(?:NoneType|null|undefined|nil)\b.{0,40}?(?:attribute|reading|method|property)"
               r"\s*['\"`]?(\w+)"),
    re.compile(r"(?:property|method|member)\s*['\"`](\w+)['\"`]? (?:of|for|on) "
               r"(?:undefined|null|nil)"),
)  # fmt: skip
_TERM_INDEXES: weakref.WeakKeyDictionary[Repository, TermIndex] = weakref.WeakKeyDictionary()


class Source(StrEnum):
    FRAME = "frame"
    MENTION = "mention"
    """The report names the file or a definition in it."""
    WORDS = "words"
    """Only the report's words match: context, never called the fault."""
    DATAFLOW = "dataflow"
    """Computes a value the failing check tested (an explicit raise's guard)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str
    line: int
    """The line that matters: the frame's line, or the definition's signature line."""
    start: int
    end: int
    """Lines worth reading around `line`, inside its definition."""
    symbol: str | None
    source: Source
    reason: str = ""
    """Why this place, in words for the report."""
    score: float = 0.0
    """How strongly its signal points here. A frame: its file's prior (depth decay, less
    UTILITY_PENALTY in a utility module, plus the headline's lift; so it can be negative).
    Any other place: its file's relevance total (0 when only a guard's dataflow leads
    there). Comparable within one source, not across: the list's order is the ranking."""


def rank_candidates(
    report: Report, workspace: Workspace, *, limit: int = MAX_CANDIDATES
) -> list[Candidate]:
    """Up to `limit` places to look, best first."""
    repository = workspace.repository
    index = repository.index
    frames = _frame_candidates(report, index)
    relevance = _relevance(report, repository)
    priors = _frame_priors([c.path for c in frames], relevance.headline)  # innermost first
    frame_order = _frame_file_order([c.path for c in frames], relevance.headline)
    innermost = frames[:2]
    frames.sort(key=lambda c: frame_order[c.path])
    site = _crash_site(frames[0], workspace) if innermost and frames[0] == innermost[0] else None
    if site is not None and len(innermost) == 2 and _null_argument(report, site):
        frames.remove(innermost[1])
        why = "passes the missing value on to the crashing call below it (trace frame)"
        frames.insert(0, replace(innermost[1], reason=why))
    elif site is not None:
        frames[1:1] = _guard_inputs(site, index)
    framed = {c.path for c in frames if c.source is Source.FRAME}
    others = sorted(
        (p for p in relevance.total if p not in framed), key=lambda p: -relevance.total[p]
    )
    ranked = [
        *frames,
        *(_place(path, relevance, repository) for path in others[: limit * 2]),
    ]
    ranked.sort(key=lambda c: is_peripheral(c.path))  # stable: order kept within each group
    return _scored(ranked[:limit], priors, relevance.total)


def is_test(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        name.startswith("test")
        or name.endswith(("_test.py", "_tests.py", ".test.js", ".spec.js", "Test.java", "Test.kt"))
        or any(part in f"/{path}" for part in ("/tests/", "/test/", "/__tests__/"))
    )


def is_peripheral(path: str) -> bool:
    """Tests, examples, docs and build scripts: where fixes rarely land."""
    return is_test(path) or bool(_AUXILIARY.search(path))


def is_utility(path: str) -> bool:
    return bool(_UTILITY.search(path))


def headline(report: Report) -> str:
    """The report's one-line summary in a person's words: its title, else its first
    non-empty line — empty when that line is only the exception (a crash reporter's
    title), which the trace already says better."""
    line = report.title or next((ln for ln in report.text.splitlines() if ln.strip()), "")
    line = line.strip()[:MAX_HEADLINE_CHARS]
    exception = report.exception
    if exception and exception.type:
        named = line.split(":", 1)[0].rsplit(".", 1)[-1].strip()
        if named == exception.type.rsplit(".", 1)[-1] or line == (exception.message or "").strip():
            return ""
    return line


def term_index(repository: Repository) -> TermIndex:
    """The repository's BM25 index over non-test files, built once per Repository."""
    found = _TERM_INDEXES.get(repository)
    if found is None:
        found = TermIndex.build(repository.tags, keep=lambda path: not is_test(path))
        _TERM_INDEXES[repository] = found
    return found


@dataclass(frozen=True, slots=True)
class _Relevance:
    total: dict[str, float]
    headline: dict[str, float]
    """BM25 of the headline, normalised to the best file (1.0)."""
    named_files: frozenset[str]
    """Files the report names by path or module."""
    named: dict[str, Definition]
    """File → the definition in it of a name the report mentions (a function before a
    class, else the first mentioned)."""
    query: frozenset[str]
    """The report's terms (headline and text)."""


def _relevance(report: Report, repository: Repository) -> _Relevance:
    index = term_index(repository)
    text = _normalised(index.scores(terms(f"{report.title or ''}\n{report.text}")))
    title = _normalised(index.scores(terms(headline(report))))
    total: defaultdict[str, float] = defaultdict(float)
    for path, score in text.items():
        total[path] += TEXT_WEIGHT * score
    for path, score in title.items():
        total[path] += HEADLINE_WEIGHT * score
    named_files = _named_files(report, repository.index)
    for path in named_files:
        total[path] += NAMED_FILE_WEIGHT
    named: dict[str, Definition] = {}
    for definitions in _named_definitions(report, repository.index):
        for path, definition in definitions:
            total[path] += NAMED_DEFINITION_WEIGHT / len(definitions)
            if path not in named or _is_function(definition) > _is_function(named[path]):
                named[path] = definition  # the first named, a named function before a class
    query = frozenset(terms(f"{headline(report)}\n{report.text}"))
    return _Relevance(dict(total), title, frozenset(named_files), named, query)


def _normalised(scores: dict[str, float]) -> dict[str, float]:
    best = max(scores.values(), default=0.0)
    return {path: score / best for path, score in scores.items()} if best > 0 else {}


def _named_files(report: Report, index: SymbolIndex) -> list[str]:
    """Files the report names by path or dotted module."""
    wanted = [
        *report.mentioned.files,
        *(m.replace(".", "/") + ".py" for m in report.mentioned.modules),
    ]
    return list(resolve_focus(wanted, index.files).files)


def _named_definitions(report: Report, index: SymbolIndex) -> list[list[tuple[str, Definition]]]:
    """Per mentioned name defined in at most MAX_DEFINERS files: (file, definition) pairs."""
    found = []
    for name in report.mentioned.identifiers:
        lookup = index.find(name)
        if lookup.how.value not in ("exact", "qualified"):
            continue
        by_file: dict[str, Definition] = {}
        for symbol in lookup.matches:
            by_file.setdefault(symbol.path, symbol.definition)
        if 0 < len(by_file) <= MAX_DEFINERS:
            found.append(list(by_file.items()))
    return found


def _frame_file_order(paths: list[str], headline: dict[str, float]) -> dict[str, int]:
    """Frame files (innermost first) → their rank, by `_frame_priors`."""
    prior = _frame_priors(paths, headline)
    return {path: rank for rank, path in enumerate(sorted(prior, key=lambda p: -prior[p]))}


def _frame_priors(paths: list[str], headline: dict[str, float]) -> dict[str, float]:
    """Frame files (innermost first) → their prior: depth decay, utility modules after
    the rest, lifted by the headline's relevance."""
    files = list(dict.fromkeys(paths))
    return {
        path: 1 / (1 + depth) ** FRAME_DECAY
        - UTILITY_PENALTY * is_utility(path)
        + FRAME_HEADLINE_WEIGHT * headline.get(path, 0.0)
        for depth, path in enumerate(files)
    }


def _scored(
    ranked: list[Candidate], priors: dict[str, float], relevance: dict[str, float]
) -> list[Candidate]:
    """Each candidate with its `score`: a frame's file prior, else its file's relevance."""
    return [
        replace(c, score=round(priors.get(c.path, 0.0) if c.source is Source.FRAME
                               else relevance.get(c.path, 0.0), 4))
        for c in ranked
    ]  # fmt: skip


def _frame_candidates(report: Report, index: SymbolIndex) -> list[Candidate]:
    """In-app frames innermost first, at most FRAMES_PER_FILE per file, no place twice."""
    found: list[Candidate] = []
    per_file: Counter[str] = Counter()
    for mapped in reversed(report.frames):
        candidate = _at_frame(mapped, index)
        if candidate is None or per_file[candidate.path] >= FRAMES_PER_FILE:
            continue
        if all((c.path, c.symbol) != (candidate.path, candidate.symbol) for c in found):
            if not found and candidate.reason == ON_THE_PATH:
                candidate = replace(candidate, reason="where it failed: the innermost in-app frame")
            found.append(candidate)
            per_file[candidate.path] += 1
    return found


def _at_frame(mapped: MappedFrame, index: SymbolIndex) -> Candidate | None:
    """The frame's place. When the code has moved since the trace was taken (the enclosing
    definition at that line has another name), the definition the frame names wins."""
    path, line = mapped.repo_path, mapped.frame.line
    if not (mapped.in_app and path and line):
        return None
    definition = index.enclosing(path, line)
    named = (mapped.frame.function or "").rsplit(".", 1)[-1]
    why = ON_THE_PATH
    if is_utility(path):
        why = "trace frame in a shared utility module; its caller may have passed the bad value"
    if named and (definition is None or definition.name != named):
        moved = [d for d in index.definitions_in(path) if d.name == named]
        if len(moved) == 1:
            why = f"trace frame `{named}` (line {line} in the trace; the code has moved since)"
            return _span(path, moved[0], moved[0].line, Source.FRAME, why)
    if definition is None:
        start = max(1, line - CONTEXT_LINES)
        return Candidate(path, line, start, line + CONTEXT_LINES, None, Source.FRAME, why)
    return _span(path, definition, line, Source.FRAME, why)


@dataclass(frozen=True, slots=True)
class _CrashSite:
    """The innermost frame's place, with its file's lines and its enclosing definition."""

    frame: Candidate
    lines: list[str]
    definition: Definition

    @property
    def text(self) -> str:
        return self.lines[self.frame.line - 1]


def _crash_site(frame: Candidate, workspace: Workspace) -> _CrashSite | None:
    """The crash line in context, read once; None when it cannot be read or placed."""
    definition = workspace.repository.index.enclosing(frame.path, frame.line)
    try:
        lines = workspace.read_text_lines(frame.path)[1]
    except ToolError:
        return None
    if definition is None or not 0 < frame.line <= len(lines):
        return None
    return _CrashSite(frame, lines, definition)


def _null_argument(report: Report, site: _CrashSite) -> bool:
    """Whether the trace is a null dereference at the crash site of a value its function
    received as a parameter (`share.recipient.email` in `def share_created(self, share)`)."""
    message = report.exception.message if report.exception else None
    member = next((m.group(1) for p in _NULL_MEMBER if (m := p.search(message or ""))), None)
    if member is None:
        return False
    used = re.search(rf"([A-Za-z_$][\w$]*)(?:\??\.[\w$]+)*\??\.{re.escape(member)}\b", site.text)
    if used is None or used.group(1) in ("self", "this", "cls"):
        return False
    signature = []
    start = site.definition.line - 1
    for text in site.lines[start : start + SIGNATURE_LINES]:
        signature.append(text)
        if text.rstrip().endswith((":", "{", "=>")):
            break
    return re.search(rf"\b{re.escape(used.group(1))}\b", "\n".join(signature)) is not None


def _guard_inputs(site: _CrashSite, index: SymbolIndex) -> list[Candidate]:
    """When the failing line is an explicit raise/throw under an `if`, the functions that
    computed what the condition tests (`pages = self.page_count(…)` … `if page > pages:`
    … `raise PageOutOfRange`): the check is often right and its input wrong."""
    if not _RAISE.match(site.text):
        return []
    indent = len(site.text) - len(site.text.lstrip())
    body = site.lines[site.definition.line - 1 : site.frame.line - 1]
    guard = next(
        (m for m in map(_GUARD.match, reversed(body)) if m and len(m.group(1)) < indent), None
    )
    if guard is None:
        return []
    tested = set(_NAME.findall(guard.group(2)))
    callees = _calls(guard.group(2))
    for text in body:
        assigned = re.match(r"^\s*([A-Za-z_$][\w$]*)\s*=\s*(.*)$", text)
        if assigned and assigned.group(1) in tested:
            callees += _calls(assigned.group(2))
    found: list[Candidate] = []
    for name in dict.fromkeys(callees):
        place = _definition_near(name, site.frame.path, index)
        if place is not None and place[1].name != site.definition.name:
            path, target = place
            why = f"computes `{name}(…)`, which the failing check at line {site.frame.line} tests"
            found.append(_span(path, target, target.line, Source.DATAFLOW, why))
    return found[:MAX_GUARD_INPUTS]


def _calls(expression: str) -> list[str]:
    """Names of the functions called in an expression (`self.page_count(x)` → page_count)."""
    return [m.group(1) for m in re.finditer(r"([A-Za-z_$][\w$]*)\s*\(", expression)]


def _definition_near(name: str, path: str, index: SymbolIndex) -> tuple[str, Definition] | None:
    """`name`'s definition: in `path` when it has one, else the only one in the repo."""
    lookup = index.find(name)
    if lookup.how.value != "exact":
        return None
    local = [s for s in lookup.matches if s.path == path]
    chosen = local or (list(lookup.matches) if len(lookup.matches) == 1 else [])
    return (chosen[0].path, chosen[0].definition) if chosen else None


def _place(path: str, relevance: _Relevance, repository: Repository) -> Candidate:
    """A relevant file at the function the report names, else at the one that best fits
    the report — inside the class it names, if it names one."""
    named = relevance.named.get(path)
    if named is not None and _is_function(named):
        return _span(path, named, named.line, Source.MENTION, f"the report names `{named.name}`")
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
    return _span(path, best, best.line, source, why)


def _is_function(definition: Definition) -> bool:
    return definition.kind in FUNCTION_KINDS


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
    for name, lines in ((n, tags.references[n]) for n in tags.references):
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


def _span(path: str, definition: Definition, line: int, source: Source, reason: str) -> Candidate:
    start = max(definition.start_line, line - CONTEXT_LINES)
    end = min(definition.end_line, line + CONTEXT_LINES)
    return Candidate(path, line, start, max(end, line), definition.qualified, source, reason)
