"""The one retry policy: what is retried, how long it waits (`Retry-After`, capped), that
the last answer reaches the SDK readable, and one client serving several event loops."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx2
import pytest

from diagnoser.retries import (
    MAX_RETRY_WAIT_SECONDS,
    RETRY_ATTEMPTS,
    PerLoopTransport,
    retry_after_seconds,
    retrying_client,
    retrying_transport,
)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"Retry-After": "2"}, 2.0),
        ({"Retry-After": "0.25"}, 0.25),  # fractions: wait_retry_after takes whole seconds only
        ({"retry-after-ms": "150", "Retry-After": "9"}, 0.15),  # the precise one wins
        ({"Retry-After": "-3"}, 0.0),
        ({"Retry-After": "soon"}, None),
        ({}, None),
    ],
)
def test_the_wait_a_response_asks_for(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after_seconds(httpx2.Headers(headers)) == seconds


def test_a_retry_after_date_is_the_time_until_then() -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=90), usegmt=True)
    wait = retry_after_seconds(httpx2.Headers({"Retry-After": later}))
    assert wait is not None and 80 < wait <= 90


class Scripted(httpx2.AsyncBaseTransport):
    """Answers in turn from `answers` (a status and headers, or an exception to raise)."""

    def __init__(self, *answers: tuple[int, dict[str, str]] | Exception) -> None:
        self.answers = list(answers)
        self.sent: list[float] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.sent.append(time.monotonic())
        answer = self.answers[min(len(self.sent), len(self.answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        status, headers = answer
        return httpx2.Response(status, headers=headers, json={"error": f"status {status}"})


async def send(transport: httpx2.AsyncBaseTransport) -> httpx2.Response:
    async with httpx2.AsyncClient(transport=transport) as client:
        response = await client.post("http://provider.test/v1/messages", content=b"{}")
        await response.aread()
        return response


def test_a_5xx_is_retried_after_the_wait_it_asks_for_then_the_answer_is_taken() -> None:
    wrapped = Scripted((503, {"Retry-After": "0.2"}), (502, {"retry-after-ms": "100"}), (200, {}))
    response = asyncio.run(send(retrying_transport(wrapped)))
    assert response.status_code == 200 and len(wrapped.sent) == 3
    first, second, third = wrapped.sent
    assert second - first >= 0.2 and third - second >= 0.1


def test_after_the_last_attempt_the_error_reaches_the_sdk_readable() -> None:
    wrapped = Scripted((429, {"Retry-After": "0"}))
    response = asyncio.run(send(retrying_transport(wrapped)))
    assert len(wrapped.sent) == RETRY_ATTEMPTS
    assert response.status_code == 429 and response.json() == {"error": "status 429"}


def test_a_retry_after_over_the_cap_is_not_waited_for() -> None:
    wrapped = Scripted((429, {"Retry-After": str(int(MAX_RETRY_WAIT_SECONDS) + 1)}))
    started = time.monotonic()
    response = asyncio.run(send(retrying_transport(wrapped)))
    assert response.status_code == 429 and len(wrapped.sent) == 1
    assert time.monotonic() - started < MAX_RETRY_WAIT_SECONDS


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_a_request_the_provider_refused_is_not_sent_again(status: int) -> None:
    wrapped = Scripted((status, {}))
    assert asyncio.run(send(retrying_transport(wrapped))).status_code == status
    assert len(wrapped.sent) == 1


def test_a_timeout_or_a_dropped_connection_is_retried() -> None:
    wrapped = Scripted(httpx2.ReadTimeout("slow"), httpx2.ConnectError("refused"), (200, {}))
    assert asyncio.run(send(retrying_transport(wrapped))).status_code == 200
    assert len(wrapped.sent) == 3


def test_each_event_loop_gets_its_own_connection_pool() -> None:
    """A CLI run (and every test) makes a new event loop, and connections belong to the
    loop that opened them: one transport serves run after run, a pool per loop."""
    transport = PerLoopTransport()

    async def pools() -> tuple[object, object]:
        return transport._pool(), transport._pool()

    first, again = asyncio.run(pools())
    second, _ = asyncio.run(pools())
    assert first is again and second is not first


def test_the_providers_client_sends_through_the_retrying_transport() -> None:
    client = retrying_client()
    assert "TenacityTransport" in type(client._transport).__name__
