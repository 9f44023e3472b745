"""API keys, per-key rate limits, and the throttle on failed authentication.

Keys arrive as `Authorization: Bearer <key>` or `X-API-Key: <key>`; only their sha256
digests are kept (`ServiceSettings.key_hashes`) and compared in constant time. With no
keys configured every caller is let in (the service then binds to 127.0.0.1 only) and
rate-limited by address. Limits are a token bucket per key, in this process's memory.

Failed authentication (a missing or wrong key, a bad webhook signature or token) is
counted per client address (`FailureThrottle`): past `DIAGNOSER_AUTH_FAILURES_PER_MINUTE`
in a minute, that address gets 429 + `Retry-After` before any key or signature work —
with a correct key too, until a minute after the failure that opened the count, so a
guesser cannot tell a right guess from a throttled one. Webhooks (authenticated by
their signature, not a key) are rate-limited per address and route
(`Guard.admit_webhook`) before their body is read. All of it is per process:
`--workers N` multiplies each limit by N.
"""

from __future__ import annotations

import hmac
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from api.errors import ApiError, problem
from api.settings import ServiceSettings, hash_key

KEY_HEADER = "x-api-key"
BUCKETS_MAX = 100_000
"""Distinct callers remembered; past this the oldest buckets are dropped."""
FAILURE_WINDOW_SECONDS = 60.0
"""Failed authentications count for a minute (`auth_failures_per_minute`)."""
FAILURE_STATUSES = frozenset({401})
"""Answers that count as a failed authentication."""
PROBE_STATUSES = FAILURE_STATUSES | {404}
"""On a webhook, with keys set, a repo name that is not configured counts too: 404 and
401 would otherwise tell a guessed name from a real one, without limit."""


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


@dataclass
class FailureThrottle:
    """At most `per_minute` failed authentications per address in a window of a minute
    that opens at its first failure: past them, refused until the window closes. Two
    numbers per address (a queue of timestamps took 13 MB per 10,000 addresses)."""

    per_minute: int
    clock: Callable[[], float] = time.monotonic
    _windows: dict[str, tuple[float, int]] = field(default_factory=dict)
    """Address → (when its window opened, failures in it)."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def wait(self, address: str) -> float:
        """0 when `address` may try again, else the seconds until it may."""
        with self._lock:
            opened, failures = self._windows.get(address, (0.0, 0))
            left = opened + FAILURE_WINDOW_SECONDS - self.clock()
            return left if failures >= self.per_minute and left > 0 else 0.0

    def record(self, address: str) -> None:
        with self._lock:
            now = self.clock()
            opened, failures = self._windows.get(address, (now, 0))
            if now - opened >= FAILURE_WINDOW_SECONDS:
                opened, failures = now, 0
            if len(self._windows) >= BUCKETS_MAX and address not in self._windows:
                self._windows.pop(next(iter(self._windows)))
            self._windows[address] = (opened, failures + 1)


@dataclass(frozen=True)
class Guard:
    """Who may call: `check` returns the caller's identity or raises ApiError."""

    key_hashes: frozenset[str]
    limiter: RateLimiter
    failures: FailureThrottle = field(
        default_factory=lambda: FailureThrottle(_default("auth_failures_per_minute"))
    )
    webhooks: RateLimiter = field(
        default_factory=lambda: RateLimiter(_default("webhook_rate_limit_per_minute"))
    )
    """Deliveries per `route|address`."""

    @classmethod
    def from_settings(cls, settings: ServiceSettings) -> Guard:
        return cls(
            settings.key_hashes(), RateLimiter(settings.rate_limit_per_minute),
            FailureThrottle(settings.auth_failures_per_minute),
            RateLimiter(settings.webhook_rate_limit_per_minute),
        )  # fmt: skip

    @property
    def open(self) -> bool:
        return not self.key_hashes

    def check(self, *, authorization: str | None, api_key: str | None, address: str) -> str:
        self.refuse_throttled(address)
        caller = f"addr:{address}"
        if self.key_hashes:
            with self.counting_failures(address):
                caller = self._identify(api_key or _bearer(authorization))
        wait = self.limiter.take(caller)
        if wait > 0:
            raise _too_many(
                f"rate limit of {self.limiter.per_minute} requests a minute reached", wait
            )
        return caller

    def admit_webhook(self, route: str, address: str) -> None:
        """429 when `address` is throttled or over the route's delivery limit."""
        self.refuse_throttled(address)
        wait = self.webhooks.take(f"{route}|{address}")
        if wait > 0:
            limit = self.webhooks.per_minute
            raise _too_many(f"{route} webhook limit of {limit} deliveries a minute reached", wait)

    def refuse_throttled(self, address: str) -> None:
        wait = self.failures.wait(address)
        if wait > 0:
            limit = self.failures.per_minute
            raise _too_many(f"{limit} failed authentications a minute from this address", wait)

    @contextmanager
    def counting_failures(
        self, address: str, statuses: frozenset[int] = FAILURE_STATUSES
    ) -> Iterator[None]:
        """Count a refusal raised inside with one of `statuses` (401) against `address`."""
        try:
            yield
        except ApiError as exc:
            if exc.status in statuses:
                self.failures.record(address)
            raise

    def _identify(self, key: str | None) -> str:
        if not key:
            raise ApiError(
                401, "an API key is required: send 'Authorization: Bearer <key>'",
                headers={"WWW-Authenticate": "Bearer"},
            )  # fmt: skip
        digest = hash_key(key)
        if not any(hmac.compare_digest(digest, known) for known in self.key_hashes):
            raise ApiError(401, "the API key is not valid", headers={"WWW-Authenticate": "Bearer"})
        return f"key:{digest[:16]}"


class KeyGate:
    """ASGI middleware: requests under `prefixes` need a key (`Guard.check`) — for the
    pages FastAPI serves outside any route dependency (`/openapi.json`, the docs)."""

    def __init__(self, app: ASGIApp, *, guard: Guard, prefixes: tuple[str, ...]) -> None:
        self.app, self.guard, self.prefixes = app, guard, prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] == "http" and any(_under(path, p) for p in self.prefixes):
            headers = Headers(scope=scope)
            client = scope.get("client")
            try:
                self.guard.check(
                    authorization=headers.get("authorization"),
                    api_key=headers.get(KEY_HEADER), address=client[0] if client else "unknown",
                )  # fmt: skip
            except ApiError as exc:
                await problem(exc.status, exc.detail, exc.headers)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _default(setting: str) -> int:
    value: int = ServiceSettings.model_fields[setting].default
    return value


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


def _too_many(what: str, wait: float) -> ApiError:
    seconds = max(1, math.ceil(wait))
    return ApiError(429, f"{what}; retry in {seconds} s", headers={"Retry-After": str(seconds)})


def _bearer(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None
