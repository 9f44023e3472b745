"""Where to look, best first: the places a report points at in the repository.

Deterministic and model-free; the offline investigator reads these in order, and any
model can be given them as a starting point. Signals, strongest first:

- **Frames**: the in-app frames of the trace, innermost first — except that a frame that
  is an input check goes after the others: every frame of its file is named like one
  (`check_array`, `_check_X`, `Validate.notNull`, `requireNonNull`, `ensure_str`): the
  caller passed the bad value — unless the check itself crashed on a null value (it
  is broken, not checking). A Go panic's deferred handlers (the frames printed above
  the runtime's `panic`) are not on the failing path, nor is the thrown error's own
  constructor (`at new ObjectParameterError`: a JavaScript error records its stack
  there). Where a file lives (`utils/`, `helpers/`, `common/`) says nothing: such
  folders hold product code as often as checks (UTILITY_PENALTY is 0). A frame file the
  headline points at moves up, and a null dereference of a *parameter
  itself* (`share.email` in `def notify(share)`, message `'NoneType' object has no
  attribute 'email'`) puts the caller first: the value came from there — a null field of
  one (`cart.items.length`) only when the caller's code sets that field by name, else the
  fault is where the field is read (`diagnoser.crash_site`). When the
  failing line is an explicit raise under an `if`, the functions that computed what the
  condition tests come right after it (the check is often right, its input wrong).
- **Relevance** of every other file, a weighted sum of: BM25 of the whole report against
  what each file defines and uses (`repomap.terms`), BM25 of the headline alone (the
  title, or the first line: a person's one-line summary names the broken part more
  often than the details do) against the same and against each file's whole text
  (its comments and strings say what the code is for in a person's words), files the
  report names by path or module, and definitions of names it mentions that few files
  define (weight 0 by leave-one-project-out; the
  name still decides the place inside a file). Such a file is placed at the function the
  report names, else at the function that fits the report best (inside a named class).
  A compound name that is a file's name without folder or extension
  (`sorted_state_adapter`) names that file. Names come from the prose, backticks, and
  the code the reporter ran (fenced blocks and `>>>` / `In [3]:` sessions,
  `diagnoser.intake.mentions`), so a trace with no frame in
  the repository (`File "<stdin>"`, another library's frames only) still leads to them.
  A file that declares only types (`types.ts`: no function or method) weighs
  DECLARATION_FACTOR of its relevance: behaviour, what fixes change, lives in functions;
  a file written only for another operating system or processor than the report names
  (`_psaix.py` for "On Ubuntu": `diagnoser.platforms`) weighs OTHER_PLATFORM_FACTOR.
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

import re
import weakref
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from itertools import dropwhile

from diagnoser.candidate import CONTEXT_LINES, Candidate, Source, span
from diagnoser.crash_site import (
    CrashSite,
    argument_check,
    crash_site,
    guard_inputs,
    null_argument,
    null_member,
)
from diagnoser.errors import ToolError
from diagnoser.file_roles import is_secondary, is_test, is_utility
from diagnoser.intake.mentions import find_mentions
from diagnoser.intake.report import MappedFrame, Report
from diagnoser.native import describes_native_failure, is_native
from diagnoser.platforms import for_other_platforms, named_platforms
from diagnoser.workspace import Workspace
from repomap import Definition, Repository, Symbol, SymbolIndex
from repomap.copies import is_vendored, source_stems
from repomap.focus import resolve_focus
from repomap.terms import Document, TermIndex, file_terms, terms, text_terms

MAX_CANDIDATES = 5
FRAMES_PER_FILE = 2
"""Two functions of one file may both be on the stack; other signals give one place."""
MAX_DEFINERS = 3
"""A mentioned name defined in more files than this is too common to point anywhere."""
MAX_HEADLINE_CHARS = 200

FRAME_DECAY = 0.5
"""A frame's prior is 1 / (1 + depth) ** FRAME_DECAY, depth 0 = innermost in-app file."""
UTILITY_PENALTY = 0.0
"""Subtracted from a utility module's frame prior (by its folder or file name: `utils`,
`helpers`, `common`…). Off: such folders hold product code as often as checks, and
leave-one-project-out found no fold it helps (docs/benchmarks.md); GUARD_PENALTY demotes
by what the frame does instead."""
GUARD_PENALTY = 1.0
"""Subtracted from the prior of a frame named for checking its input (`check_array`,
`Validate.notNull`): ≥ any prior, so after the other frames."""
ARGUMENT_CHECK_PENALTY = 0.0
"""Subtracted from the innermost frame's prior when its failing line is a raise right under
a test of one of its parameters. Off: leave-one-project-out found it hurts (the test itself
is often what the fix changes: a uniqueness check that missed a constraint)."""
MINIFIED_LINE_CHARS = 1000
"""A line this long is generated or minified code, not something a person edits."""
MINIFIED_SCAN_CHARS = 32_000
"""How much of a file is looked at for such a line (bytes)."""
FRAME_HEADLINE_WEIGHT = 1.5
"""How far the headline's relevance lifts a frame file."""
TEXT_WEIGHT = 1.0
HEADLINE_WEIGHT = 0.7
TEXT_HEADLINE_WEIGHT = 1.0
"""BM25 of the headline against each file's whole text (`text_index`: comments and
strings too), beside HEADLINE_WEIGHT's against what it names: a person's summary ("a
lone carriage return is not treated as a line break") shares words with the comments
that explain the code more often than with its identifiers."""
NAMED_FILE_WEIGHT = 0.6
NAMED_DEFINITION_WEIGHT = 0.0
"""Shared among the files defining the name. Zero: every leave-one-project-out fold chose
it over 0.1–0.8 (a named definition still decides *where* in a file to point, `_place`,
and the file still ranks by its words and the headline)."""
QUALIFIED_NAME_WEIGHT = NAMED_FILE_WEIGHT
"""For a name the report gives with its owner (`Type::method`, `Class#method`, Go's
`pkg.Func`, `mod.func`), shared among the files defining it there: it names a place as
precisely as a path does. A bare name (`save`) is defined in many places and counts
`NAMED_DEFINITION_WEIGHT`."""
HEADLINE_NAME_WEIGHT = 1.2
"""For a name the headline mentions (the title: `useQueries` in "useQueries drops …"),
shared among the few files defining it: a person's one-line summary names the broken
part; the same name deep in a pasted log may be anything. 1.2: the grid's largest value,
kept by every leave-one-project-out fold — which would also switch the rule below off,
trading Python first places for its Acc@5 (docs/benchmarks.md)."""
HEADLINE_NAME_OWN_FILE = True
"""Count a headline name (HEADLINE_NAME_WEIGHT) only for a file named after it
(`RequireThisCheck.java`, `tojs.ts` for `toJS`, `string_to_string.go` for `StringToString`)
that defines a function or method: a file named for the subject is its home; a sibling
that merely defines it (Django's `recorder.py` for `MigrationRecorder`, fixed in
`executor.py`) or a file of declarations (`BeforeAll.java`) is not. Any definer counted:
Python's Acc@1 70 → 69 over 289 cases (6 first places lost, 3 gained)."""
HEADLINE_NAME_OTHER = 0.2
"""What a headline name counts, shared the same way, for a definer that is not its home
(HEADLINE_NAME_OWN_FILE): Django's `recorder.py` for `MigrationRecorder`. A little: the
subject is defined there, yet a sibling is as likely to hold the fix. 0.1–0.4 score the
same over 289 cases (4 cases up, at most 1 down; most leave-one-project-out folds pick
0.4, which held out scores no better); 0 was the rule before."""
NAMES_AS_FILES = True
"""A compound name the report mentions that is a file's name without folder or extension
(`sorted_state_adapter`, `AsyncSubject`) names that file (NAMED_FILE_WEIGHT; in the
headline also HEADLINE_NAME_WEIGHT, as a name the file defines would), when at most
MAX_DEFINERS files are so named. Only compound names (`_`, `-` or a case change inside):
a plain word (`add`, `sign`, `python`) names a file only by accident (measured: 9 cases
down, 1 up, with plain words)."""
FUNCTION_KINDS = frozenset({"function", "method"})
"""Definition kinds that are a place on their own; others (classes…) hold places."""
NAME_MATCH_WEIGHT = 3
"""Inside a file, a report term in a definition's name counts this many times a term in
the identifiers its body uses."""
DECLARATION_FACTOR = 0.5
"""A file that declares only types (interfaces, type aliases, enums, structs, constants:
no function or method: TypeScript's `types.ts`, `models.ts`) has its relevance multiplied
by this: it names every concept of its package, so the report's words match it, yet
behaviour — what a fix changes — lives in functions. 1 = off. Measured over 289 cases
(0.5 and 0.75 against 1): 8 cases move up a place or two, none down (docs/benchmarks.md)."""
OTHER_PLATFORM_FACTOR = 0.5
"""A file written only for another operating system or processor than the ones the report
names (`_psaix.py` when it says "Ubuntu 20.04", `switch_arm_unix.h` for "riscv64":
`diagnoser.platforms`) has its relevance multiplied by this: every platform's file
defines the same names, so the words match them all alike. 1 = off."""
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

