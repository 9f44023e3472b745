"""Hostile connections against a real `diagnoser serve` (the bounds live in the HTTP server,
which TestClient does not run): header floods, slowloris, connection floods, clients
that leave mid-body, and forged `X-Forwarded-For`.

The main server runs with its file limit lowered to `FILE_LIMIT`, so a flood of
`ATTACKERS` half-sent requests would take every descriptor of a server that did not cap
its connections. Attackers bind to other loopback addresses (127.0.0.2…) than the
healthy client (127.0.0.1). Every wait is bounded by `HANG_GUARD_SECONDS`.
"""

from __future__ import annotations

import contextlib
import resource
import select
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.api.server import Server, serve

FILE_LIMIT = 256
"""The main server's descriptors: fewer than `ATTACKERS`."""
ATTACKERS = 300
PER_ADDRESS = 50
"""DIAGNOSER_MAX_CONNECTIONS_PER_ADDRESS of the main server."""
TIMEOUT_SECONDS = 2
"""Header and body timeouts of the main server: small, so the tests are quick."""
HANG_GUARD_SECONDS = 30.0
TRICKLE_SECONDS = 0.5
BIG_HEADER_BYTES = 1_000_000
STREAM_BYTES = 20_000_000
STREAMS = 4
RSS_GROWTH_BYTES = 50_000_000
CHUNK_BYTES = 256 * 1024
RATE_LIMIT = 3
SECRET = "s3cret"


def _lower_file_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (FILE_LIMIT, FILE_LIMIT))


def _settings(home: Path, **extra: str) -> dict[str, str]:
    return {
        "DIAGNOSER_HOME": str(home / "home"),
        "DIAGNOSER_DATABASE_URL": f"sqlite:///{home / 'db' / 'diagnoser.sqlite'}",
        **extra,
    }


@contextlib.contextmanager
def _server(
    home: Path, settings: dict[str, str], args: tuple[str, ...] = (), *, low_files: bool = False
) -> Iterator[Server]:
    preexec = _lower_file_limit if low_files else None
    with serve(settings, log=home / "server.log", args=args, preexec=preexec) as server:
        server.wait_ready()
        yield server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("connections")
    settings = _settings(
        home,
        DIAGNOSER_GITHUB_SECRET=SECRET,
        DIAGNOSER_HEADER_TIMEOUT_SECONDS=str(TIMEOUT_SECONDS),
        DIAGNOSER_BODY_TIMEOUT_SECONDS=str(TIMEOUT_SECONDS),
        DIAGNOSER_MAX_CONNECTIONS_PER_ADDRESS=str(PER_ADDRESS),
    )
    with _server(home, settings, low_files=True) as running:
        yield running


def _connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket()
    sock.settimeout(HANG_GUARD_SECONDS)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def _send(sock: socket.socket, data: bytes) -> bool:
    """Send `data`; False once the server has closed the connection."""
    try:
        sock.sendall(data)
    except OSError:
        return False
    return True


def _reply(sock: socket.socket) -> bytes:
    """What the server answers until it closes (or the hang guard)."""
    chunks = []
    with contextlib.suppress(OSError):
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _closed_within_guard(sock: socket.socket, trickle: bytes) -> bytes:
    """Send `trickle` one byte per `TRICKLE_SECONDS` until the server answers or closes;
    what it answered. Fails at the hang guard."""
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    for byte in (trickle[i : i + 1] for i in range(len(trickle))):
        readable, _, _ = select.select([sock], [], [], TRICKLE_SECONDS)
        if readable or not _send(sock, byte):
            return _reply(sock)
        assert time.monotonic() < deadline, "the server held a trickling request open"
    raise AssertionError("the trickle ended before the server closed the connection")


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _metrics(server: Server) -> str:
    return server.client.get("/metrics").text


def test_a_one_megabyte_header_is_refused(server: Server) -> None:
    sock = _connect(server.port)
    with sock:
        request = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * BIG_HEADER_BYTES
        _send(sock, request + b"\r\n\r\n")
        reply = _reply(sock)
    assert reply == b"" or reply.startswith(b"HTTP/1.1 431"), reply[:200]


