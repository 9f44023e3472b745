"""Request bodies: read at most a limit (`read_limited`), then parse JSON that cannot
cost more than a bounded amount of memory or recursion (`load_json`).

`read_limited` is the only I/O here; `load_json` is a pure check in front of `json.loads`:
a cheap pre-scan refuses what would blow up inside the parser (5,000-digit integers →
`ValueError`, millions of empty containers → gigabytes) before it runs, and cuts what
nests deeper than `MAX_JSON_DEPTH` (10,000-deep nesting → `RecursionError`): each such
object or array is parsed as `nesting.DEEP_CUT`, which the payload adapters refuse where
they read it and name in the report's notes. Every refusal is an `IntakeError` with a
one-line message (`PayloadTooLarge` for size, so the HTTP layer can answer 413).

    raw = read_limited(sys.stdin.buffer, MAX_PAYLOAD_BYTES)
    intakes = from_payload("sentry", load_json(raw))
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from itertools import accumulate
from typing import NoReturn, Protocol

from diagnoser.constants import (
    MAX_JSON_CONTAINERS,
    MAX_JSON_DEPTH,
    MAX_JSON_INT_DIGITS,
    MAX_JSON_SCANNED_CONTAINERS,
    MAX_PAYLOAD_BYTES,
)
from diagnoser.intake.payloads.errors import IntakeError, PayloadTooLarge
from diagnoser.intake.payloads.nesting import cut_deep, deep_regions, stand_in

READ_CHUNK = 1 << 16
"""Bytes asked of the stream per read (a raw stream may return fewer)."""

# A JSON string, escapes included, as the parser delimits it ("unrolled" so each run of
# plain characters is one C-level step, never a backtracking alternation per character).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_LONG_NUMBER = re.compile(rf"\d{{{MAX_JSON_INT_DIGITS + 1},}}")
_DEPTH = {"[": 1, "{": 1, "]": -1, "}": -1}
_CONSTANT = re.compile(r"NaN|Infinity")


class Readable(Protocol):
    """A binary stream: a file, `sys.stdin.buffer`, a socket file, a raw `io` stream."""

    def read(self, size: int = -1, /) -> bytes | None: ...


def read_limited(stream: Readable, limit: int) -> bytes:
    """All of `stream` if it holds at most `limit` bytes; else `PayloadTooLarge`, having
    read `limit + 1` bytes and no more."""
    chunks: list[bytes] = []
    total = 0
    while total <= limit:
        chunk = stream.read(min(READ_CHUNK, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > limit:
        raise PayloadTooLarge(f"the body is larger than {limit:,} bytes", limit=limit)
    return b"".join(chunks)


def load_json(raw: bytes | str, *, limit: int = MAX_PAYLOAD_BYTES) -> object:
    """`raw` parsed as JSON, or an `IntakeError` saying what is wrong with it.

    Refused: over `limit` bytes (characters for a `str`), not UTF-8, more than
    `MAX_JSON_CONTAINERS` objects and arrays (`MAX_JSON_SCANNED_CONTAINERS` before the
    deep ones are cut), a number of more than `MAX_JSON_INT_DIGITS` digits,
    `NaN`/`Infinity` (or a number beyond a float, `1e999`), and anything `json` rejects.
    An object or array nested deeper than `MAX_JSON_DEPTH` is parsed as `DEEP_CUT`.
    """
    if len(raw) > limit:
        unit = "bytes" if isinstance(raw, bytes) else "characters"
        raise PayloadTooLarge(f"the body is larger than {limit:,} {unit}", limit=limit)
    text = _decoded(raw) if isinstance(raw, bytes) else raw
    structure = _STRING.sub('""', text)
    opened, depth = _check_shape(structure)
    constant: Callable[[str], object] = _refuse_constant
    if depth > MAX_JSON_DEPTH:  # the deep parts are cut before parsing: it stays shallow
        text, constant = _cut(text, structure, opened), stand_in
    try:
        return json.loads(text, parse_constant=constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise IntakeError(
            f"the body is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:  # the pre-scan bounds depth far below the limit; belt and braces
        raise IntakeError("the body is not JSON we accept: nested too deeply") from None


def _decoded(raw: bytes) -> str:
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise IntakeError(
            f"the body is not UTF-8: invalid byte 0x{raw[exc.start]:02x} at offset {exc.start:,}"
        ) from None


def _check_shape(structure: str) -> tuple[int, int]:
    """Refuse what `json.loads` would choke on, but nesting (which is cut, see `_cut`);
    else the number of objects and arrays, and their depth. `structure` is the body with
    every string emptied, so brackets and digits inside strings do not count."""
    opened = structure.count("[") + structure.count("{")
    if opened > MAX_JSON_SCANNED_CONTAINERS:
        _refuse_containers(opened, MAX_JSON_SCANNED_CONTAINERS)
    depth = opened  # fewer containers cannot nest deeper than that
    if opened > MAX_JSON_DEPTH:
        # Counted first: cut out of millions of `[]`, the brackets alone took 100 MB.
        brackets = _NOT_BRACKET.sub("", structure)
        depth = max(accumulate(_DEPTH[b] for b in brackets))
    if depth <= MAX_JSON_DEPTH and opened > MAX_JSON_CONTAINERS:
        _refuse_containers(opened)
    if _LONG_NUMBER.search(structure):
        raise IntakeError(
            f"the body is not JSON we accept: a number of more than {MAX_JSON_INT_DIGITS} digits"
        )
    return opened, depth


def _cut(text: str, structure: str, opened: int) -> str:
    """`text` with every object or array nested deeper than `MAX_JSON_DEPTH` replaced by
    a stand-in that parses as `DEEP_CUT`; what is left must hold at most
    `MAX_JSON_CONTAINERS` objects and arrays."""
    constant = _CONSTANT.search(structure)
    if constant:  # a caller's constant would parse as a cut: refuse it as always
        _refuse_constant(constant[0])
    regions, inside = deep_regions(text, _STRING)
    if opened - inside > MAX_JSON_CONTAINERS:
        _refuse_containers(opened - inside)
    return cut_deep(text, regions)


def _refuse_containers(count: int, limit: int = MAX_JSON_CONTAINERS) -> NoReturn:
    raise IntakeError(
        f"the body is not JSON we accept: {count:,} objects and arrays (at most {limit:,})"
    )


def _refuse_constant(name: str) -> object:
    raise IntakeError(f"the body is not JSON: {name} is not a JSON number")


def _finite_float(text: str) -> float:
    """A JSON number as a float; one too large for a float (`1e999`) would be infinity."""
    number = float(text)
    if not math.isfinite(number):
        raise IntakeError(f"the body is not JSON we accept: {text[:20]} is out of range")
    return number
