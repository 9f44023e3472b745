"""`offline`: the embedded default model — a deterministic investigator plugged into
PydanticAI as a `FunctionModel`, driving the same tools through the same funnel.

Where it looks, in order: the report's mapped in-app frames (innermost first); files and
identifiers the report mentions (through find_symbol); else a BM25-style match of the
report's words against definition names and paths. What it says comes from what the
tools returned (the numbered lines of read_range) and from what the exception type
usually means. Its confidence is honest: highest with an in-app frame and a known
exception type, lowest for a word match.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from diagnoser.intake.report import Report
from diagnoser.workspace import Workspace
from repomap import Definition
from repomap.focus import resolve_focus

MODEL_NAME = "offline"
MAX_LOCATIONS = 5
FRAMES_PER_FILE = 2
MAX_DEFINERS = 3
BM25_K1 = 1.2
BM25_B = 0.75
PATH_WORD_WEIGHT = 3
"""A word of the file's path counts like this many definition-name words."""
"""A mentioned name defined in more files than this is too common to point anywhere."""
CONTEXT_LINES = 12
"""Lines read around a frame line when its definition is long."""
CONFIDENCE_FRAME_KNOWN = 0.75  # an in-app frame and an exception type we understand
CONFIDENCE_FRAME = 0.6
CONFIDENCE_MENTION = 0.4
CONFIDENCE_WORDS = 0.2
_NUMBERED = re.compile(r"^\s*(\d+):\s?(.*)$")
_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+")

_KNOWLEDGE = (
    (r"KeyError|NoSuchElement|KeyNotFound",
     "looks up a key that is not there; the lookup does not handle a missing key"),
    (r"IndexError|IndexOutOfBounds|ArrayIndexOutOfRange|index out of range",
     "indexes past the end of a sequence; the bound is not checked (off-by-one or empty)"),
    (r"NoneType|NullPointer|NullReference|undefined|null|nil|unwrap",
     "uses a value that can be missing (None/null/undefined) without checking it"),
    (r"ZeroDivision|DivideByZero|division by zero|divide by zero",
     "divides by a count or total that can be zero"),
    (r"TypeError|ClassCast|InvalidCast",
     "receives a value of the wrong type for the operation"),
    (r"AttributeError|NoMethodError|has no attribute",
     "calls or reads an attribute the object does not have"),
    (r"ValueError|NumberFormat|FormatException|ParseError",
     "parses or converts a value that is not in the expected form"),
    (r"RecursionError|StackOverflow",
     "recurses without reaching its base case"),
    (r"Timeout|Deadlock|ConcurrentModification",
     "waits on or mutates shared state in a way that blocks or races"),
)  # fmt: skip
EXPLANATIONS = tuple((re.compile(pattern), meaning) for pattern, meaning in _KNOWLEDGE)
"""What an exception type usually means, in the words the root cause uses."""


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str
    line: int
    start: int
    end: int
    symbol: str | None
    source: str
    """frame | mention | words"""


def offline_model(report: Report, workspace: Workspace) -> FunctionModel:
    """A FunctionModel that investigates `report` in `workspace` deterministically."""
    plan = _Plan(report, workspace)
    return FunctionModel(plan.respond, model_name=MODEL_NAME)


