"""Request bodies: read at most a limit (`read_limited`), then parse JSON that cannot
cost more than a bounded amount of memory or recursion (`load_json`).

`read_limited` is the only I/O here; `load_json` is a pure check in front of `json.loads`:
a cheap pre-scan refuses what would blow up inside the parser (10,000-deep nesting →
`RecursionError`, 5,000-digit integers → `ValueError`, millions of empty containers →
gigabytes) before it runs. Every refusal is an `IntakeError` with a one-line message
(`PayloadTooLarge` for size, so the HTTP layer can answer 413).

    raw = read_limited(sys.stdin.buffer, MAX_PAYLOAD_BYTES)
    intakes = from_payload("sentry", load_json(raw))
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Protocol

from diagnoser.constants import (
    MAX_JSON_CONTAINERS,
    MAX_JSON_DEPTH,
    MAX_JSON_INT_DIGITS,
    MAX_PAYLOAD_BYTES,
)
from diagnoser.intake.payloads.errors import IntakeError, PayloadTooLarge

READ_CHUNK = 1 << 16
"""Bytes asked of the stream per read (a raw stream may return fewer)."""

# A JSON string, escapes included, as the parser delimits it ("unrolled" so each run of
# plain characters is one C-level step, never a backtracking alternation per character).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_LONG_NUMBER = re.compile(rf"\d{{{MAX_JSON_INT_DIGITS + 1},}}")
_DEPTH = {"[": 1, "{": 1, "]": -1, "}": -1}


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

    Refused: over `limit` bytes (characters for a `str`), not UTF-8, nesting deeper than
    `MAX_JSON_DEPTH`, more than `MAX_JSON_CONTAINERS` objects and arrays, a number of more
    than `MAX_JSON_INT_DIGITS` digits, `NaN`/`Infinity` (or a number beyond a float,
    `1e999`), and anything `json` rejects.
    """
    if len(raw) > limit:
        unit = "bytes" if isinstance(raw, bytes) else "characters"
        raise PayloadTooLarge(f"the body is larger than {limit:,} {unit}", limit=limit)
    text = _decoded(raw) if isinstance(raw, bytes) else raw
    _check_shape(_STRING.sub('""', text))
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
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


def _check_shape(structure: str) -> None:
    """Refuse what `json.loads` would choke on; `structure` is the body with every string
    emptied, so brackets and digits inside strings do not count."""
    opened = structure.count("[") + structure.count("{")
    if opened > MAX_JSON_CONTAINERS:
        raise IntakeError(
            f"the body is not JSON we accept: {opened:,} objects and arrays "
            f"(at most {MAX_JSON_CONTAINERS:,})"
        )
    if opened > MAX_JSON_DEPTH:  # fewer containers cannot nest deeper than that
        # Counted first: cut out of millions of `[]`, the brackets alone took 100 MB.
        brackets = _NOT_BRACKET.sub("", structure)
        depth = max(accumulate(_DEPTH[b] for b in brackets))
        if depth > MAX_JSON_DEPTH:
            raise IntakeError(
                f"the body is not JSON we accept: nested {depth:,} deep (at most {MAX_JSON_DEPTH})"
            )
    if _LONG_NUMBER.search(structure):
        raise IntakeError(
            f"the body is not JSON we accept: a number of more than {MAX_JSON_INT_DIGITS} digits"
        )


def _refuse_constant(name: str) -> object:
    raise IntakeError(f"the body is not JSON: {name} is not a JSON number")


def _finite_float(text: str) -> float:
    """A JSON number as a float; one too large for a float (`1e999`) would be infinity."""
    number = float(text)
    if not math.isfinite(number):
        raise IntakeError(f"the body is not JSON we accept: {text[:20]} is out of range")
    return number
