"""The load of `bench/service_bench.py`: requests, a keep-alive HTTP/1.1 client, the
workers that send them, and the server's CPU and memory read from /proc (psutil is not a
dependency)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

TICKS = os.sysconf("SC_CLK_TCK")
SAMPLE_SECONDS = 0.1
"""How often the server's memory is read."""


# ---- the server's processes -------------------------------------------------------------


def tree(pid: int) -> list[int]:
    """`pid` and its descendants (read from /proc; psutil is not a dependency)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            parents.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(parents.get(current, []))
    return found


def status_kb(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


@dataclass
class Memory:
    """Peak summed VmRSS (kB) of the server's process tree, per phase, in a thread."""

    pid: int
    phase: str = "start"
    peaks: dict[str, int] = field(default_factory=dict)
    pids: list[int] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        rounds = 0
        while not self._stop.wait(SAMPLE_SECONDS):
            if rounds % 10 == 0:
                self.pids = tree(self.pid)
            rounds += 1
            rss = sum(status_kb(pid, "VmRSS") for pid in self.pids)
            self.peaks[self.phase] = max(self.peaks.get(self.phase, 0), rss)

    def __enter__(self) -> Memory:
        self.pids = tree(self.pid)
        threading.Thread(target=self.run, name="memory", daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()


# ---- requests and the client -------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Result:
    name: str
    count: int
    seconds: float
    latencies: list[float]
    statuses: list[int]
    answers: list[Any]
    concurrency: int
    server_cpu: float
    client_cpu: float
    root_cpu: float = 0.0
    """The server's first process alone (with `--workers`: the supervisor, which runs the
    jobs; the rest of `server_cpu` is the web workers')."""
    rss_kb: int = 0
    postgres_cpu: float = 0.0
    timers: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.count / self.seconds

    def percentile(self, q: int) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]

    def codes(self) -> str:
        counted: dict[int, int] = {}
        for code in self.statuses:
            counted[code] = counted.get(code, 0) + 1
        return " ".join(f"{code}×{n}" for code, n in sorted(counted.items()))


class Connection:
    """One keep-alive HTTP/1.1 connection on asyncio streams (stdlib). It costs this
    client far less CPU per request than httpx (`--client httpx` to compare: ~3 ms per
    request here), and on two cores the client's CPU is taken from the server's."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def send(self, call: Call) -> tuple[int, bytes]:
        if self.streams is None:
            self.streams = await asyncio.open_connection("127.0.0.1", self.port)
        reader, writer = self.streams
        body = call.body or b""
        head = [f"{call.method} {call.path} HTTP/1.1", f"host: 127.0.0.1:{self.port}"]
        head += [f"content-length: {len(body)}", *(f"{k}: {v}" for k, v in call.headers.items())]
        writer.write("\r\n".join(head).encode() + b"\r\n\r\n" + body)
        await writer.drain()
        lines = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n")
        fields = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            fields[name.strip().lower()] = value.strip().lower()
        if b"transfer-encoding" in fields:
            raise RuntimeError(f"{call.path}: a chunked answer (not read by this client)")
        payload = await reader.readexactly(int(fields.get(b"content-length", b"0")))
        if fields.get(b"connection") == b"close":
            await self.close()
        return int(lines[0].split()[1]), payload

    async def close(self) -> None:
        if self.streams is not None:
            self.streams[1].close()
            self.streams = None


class HttpxSender:
    """The same through an httpx client (its pool shared by the workers)."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def send(self, call: Call) -> tuple[int, bytes]:
        response = await self.client.request(
            call.method, call.path, content=call.body, headers=call.headers
        )
        return response.status_code, response.content

    async def close(self) -> None:
        return None


Sender = Connection | HttpxSender


async def load(
    senders: Callable[[], Sender], name: str, calls: list[Call], concurrency: int,
    pids: list[int], *, keep: bool = False,
) -> Result:  # fmt: skip
    """Send `calls` over `concurrency` workers, each with its own sender (connection);
    every answer's time and status."""
    count = len(calls)
    latencies, statuses = [0.0] * count, [0] * count
    answers: list[Any] = [None] * count
    indexes = iter(range(count))

    async def worker() -> None:
        sender = senders()
        try:
            for i in indexes:
                started = time.perf_counter()
                status, payload = await sender.send(calls[i])
                latencies[i] = time.perf_counter() - started
                statuses[i] = status
                if keep or status >= 400:
                    answers[i] = json.loads(payload) if payload[:1] == b"{" else payload
        finally:
            await sender.close()

    workers = min(concurrency, count)
    cpu, own, root = cpu_seconds(pids), time.process_time(), cpu_seconds(pids[:1])
    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(workers)))
    seconds = time.perf_counter() - started
    return Result(
        name, count, seconds, latencies, statuses, answers, workers,
        server_cpu=cpu_seconds(pids) - cpu, client_cpu=time.process_time() - own,
        root_cpu=cpu_seconds(pids[:1]) - root,
    )  # fmt: skip