PANIC_HANDLERS_LAST = True
"""A Go trace's frames above the runtime's `panic` (deferred handlers that ran while it
unwound, such as a `recover` that re-panics) are not frames of the failure: their files
rank by the report's words like any other. Off: they are the innermost frames."""
ERROR_CONSTRUCTOR_NOT_A_FRAME = True
"""The innermost frames that are the thrown error's own constructor (`at new
ObjectParameterError (lib/error/objectParameter.js:23:11)`: a JavaScript error records
its stack where it is made) are not frames of the failure: the code that threw it is.
Off: the error class's file is where it failed."""
GUARD_NOT_WHEN_IT_CRASHED = True
"""A check that fails on a null dereference itself (the innermost frame, "Cannot read
properties of undefined" inside `validateSync`) did not check anything: it is broken, so
GUARD_PENALTY does not send its file after the others. A check that raises is different:
it did its job on a bad value."""

_GUARD_NAME = re.compile(
    r"^_*(?:[Vv]alidate|[Cc]heck|[Aa]ssert|[Rr]equire|[Ee]nsure|[Vv]erify)(?:$|s$|[_A-Z0-9])"
)
"""A function or class named for checking its input: `check_array`, `_check_X`,
`Validate` (`Validate.notNull`), `requireNonNull`, `assertIsValid`, `ensure_str`."""
ON_THE_PATH = "on the failing path (trace frame)"
IN_A_CHECK = "trace frame in an input check; its caller may have passed the bad value"
_COMPOUND = re.compile(r"[A-Za-z0-9][_-][A-Za-z0-9]|[a-z][A-Z]")
_TERM_INDEXES: weakref.WeakKeyDictionary[Repository, TermIndex] = weakref.WeakKeyDictionary()
_TEXT_INDEXES: weakref.WeakKeyDictionary[Repository, TermIndex] = weakref.WeakKeyDictionary()
_FILES_BY_STEM: weakref.WeakKeyDictionary[SymbolIndex, dict[str, list[str]]] = (
    weakref.WeakKeyDictionary()
)


