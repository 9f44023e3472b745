"""`offline`: the embedded default model — a deterministic investigator plugged into
PydanticAI as a `FunctionModel`, driving the same tools through the same funnel.

Where it looks comes from `diagnoser.candidates` (trace frames, then the files the
report names or is about); it checks the first with find_symbol, focuses them, reads
them all in one response (four model requests a diagnosis), and writes the template
report: a `Draft` put in the template by `template.render`. What it says comes from the
lines its read_range calls returned (read again as values through `tools.read_range`,
never parsed back from the text the model was shown) and from what the exception type
usually means. Its confidence is honest: highest with an in-app frame and a known
exception type, lowest for a word match.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from diagnoser import tools
from diagnoser.candidate import UNLED, Candidate, Source
from diagnoser.candidates import MAX_CANDIDATES, rank_candidates
from diagnoser.constants import OFFLINE_MODEL
from diagnoser.draft import Draft
from diagnoser.errors import ToolError
from diagnoser.finding import Level, Location, ProposedChange, Role, RootCause
from diagnoser.intake.report import Report
from diagnoser.template import render
from diagnoser.workspace import Workspace

MODEL_NAME = OFFLINE_MODEL
CONFIDENCE_FRAME_KNOWN = 0.75  # an in-app frame and an exception type we understand
CONFIDENCE_FRAME = 0.6
CONFIDENCE_MENTION = 0.4
CONFIDENCE_WORDS = 0.2
RISK_LOW_USERS = 2
"""A fault definition used by at most this many other files is a low-risk change…"""
RISK_MEDIUM_USERS = 10
"""…by at most this many, medium; more, high."""
CONFIDENCE_NOT_LOCATED = 0.1

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


def offline_model(
    report: Report, workspace: Workspace, candidates: Sequence[Candidate] | None = None
) -> FunctionModel:
    """A FunctionModel that investigates `report` in `workspace` deterministically.

    `candidates` is the run's ranking (the pipeline ranks once, for the suspects too);
    without it, the model ranks for itself. It reads the first MAX_CANDIDATES either way."""
    plan = _Plan(report, workspace, candidates)
    return FunctionModel(plan.respond, model_name=MODEL_NAME)


class _Plan:
    def __init__(
        self, report: Report, workspace: Workspace, candidates: Sequence[Candidate] | None
    ) -> None:
        self.report = report
        self.workspace = workspace
        if candidates is None:
            candidates = rank_candidates(report, workspace)
        self.candidates = list(candidates)

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
        places = [f"{c.path}:{c.start}-{c.end}" for c in self.candidates[:MAX_CANDIDATES]]
        return [ToolCallPart("focus", {"locations": places or ["."]})]

    def _deep_dive(self, messages: list[ModelMessage]) -> list[ToolCallPart]:
        """Every candidate not read yet, in one response (several tool calls, as a real
        model makes them: one model request instead of one per read), as many as the
        deep-dive's budget has left; then `conclude`."""
        read = {(str(p.args_as_dict().get("path")), p.args_as_dict().get("start"))
                for m in messages if isinstance(m, ModelResponse) for p in m.parts
                if isinstance(p, ToolCallPart) and p.tool_name == "read_range"}  # fmt: skip
        left = self.workspace.settings.deep_dive_calls - len(read)
        unread = [c for c in self.candidates[:MAX_CANDIDATES] if (c.path, c.start) not in read]
        reads = [ToolCallPart("read_range", {"path": c.path, "start": c.start, "end": c.end})
                 for c in unread[: max(left, 0)]]  # fmt: skip
        return reads or [ToolCallPart("conclude", {})]

    def _write(self, messages: list[ModelMessage]) -> str:
        return render(self._draft(_lines_read(messages, self.workspace)))

    def _draft(self, lines: dict[tuple[str, int], str]) -> Draft:
        report = self.report
        exception = report.exception
        known = _explain(f"{exception.type} {exception.message}" if exception else "")
        located = [c for c in self.candidates[:MAX_CANDIDATES] if (c.path, c.line) in lines]
        if not located:
            return _not_located(report)
        fault = located[0]
        what = f"{exception.type}" if exception and exception.type else "The reported problem"
        where = f"`{fault.symbol}`" if fault.symbol else f"`{fault.path}`"
        summary = (
            f"{what} at {where} ({fault.path}:{fault.line}): it {known or 'fails at this line'}."
        )
        title = f"{what} in {fault.symbol or fault.path}"
        if fault.source in UNLED:
            title = f"Possibly related to {fault.symbol or fault.path} (no trace or name to go on)"
            led = "shares the report's words"
            if fault.source is Source.MEANING:
                led = "is nearest the review's meaning"
            summary = f"No trace or name leads into the code; {where} {led}."
        message = exception.message if exception and exception.message else ""
        risk, rationale = _risk(fault, self.workspace)
        return Draft(
            title=title,
            root_cause=RootCause(
                summary=summary,
                explanation=f"The report's message: {message}" if message else "",
                confidence=_confidence(fault, bool(known)),
            ),
            files=[_location(c, number, lines) for number, c in enumerate(located, 1)],
            changes=[
                ProposedChange(
                    path=fault.path,
                    summary=f"handle the case at line {fault.line} where it {known or 'fails'}",
                    rationale="the offline investigator locates faults; it proposes no diff",
                )
            ],
            complexity=Level.LOW,
            risk=risk,
            rationale=rationale,
        )


