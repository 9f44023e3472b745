"""Bounds on what a caller puts in the database: every header-derived value is cut to
fit its column before it is stored, and a refused body is kept only in part.

A value over its bound is cut and ends with `…sha256:<16 hex>` (the whole value's
hash): the marker says it was cut, and two long values that differ only past the cut
still differ when stored. Without this, a `Content-Type` of 129 characters was a 500 on
PostgreSQL (`VARCHAR(128)`), losing a signed delivery.

A refused body (bad signature or token) keeps its first `REFUSED_PREFIX_BYTES`, its
size and its sha256: enough to tell a sender's misconfiguration (wrong secret, a proxy
that rewrote the body) apart from a stranger's noise, without letting a caller with no
key store 5 MB per request. Past `DIAGNOSER_REFUSED_BUDGET_BYTES` of kept prefixes,
a refusal keeps only that metadata (`refused_prefix`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

NUL = "\x00"
"""PostgreSQL text cannot hold it (SQLite can): dropped from every stored value."""
CUT = "…sha256:"
HASH_CHARS = 16
"""Hex digits of the whole value's sha256 after a cut: 64 bits, enough to tell values
apart, short enough to leave most of the bound to the value itself."""
HEADER_VALUE_CHARS = 256
"""A stored header's value (`STORED_HEADERS`: resource and event names, ids, all short
in practice: provider ids are UUIDs or `msg_…` strings)."""
REFUSED_PREFIX_BYTES = 4096
"""Of a refused body, the start kept: 4 KiB shows the JSON's first keys and the event
type, which is what telling a misconfigured sender from noise needs."""


def bound(value: str, limit: int) -> str:
    """`value` without NULs, cut to at most `limit` characters (`CUT` and a hash at the
    end when cut)."""
    value = value.replace(NUL, "")
    if len(value) <= limit:
        return value
    marker = CUT + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]
    return value[: max(0, limit - len(marker))] + marker[:limit]


def bound_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Stored headers, each value within `HEADER_VALUE_CHARS`."""
    return {bound(k, HEADER_VALUE_CHARS): bound(v, HEADER_VALUE_CHARS) for k, v in headers.items()}


def refused_prefix(body: bytes, *, used: int, budget: int) -> bytes:
    """What to keep of a refused body when `used` bytes of refused prefixes are stored
    already: its first `REFUSED_PREFIX_BYTES`, or nothing once that would pass `budget`
    (the refusal's size, hash, headers and reason are kept all the same)."""
    prefix = body[:REFUSED_PREFIX_BYTES]
    return prefix if used + len(prefix) <= budget else b""