def rank_candidates(
    report: Report, workspace: Workspace, *, limit: int = MAX_CANDIDATES
) -> list[Candidate]:
    """Up to `limit` places to look, best first."""
    repository = workspace.repository
    index = repository.index
    frames = _frame_candidates(report, index)
    relevance = _relevance(report, repository)
    innermost = frames[:2]
    site = crash_site(frames[0], workspace) if frames else None
    guards = _guard_files(report, frames, site)
    priors = _frame_priors([c.path for c in frames], relevance.headline, guards)
    frame_order = _frame_file_order(priors)
    frames.sort(key=lambda c: frame_order[c.path])
    if site is not None and frames[0] != innermost[0]:
        site = None
    if (
        site is not None
        and len(innermost) == 2
        and null_argument(report, site, innermost[1], workspace)
    ):
        frames.remove(innermost[1])
        why = "passes the missing value on to the crashing call below it (trace frame)"
        frames.insert(0, replace(innermost[1], reason=why))
    elif site is not None:
        frames[1:1] = [
            span(path, target, target.line, Source.DATAFLOW, why)
            for path, target, why in guard_inputs(site, index)
        ]
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


def is_guard_name(name: str) -> bool:
    """Whether any part of a dotted name names an input check (`Validate.notNull`,
    `sklearn.utils.validation.check_array`, `Form._check_fields`)."""
    return any(_GUARD_NAME.match(part) for part in re.split(r"[.:$#]+", name) if part)