class _Plan:
    def __init__(self, report: Report, workspace: Workspace) -> None:
        self.report = report
        self.workspace = workspace
        self.candidates = _candidates(report, workspace)

    def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered = {t.name for t in info.function_tools}
        called = {p.tool_name for m in messages if isinstance(m, ModelResponse) for p in m.parts
                  if isinstance(p, ToolCallPart)}  # fmt: skip
        if "focus" in offered:
            return ModelResponse(parts=self._explore(called))
        if "conclude" in offered:
            return ModelResponse(parts=self._deep_dive(messages))
        return ModelResponse(parts=[TextPart(self._write(messages))])

    def _explore(self, called: set[str]) -> list[ToolCallPart]:
        first = self.candidates[0] if self.candidates else None
        if "find_symbol" not in called and first and first.symbol:
            return [ToolCallPart("find_symbol", {"name": first.symbol})]
        key = _quoted(self.report)
        if "grep" not in called and key and not first:
            return [ToolCallPart("grep", {"pattern": key, "fixed": True})]
        places = [f"{c.path}:{c.start}-{c.end}" for c in self.candidates[:MAX_LOCATIONS]]
        return [ToolCallPart("focus", {"locations": places or ["."]})]

    def _deep_dive(self, messages: list[ModelMessage]) -> list[ToolCallPart]:
        read = {(str(p.args_as_dict().get("path")), p.args_as_dict().get("start"))
                for m in messages if isinstance(m, ModelResponse) for p in m.parts
                if isinstance(p, ToolCallPart) and p.tool_name == "read_range"}  # fmt: skip
        for candidate in self.candidates[:MAX_LOCATIONS]:
            if (candidate.path, candidate.start) not in read:
                args = {"path": candidate.path, "start": candidate.start, "end": candidate.end}
                return [ToolCallPart("read_range", args)]
        return [ToolCallPart("conclude", {})]

    def _write(self, messages: list[ModelMessage]) -> str:
        lines = _read_lines(messages)
        report = self.report
        exception = report.exception
        known = _explain(f"{exception.type} {exception.message}" if exception else "")
        located = [c for c in self.candidates[:MAX_LOCATIONS] if (c.path, c.line) in lines]
        if not located:
            return _no_location_report(report)
        fault = located[0]
        what = f"{exception.type}" if exception and exception.type else "The reported problem"
        where = f"`{fault.symbol}`" if fault.symbol else f"`{fault.path}`"
        summary = (
            f"{what} at {where} ({fault.path}:{fault.line}): it {known or 'fails at this line'}."
        )
        confidence = _confidence(fault, bool(known))
        heading = f"{what} in {fault.symbol or fault.path}"
        if fault.source == "words":
            heading = (
                f"Possibly related to {fault.symbol or fault.path} (no trace or name to go on)"
            )
            summary = f"No trace or name leads into the code; {where} shares the report's words."
        parts = [f"# {heading}", "", "## Root cause", summary]
        if exception and exception.message:
            parts.append(f"The report's message: {exception.message}")
        parts += ["", f"Confidence: {confidence:.2f}", "", "## Locations"]
        for number, candidate in enumerate(located, 1):
            role = _role(candidate, number)
            symbol = f" — `{candidate.symbol}`" if candidate.symbol else ""
            # read_range clamps to the file: report the lines it really showed
            end = max(n for p, n in lines if p == candidate.path and n <= candidate.end)
            parts += [
                f"{number}. `{candidate.path}:{candidate.start}-{end}`{symbol} — {role}",
                f"   Reason: {_reason(candidate, number)}",
                "   ```",
                f"   {lines[(candidate.path, candidate.line)]}",
                "   ```",
            ]
        parts += [
            "", "## Proposed changes",
            f"1. `{fault.path}` — handle the case at line {fault.line} where it {known or 'fails'}",
            "   Rationale: the offline investigator locates faults; it proposes no diff",
            "", "## Risk", "Complexity: low", "Risk: medium",
            "Rationale: a local guard at the fault line; callers get a handled case, not an error",
        ]  # fmt: skip
        return "\n".join(parts) + "\n"


def _candidates(report: Report, workspace: Workspace) -> list[Candidate]:
    """Where to look, best first, one per file: in-app frames (innermost first), then files
    and modules the report names, then names it mentions that are defined in few places,
    then word matches. Test files come after everything else (fixes rarely land there)."""
    frames = [
        _around(m.repo_path, m.frame.line, "frame", workspace)
        for m in reversed(report.frames)
        if m.in_app and m.repo_path and m.frame.line
    ]
    mentions = _by_support(
        [*_mentioned_files(report, workspace), *_mentioned_names(report, workspace)]
    )
    found = [*frames, *mentions]
    if len({c.path for c in found}) < MAX_LOCATIONS:
        found += _word_matches(report, workspace)
    chosen: list[Candidate] = []
    per_file: Counter[str] = Counter()
    for candidate in sorted(found, key=lambda c: _is_test(c.path)):  # stable: order kept
        # Frames are evidence, so two functions of one file may both be on the stack;
        # weaker signals get one place per file.
        limit = FRAMES_PER_FILE if candidate.source == "frame" else 1
        if per_file[candidate.path] < limit and all(
            (c.path, c.symbol) != (candidate.path, candidate.symbol) for c in chosen
        ):
            chosen.append(candidate)
            per_file[candidate.path] += 1
    return chosen


def _by_support(candidates: list[Candidate]) -> list[Candidate]:
    """Files that several mentions point at first (a named path counts twice); ties keep
    the report's order."""
    support: Counter[str] = Counter()
    for candidate in candidates:
        support[candidate.path] += 2 if candidate.source == "mention-file" else 1
    order = {c.path: i for i, c in reversed(list(enumerate(candidates)))}
    ranked = sorted(candidates, key=lambda c: (-support[c.path], order[c.path]))
    return [c if c.source != "mention-file" else _as_mention(c) for c in ranked]


def _as_mention(candidate: Candidate) -> Candidate:
    return Candidate(candidate.path, candidate.line, candidate.start, candidate.end,
                     candidate.symbol, "mention")  # fmt: skip


def _mentioned_files(report: Report, workspace: Workspace) -> list[Candidate]:
    """Files the report names by path or dotted module, at their first mentioned definition."""
    index = workspace.repository.index
    names = set(report.mentioned.identifiers)
    wanted = [
        *report.mentioned.files,
        *(m.replace(".", "/") + ".py" for m in report.mentioned.modules),
    ]
    found = []
    for path in resolve_focus(wanted, index.files).files:
        definitions = index.definitions_in(path)
        named = [d for d in definitions if d.name in names] or list(definitions[:1])
        if named:
            found.append(_span(path, named[0], named[0].line, "mention-file"))
    return found


