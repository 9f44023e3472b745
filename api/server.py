"""The HTTP server under `diagnoser serve`: uvicorn's httptools protocol with the bounds a
service facing a hostile network needs on its own (a reverse proxy in front still helps).

    config = server_config(app, settings, connection_limits(settings), port=8000)
    uvicorn.Server(config).run()

Per connection (`BoundedProtocol`):
- request line + headers at most `DIAGNOSER_MAX_HEADER_BYTES`, else 431 and closed.
  httptools has no limit of its own and keeps a header it has not finished in memory;
  uvicorn's h11 has one, but took +60% server CPU on `/healthz` (docs/benchmarks.md,
  "Connection bounds"), so this counts bytes around httptools (~4 µs a request).
- headers within `DIAGNOSER_HEADER_TIMEOUT_SECONDS` of the connection's or the request's
  first byte, the whole body within `DIAGNOSER_BODY_TIMEOUT_SECONDS` of the headers'
  end; else 408 and closed (a connection that never sent a byte is closed silently).
- at most `DIAGNOSER_MAX_CONNECTIONS` open at once and `…_PER_ADDRESS` from one client
  address (trusted proxies excepted): past either, 503 at once and closed (a client whose
  request arrived before the close may see a reset instead). The cap is
  kept below the process's file limit (raised to its hard limit when needed), so the
  server never runs out of descriptors to accept `/healthz`.

A client that leaves mid-body reaches the app as `ClientDisconnect` (`api.errors`: one
log line, status 499); one cut off by the body timeout as the same, marked
`BODY_TIMED_OUT` in its scope (status 408). With `--workers N` each process applies
the caps to its own connections.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import resource
import time
from asyncio import TimerHandle
from dataclasses import dataclass
from typing import Any, cast

import httptools
import uvicorn
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol
from uvicorn.protocols.utils import get_remote_addr
from uvicorn.server import ServerState

from api.settings import ServiceSettings
from diagnoser import ConfigError
from diagnoser.registry import KEPT_SNAPSHOTS
from diagnoser.term_indexes import INDEX_FILES

SERVER_LOG = "uvicorn.error"
"""The server's own log: uvicorn formats it and filters it by `--log-level`."""
log = logging.getLogger(SERVER_LOG)
LOG_EVERY_SECONDS = 10.0
"""At most one line per kind of refusal in this long, with the count of the others: a
flood of refused connections must not become a flood of log lines."""
RESERVED_FILES = 128
"""Descriptors kept for everything but client connections: the database pools (ours and
DBOS's), SQLite's journal files, the repo files the tools read, the log, the metrics
files of `--workers N`. A started server uses ~40; the rest is room for jobs."""
MIN_CONNECTIONS = 16
"""Below this a file limit is a mistake to fix (`ulimit -n`), not a cap to serve with."""
BODY_TIMED_OUT = "diagnoser.body_timed_out"
"""Scope key set when the body timeout cut a request off (read by `api.errors`)."""


@dataclass(frozen=True)
class Limits:
    """What one connection and one client address may take."""

    max_header_bytes: int
    """Request line + headers of one request."""
    header_timeout: float
    """Seconds from a request's first byte (or the connection's start) to its headers' end."""
    body_timeout: float
    """Seconds from the headers' end to the body's end."""
    max_connections: int
    """Open at once in this process (already below its file limit)."""
    max_per_address: int
    """Open at once from one client address."""
    exempt: tuple[str, ...] = ()
    """Addresses or networks with no per-address cap (trusted proxies)."""

    def is_exempt(self, host: str) -> bool:
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in ipaddress.ip_network(net, strict=False) for net in self.exempt)


class ServerConfig(uvicorn.Config):
    """uvicorn's config with the `Limits` the protocol reads (pickled to web workers)."""

    def __init__(self, app: Any, *, limits: Limits, **kwargs: Any) -> None:
        self.limits = limits
        super().__init__(app, http=BoundedProtocol, **kwargs)


def connection_limits(settings: ServiceSettings) -> Limits:
    """The `Limits` of `settings`, the connection cap fitted to the file limit (which
    may be raised); ConfigError when the file limit is too low to serve."""
    return Limits(
        max_header_bytes=settings.max_header_bytes,
        header_timeout=settings.header_timeout_seconds,
        body_timeout=settings.body_timeout_seconds,
        max_connections=connection_cap(settings.max_connections, reserved_files(settings)),
        max_per_address=settings.max_connections_per_address,
        exempt=settings.trusted_proxies,
    )