def test_many_headers_complete_in_one_send_are_refused(server: Server) -> None:
    headers = b"".join(b"X-H%d: %s\r\n" % (n, b"a" * 1000) for n in range(100))
    with _connect(server.port) as sock:
        _send(sock, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n")
        reply = _reply(sock)
    assert reply == b"" or reply.startswith(b"HTTP/1.1 431"), reply[:200]


def test_unfinished_large_headers_do_not_grow_memory(server: Server) -> None:
    before = _rss(server.process.pid)
    streams = [_connect(server.port) for _ in range(STREAMS)]
    try:
        open_ = {sock: _send(sock, b"GET /healthz HTTP/1.1\r\nX-Big: ") for sock in streams}
        for _ in range(STREAM_BYTES // CHUNK_BYTES):
            for sock in streams:
                if open_[sock]:
                    open_[sock] = _send(sock, b"a" * CHUNK_BYTES)
            time.sleep(0.005)  # slowly: the server reads each piece as it comes
        grown = _rss(server.process.pid) - before
    finally:
        for sock in streams:
            sock.close()
    assert grown < RSS_GROWTH_BYTES, f"RSS grew by {grown:,} bytes"


def test_half_sent_requests_from_one_address_do_not_starve_healthz(server: Server) -> None:
    attackers: list[socket.socket] = []
    try:
        for _ in range(ATTACKERS):
            with contextlib.suppress(OSError):
                attackers.append(_connect(server.port, "127.0.0.2"))
                _send(attackers[-1], b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=10.0) as healthy:
            assert healthy.get("/healthz").status_code == 200
    finally:
        for sock in attackers:
            sock.close()


def test_a_trickled_header_is_cut_off(server: Server) -> None:
    with _connect(server.port) as sock:
        _send(sock, b"GET /healthz HTTP/1.1\r\n")
        reply = _closed_within_guard(sock, b"X-Slow: " + b"a" * 1000)
    assert reply == b"" or reply.startswith(b"HTTP/1.1 408"), reply[:200]


def test_a_trickled_body_is_cut_off(server: Server) -> None:
    with _connect(server.port) as sock:
        head = b"POST /diagnose HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
        _send(sock, head + b"Content-Length: 1000\r\n\r\n")
        reply = _closed_within_guard(sock, b"a" * 1000)
    assert reply == b"" or reply.startswith(b"HTTP/1.1 408"), reply[:200]


def test_past_the_connection_caps_the_answer_is_503(server: Server) -> None:
    opened: list[socket.socket] = []
    try:
        for source in ("127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6"):
            opened.extend(_connect(server.port, source) for _ in range(PER_ADDRESS + 10))
        replies = [_reply(sock) for sock in opened]  # 503 at once, or closed when idle
    finally:
        for sock in opened:
            sock.close()
    refused = [reply for reply in replies if reply.startswith(b"HTTP/1.1 503")]
    assert len(refused) >= 4 * 10  # each address past its cap, and the whole past its own
    assert any(b"from this address" in reply for reply in refused)
    assert any(b"too many connections" in reply for reply in refused)


def _leave_mid_body(server: Server, path: str, headers: str) -> None:
    with _connect(server.port) as sock:
        head = f"POST {path} HTTP/1.1\r\nHost: x\r\n{headers}Content-Length: 100000\r\n\r\n"
        _send(sock, head.encode() + b"{" * 1000)


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        (
            "/webhooks/github",
            "Content-Type: application/json\r\nX-GitHub-Event: issues\r\n"
            "X-GitHub-Delivery: d-1\r\nX-Hub-Signature-256: sha256=00\r\n",
        ),
        ("/diagnose", "Content-Type: text/plain\r\n"),
    ],
)
def test_a_client_leaving_mid_body_is_a_499_not_a_traceback(
    server: Server, path: str, headers: str
) -> None:
    _leave_mid_body(server, path, headers)
    line = f'route="{path}",status="499"'
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while line not in _metrics(server):
        assert time.monotonic() < deadline, f"no {line} in /metrics:\n{_metrics(server)}"
        time.sleep(0.2)
    assert 'status="500"' not in _metrics(server)
    assert "Traceback" not in server.output
    assert server.output.count(f"POST {path} from 127.0.0.1: the client left") == 1


@pytest.fixture(scope="module")
def untrusting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("untrusting")
    settings = _settings(home, DIAGNOSER_RATE_LIMIT_PER_MINUTE=str(RATE_LIMIT))
    with _server(home, settings) as running:
        yield running


@pytest.fixture(scope="module")
def behind_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("behind_proxy")
    settings = _settings(
        home,
        DIAGNOSER_RATE_LIMIT_PER_MINUTE=str(RATE_LIMIT),
        DIAGNOSER_TRUSTED_PROXIES="127.0.0.1",
    )
    with _server(home, settings) as running:
        yield running


def _statuses(server: Server, forwarded: list[str]) -> list[int]:
    return [
        server.client.get("/repos", headers={"X-Forwarded-For": address}).status_code
        for address in forwarded
    ]


def test_forwarded_addresses_are_ignored_by_default(untrusting: Server) -> None:
    rotated = [f"10.0.0.{n}" for n in range(RATE_LIMIT + 2)]
    assert 429 in _statuses(untrusting, rotated)


def test_a_named_proxy_s_forwarded_address_is_the_caller(behind_proxy: Server) -> None:
    rotated = [f"10.0.0.{n}" for n in range(RATE_LIMIT + 2)]
    assert 429 not in _statuses(behind_proxy, rotated)
    assert 429 in _statuses(behind_proxy, ["10.0.1.1"] * (RATE_LIMIT + 2))


def test_the_bounds_hold_with_web_workers(tmp_path: Path) -> None:
    settings = _settings(tmp_path, DIAGNOSER_HEADER_TIMEOUT_SECONDS=str(TIMEOUT_SECONDS))
    with _server(tmp_path, settings, ("--workers", "2")) as running:
        test_a_one_megabyte_header_is_refused(running)
        test_a_trickled_header_is_cut_off(running)


REPOS = 40
"""Folder repositories of the many-repositories server: their index files alone
(2 each) are most of the descriptors left after a started server's own."""


def test_many_repositories_keep_descriptors_for_their_index_files(tmp_path: Path) -> None:
    """Each open index keeps its two term index files open (`api.server.reserved_files`):
    at a low file limit the connection cap leaves them room, so a connection flood
    cannot take the descriptors the repositories' jobs need."""
    folders = []
    for n in range(REPOS):
        folder = tmp_path / "repos" / f"r{n}"
        folder.mkdir(parents=True)
        (folder / "app.py").write_text(f"def f{n}():\n    return {n}\n")
        folders.append(f"r{n}={folder}")
    settings = _settings(tmp_path, DIAGNOSER_REPOS=",".join(folders))
    with _server(tmp_path, settings, low_files=True) as running:
        output = running.output
    cap = FILE_LIMIT - 128 - 2 * REPOS  # RESERVED_FILES, INDEX_FILES per folder repository
    assert f"DIAGNOSER_MAX_CONNECTIONS lowered from 1000 to {cap}" in output, output[-2000:]
