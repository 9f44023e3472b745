"""The fixed markdown template the explorer writes its report in, and the deterministic
parser that turns it into a `Finding` for free (the formatter model is the fallback when
this parser cannot).

    # <title>
    ## Root cause
    <one-line summary>
    <explanation…>
    Confidence: 0.8
    ## Locations
    1. `path:12-18` — `Symbol.name` — fault
       Reason: <why this place>
       ```python
       <exact lines>
       ```
    ## Proposed changes
    1. `path` — <summary>
       Rationale: <why>
       ```diff
       <unified diff, optional>
       ```
    ## Risk
    Complexity: low|medium|high
    Risk: low|medium|high
    Rationale: <why>
"""

from __future__ import annotations

import re

from pydantic import ValidationError

from diagnoser.errors import DiagnoserError
from diagnoser.finding import Change, Finding, Level, Location, Risk, Role, RootCause
from diagnoser.intake.report import Kind

SECTIONS = ("Root cause", "Locations", "Proposed changes", "Risk")
DEFAULT_CONFIDENCE = 0.5

_TITLE = re.compile(r"^#\s+(?P<title>.+)$", re.MULTILINE)
_SECTION = re.compile(r"^##\s+(?P<name>.+?)\s*$", re.MULTILINE)
_ITEM = re.compile(r"^\d+\.\s+", re.MULTILINE)
_PLACE = re.compile(r"`(?P<path>[^`:\n]*[^`:\s]):(?P<start>\d+)(?:-(?P<end>\d+))?`")
"""`path:start-end`; a path may hold spaces (`test cases/7 gnome/x.h:5-5`)."""
_PATH = re.compile(r"`(?P<path>[^`\n]*[^`\s])`")
_SYMBOL = re.compile(r"—\s*`(?P<symbol>[^`]+)`")
_ROLE = re.compile(r"—\s*(?P<role>fault|trigger|propagation|context)\b", re.IGNORECASE)
_FIELD = r"^\s*{name}:\s*(?P<value>.+)$"
_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,})[\w+-]*[ \t]*\n(?P<body>.*?)\n[ \t]*(?P=fence)[ \t]*$",
    re.S | re.M,
)
_CONFIDENCE = re.compile(r"^\s*Confidence:\s*(?P<value>[0-9.]+)\s*(?P<pct>%?)", re.M | re.I)


class TemplateError(DiagnoserError):
    """The report does not follow the template; the message says what is missing."""


def parse_report(markdown: str, *, classification: Kind) -> Finding:
    """The Finding a template report describes (status unverified until grounded)."""
    title = _TITLE.search(markdown)
    if not title:
        raise TemplateError("the report has no '# title' line")
    sections = _sections(markdown)
    missing = [name for name in ("Root cause", "Locations") if name not in sections]
    if missing:
        raise TemplateError(f"the report lacks the section(s): {', '.join(missing)}")
    try:
        return Finding(
            classification=classification,
            title=title.group("title").strip(),
            root_cause=_root_cause(sections["Root cause"]),
            files=[_location(item) for item in _items(sections["Locations"])],
            changes=[_change(item) for item in _items(sections.get("Proposed changes", ""))],
            risk=_risk(sections.get("Risk", "")),
            report_markdown=markdown,
        )
    except (ValidationError, ValueError) as exc:
        raise TemplateError(f"the report does not parse: {exc}") from None


def _sections(markdown: str) -> dict[str, str]:
    found: dict[str, str] = {}
    heads = list(_SECTION.finditer(markdown))
    for head, nxt in zip(heads, [*heads[1:], None], strict=True):
        name = head.group("name").strip().rstrip(":")
        for known in SECTIONS:
            if name.lower() == known.lower():
                found[known] = markdown[head.end() : nxt.start() if nxt else len(markdown)]
    return found


def _items(section: str) -> list[str]:
    starts = [m.start() for m in _ITEM.finditer(section) if not _inside_fence(section, m.start())]
    ends = [*starts[1:], len(section)] if starts else []
    return [section[a:b] for a, b in zip(starts, ends, strict=True)]


def _inside_fence(text: str, at: int) -> bool:
    return any(m.start() < at < m.end() for m in _FENCE.finditer(text))


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
    evidence = _fenced(item)
    start = int(place.group("start"))
    return Location(
        path=place.group("path"),
        start_line=start,
        end_line=int(place.group("end") or start),
        symbol=symbol.group("symbol") if symbol else None,
        role=Role(role.group("role").lower()) if role else Role.FAULT,
        evidence=evidence or "",
        reason=_field(item, "Reason"),
    )


def _change(item: str) -> Change:
    head = item.split("\n", 1)[0]
    path = _PATH.search(head)
    if not path:
        raise ValueError(f"a change needs a `path`: {head.strip()!r}")
    summary = head[path.end() :].strip(" —-:")
    diff = _fenced(item)
    return Change(
        path=path.group("path").split(":", 1)[0],
        summary=summary or "change",
        rationale=_field(item, "Rationale"),
        diff=diff + "\n" if diff else None,
    )


def _fenced(item: str) -> str | None:
    """The first fenced block's body, without the indentation of its list item."""
    found = _FENCE.search(item)
    if not found:
        return None
    indent = found.group("indent")
    lines = found.group("body").split("\n")
    return "\n".join(line.removeprefix(indent) for line in lines)


def _risk(section: str) -> Risk:
    def level(name: str) -> Level:
        value = _field(section, name).lower().split()[:1]
        return Level(value[0]) if value and value[0] in Level._value2member_map_ else Level.MEDIUM

    return Risk(
        complexity=level("Complexity"), risk=level("Risk"), rationale=_field(section, "Rationale")
    )


def _field(text: str, name: str) -> str:
    found = re.search(_FIELD.format(name=name), text, re.MULTILINE | re.IGNORECASE)
    return found.group("value").strip() if found else ""
