"""How relevant each file is to the report: a weighted sum of its signals, every file
the repository's term indexes know scored.

- BM25 of the whole report against what each file defines and uses
  (`diagnoser.term_indexes.term_index`, TEXT_WEIGHT);
- BM25 of the headline alone (the title, or the first line: a person's one-line summary
  names the broken part more often than the details do) against the same
  (HEADLINE_WEIGHT) and against each file's whole text (TEXT_HEADLINE_WEIGHT: its
  comments and strings say what the code is for in a person's words);
- files the report names by path or module (NAMED_FILE_WEIGHT), and definitions of
  names it mentions that few files define (`diagnoser.named`; NAMED_DEFINITION_WEIGHT
  is 0 by leave-one-project-out: the name still decides the place inside a file);
- names in the headline, for the file named after them (HEADLINE_NAME_WEIGHT).

A file that declares only types (`types.ts`: no function or method) weighs
DECLARATION_FACTOR of its relevance: behaviour, what fixes change, lives in functions; a
file written only for another operating system or processor than the report names
(`_psaix.py` for "On Ubuntu": `diagnoser.platforms`) weighs OTHER_PLATFORM_FACTOR.

    relevance = file_relevance(report, repository)
    relevance.total["app/cart.py"], relevance.headline, relevance.named
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from diagnoser.intake.mentions import find_mentions
from diagnoser.intake.report import Report
from diagnoser.named import defined, files_named_by, named_after, named_definitions, named_files
from diagnoser.platforms import for_other_platforms, named_platforms
from diagnoser.term_indexes import term_index, text_index
from repomap import Definition, Repository
from repomap.words import terms

MAX_HEADLINE_CHARS = 200
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
it over 0.1–0.8 (a named definition still decides *where* in a file to point,
`diagnoser.candidates`, and the file still ranks by its words and the headline)."""
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
FUNCTION_KINDS = frozenset({"function", "method"})
"""Definition kinds that are a place on their own; others (classes…) hold places."""
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


@dataclass(frozen=True, slots=True)
class Relevance:
    """The report's relevance to each file, and what it names there."""

    total: dict[str, float]
    """File → its weighted relevance, after the discounts."""
    headline: dict[str, float]
    """BM25 of the headline, normalised to the best file (1.0)."""
    named_files: frozenset[str]
    """Files the report names by path or module."""
    named: dict[str, Definition]
    """File → the definition in it of a name the report mentions (a function before a
    class, else the first mentioned)."""
    query: frozenset[str]
    """The report's terms (headline and text)."""
    plain: dict[str, float]
    """The plain word ranking: BM25 of the whole report against each file's whole text
    (`text_index`), unweighted and undiscounted — what a plain ranker would say."""


def file_relevance(report: Report, repository: Repository) -> Relevance:
    """Every scored file's relevance (`total`), with what placing a file needs: the
    headline's own scores, the files and definitions the report names, its terms."""
    index = term_index(repository)
    said = terms(f"{report.title or ''}\n{report.text}")
    text = _normalised(index.scores(said))
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
    files = named_files(report, repository.index)
    for path in files:
        total[path] += NAMED_FILE_WEIGHT
    named: dict[str, Definition] = {}
    for qualified, definitions in named_definitions(report, repository.index):
        weight = QUALIFIED_NAME_WEIGHT if qualified else NAMED_DEFINITION_WEIGHT
        for path, definition in definitions:
            total[path] += weight / len(definitions)
            if path not in named or is_function(definition) > is_function(named[path]):
                named[path] = definition  # the first named, a named function before a class
    for path, weight in headline_names(report, repository).items():
        total[path] += weight
    _discount(total, report, repository)
    query = frozenset(terms(f"{line}\n{report.text}"))
    plain = text_index(repository).scores(said)
    return Relevance(dict(total), title, frozenset(files), named, query, plain)


def _discount(total: dict[str, float], report: Report, repository: Repository) -> None:
    """Files unlikely to hold a fix weigh less: type declarations (DECLARATION_FACTOR) and
    files for other platforms than the report names (OTHER_PLATFORM_FACTOR)."""
    platforms = named_platforms(f"{report.title or ''}\n{report.text}")
    for path in total:
        if declares_only(repository, path):
            total[path] *= DECLARATION_FACTOR
        if platforms and for_other_platforms(path, platforms):
            total[path] *= OTHER_PLATFORM_FACTOR


def headline_names(report: Report, repository: Repository) -> dict[str, float]:
    """HEADLINE_NAME_WEIGHT, shared among the files defining each name the headline
    mentions — with HEADLINE_NAME_OWN_FILE only the file named after it, when it defines
    behaviour (the other definers HEADLINE_NAME_OTHER); and, with NAMES_AS_FILES, for a
    file named after a compound name (`diagnoser.named.files_named_by`)."""
    found: defaultdict[str, float] = defaultdict(float)
    if not HEADLINE_NAME_WEIGHT:
        return found
    names = find_mentions(headline(report)).identifiers
    for _, definitions in defined(names, repository.index):
        for path, definition in definitions:
            home = not HEADLINE_NAME_OWN_FILE or _is_home(path, definition, repository)
            weight = HEADLINE_NAME_WEIGHT if home else HEADLINE_NAME_OTHER
            if weight:
                found[path] += weight / len(definitions)
    for files in files_named_by(names, repository.index):
        for path in files:
            if path not in found and not declares_only(repository, path):
                found[path] += HEADLINE_NAME_WEIGHT / len(files)
    return found


def _is_home(path: str, definition: Definition, repository: Repository) -> bool:
    """Whether `path` is the home of the named `definition`: named after it and defining
    a function or method."""
    return named_after(path, definition.name) and not declares_only(repository, path)


def declares_only(repository: Repository, path: str) -> bool:
    """Whether the file defines something, and nothing of it a function or method."""
    tags = repository.tags.get(path)
    kinds = {d.kind for d in tags.definitions} if tags is not None else set()
    return bool(kinds) and not kinds & FUNCTION_KINDS


def is_function(definition: Definition) -> bool:
    """Whether the definition is a place on its own (FUNCTION_KINDS)."""
    return definition.kind in FUNCTION_KINDS


def innermost(definitions: Sequence[Definition], within: Definition | None) -> list[Definition]:
    """The innermost definitions (inside `within`) — a class's body holds every method's
    words — where a function defined inside a function is part of it (a closure, a local
    helper: fixes name the function that holds it)."""
    inside: list[Definition] = []
    open_ends: list[tuple[int, bool]] = []  # enclosing definitions: last line, is a function
    for d in definitions:
        while open_ends and open_ends[-1][0] < d.start_line:
            open_ends.pop()
        nested = any(function for _, function in open_ends)
        open_ends.append((d.end_line, is_function(d)))
        if nested:
            continue
        if within is None or within.start_line <= d.start_line <= d.end_line <= within.end_line:
            inside.append(d)
    if not inside:
        return []
    return [d for d, after in zip(inside, [*inside[1:], None], strict=True)
            if after is None or after.start_line > d.end_line]  # fmt: skip


def _normalised(scores: dict[str, float]) -> dict[str, float]:
    best = max(scores.values(), default=0.0)
    return {path: score / best for path, score in scores.items()} if best > 0 else {}
