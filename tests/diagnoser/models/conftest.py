"""Shared by the tests of `diagnoser.models`: no provider variable of the machine leaks
into a test; a loopback port that accepts connections; a trace in the demo repo."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

PROVIDER_VARIABLES = (
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
    "OLLAMA_BASE_URL", "OLLAMA_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY",
    "GROQ_BASE_URL", "MISTRAL_API_KEY",
)  # fmt: skip


TRACE = (
    'Traceback (most recent call last):\n  File "/srv/src/app.py", line 13, in checkout\n'
    '    return cart.total()\n  File "/srv/src/app.py", line 9, in total\n'
    "    return sum(item.price for item in self.items)\n"
    "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'\n"
)


@pytest.fixture(autouse=True)
def no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's own keys and URLs never leak into a test."""
    for variable in PROVIDER_VARIABLES:
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture
def listening() -> Iterator[str]:
    """A loopback port that accepts TCP connections."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield f"http://127.0.0.1:{server.getsockname()[1]}/v1"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