def headline(report: Report) -> str:
    """The report's one-line summary in a person's words: its title, else its first
    non-empty line — empty when that line is only the exception (a crash reporter's
    title) and the trace has frames in the repository, which say better where it
    failed. Without such frames (another program's traceback) the exception line is the
    best summary there is: `TypeError: ECPrivateKey.sign() got an unexpected keyword`."""
    line = report.title or next((ln for ln in report.text.splitlines() if ln.strip()), "")
    line = line.strip()[:MAX_HEADLINE_CHARS]
    exception = report.exception
    if exception and exception.type and any(m.in_app for m in report.frames):
        named = line.split(":", 1)[0].rsplit(".", 1)[-1].strip()
        if named == exception.type.rsplit(".", 1)[-1] or line == (exception.message or "").strip():
            return ""
    return line


def term_index(repository: Repository) -> TermIndex:
    """The repository's BM25 index of what each non-test file names (`file_terms`),
    built once per Repository."""
    return _built(_TERM_INDEXES, repository, file_terms)


def text_index(repository: Repository) -> TermIndex:
    """The repository's BM25 index of what each non-test file says, its whole text
    (`text_terms`), built once per Repository."""
    return _built(_TEXT_INDEXES, repository, text_terms)


def _built(
    indexes: weakref.WeakKeyDictionary[Repository, TermIndex],
    repository: Repository,
    document: Document,
) -> TermIndex:
    found = indexes.get(repository)
    if found is None:
        found = TermIndex.build(
            repository.tags, keep=lambda path: not is_test(path), document=document
        )
        indexes[repository] = found
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
    line = headline(report)
    title = _normalised(index.scores(terms(line)))
    total: defaultdict[str, float] = defaultdict(float)
    for path, score in text.items():
        total[path] += TEXT_WEIGHT * score
    for path, score in title.items():
        total[path] += HEADLINE_WEIGHT * score
    if TEXT_HEADLINE_WEIGHT:
        for path, score in _normalised(text_index(repository).scores(terms(line))).items():
            total[path] += TEXT_HEADLINE_WEIGHT * score
    named_files = _named_files(report, repository.index)
    for path in named_files:
        total[path] += NAMED_FILE_WEIGHT
    named: dict[str, Definition] = {}
    for qualified, definitions in _named_definitions(report, repository.index):
        weight = QUALIFIED_NAME_WEIGHT if qualified else NAMED_DEFINITION_WEIGHT
        for path, definition in definitions:
            total[path] += weight / len(definitions)
            if path not in named or _is_function(definition) > _is_function(named[path]):
                named[path] = definition  # the first named, a named function before a class
    for path, weight in _headline_names(report, repository).items():
        total[path] += weight
    _discount(total, report, repository)
    query = frozenset(terms(f"{line}\n{report.text}"))
    return _Relevance(dict(total), title, frozenset(named_files), named, query)


def _discount(total: dict[str, float], report: Report, repository: Repository) -> None:
    """Files unlikely to hold a fix weigh less: type declarations (DECLARATION_FACTOR) and
    files for other platforms than the report names (OTHER_PLATFORM_FACTOR)."""
    platforms = named_platforms(f"{report.title or ''}\n{report.text}")
    for path in total:
        if _declares_only(repository, path):
            total[path] *= DECLARATION_FACTOR
        if platforms and for_other_platforms(path, platforms):
            total[path] *= OTHER_PLATFORM_FACTOR


