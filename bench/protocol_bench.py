"""CPU per keep-alive request of the HTTP protocol alone: uvicorn's `HttpToolsProtocol`
against `api.server.BoundedProtocol` (issue 23), in one process, no network.

    .venv/bin/python bench/protocol_bench.py [--requests N] [--rounds R]

Each round feeds N copies of a typical GET (six headers) to one connection of each
protocol in turn, behind a trivial ASGI app on a fake transport, and takes the process
CPU time per request; prints the minimum and median over the rounds. The difference is
what the bounds cost a request, apart from the network and the app (the service bench
measures those too, but on a shared machine its req/s moves more than this).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from api.server import BoundedProtocol, Limits, ServerConfig

REQUEST = (
    b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nAccept: */*\r\n"
    b"Accept-Encoding: gzip, deflate\r\nConnection: keep-alive\r\nUser-Agent: bench/1.0\r\n"
    b"X-Request-Id: 0123456789abcdef\r\n\r\n"
)
LIMITS = Limits(
    max_header_bytes=65536, header_timeout=10.0, body_timeout=60.0, max_connections=1000,
    max_per_address=100,
)  # fmt: skip


async def _app(scope: Any, receive: Any, send: Any) -> None:
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]}
    )
    await send({"type": "http.response.body", "body": b"ok"})


class _Transport(asyncio.Transport):
    def write(self, data: bytes | bytearray | memoryview) -> None:
        pass

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5000), "sockname": ("127.0.0.1", 8000)}.get(name)

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def _cpu_per_request(protocol: type[HttpToolsProtocol], requests: int) -> float:
    """Microseconds of process CPU per request."""
    config = ServerConfig(_app, limits=LIMITS, log_level="warning", proxy_headers=False)
    config.load()
    state = ServerState()
    connection = protocol(config, state, {})
    connection.connection_made(_Transport())
    started = time.process_time()
    for _ in range(requests):
        connection.data_received(REQUEST)
        while state.tasks:
            await asyncio.sleep(0)
    return (time.process_time() - started) / requests * 1e6


async def _run(requests: int, rounds: int) -> None:
    results: dict[type[HttpToolsProtocol], list[float]] = {
        HttpToolsProtocol: [],
        BoundedProtocol: [],
    }
    for _ in range(rounds):
        for protocol, values in results.items():
            values.append(await _cpu_per_request(protocol, requests))
    print("| protocol | CPU µs/request, min | median |")
    print("|---|---|---|")
    for protocol, values in results.items():
        print(f"| {protocol.__name__} | {min(values):.1f} | {statistics.median(values):.1f} |")


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--requests", type=int, default=10000)
    cli.add_argument("--rounds", type=int, default=9)
    args = cli.parse_args()
    asyncio.run(_run(args.requests, args.rounds))


if __name__ == "__main__":
    main()