def _mentioned_names(report: Report, workspace: Workspace) -> list[Candidate]:
    """Definitions of mentioned names that few files define (a name defined everywhere,
    like `save`, says nothing)."""
    index = workspace.repository.index
    found = []
    for name in report.mentioned.identifiers:
        lookup = index.find(name)
        if lookup.how.value in ("exact", "qualified") and 0 < len(lookup.matches) <= MAX_DEFINERS:
            symbol = lookup.matches[0]
            found.append(_span(symbol.path, symbol.definition, symbol.definition.line, "mention"))
    return found


def _is_test(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        name.startswith("test")
        or name.endswith(("_test.py", ".test.js", "Test.java"))
        or ("/tests/" in f"/{path}" or "/test/" in f"/{path}")
    )


def _around(path: str, line: int, source: str, workspace: Workspace) -> Candidate:
    definition = workspace.repository.index.enclosing(path, line)
    if definition is None:
        return Candidate(
            path, line, max(1, line - CONTEXT_LINES), line + CONTEXT_LINES, None, source
        )
    return _span(path, definition, line, source)


def _span(path: str, definition: Definition, line: int, source: str) -> Candidate:
    start = max(definition.start_line, line - CONTEXT_LINES)
    end = min(definition.end_line, line + CONTEXT_LINES)
    return Candidate(path, line, start, max(end, line), definition.qualified, source)


def _word_matches(report: Report, workspace: Workspace) -> list[Candidate]:
    """BM25 over files: the report's words against each non-test file's definition names
    and path (identifiers split at case and underscores); each file at its definition
    that shares the most words."""
    query = Counter(_words(f"{report.title or ''} {report.text}"))
    index = workspace.repository.index
    documents: dict[str, Counter[str]] = {}
    for path in index.files:
        if not _is_test(path):
            names = [w for d in index.definitions_in(path) for w in _words(d.name)]
            documents[path] = Counter([*names, *_words(path) * PATH_WORD_WEIGHT])
    if not documents:
        return []
    frequency = Counter(w for doc in documents.values() for w in doc)
    average = sum(sum(doc.values()) for doc in documents.values()) / len(documents)
    scores: dict[str, float] = {}
    for path, doc in documents.items():
        length = sum(doc.values())
        score = 0.0
        for word in query.keys() & doc.keys():
            idf = math.log(1 + (len(documents) - frequency[word] + 0.5) / (frequency[word] + 0.5))
            tf = doc[word]
            score += (
                idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * length / average))
            )
        if score > 0:
            scores[path] = score
    best = sorted(scores, key=lambda p: (-scores[p], p))[:MAX_LOCATIONS]
    found = []
    for path in best:
        definitions = index.definitions_in(path)
        if definitions:
            top = max(definitions, key=lambda d: (sum(query[w] for w in _words(d.name)), -d.line))
            found.append(_span(path, top, top.line, "words"))
    return found


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text) if len(w) > 2]


def _read_lines(messages: list[ModelMessage]) -> dict[tuple[str, int], str]:
    """(path, line) → text, from every read_range result still in the history."""
    lines: dict[tuple[str, int], str] = {}
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart) and part.tool_name == "read_range":
                text = str(part.content)
                path = text.split(" lines ", 1)[0]
                for row in text.splitlines()[1:]:
                    numbered = _NUMBERED.match(row)
                    if numbered:
                        lines[(path, int(numbered.group(1)))] = numbered.group(2)
    return lines


def _explain(text: str) -> str:
    return next((what for pattern, what in EXPLANATIONS if pattern.search(text)), "")


def _quoted(report: Report) -> str | None:
    message = report.exception.message if report.exception else None
    found = re.search(r"['\"]([^'\"]{3,60})['\"]", message or "")
    return found.group(1) if found else None


def _confidence(fault: Candidate, known: bool) -> float:
    if fault.source == "frame":
        return CONFIDENCE_FRAME_KNOWN if known else CONFIDENCE_FRAME
    return CONFIDENCE_MENTION if fault.source == "mention" else CONFIDENCE_WORDS


def _role(candidate: Candidate, number: int) -> str:
    """Only a frame or a name the report gives can be called the fault; a word match is
    context, so such a Finding is never `verified` (no grounded fault location)."""
    if candidate.source == "words":
        return "context"
    if number == 1:
        return "fault"
    return "trigger" if candidate.source == "frame" else "context"


def _reason(candidate: Candidate, number: int) -> str:
    if candidate.source == "frame":
        return (
            "innermost in-app frame of the trace"
            if number == 1
            else "calls into the failing code (trace frame)"
        )
    if candidate.source == "mention":
        return "named in the report"
    return "its name and path share the report's words"


def _no_location_report(report: Report) -> str:
    exception = report.exception
    if exception and exception.type:
        title = f"{exception.type}: {exception.message or ''}".strip(": ")[:100]
    else:
        title = report.title or report.text.strip().splitlines()[0][:80]
    why = (
        "The trace's frames are all outside this repository (library code or unknown files)."
        if report.frames
        else "The report gives no trace, file or name that leads into this repository."
    )
    return f"# Not located: {title}\n\n## Root cause\n{why}\n\nConfidence: 0.10\n\n## Locations\n"
