"""API keys and per-key rate limits.

Keys arrive as `Authorization: Bearer <key>` or `X-API-Key: <key>`; only their sha256
digests are kept (`ServiceSettings.key_hashes`) and compared in constant time. With no
keys configured every caller is let in (the service then binds to 127.0.0.1 only) and
rate-limited by address. Limits are a token bucket per key, in this process's memory.
"""

from __future__ import annotations

import hmac
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from api.errors import ApiError
from api.settings import hash_key

KEY_HEADER = "x-api-key"
BUCKETS_MAX = 100_000
"""Distinct callers remembered; past this the oldest buckets are dropped."""


@dataclass
class RateLimiter:
    """`per_minute` requests a minute per caller, in bursts of up to `per_minute`."""

    per_minute: int
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, caller: str) -> float:
        """0 when `caller` may go on, else the seconds until it may."""
        rate = self.per_minute / 60.0
        with self._lock:
            now = self.clock()
            tokens, last = self._buckets.get(caller, (float(self.per_minute), now))
            tokens = min(float(self.per_minute), tokens + (now - last) * rate)
            if tokens < 1.0:
                self._buckets[caller] = (tokens, now)
                return (1.0 - tokens) / rate
            if len(self._buckets) >= BUCKETS_MAX and caller not in self._buckets:
                self._buckets.pop(next(iter(self._buckets)))
            self._buckets[caller] = (tokens - 1.0, now)
            return 0.0


@dataclass(frozen=True)
class Guard:
    """Who may call: `check` returns the caller's identity or raises ApiError."""

    key_hashes: frozenset[str]
    limiter: RateLimiter

    @property
    def open(self) -> bool:
        return not self.key_hashes

    def check(self, *, authorization: str | None, api_key: str | None, address: str) -> str:
        caller = f"addr:{address}"
        if self.key_hashes:
            key = api_key or _bearer(authorization)
            if not key:
                raise ApiError(
                    401, "an API key is required: send 'Authorization: Bearer <key>'",
                    headers={"WWW-Authenticate": "Bearer"},
                )  # fmt: skip
            digest = hash_key(key)
            if not any(hmac.compare_digest(digest, known) for known in self.key_hashes):
                raise ApiError(
                    401, "the API key is not valid", headers={"WWW-Authenticate": "Bearer"}
                )
            caller = f"key:{digest[:16]}"
        wait = self.limiter.take(caller)
        if wait > 0:
            seconds = max(1, math.ceil(wait))
            raise ApiError(
                429, f"rate limit of {self.limiter.per_minute} requests a minute reached; "
                f"retry in {seconds} s", headers={"Retry-After": str(seconds)},
            )  # fmt: skip
        return caller


def _bearer(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None
