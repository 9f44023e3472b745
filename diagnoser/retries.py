"""The one retry policy for model providers: the HTTP client every provider built by
`diagnoser.models` sends through.

    client = retrying_client()          # an httpx2.AsyncClient for a provider's `http_client`

A request answered 408, 409, 429 or 5xx, or that failed to connect or timed out, is sent
again after a wait — the provider's `Retry-After` (or `retry-after-ms`) when it gives
one, else exponential backoff — at most RETRY_ATTEMPTS times in all. A `Retry-After`
longer than MAX_RETRY_WAIT_SECONDS is not waited for at all: the provider's answer goes
back at once, so the run falls back to the next model of its chain instead of sleeping
(the anthropic client would sleep whatever the header says; openai's gives up past two
minutes). The last answer is handed to the SDK unread, so its error names the
provider's own message. The SDK clients' own retries are turned off (`max_retries=0` in
every model's settings, `models.resolve_model`), so this is the only retry policy, and
`ModelSettings.request_timeout` bounds one request with every attempt and wait in it.

Built on PydanticAI's retrying transport (`pydantic_ai.retries.AsyncHTTPX2TenacityTransport`,
the httpx2 successor of the deprecated `AsyncTenacityTransport`). The decision is made on
the response (tenacity's `retry_if_result`) rather than by raising `HTTPStatusError` in
`validate_response`, whose raise closes the body before the SDK can read the provider's
message — and so the wait is read from that response here rather than by
`wait_retry_after`, which only looks at a raised error (and takes whole seconds only).

Connections belong to the event loop that opened them, and a CLI run or a test makes a
new loop per diagnosis: the innermost transport keeps one connection pool per loop
(`PerLoopTransport`), so one client serves every run.
"""

from __future__ import annotations

import asyncio
import weakref
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx2
from pydantic_ai.models import create_async_httpx2_client
from pydantic_ai.retries import AsyncHTTPX2TenacityTransport, RetryConfig
from tenacity import (
    RetryCallState,
    retry_if_exception_type,
    retry_if_result,
    stop_after_attempt,
    wait_exponential,
)

__all__ = [
    "MAX_RETRY_WAIT_SECONDS",
    "RETRY_ATTEMPTS",
    "RETRY_STATUSES",
    "PerLoopTransport",
    "retry_after_seconds",
    "retrying_client",
    "retrying_transport",
]

RETRY_ATTEMPTS = 3
"""Attempts of one request in all (the first and two retries, as the SDKs' own default)."""
MAX_RETRY_WAIT_SECONDS = 30.0
"""The longest `Retry-After` waited for; a provider asking for longer is failed over at
once (a run has 300 s in all; a fallback model answers sooner than a minute's wait)."""
BACKOFF_SECONDS = 0.5
"""The first wait without `Retry-After`, doubling (0.5 s, 1 s…), capped at BACKOFF_MAX."""
BACKOFF_MAX_SECONDS = 8.0
RETRY_STATUSES = frozenset({408, 409, 429})
"""Retried besides every 5xx: timeout, conflict (lock contention), rate limit — the SDKs' set."""
RETRY_ERRORS = (httpx2.TimeoutException, httpx2.ConnectError, httpx2.RemoteProtocolError)
"""Transport failures worth another attempt (a dropped connection, a slow answer)."""


def retry_after_seconds(headers: httpx2.Headers) -> float | None:
    """The wait a response asks for: `retry-after-ms`, else `Retry-After` in seconds
    (fractions allowed) or as an HTTP date; None without one or when unreadable."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an asctime date carries no zone: UTC (RFC 9110 §5.6.7)
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _worth_retrying(response: httpx2.Response) -> bool:
    status = response.status_code
    if status not in RETRY_STATUSES and status < 500:
        return False
    wait = retry_after_seconds(response.headers)
    return wait is None or wait <= MAX_RETRY_WAIT_SECONDS


_backoff = wait_exponential(multiplier=BACKOFF_SECONDS, max=BACKOFF_MAX_SECONDS)


def _wait(state: RetryCallState) -> float:
    outcome = state.outcome
    if outcome is not None and not outcome.failed:
        wait = retry_after_seconds(outcome.result().headers)
        if wait is not None:
            return min(wait, MAX_RETRY_WAIT_SECONDS)
    return float(_backoff(state))


async def _close_retried(state: RetryCallState) -> None:
    """The answer about to be retried is not read by anyone: free its connection."""
    outcome = state.outcome
    if outcome is not None and not outcome.failed:
        await outcome.result().aclose()


def _last_answer(state: RetryCallState) -> httpx2.Response:
    """Attempts spent: the last answer goes to the SDK as it is (its error, its message);
    a transport failure is raised as it is."""
    assert state.outcome is not None
    return state.outcome.result()  # type: ignore[no-any-return]  # re-raises a failure


class PerLoopTransport(httpx2.AsyncBaseTransport):
    """An `httpx2.AsyncHTTPTransport` (a connection pool) per running event loop; a loop's
    pool is dropped with the loop."""

    def __init__(self) -> None:
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx2.AsyncHTTPTransport]
        self._pools = weakref.WeakKeyDictionary()

    def _pool(self) -> httpx2.AsyncHTTPTransport:
        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is None:
            pool = self._pools[loop] = httpx2.AsyncHTTPTransport()
        return pool

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return await self._pool().handle_async_request(request)

    async def aclose(self) -> None:
        pool = self._pools.pop(asyncio.get_running_loop(), None)
        if pool is not None:
            await pool.aclose()


def retrying_transport(
    wrapped: httpx2.AsyncBaseTransport | None = None,
) -> httpx2.AsyncBaseTransport:
    """PydanticAI's retrying transport with our policy, over `wrapped` (a pool per loop)."""
    config = RetryConfig(
        retry=retry_if_result(_worth_retrying) | retry_if_exception_type(RETRY_ERRORS),
        wait=_wait,
        stop=stop_after_attempt(RETRY_ATTEMPTS),
        before_sleep=_close_retried,
        retry_error_callback=_last_answer,
    )
    return AsyncHTTPX2TenacityTransport(config, wrapped or PerLoopTransport())


def retrying_client() -> httpx2.AsyncClient:
    """An HTTP client for a provider: PydanticAI's defaults (timeouts, user agent) over
    `retrying_transport`. The request timeout is the model's settings' (`timeout`)."""
    return create_async_httpx2_client(transport=retrying_transport())
