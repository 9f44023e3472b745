"""The crash site: the innermost frame's failing line in its function, and what it says
about who is at fault. Reads the frame's file once (`crash_site`); the rest is pure.

- A null dereference of a *parameter* (`share.email` in `def notify(share)`, message
  `'NoneType' object has no attribute 'email'`) came from the caller (`null_argument`) —
  a null field of one (`share.recipient.email`) only when the caller's code sets it.
- A function that only makes or throws an exception (`makes_exception`: an exception
  factory) reports what its caller decided.
- A function that hands its own parameter, as it came, to an input check
  (`forwards_to_check`) passed on what its caller gave it.
- An explicit raise right under an `if` that tests a parameter refused what the caller
  gave (`argument_check`), and the functions that computed what the `if` tests are worth
  reading next (`guard_inputs`).

`diagnoser.frames` turns these into places and decides their order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from diagnoser.candidate import Candidate
from diagnoser.errors import ToolError
from diagnoser.intake.report import Report
from diagnoser.workspace import Workspace
from repomap import Definition, SymbolIndex

MAX_GUARD_INPUTS = 2
"""At most this many functions whose results an explicit raise's guard tested."""
_RAISE = re.compile(r"^\s*(?:raise|throw)\b")
_GUARD = re.compile(r"^(\s*)(?:if|elif|else\s+if|unless|when)\b(.*)$")
_NAME = re.compile(r"[A-Za-z_$][\w$]*")
_DECIDES = re.compile(r"\b(?:if|elif|else|for|while|switch|case|match|catch|except|try|when)\b|\?")
_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|(?://|#).*')
_THROWS = re.compile(r"^\s*(?:raise|throw)\b", re.MULTILINE)
_RETURNS_ERROR = re.compile(r"\breturn\s+(?:new\s+)?[\w.$]*(?:Exception|Error)\b")
_NULL_CHAIN = r"(?<![\w$.?])([A-Za-z_$][\w$]*)((?:\??\.[\w$]+)*?)\??\.{member}\b"
"""What `.member` was read on: a name (`share` in `share.email`) and the fields between
(`.recipient` in `share.recipient.email`)."""
NULL_FIELD_NEEDS_CALLER = True
"""A null *field* of a parameter (`cart.items.length`) moves the caller first only when
the caller's code sets that field by name (`Share(recipient=…)`, `{updatedAt: …}`,
`share.recipient = …`); otherwise the fault is where the field is read."""
MAX_CALL_CHARS = 400
"""How far a call's arguments are read."""
_RECEIVERS = frozenset({"self", "this", "cls"})
SIGNATURE_LINES = 8
"""How many lines a signature may span when looking for a parameter."""
_NULL_MEMBER = (
    re.compile(r"(?:NoneType|null|undefined|nil)\b.{0,40}?(?:attribute|reading|method|property)"
               r"\s*['\"`]?(\w+)"),
    re.compile(r"(?:property|method|member)\s*['\"`](\w+)['\"`]? (?:of|for|on) "
               r"(?:undefined|null|nil)"),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class CrashSite:
    """The innermost frame's place, with its file's lines and its enclosing definition."""

    frame: Candidate
    lines: list[str]
    definition: Definition

    @property
    def text(self) -> str:
        return self.lines[self.frame.line - 1]


def crash_site(frame: Candidate, workspace: Workspace) -> CrashSite | None:
    """The crash line in context, read once; None when it cannot be read or placed."""
    definition = workspace.repository.index.enclosing(frame.path, frame.line)
    try:
        lines = workspace.read_text_lines(frame.path)[1]
    except ToolError:
        return None
    if definition is None or not 0 < frame.line <= len(lines):
        return None
    return CrashSite(frame, lines, definition)


def null_argument(report: Report, site: CrashSite, caller: Candidate, workspace: Workspace) -> bool:
    """Whether the trace is a null dereference at the crash site of a value the caller
    handed over: a parameter itself (`share.email` in `def share_created(self, share)`),
    or a field of one that the caller's code sets (`share.recipient.email`, the caller
    built `Share(recipient=…)`) — not a field it never touches (`cart.items.length`: the
    fault is where `items` is read)."""
    member = null_member(report)
    if member is None:
        return False
    used = re.search(_NULL_CHAIN.format(member=re.escape(member)), site.text)
    if used is None or used.group(1) in ("self", "this", "cls"):
        return False
    if re.search(rf"\b{re.escape(used.group(1))}\b", _signature(site)) is None:
        return False
    field = used.group(2).rsplit(".", 1)[-1].rstrip("?")
    return not (field and NULL_FIELD_NEEDS_CALLER) or _sets_field(caller, field, workspace)


def null_member(report: Report) -> str | None:
    """The member read on a null value when that is the failure (`onServer` in "Cannot
    read properties of undefined (reading 'onServer')"), else None."""
    message = report.exception.message if report.exception else None
    return next((m.group(1) for p in _NULL_MEMBER if (m := p.search(message or ""))), None)


def _sets_field(caller: Candidate, field: str, workspace: Workspace) -> bool:
    """Whether the caller's definition assigns `field` by name: `x.field = …`,
    `Thing(field=…)`, `{field: …}`."""
    try:
        lines = workspace.read_text_lines(caller.path)[1]
    except ToolError:
        return False
    definition = workspace.repository.index.enclosing(caller.path, caller.line)
    start, end = (
        (definition.start_line, definition.end_line) if definition else (caller.start, caller.end)
    )
    body = "\n".join(lines[max(start, 1) - 1 : end])
    return re.search(rf"(?<![\w$]){re.escape(field)}\s*(?:=(?!=)|:(?!:))", body) is not None


def _signature(site: CrashSite) -> str:
    """The crash site's definition's first lines, up to the end of its signature."""
    signature = []
    start = site.definition.line - 1
    for text in site.lines[start : start + SIGNATURE_LINES]:
        signature.append(text)
        if text.rstrip().endswith((":", "{", "=>")):
            break
    return "\n".join(signature)


def argument_check(site: CrashSite) -> bool:
    """Whether the failing line is an explicit raise/throw right under an `if` that tests
    one of the function's parameters, none of them reassigned before it (`if x is None:
    raise ValueError`): the function refused what its caller gave it."""
    guard = _guard_of(site)
    if guard is None:
        return False
    tested = set(_NAME.findall(guard.group(2))) - {"self", "this", "cls", "not", "is", "None"}
    body = site.lines[site.definition.line : site.frame.line - 1]
    assigned = {m.group(1) for t in body if (m := re.match(r"^\s*([A-Za-z_$][\w$]*)\s*=", t))}
    signature = set(_NAME.findall(_signature(site).split("(", 1)[-1]))
    return bool(tested & signature - assigned)


def makes_exception(site: CrashSite) -> bool:
    """Whether the crash site's function only makes or throws an exception — its body
    throws or returns a new `…Exception`/`…Error` and decides nothing (no branch, loop or
    handler): an exception factory (`Reporter.cannotCallAbstractRealMethod`,
    `createIllegalArgumentException`, `def _error(msg): raise ValueError(msg)`). What went
    wrong was decided by its caller."""
    definition = site.definition
    body = "\n".join(site.lines[definition.line : definition.end_line])
    if _DECIDES.search(_LITERAL.sub('""', body)):  # words in a message decide nothing
        return False
    return bool(_THROWS.search(body) or _RETURNS_ERROR.search(body))


def forwards_to_check(site: CrashSite, check: str) -> bool:
    """Whether the function hands one of its own parameters, as it came, to the input check
    `check` (`set(long instant, int value)` calling `verifyValueBounds(this, value, …)`,
    `value(double x, double... param)` calling `validateParameters(param)`): when the check
    refused it, the bad value came from further out."""
    definition = site.definition
    parameters = set(_NAME.findall(_signature(site).split("(", 1)[-1])) - _RECEIVERS
    body = "\n".join(site.lines[definition.line - 1 : definition.end_line])
    for call in re.finditer(rf"(?<![\w$.]){re.escape(check)}\s*\(|\.{re.escape(check)}\s*\(", body):
        if parameters & {a.strip() for a in _arguments(body, call.end())}:
            return True
    return False


def _arguments(text: str, start: int) -> list[str]:
    """A call's top-level arguments, from just after its `(` to the matching `)`."""
    depth = 1
    arguments: list[str] = []
    current: list[str] = []
    for char in text[start : start + MAX_CALL_CHARS]:
        depth += (char in "([{") - (char in ")]}")
        if depth == 0 or (depth == 1 and char == ","):
            arguments.append("".join(current))
            current = []
            if depth == 0:
                break
        else:
            current.append(char)
    return arguments


def _guard_of(site: CrashSite) -> re.Match[str] | None:
    """The `if` right above the failing line, when that line is an explicit raise."""
    if not _RAISE.match(site.text):
        return None
    indent = len(site.text) - len(site.text.lstrip())
    body = site.lines[site.definition.line - 1 : site.frame.line - 1]
    return next(
        (m for m in map(_GUARD.match, reversed(body)) if m and len(m.group(1)) < indent), None
    )


def guard_inputs(site: CrashSite, index: SymbolIndex) -> list[tuple[str, Definition, str]]:
    """When the failing line is an explicit raise/throw under an `if`, the functions that
    computed what the condition tests (`pages = self.page_count(…)` … `if page > pages:`
    … `raise PageOutOfRange`), each with its file and why: the check is often right and
    its input wrong."""
    guard = _guard_of(site)
    if guard is None:
        return []
    body = site.lines[site.definition.line - 1 : site.frame.line - 1]
    tested = set(_NAME.findall(guard.group(2)))
    callees = _calls(guard.group(2))
    for text in body:
        assigned = re.match(r"^\s*([A-Za-z_$][\w$]*)\s*=\s*(.*)$", text)
        if assigned and assigned.group(1) in tested:
            callees += _calls(assigned.group(2))
    found: list[tuple[str, Definition, str]] = []
    for name in dict.fromkeys(callees):
        place = _definition_near(name, site.frame.path, index)
        if place is not None and place[1].name != site.definition.name:
            path, target = place
            why = f"computes `{name}(…)`, which the failing check at line {site.frame.line} tests"
            found.append((path, target, why))
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
