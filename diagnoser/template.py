"""The fixed markdown template of an explorer's report, in one place: `TEMPLATE` (what the
explorer's instructions show), `render` (a `Draft` written in it — the offline model
writes its reports so) and `parse_report` (such a report back into a `Draft`, for free;
the formatter model is the fallback when this parser cannot).

`parse_report(render(draft)) == draft` for every draft in the template's language: its
one-line fields (title, summary, reasons, rationales, change summaries) are one line
without surrounding whitespace, its explanation holds no `##` heading, fence or
`Confidence:` line, a symbol holds no backtick or `—`, a path no backtick or colon, and a
diff ends with a newline (a unified diff does). Evidence and diffs may hold anything,
backtick fences included: `render` fences them with more backticks than they contain.
"""

from __future__ import annotations

import re

from pydantic import ValidationError

from diagnoser.draft import Draft
from diagnoser.errors import DiagnoserError
from diagnoser.finding import Level, Location, ProposedChange, Role, RootCause

SECTIONS = ("Root cause", "Locations", "Proposed changes", "Risk")
DEFAULT_CONFIDENCE = 0.5
"""A report that states no confidence is taken as a coin toss."""
INDENT = "   "
"""Continuation lines of a numbered item, under its text."""

_TITLE = re.compile(r"^#[ \t]+(?P<title>.*\S)[ \t]*$", re.MULTILINE)
_SECTION = re.compile(r"^##\s+(?P<name>.+?)\s*$", re.MULTILINE)
_ITEM = re.compile(r"^\d+\.\s+", re.MULTILINE)
_PLACE = re.compile(r"`(?P<path>[^`:\n]*[^`:\s]):(?P<start>\d+)(?:-(?P<end>\d+))?`")
"""`path:start-end`; a path may hold spaces (`test cases/7 gnome/x.h:5-5`)."""
_PATH = re.compile(r"`(?P<path>[^`\n]*[^`\s])`")
_SYMBOL = re.compile(r"—\s*`(?P<symbol>[^`]+)`")
_ROLE = re.compile(r"—\s*(?P<role>fault|trigger|propagation|context)\b", re.IGNORECASE)
_FIELD = r"^[ \t]*{name}:[ \t]*(?P<value>.*?)[ \t]*$"
_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,})[\w+-]*[ \t]*\n(?P<body>.*?)\n[ \t]*(?P=fence)[ \t]*$",
    re.S | re.M,
)
_BACKTICKS = re.compile(r"`+")
_NUMBER = r"[0-9.]+(?:[eE][-+]?[0-9]+)?"
_CONFIDENCE = re.compile(rf"^\s*Confidence:\s*(?P<value>{_NUMBER})\s*(?P<pct>%?)", re.M | re.I)
_SEPARATOR = "—"
"""Between the parts of an item's first line."""


class TemplateError(DiagnoserError):
    """The report does not follow the template; the message says what is missing."""


# Rendering: a Draft → the template.


def render(draft: Draft) -> str:
    """The draft as a template report (the inverse of `parse_report`). Sections that would
    only restate what their absence parses to (no changes; medium complexity and risk with
    no rationale) are left out."""
    cause = draft.root_cause
    lines = [f"# {draft.title}", "", "## Root cause", cause.summary]
    if cause.explanation:
        lines.append(cause.explanation)
    lines += ["", f"Confidence: {cause.confidence!r}", "", "## Locations"]
    for number, location in enumerate(draft.files, 1):
        lines += _render_location(number, location)
    if draft.changes:
        lines += ["", "## Proposed changes"]
        for number, change in enumerate(draft.changes, 1):
            lines += _render_change(number, change)
    if (draft.complexity, draft.risk, draft.rationale) != (Level.MEDIUM, Level.MEDIUM, ""):
        lines += ["", "## Risk", f"Complexity: {draft.complexity.value}"]
        lines.append(f"Risk: {draft.risk.value}")
        if draft.rationale:
            lines.append(f"Rationale: {draft.rationale}")
    return "\n".join(lines) + "\n"


def _render_location(number: int, location: Location) -> list[str]:
    place = f"`{location.path}:{location.start_line}-{location.end_line}`"
    symbol = f" {_SEPARATOR} `{location.symbol}`" if location.symbol else ""
    lines = [f"{number}. {place}{symbol} {_SEPARATOR} {location.role.value}"]
    if location.reason:
        lines.append(f"{INDENT}Reason: {location.reason}")
    if location.evidence:
        lines += _render_fenced(location.evidence, "")
    return lines


def _render_change(number: int, change: ProposedChange) -> list[str]:
    lines = [f"{number}. `{change.path}` {_SEPARATOR} {change.summary}"]
    if change.rationale:
        lines.append(f"{INDENT}Rationale: {change.rationale}")
    if change.diff is not None:
        lines += _render_fenced(change.diff.removesuffix("\n"), "diff")
    return lines


def _render_fenced(body: str, language: str) -> list[str]:
    """A fenced block under an item, its fence longer than any backtick run inside it."""
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    inner = [INDENT + line if line else "" for line in body.split("\n")]
    return [f"{INDENT}{fence}{language}", *inner, f"{INDENT}{fence}"]


# Parsing: the template → a Draft.