def _headline_names(report: Report, repository: Repository) -> dict[str, float]:
    """HEADLINE_NAME_WEIGHT, shared among the files defining each name the headline
    mentions — with HEADLINE_NAME_OWN_FILE only the file named after it, when it defines
    behaviour (the other definers HEADLINE_NAME_OTHER); and, with NAMES_AS_FILES, for a
    file named after a compound name."""
    found: defaultdict[str, float] = defaultdict(float)
    if not HEADLINE_NAME_WEIGHT:
        return found
    names = find_mentions(headline(report)).identifiers
    for _, definitions in _defined(names, repository.index):
        for path, definition in definitions:
            home = not HEADLINE_NAME_OWN_FILE or _is_home(path, definition, repository)
            weight = HEADLINE_NAME_WEIGHT if home else HEADLINE_NAME_OTHER
            if weight:
                found[path] += weight / len(definitions)
    if NAMES_AS_FILES:
        for name in filter(_COMPOUND.search, names):
            files = _files_named(name, repository.index)
            if not 0 < len(files) <= MAX_DEFINERS:
                continue
            for path in files:
                if path not in found and not _declares_only(repository, path):
                    found[path] += HEADLINE_NAME_WEIGHT / len(files)
    return found


def _is_home(path: str, definition: Definition, repository: Repository) -> bool:
    """Whether `path` is the home of the named `definition`: named after it and defining
    a function or method."""
    return _named_after(path, definition.name) and not _declares_only(repository, path)


def _named_after(path: str, name: str) -> bool:
    """Whether the file's name, without extension, case and `_`/`-`, is the name's last part."""
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    return _folded(stem) == _folded(name.rsplit(".", 1)[-1])


def _folded(word: str) -> str:
    return word.lower().replace("_", "").replace("-", "")


def _declares_only(repository: Repository, path: str) -> bool:
    """Whether the file defines something, and nothing of it a function or method."""
    tags = repository.tags.get(path)
    kinds = {d.kind for d in tags.definitions} if tags is not None else set()
    return bool(kinds) and not kinds & FUNCTION_KINDS


def _normalised(scores: dict[str, float]) -> dict[str, float]:
    best = max(scores.values(), default=0.0)
    return {path: score / best for path, score in scores.items()} if best > 0 else {}


def _named_files(report: Report, index: SymbolIndex) -> list[str]:
    """Files the report names by path or by module (`django.db.models.query`,
    `com.acme.Cart`: a file of any language whose path without its extension ends so)."""
    named = set(resolve_focus(report.mentioned.files, index.files).files)
    stems = _stems(index.files)
    for module in report.mentioned.modules:
        key = "/" + module.replace(".", "/")
        found = sorted((p for stem, p in stems if stem.endswith(key)), key=lambda p: (len(p), p))
        named.update(found[:1])  # the least nested, the likeliest
    for name in filter(_COMPOUND.search, report.mentioned.identifiers if NAMES_AS_FILES else ()):
        files = _files_named(name, index)
        if len(files) <= MAX_DEFINERS:
            named.update(files)
    return sorted(named)


def _files_named(name: str, index: SymbolIndex) -> list[str]:
    """The files named after `name` (`_named_after`), from a table built once per index."""
    table = _FILES_BY_STEM.get(index)
    if table is None:
        table = defaultdict(list)
        for path in index.files:
            table[_folded(path.rsplit("/", 1)[-1].split(".", 1)[0])].append(path)
        _FILES_BY_STEM[index] = table
    return table.get(_folded(name.rsplit(".", 1)[-1]), [])


def _stems(files: Iterable[str]) -> list[tuple[str, str]]:
    """(`/` + path without its extension, path) for each file with an extension."""
    return [("/" + p.rsplit(".", 1)[0], p) for p in files if "." in p.rsplit("/", 1)[-1]]


def _named_definitions(
    report: Report, index: SymbolIndex
) -> list[tuple[bool, list[tuple[str, Definition]]]]:
    """Per mentioned name defined in at most MAX_DEFINERS files: whether it was given with
    its owner (`Owner.member`), and its (file, definition) pairs.
    `Owner.member` whose owner is no class is a member of a package, module or file
    (Go's `json.Marshal`, Rust's `de::from_str`): the member's definitions under a folder
    or in a file named for the owner."""
    return _defined(report.mentioned.identifiers, index)


