"""Typed, path-aware access to parsed JSON: every failure is an `IntakeError` naming the field.

Required containers and strings raise when missing or of the wrong type (or cut for
nesting too deep, `payloads.nesting`: what we read is never cut); optional scalars of the
wrong type read as absent, because providers do vary them (`release` as a string
or an object, `lineno` as a number or a string) and a report is still worth taking.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from diagnoser.constants import MAX_JSON_DEPTH
from diagnoser.intake.payloads.errors import IntakeError
from diagnoser.intake.payloads.nesting import DeepCut, holds_cut

MAX_SANE_INT = 2**31 - 1
"""Line/column numbers above this are garbage, not positions; they read as absent."""
MAX_SANE_DIGITS = len(str(MAX_SANE_INT))
"""Longer digit strings are not converted at all (`int()` of 5,000 digits raises)."""
MAX_LABEL_BITS = 128
"""A number wider than this (a UUID's width) is no version or id."""


@dataclass(frozen=True)
class Cap:
    """How many items of a payload list are read, and which: a longer list is sliced
    before any of it is looked at, and the cut is noted."""

    limit: int
    noun: str
    """What the items are, for the note (`frames`, `exceptions`, `reviews`)."""
    kept: str
    """Which are kept, for the note (`the innermost`, `the newest`, `the first`)."""
    from_end: bool = False
    """Keep the last `limit` items rather than the first."""


@dataclass(frozen=True)
class Node:
    """A JSON object at `path` inside a payload of kind `ctx` (e.g. `sentry event_alert`)."""

    value: dict[str, object]
    ctx: str
    path: str = ""
    cuts: list[str] = field(default_factory=list, compare=False, repr=False)
    """What was cut from this payload, shared by every node read from it (it becomes
    `Intake.truncated`); `dataclasses.replace` keeps sharing it."""

    def at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str, problem: str) -> IntakeError:
        field = self.at(key)
        if holds_cut(self.value.get(key)):  # of the wrong type because it was cut
            return too_deep(self.ctx, field)
        return IntakeError(f"{self.ctx}: {problem} {field}", field=field)

    def get(self, key: str) -> object:
        """The raw value at `key`; one cut for nesting too deep is refused: we read it."""
        raw = self.value.get(key)
        if isinstance(raw, DeepCut):
            raise too_deep(self.ctx, self.at(key))
        return raw

    def has(self, key: str) -> bool:
        return self.get(key) is not None

    def child(self, key: str) -> Node:
        node = self.maybe_child(key)
        if node is None:
            raise self.fail(key, "missing")
        return node

    def maybe_child(self, key: str) -> Node | None:
        raw = self.get(key)
        if raw is None:
            return None
        if not isinstance(raw, dict):
            raise self.fail(key, "expected an object at")
        return Node(raw, self.ctx, self.at(key), self.cuts)

    def items(self, key: str) -> list[object] | None:
        raw = self.get(key)
        if raw is None:
            return None
        if not isinstance(raw, list):
            raise self.fail(key, "expected a list at")
        return raw

    def children(self, key: str, cap: Cap | None = None) -> list[Node]:
        """The objects of an optional list (cut to `cap`); a non-object element is an error."""
        return nodes_of(self.items(key) or [], self, self.at(key), cap)

    def text(self, key: str) -> str | None:
        raw = self.get(key)
        if isinstance(raw, dict | list) and holds_cut(raw):  # the string we read was cut
            raise too_deep(self.ctx, self.at(key))
        return raw if isinstance(raw, str) and raw.strip() else None

    def required_text(self, key: str) -> str:
        raw = self.get(key)
        if raw is None:
            raise self.fail(key, "missing")
        if not isinstance(raw, str):
            raise self.fail(key, "expected a string at")
        return raw

    def label(self, key: str) -> str | None:
        """A string, or a number written as one (versions, ids)."""
        raw = self.get(key)
        if isinstance(raw, bool):
            return None
        if isinstance(raw, int) and raw.bit_length() > MAX_LABEL_BITS:
            return None  # no id is this long; `str()` of a 4,300-digit int raises
        if isinstance(raw, int | float):
            return str(raw)
        return self.text(key)

    def integer(self, key: str) -> int | None:
        raw = self.get(key)
        if isinstance(raw, str):
            digits = raw.strip()
            raw = int(digits) if digits.isdecimal() and len(digits) <= MAX_SANE_DIGITS else None
        if isinstance(raw, bool) or not isinstance(raw, int):
            return None
        return raw if 0 <= raw <= MAX_SANE_INT else None

    def flag(self, key: str) -> bool | None:
        raw = self.get(key)
        return raw if isinstance(raw, bool) else None


def too_deep(ctx: str, field: str) -> IntakeError:
    return IntakeError(
        f"{ctx}: {field} is nested deeper than {MAX_JSON_DEPTH} levels; intake reads it, "
        f"so it must be at most {MAX_JSON_DEPTH} deep",
        field=field,
    )


def root(payload: object, ctx: str) -> Node:
    if not isinstance(payload, dict):
        raise IntakeError(f"{ctx}: the payload must be a JSON object", field="")
    return Node(payload, ctx)


def nodes_of(values: list[object], parent: Node, path: str, cap: Cap | None = None) -> list[Node]:
    """The objects of the list at `path` below `parent`; beyond `cap` the rest are not
    read, and the cut goes into `parent.cuts`. Paths keep the original indices."""
    offset = 0
    if cap is not None and len(values) > cap.limit:
        parent.cuts.append(
            f"{parent.ctx}: {len(values):,} {cap.noun} in {path}; kept {cap.kept} {cap.limit:,}"
        )
        offset = len(values) - cap.limit if cap.from_end else 0
        values = values[offset : offset + cap.limit]
    out: list[Node] = []
    for index, raw in enumerate(values, start=offset):
        where = f"{path}[{index}]"
        if not isinstance(raw, dict):
            if holds_cut(raw):
                raise too_deep(parent.ctx, where)
            raise IntakeError(f"{parent.ctx}: expected an object at {where}", field=where)
        out.append(Node(raw, parent.ctx, where, parent.cuts))
    return out
