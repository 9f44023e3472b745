"""`api.server`'s pure parts: the connection cap fitted to the file limit, the proxies
exempt from the per-address cap. The protocol itself is tested against a real server
in `tests/hostile/test_connections.py`."""

from __future__ import annotations

import asyncio
import resource
from typing import Any

import pytest
from uvicorn.server import ServerState

from api.server import (
    RESERVED_FILES,
    BoundedProtocol,
    Limits,
    ServerConfig,
    fitted_cap,
    raised_soft_limit,
    reserved_files,
)
from api.settings import ServiceSettings
from diagnoser import ConfigError
from diagnoser.registry import KEPT_SNAPSHOTS
from diagnoser.term_indexes import INDEX_FILES

INFINITY = resource.RLIM_INFINITY
LIMITS: dict[str, Any] = {
    "max_header_bytes": 65536, "header_timeout": 10.0, "body_timeout": 60.0,
    "max_connections": 1000, "max_per_address": 100,
}  # fmt: skip


def test_the_soft_file_limit_is_raised_only_as_far_as_needed_and_allowed() -> None:
    needed = 1000 + RESERVED_FILES
    assert raised_soft_limit(1000, soft=20_000, hard=20_000) == 20_000
    assert raised_soft_limit(1000, soft=1024, hard=1_048_576) == needed
    assert raised_soft_limit(1000, soft=1024, hard=INFINITY) == needed
    assert raised_soft_limit(1000, soft=256, hard=512) == 512


def test_the_cap_stays_below_the_file_limit() -> None:
    assert fitted_cap(1000, 20_000) == 1000
    assert fitted_cap(1000, INFINITY) == 1000
    assert fitted_cap(1000, 512) == 512 - RESERVED_FILES
    with pytest.raises(ConfigError, match=r"file limit is 64 \(ulimit -n\): raise it"):
        fitted_cap(1000, 64)


def test_the_files_every_open_index_holds_are_kept_from_connections() -> None:
    """Each open workspace keeps its two term indexes' files open: a git repository up
    to KEPT_SNAPSHOTS workspaces, a folder one."""
    settings = ServiceSettings(repos={"a": ".", "b": ".", "g": "https://example.com/g.git"})
    assert len(settings.repos) == 2 and len(settings.git_repos) == 1
    reserved = reserved_files(settings)
    assert reserved == RESERVED_FILES + len(INDEX_FILES) * (2 + KEPT_SNAPSHOTS)
    assert fitted_cap(1000, 512, reserved=reserved) == 512 - reserved
    assert raised_soft_limit(1000, soft=1024, hard=INFINITY, reserved=reserved) == 1000 + reserved


def test_trusted_proxies_have_no_per_address_cap() -> None:
    limits = Limits(**LIMITS, exempt=("10.0.0.0/8", "127.0.0.1"))
    assert limits.is_exempt("10.1.2.3") and limits.is_exempt("127.0.0.1")
    assert not limits.is_exempt("127.0.0.2") and not limits.is_exempt("not-an-address")


class _Transport(asyncio.Transport):
    """What the protocol writes, and whether it closed."""

    def __init__(self) -> None:
        super().__init__()
        self.written, self.closed = b"", False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += bytes(data)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5000), "sockname": ("127.0.0.1", 8000)}.get(name)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


async def _never_called(scope: Any, receive: Any, send: Any) -> None:
    raise AssertionError("the app was called")


def _written_after(data: bytes, **limits: Any) -> _Transport:
    """Feed `data` to a `BoundedProtocol` in one read; its transport after."""

    async def feed() -> _Transport:
        settings = {**LIMITS, **limits}
        config = ServerConfig(_never_called, limits=Limits(**settings), log_level="warning")
        config.load()
        protocol = BoundedProtocol(config, ServerState(), {})
        transport = _Transport()
        protocol.connection_made(transport)
        protocol.data_received(data)
        protocol.connection_lost(None)
        return transport

    return asyncio.run(feed())


def test_headers_over_the_limit_in_one_read_are_431() -> None:
    headers = b"".join(b"X-H%d: %s\r\n" % (n, b"a" * 1000) for n in range(100))
    transport = _written_after(b"GET / HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n")
    assert transport.written.startswith(b"HTTP/1.1 431 ") and transport.closed
    assert b"over 65,536 bytes" in transport.written


def test_past_the_per_address_cap_a_connection_is_503_at_once() -> None:
    transport = _written_after(b"", max_per_address=0)
    assert transport.written.startswith(b"HTTP/1.1 503 ") and transport.closed