def parse_report(markdown: str) -> Draft:
    """The Draft a template report describes; TemplateError says what is missing."""
    fences = _fences(markdown)
    title = next((m for m in _TITLE.finditer(markdown) if not _inside(fences, m.start())), None)
    if not title:
        raise TemplateError("the report has no '# title' line")
    sections = _sections(markdown, fences)
    missing = [name for name in ("Root cause", "Locations") if name not in sections]
    if missing:
        raise TemplateError(f"the report lacks the section(s): {', '.join(missing)}")
    risk = sections.get("Risk", "")
    try:
        return Draft(
            title=title.group("title").strip(),
            root_cause=_root_cause(sections["Root cause"]),
            files=[_location(item) for item in _items(sections["Locations"])],
            changes=[_change(item) for item in _items(sections.get("Proposed changes", ""))],
            complexity=_level(risk, "Complexity"),
            risk=_level(risk, "Risk"),
            rationale=_field(risk, "Rationale"),
        )
    except (ValidationError, ValueError) as exc:
        raise TemplateError(f"the report does not parse: {exc}") from None


def _fences(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _FENCE.finditer(text)]


def _inside(fences: list[tuple[int, int]], at: int) -> bool:
    return any(start < at < end for start, end in fences)


def _sections(markdown: str, fences: list[tuple[int, int]]) -> dict[str, str]:
    found: dict[str, str] = {}
    heads = [m for m in _SECTION.finditer(markdown) if not _inside(fences, m.start())]
    for head, nxt in zip(heads, [*heads[1:], None], strict=True):
        name = head.group("name").strip().rstrip(":")
        for known in SECTIONS:
            if name.lower() == known.lower():
                found[known] = markdown[head.end() : nxt.start() if nxt else len(markdown)]
    return found


def _items(section: str) -> list[str]:
    fences = _fences(section)
    starts = [m.start() for m in _ITEM.finditer(section) if not _inside(fences, m.start())]
    ends = [*starts[1:], len(section)] if starts else []
    return [section[a:b] for a, b in zip(starts, ends, strict=True)]


def _root_cause(section: str) -> RootCause:
    confidence = _CONFIDENCE.search(section)
    text = _CONFIDENCE.sub("", section).strip()
    if not text:
        raise ValueError("the root cause section is empty")
    summary, _, explanation = text.partition("\n")
    value = DEFAULT_CONFIDENCE
    if confidence:
        value = float(confidence.group("value")) / (100 if confidence.group("pct") else 1)
    return RootCause(summary=summary.strip(), explanation=explanation.strip(), confidence=value)


def _location(item: str) -> Location:
    head = item.split("\n", 1)[0]
    place = _PLACE.search(head)
    if not place:
        raise ValueError(f"a location needs `path:start-end`: {head.strip()!r}")
    symbol = _SYMBOL.search(head[place.end() :])
    role = _ROLE.search(head[place.end() :])
    start = int(place.group("start"))
    return Location(
        path=place.group("path"),
        start_line=start,
        end_line=int(place.group("end") or start),
        symbol=symbol.group("symbol") if symbol else None,
        role=Role(role.group("role").lower()) if role else Role.FAULT,
        evidence=_fenced(item) or "",
        reason=_field(_unfenced(item), "Reason"),
    )


def _change(item: str) -> ProposedChange:
    head = item.split("\n", 1)[0]
    path = _PATH.search(head)
    if not path:
        raise ValueError(f"a change needs a `path`: {head.strip()!r}")
    summary = head[path.end() :].strip()
    if summary[:1] in (_SEPARATOR, "-", ":"):  # one separator; the summary keeps the rest
        summary = summary[1:].strip()
    diff = _fenced(item)
    return ProposedChange(
        path=path.group("path").split(":", 1)[0],
        summary=summary or "change",
        rationale=_field(_unfenced(item), "Rationale"),
        diff=diff + "\n" if diff is not None else None,
    )


def _fenced(item: str) -> str | None:
    """The first fenced block's body, without the indentation of its list item."""
    found = _FENCE.search(item)
    if not found:
        return None
    indent = found.group("indent")
    lines = found.group("body").split("\n")
    return "\n".join(line.removeprefix(indent) for line in lines)


def _unfenced(item: str) -> str:
    """The item without its fenced blocks: fields are never read from code."""
    return _FENCE.sub("", item)


def _level(section: str, name: str) -> Level:
    value = _field(section, name).lower().split()[:1]
    return Level(value[0]) if value and value[0] in Level._value2member_map_ else Level.MEDIUM


def _field(text: str, name: str) -> str:
    found = re.search(_FIELD.format(name=name), text, re.MULTILINE | re.IGNORECASE)
    return found.group("value").strip() if found else ""


SKELETON = Draft(
    title="<what fails, where>",
    root_cause=RootCause(
        summary="<the defect, in one line>",
        explanation="<why it happens, in a few lines>",
        confidence=0.8,
    ),
    files=[
        Location(
            path="path/to/file.py",
            start_line=12,
            end_line=18,
            symbol="Class.method",
            role=Role.FAULT,
            reason="<why this place>",
            evidence="<lines 12-18 exactly as in the file, without line numbers>",
        )
    ],
    changes=[
        ProposedChange(
            path="path/to/file.py",
            summary="<what to change>",
            rationale="<why>",
            diff="<a unified diff against the current file (optional)>\n",
        )
    ],
    complexity=Level.LOW,
    risk=Level.LOW,
    rationale="<why>",
)
"""The example report the explorer is shown, placeholders in angle brackets."""
TEMPLATE = render(SKELETON)
"""The template as the explorer's instructions show it (rendered, so it cannot drift
from what `parse_report` reads)."""