def _location(candidate: Candidate, number: int, lines: dict[tuple[str, int], str]) -> Location:
    """A candidate as a location: the lines read_range really showed (it clamps to the
    file), the candidate's own line as evidence."""
    end = max(n for p, n in lines if p == candidate.path and n <= candidate.end)
    return Location(
        path=candidate.path,
        start_line=candidate.start,
        end_line=end,
        symbol=candidate.symbol,
        role=_role(candidate, number),
        evidence=lines[(candidate.path, candidate.line)],
        reason=candidate.reason or "where the report points",
    )


def _risk(fault: Candidate, workspace: Workspace) -> tuple[Level, str]:
    """Risk by how many other files use the faulty definition (from the symbol index),
    and why."""
    if not fault.symbol:
        return Level.MEDIUM, "no definition encloses the fault line; review callers"
    users = {s.path for s in workspace.repository.index.references(fault.symbol)} - {fault.path}
    level = Level.LOW if len(users) <= RISK_LOW_USERS else Level.MEDIUM
    level = Level.HIGH if len(users) > RISK_MEDIUM_USERS else level
    name = fault.symbol.rsplit(".", 1)[-1]
    return level, (
        f"`{name}` is used in {len(users)} other file(s); a local guard at the fault "
        "line changes behaviour only for the failing case"
    )


def _lines_read(messages: list[ModelMessage], workspace: Workspace) -> dict[tuple[str, int], str]:
    """(path, line) → text of every read_range call that returned, read again as values
    through the tool function (history trimming and the tool's rendering do not matter)."""
    returned = {p.tool_call_id for m in messages if isinstance(m, ModelRequest) for p in m.parts
                if isinstance(p, ToolReturnPart) and p.tool_name == "read_range"}  # fmt: skip
    lines: dict[tuple[str, int], str] = {}
    for message in messages:
        if not isinstance(message, ModelResponse):
            continue
        for part in message.parts:
            if not (isinstance(part, ToolCallPart) and part.tool_call_id in returned):
                continue
            args = part.args_as_dict()
            try:
                read = tools.read_range(workspace, args["path"], args["start"], args.get("end"))
            except (ToolError, KeyError):
                continue
            for offset, text in enumerate(read.lines):
                lines[(read.path, read.start + offset)] = text
    return lines


def _explain(text: str) -> str:
    return next((what for pattern, what in EXPLANATIONS if pattern.search(text)), "")


def _quoted(report: Report) -> str | None:
    message = report.exception.message if report.exception else None
    found = re.search(r"['\"]([^'\"]{3,60})['\"]", message or "")
    return found.group(1) if found else None


def _confidence(fault: Candidate, known: bool) -> float:
    if fault.source is Source.FRAME:
        return CONFIDENCE_FRAME_KNOWN if known else CONFIDENCE_FRAME
    return CONFIDENCE_MENTION if fault.source is Source.MENTION else CONFIDENCE_WORDS


def _role(candidate: Candidate, number: int) -> Role:
    """Only a frame or a name the report gives can be called the fault; a word match or a
    review's meaning is context, so such a Finding is never `grounded` (no grounded fault
    location)."""
    if candidate.source in UNLED:
        return Role.CONTEXT
    if number == 1:
        return Role.FAULT
    return Role.TRIGGER if candidate.source is Source.FRAME else Role.CONTEXT


def _not_located(report: Report) -> Draft:
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
    first_line = (title.strip().splitlines() or ["?"])[0]
    return Draft(
        title=f"Not located: {first_line}",
        root_cause=RootCause(summary=why, confidence=CONFIDENCE_NOT_LOCATED),
    )
