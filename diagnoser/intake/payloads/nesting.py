"""JSON nested deeper than `MAX_JSON_DEPTH`: cut where intake does not read it, refused
where it does.

Python's `json` recurses, so the depth is measured on the raw text before parsing
(`deep_regions`), and each container that opens past the limit is replaced, whole, by
`DEEP_CUT` (`cut_deep`): the parse never goes deeper than the limit. SDKs send deep
values in what intake does not read (Sentry `extra`, `contexts`, frame `vars`), which is
why the rest of such an event is still diagnosed; a part intake reads (an exception, a
stack, its frames) that held a cut is refused (`payloads._fields` asks `holds_cut`), and
the cuts left are named in the report's notes (`cut_paths`).
"""

from __future__ import annotations

import re

from diagnoser.constants import MAX_JSON_DEPTH
from diagnoser.intake.payloads.errors import IntakeError

STAND_IN = "NaN"
"""What a cut container becomes in the text handed to `json.loads`: a bare constant, so
the parser calls `parse_constant` for it (`DEEP_CUT`) and for nothing a caller can send
(a caller's own `NaN`/`Infinity` is refused first, see `body.load_json`)."""

MAX_CUT_PATH_PARTS = 4
"""A cut's path, in a note, is its first this-many keys and indices (64 would not read)."""

MAX_CUT_NOTES = 3
"""Cut paths named in a note; the rest are counted."""

_BRACKET = re.compile(r"[\[\]{}]")


class DeepCut(str):
    """The value standing where a container nested deeper than `MAX_JSON_DEPTH` was cut:
    a string, so metadata holding it still serializes; its own type, so no string a
    caller sends is taken for it."""

    __slots__ = ()


_NESTED = (dict, list, DeepCut)

DEEP_CUT = DeepCut(f"[cut: nested deeper than {MAX_JSON_DEPTH} levels]")


def deep_regions(text: str, strings: re.Pattern[str]) -> tuple[list[tuple[int, int]], int]:
    """The spans of `text` of the outermost containers that open deeper than
    `MAX_JSON_DEPTH`, and how many containers they hold in all. `strings` matches a JSON
    string (brackets inside strings do not count). An unclosed deep container is refused:
    the parser would recurse into it."""
    padded = strings.sub(lambda m: '"' + "_" * (len(m[0]) - 2) + '"', text)  # same offsets
    regions: list[tuple[int, int]] = []
    depth = inside = 0
    start = -1
    for bracket in _BRACKET.finditer(padded):
        if bracket[0] in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                inside += 1
                if depth == MAX_JSON_DEPTH + 1:
                    start = bracket.start()
        else:
            if depth == MAX_JSON_DEPTH + 1:
                regions.append((start, bracket.end()))
            depth -= 1
    if depth > MAX_JSON_DEPTH:
        raise IntakeError(
            f"the body is not JSON: an object or array nested deeper than {MAX_JSON_DEPTH} "
            f"levels is not closed (at character {start:,})"
        )
    return regions, inside


def cut_deep(text: str, regions: list[tuple[int, int]]) -> str:
    """`text` with each of `regions` replaced by `STAND_IN`."""
    parts: list[str] = []
    last = 0
    for start, end in regions:
        parts += [text[last:start], STAND_IN]
        last = end
    parts.append(text[last:])
    return "".join(parts)


def stand_in(name: str) -> DeepCut:
    """`parse_constant` for a text `cut_deep` made: its stand-ins are the only constants."""
    return DEEP_CUT


def holds_cut(value: object) -> bool:
    """Whether `value` is or holds `DEEP_CUT` (iterative: a caller's value may be deep)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, DeepCut):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def cut_paths(payload: object) -> list[str]:
    """Where `DEEP_CUT` stands in `payload`, each path shortened to its first
    `MAX_CUT_PATH_PARTS` parts (`extra.deep.a[0]…`), in document order, each once."""
    found: dict[str, None] = {}
    stack: list[tuple[object, str, int]] = [(payload, "", 0)]
    while stack:
        item, path, parts = stack.pop()
        if isinstance(item, DeepCut):
            found[path + ("…" if parts > MAX_CUT_PATH_PARTS else "")] = None
            continue
        below: list[tuple[object, object]]
        if isinstance(item, dict):
            below = [(key, value) for key, value in item.items() if isinstance(value, _NESTED)]
        elif isinstance(item, list):
            below = [
                (index, value) for index, value in enumerate(item) if isinstance(value, _NESTED)
            ]
        else:
            continue
        for key, value in reversed(below):
            if parts >= MAX_CUT_PATH_PARTS:
                stack.append((value, path, parts + 1))
            elif isinstance(key, int):
                stack.append((value, f"{path}[{key}]", parts + 1))
            else:
                stack.append((value, f"{path}.{key}" if path else str(key), parts + 1))
    return list(found)


def cut_note(provider: str, paths: list[str]) -> str:
    """One line for `Report.truncated`: what was cut, and where."""
    named = ", ".join(paths[:MAX_CUT_NOTES])
    more = f" and {len(paths) - MAX_CUT_NOTES} more" if len(paths) > MAX_CUT_NOTES else ""
    return (
        f"{provider}: nested deeper than {MAX_JSON_DEPTH} levels, not read and cut at {named}{more}"
    )