def _defined(
    names: Iterable[str], index: SymbolIndex
) -> list[tuple[bool, list[tuple[str, Definition]]]]:
    """`_named_definitions` of any names."""
    found = []
    for name in names:
        lookup = index.find(name)
        if lookup.how.value in ("exact", "qualified"):
            matches = list(lookup.matches)
        elif "." in name:
            matches = _in_owner(name, index)
        else:
            continue
        by_file: dict[str, Definition] = {}
        for symbol in matches:
            by_file.setdefault(symbol.path, symbol.definition)
        if 0 < len(by_file) <= MAX_DEFINERS:
            found.append(("." in name, list(by_file.items())))
    return found


def _in_owner(name: str, index: SymbolIndex) -> list[Symbol]:
    """Definitions of `member` in a folder or file named `owner` (`pkg.Func`, `mod.func`)."""
    owner, member = name.rsplit(".", 1)
    lookup = index.find(member)
    if lookup.how.value != "exact":
        return []
    return [s for s in lookup.matches if owner in s.path.rsplit(".", 1)[0].split("/")]


def _frame_file_order(priors: dict[str, float]) -> dict[str, int]:
    """Frame files → their rank, best prior first (ties: innermost first)."""
    return {path: rank for rank, path in enumerate(sorted(priors, key=lambda p: -priors[p]))}