def server_config(
    app: Any, settings: ServiceSettings, limits: Limits, **kwargs: Any
) -> ServerConfig:
    """The uvicorn config of `diagnoser serve` (one process or `--workers N`): `limits`,
    and proxy headers read only from `DIAGNOSER_TRUSTED_PROXIES`."""
    proxies = list(settings.trusted_proxies)
    return ServerConfig(
        app, limits=limits, proxy_headers=bool(proxies), forwarded_allow_ips=proxies, **kwargs
    )


def reserved_files(settings: ServiceSettings) -> int:
    """Descriptors kept from client connections: RESERVED_FILES, and the term index files
    (`INDEX_FILES`) the open workspaces of every repository may hold (a git repository
    keeps KEPT_SNAPSHOTS of its commits open)."""
    workspaces = len(settings.repos) + KEPT_SNAPSHOTS * len(settings.git_repos)
    return RESERVED_FILES + len(INDEX_FILES) * workspaces


def connection_cap(wanted: int, reserved: int) -> int:
    """`wanted`, or less to fit the file limit with `reserved` descriptors to spare, whose
    soft value is raised towards the hard one first; ConfigError when that leaves too few."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    raised = raised_soft_limit(wanted, soft=soft, hard=hard, reserved=reserved)
    if raised != soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
    cap = fitted_cap(wanted, raised, reserved=reserved)
    if cap < wanted:
        log.warning(
            "DIAGNOSER_MAX_CONNECTIONS lowered from %d to %d: the file limit is %d (ulimit -n)",
            wanted, cap, raised,
        )  # fmt: skip
    return cap


def raised_soft_limit(wanted: int, *, soft: int, hard: int, reserved: int = RESERVED_FILES) -> int:
    """The soft file limit to set for `wanted` connections and `reserved` descriptors: as
    is when enough, else as close to enough as the hard limit allows."""
    needed = wanted + reserved
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return soft
    return needed if hard == resource.RLIM_INFINITY else min(needed, hard)


def fitted_cap(wanted: int, soft: int, *, reserved: int = RESERVED_FILES) -> int:
    """`wanted`, or what `soft` descriptors leave after `reserved`; ConfigError when that
    is under `MIN_CONNECTIONS`."""
    if soft == resource.RLIM_INFINITY or soft - reserved >= wanted:
        return wanted
    if soft - reserved < MIN_CONNECTIONS:
        raise ConfigError(
            f"the file limit is {soft} (ulimit -n): raise it to at least "
            f"{MIN_CONNECTIONS + reserved} to serve"
        )
    return soft - reserved


class _Throttled:
    """A log line of one kind at most every `LOG_EVERY_SECONDS`, saying how many it held."""

    def __init__(self, level: int) -> None:
        self.level, self.last, self.held = level, float("-inf"), 0

    def __call__(self, message: str, *args: object) -> None:
        now = time.monotonic()
        if now - self.last < LOG_EVERY_SECONDS:
            self.held += 1
            return
        more = f" (and {self.held} more in the last {now - self.last:.0f} s)" if self.held else ""
        log.log(self.level, message + more, *args)
        self.last, self.held = now, 0


_FULL = _Throttled(logging.WARNING)
_CROWDED = _Throttled(logging.WARNING)
_TOO_LARGE = _Throttled(logging.WARNING)
_LATE = _Throttled(logging.INFO)


class HeadersTooLarge(Exception):
    """Raised in a parser callback; httptools wraps it (as the error's `__context__`)."""


class BoundedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with `Limits` (module docstring)."""

    def __init__(
        self,
        config: uvicorn.Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.limits: Limits = cast(ServerConfig, config).limits
        self.refused = False
        self.reading_headers = True
        self.header_bytes = 0  # received while the headers are not complete
        self.read_size = 0  # of the read being parsed
        self.header_started = 0.0  # loop time the current headers' clock started
        self.body_started: float | None = None  # loop time of the headers' end, body pending
        self.header_timer: TimerHandle | None = None
        self.body_timer: TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        refusal = self._refusal(transport)
        if refusal is not None:
            self.refused = True
            self.transport = transport
            transport.write(_answer(503, refusal))
            transport.close()
            return
        super().connection_made(transport)
        self.header_started = self.loop.time()  # armed now: a silent client sends no read
        self.header_timer = self.loop.call_at(
            self.header_started + self.limits.header_timeout, self._header_late
        )

    def _refusal(self, transport: asyncio.Transport) -> str | None:
        if len(self.connections) >= self.limits.max_connections:
            _FULL("connection refused: %d open", len(self.connections))
            return "too many connections; try again later"
        client = get_remote_addr(transport)
        host = client[0] if client else ""
        if not host or self.limits.is_exempt(host):
            return None
        same = sum(1 for c in self.connections if (getattr(c, "client", None) or ("",))[0] == host)
        if same >= self.limits.max_per_address:
            _CROWDED("connection from %s refused: %d open from this address", host, same)
            return f"too many connections from this address ({same}); try again later"
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timers()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """uvicorn's, with the header limit: the bytes of reads that end with the headers
        unfinished are counted here, headers parsed whole from one read when they end."""
        if self.refused or self.parser is None:
            return
        self._unset_keepalive_if_required()
        self.read_size = len(data)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return
        except httptools.HttpParserError as error:
            if isinstance(error.__context__, HeadersTooLarge):
                self._headers_too_large()
                return
            self.logger.warning("Invalid HTTP request received.")
            self.send_400_response("Invalid HTTP request received.")
            return
        if self.reading_headers:
            self.header_bytes += len(data)
            if self.header_bytes > self.limits.max_header_bytes:
                self._headers_too_large()
                return
        if (self.reading_headers and self.header_timer is None) or (
            self.body_started is not None and self.body_timer is None
        ):
            self._arm_timers()

    def _arm_timers(self) -> None:
        """Timers only for a request this read left unfinished: most arrive whole in one
        read, and a timer armed and cancelled per request costs the loop."""
        if self.reading_headers and self.header_timer is None:
            deadline = self.header_started + self.limits.header_timeout
            self.header_timer = self.loop.call_at(deadline, self._header_late)
        if self.body_started is not None and self.body_timer is None:
            deadline = self.body_started + self.limits.body_timeout
            self.body_timer = self.loop.call_at(deadline, self._body_late)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.reading_headers = True
        self.header_bytes = 0
        if self.header_timer is None:  # else the connection's first request: from its start
            self.header_started = self.loop.time()

    def on_headers_complete(self) -> None:
        limit = self.limits.max_header_bytes
        if self.header_bytes + self.read_size > limit and self._header_size() > limit:
            raise HeadersTooLarge  # whole in this read: the count after it would miss them
        self.reading_headers = False
        self.header_bytes = 0
        if self.header_timer is not None:
            self.header_timer.cancel()
            self.header_timer = None
        super().on_headers_complete()
        self.body_started = self.loop.time()  # unset by on_message_complete if no body

    def _header_size(self) -> int:
        """The request line and headers as parsed (CRLFs and ": " counted)."""
        return len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)

    def on_message_complete(self) -> None:
        self.body_started = None
        if self.body_timer is not None:
            self.body_timer.cancel()
            self.body_timer = None
        super().on_message_complete()

    def _cancel_timers(self) -> None:
        for timer in (self.header_timer, self.body_timer):
            if timer is not None:
                timer.cancel()
        self.header_timer = self.body_timer = None

    def _headers_too_large(self) -> None:
        limit = self.limits.max_header_bytes
        _TOO_LARGE("%s: request headers over %d bytes: refused (431)", self._who(), limit)
        self._close_with(431, f"the request line and headers are over {limit:,} bytes")

    def _header_late(self) -> None:
        self.header_timer = None
        if self.transport.is_closing():
            return
        if self.header_bytes == 0 and self.cycle is None:
            self.transport.close()  # never sent a byte (a browser's preconnect, a scan)
            return
        seconds = self.limits.header_timeout
        _LATE("%s: request headers not complete after %g s: closed (408)", self._who(), seconds)
        self._close_with(408, f"the request headers took over {seconds:g} s")

    def _body_late(self) -> None:
        self.body_timer = None
        cycle = self.cycle
        if cycle is None or self.transport.is_closing():
            return
        seconds = self.limits.body_timeout
        cast(dict[str, Any], cycle.scope)[BODY_TIMED_OUT] = True
        if not cycle.response_started:
            self.transport.write(_answer(408, f"the request body took over {seconds:g} s"))
        cycle.disconnected = True  # the app's receive() now says the client left
        cycle.message_event.set()
        self.transport.close()

    def _close_with(self, status: int, detail: str) -> None:
        self._cancel_timers()
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        self.transport.write(_answer(status, detail))
        self.transport.close()

    def _who(self) -> str:
        return f"{self.client[0]}:{self.client[1]}" if self.client else "a client"


def _answer(status: int, detail: str) -> bytes:
    """A whole `{"detail": …}` response closing the connection, written by the server
    itself (no app behind it yet)."""
    body = json.dumps({"detail": detail}).encode()
    head = (
        b"content-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
        % len(body)
    )
    return STATUS_LINE[status] + head + body