def _frame_priors(
    paths: list[str], headline: dict[str, float], guards: dict[str, float] | None = None
) -> dict[str, float]:
    """Frame files (innermost first) → their prior: depth decay, guard helpers (and, with
    UTILITY_PENALTY, utility modules) after the rest, lifted by the headline's relevance."""
    files = list(dict.fromkeys(paths))
    return {
        path: 1 / (1 + depth) ** FRAME_DECAY
        - UTILITY_PENALTY * is_utility(path)
        - (guards or {}).get(path, 0.0)
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


def _guard_files(
    report: Report, frames: list[Candidate], site: CrashSite | None
) -> dict[str, float]:
    """Frame files that are input checks → their penalty: every frame of the file named like
    a check (`check_array`, `Validate.notNull`; GUARD_PENALTY), or the innermost frame's file
    when its failing line is a raise right under a test of one of its parameters
    (ARGUMENT_CHECK_PENALTY). The caller handed over the bad value — unless the check
    itself crashed on a null value (GUARD_NOT_WHEN_IT_CRASHED)."""
    names: defaultdict[str, list[str]] = defaultdict(list)
    for mapped in report.frames:
        if mapped.in_app and mapped.repo_path:
            frame = mapped.frame
            owner = (frame.module or "").rsplit(".", 1)[-1]
            names[mapped.repo_path].append(f"{owner}.{frame.function or ''}.{mapped.symbol or ''}")
    checked = site.frame.path if site is not None and argument_check(site) else None
    crashed = frames[0].path if frames and _check_crashed(report) else None
    guards: dict[str, float] = {}
    for path in {c.path for c in frames}:
        looks = [is_guard_name(name) for name in names.get(path, [])]
        if looks and all(looks) and path != crashed:
            guards[path] = GUARD_PENALTY
        elif path == checked and len(looks) <= 1:
            guards[path] = ARGUMENT_CHECK_PENALTY
    return guards


def _check_crashed(report: Report) -> bool:
    """Whether a check at the innermost frame would have crashed rather than checked: the
    failure is a null dereference (GUARD_NOT_WHEN_IT_CRASHED)."""
    return GUARD_NOT_WHEN_IT_CRASHED and null_member(report) is not None


def _frame_candidates(report: Report, index: SymbolIndex) -> list[Candidate]:
    """In-app frames innermost first, at most FRAMES_PER_FILE per file, no place twice;
    without a Go panic's deferred handlers (PANIC_HANDLERS_LAST)."""
    found: list[Candidate] = []
    per_file: Counter[str] = Counter()
    innermost_reasons = (ON_THE_PATH, IN_A_CHECK) if _check_crashed(report) else (ON_THE_PATH,)
    for mapped in _innermost_first(report):
        candidate = _at_frame(mapped, index)
        if candidate is None or per_file[candidate.path] >= FRAMES_PER_FILE:
            continue
        if all((c.path, c.symbol) != (candidate.path, candidate.symbol) for c in found):
            if not found and candidate.reason in innermost_reasons:
                candidate = replace(candidate, reason="where it failed: the innermost in-app frame")
            found.append(candidate)
            per_file[candidate.path] += 1
    return found


def _innermost_first(report: Report) -> list[MappedFrame]:
    """The frames innermost first. In a Go trace the frames printed above the runtime's
    `panic` are deferred functions that ran while it unwound (a `recover` that re-panics:
    "[recovered]"), not the failing path: they are left out when in-app frames panicked.
    The error's own constructor (`at new ObjectParameterError`, where a JavaScript error
    records its stack) is not where it failed either (ERROR_CONSTRUCTOR_NOT_A_FRAME)."""
    order = report.frames[::-1]
    raised = next((n for n, m in enumerate(order) if _is_go_panic(m)), None)
    if PANIC_HANDLERS_LAST and raised is not None:
        below = order[raised + 1 :]
        order = below if any(m.in_app for m in below) else order
    error = (report.exception.type or "") if report.exception else ""
    if ERROR_CONSTRUCTOR_NOT_A_FRAME and error:
        built = error.rsplit(".", 1)[-1]
        after = list(dropwhile(lambda m: _function_name(m) == built, order))
        order = after if any(m.in_app for m in after) else order
    return order


def _function_name(mapped: MappedFrame) -> str:
    return re.split(r"[.:#]+", mapped.frame.function or "")[-1]


def _is_go_panic(mapped: MappedFrame) -> bool:
    frame = mapped.frame
    return (
        not mapped.in_app
        and (frame.function or "") in ("panic", "runtime.gopanic", "gopanic")
        and (frame.file or "").endswith("runtime/panic.go")
    )


def _at_frame(mapped: MappedFrame, index: SymbolIndex) -> Candidate | None:
    """The frame's place. When the code has moved since the trace was taken (the enclosing
    definition at that line has another name), the definition the frame names wins."""
    path, line = mapped.repo_path, mapped.frame.line
    if mapped.in_app and path and not line and mapped.symbol:  # mapped by the name it gives
        named_here = [d for d in index.definitions_in(path) if d.qualified == mapped.symbol]
        if named_here:
            return span(path, named_here[0], named_here[0].line, Source.FRAME, ON_THE_PATH)
    if not (mapped.in_app and path and line):
        return None
    definition = index.enclosing(path, line)
    named = (mapped.frame.function or "").rsplit(".", 1)[-1]
    why = ON_THE_PATH
    if is_guard_name(f"{mapped.frame.function or ''}.{definition.qualified if definition else ''}"):
        why = IN_A_CHECK
    elif UTILITY_PENALTY and is_utility(path):
        why = "trace frame in a shared utility module; its caller may have passed the bad value"
    if named and (definition is None or definition.name != named):
        moved = [d for d in index.definitions_in(path) if d.name == named]
        if len(moved) == 1:
            why = f"trace frame `{named}` (line {line} in the trace; the code has moved since)"
            return span(path, moved[0], moved[0].line, Source.FRAME, why)
    if definition is None:
        start = max(1, line - CONTEXT_LINES)
        return Candidate(path, line, start, line + CONTEXT_LINES, None, Source.FRAME, why)
    return span(path, definition, line, Source.FRAME, why)


def _is_copied(path: str, workspace: Workspace) -> bool:
    """Vendored by its path, or generated/minified by a line no person writes."""
    if is_vendored(path):
        return True
    try:
        data = workspace.read_bytes(path)[1][:MINIFIED_SCAN_CHARS]
    except ToolError:
        return False
    return any(len(line) >= MINIFIED_LINE_CHARS for line in data.splitlines())


def _place(path: str, relevance: _Relevance, repository: Repository) -> Candidate:
    """A relevant file at the function the report names, else at the one that best fits
    the report — inside the class it names, if it names one."""
    named = relevance.named.get(path)
    if named is not None and _is_function(named):
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
