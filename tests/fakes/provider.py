"""A fake model provider on loopback: an ASGI app served by uvicorn on 127.0.0.1 (a free
port) in a background thread, speaking OpenAI Responses (`POST /v1/responses`), Chat
Completions (`POST /v1/chat/completions`) and Anthropic Messages (`POST /v1/messages`).
It answers every request from a script over a neutral view of the request
(`tests.fakes.script`) and records every request it received. Free of pytest, so a
benchmark can use it too.

    with FakeProvider(replies(call("focus", locations=["src/app.py:8-9"]), Text("# …"))) as fake:
        model = OpenAIChatModel("gpt-x", provider=OpenAIProvider(
            base_url=fake.url + "/v1", api_key="test"))
        ...
    fake.requests  # [Request, …]: parsed, with the status answered and estimated tokens

On the Anthropic wire it keeps a prompt cache as Anthropic does: a request's blocks (tools,
system, messages) up to a `cache_control` breakpoint are written to it, and a later
request that starts with a written prefix reads it; the usage it answers splits the
input tokens into uncached, `cache_read_input_tokens` and `cache_creation_input_tokens`
(`Request.cache_read_tokens`, `cache_write_tokens`).

One server can serve many runs: `fake.replay(script)` swaps the script and clears the
record. A script that raises is answered 400 (no SDK retries a 400) and its exception kept in
`fake.failures`, so a test can show what went wrong in its script.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket
import threading
import time
import traceback
from types import TracebackType
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.fakes.script import (
    Calls,
    Hang,
    HttpError,
    Message,
    Reply,
    Request,
    Script,
    ScriptExhausted,
    Text,
    ToolCall,
    ToolResult,
    Wire,
    call,
    count_input_tokens,
    count_output_tokens,
    malformed,
    replies,
)
from tests.fakes.wire import PATHS, cache_prefixes, error_body, parse, render

__all__ = [
    "Calls",
    "FakeProvider",
    "Hang",
    "HttpError",
    "Message",
    "Reply",
    "Request",
    "Script",
    "ScriptExhausted",
    "Text",
    "ToolCall",
    "ToolResult",
    "Wire",
    "call",
    "malformed",
    "replies",
]

START_SECONDS = 10.0
"""Until uvicorn says it has started: a hang guard (it takes a few milliseconds)."""
STOP_SECONDS = 10.0
HANG_POLL_SECONDS = 0.05
"""How often a hanging answer checks whether the fake is stopping."""


class FakeProvider:
    """The fake server; a context manager that starts and stops it."""

    def __init__(self, script: Script, *, delay_seconds: float = 0.0) -> None:
        """`delay_seconds`: every answer waits this long first, as a real model takes
        its time (a benchmark's LLM-bound regime); other requests are served meanwhile."""
        self.script = script
        self.delay_seconds = delay_seconds
        self.requests: list[Request] = []
        self.failures: list[str] = []
        """Tracebacks of the script's exceptions, one per failed request."""
        self._lock = threading.Lock()
        self._cached: set[str] = set()
        """Prompt-cache keys written (Anthropic wire) since the last `replay`."""
        self._stopping = False
        self._socket: socket.socket | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        routes = [
            Route(path, self._endpoint(wire), methods=["POST"]) for path, wire in PATHS.items()
        ]
        self.app = Starlette(routes=routes)

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>` (OpenAI clients take `url + "/v1"`)."""
        if self._socket is None:
            raise RuntimeError("the fake provider is not running")
        host, port = self._socket.getsockname()[:2]
        return f"http://{host}:{port}"

    def replay(self, script: Script) -> FakeProvider:
        """Answer from `script` from now on, with the record and the prompt cache cleared
        (to reuse one server for many runs: starting and stopping one costs ~0.2 s)."""
        with self._lock:
            self.script = script
            self.requests.clear()
            self.failures.clear()
            self._cached.clear()
        return self

    def on(self, wire: Wire) -> list[Request]:
        """The requests received over one wire, in order."""
        return [r for r in self.requests if r.wire is wire]

    def __enter__(self) -> FakeProvider:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", 0))
        config = uvicorn.Config(self.app, log_level="warning", lifespan="off")
        self._server = server = uvicorn.Server(config)
        sockets = [self._socket]
        self._thread = threading.Thread(target=server.run, kwargs={"sockets": sockets},
                                        name="fake-provider", daemon=True)  # fmt: skip
        self._thread.start()
        deadline = time.monotonic() + START_SECONDS
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the fake provider did not start")
            time.sleep(0.005)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stopping = True
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(STOP_SECONDS)
        if self._socket is not None:
            self._socket.close()

    def _endpoint(self, wire: Wire) -> Any:
        async def endpoint(http: HttpRequest) -> JSONResponse:
            body = json.loads(await http.body())
            if self.delay_seconds:
                await asyncio.sleep(self.delay_seconds)
            answer = self._answer(wire, body, dict(http.headers))
            if isinstance(answer, Hang):
                deadline = time.monotonic() + answer.seconds
                while time.monotonic() < deadline and not self._stopping:
                    await asyncio.sleep(HANG_POLL_SECONDS)
                return JSONResponse({"error": {"message": "hung"}}, 504)
            return answer

        return endpoint

    def _answer(
        self, wire: Wire, body: dict[str, Any], headers: dict[str, str]
    ) -> JSONResponse | Hang:
        """Parse, ask the script, record, render (or hang). Runs on the server's loop (the
        script is a plain function and quick)."""
        parsed = parse(wire, body)
        request = Request(
            wire=wire, model=parsed.model, instructions=parsed.instructions,
            messages=parsed.messages, tools=parsed.tools, added_tools=parsed.added_tools,
            tool_specs=parsed.tool_specs,
            body=body, headers=headers, at=time.monotonic(),
        )  # fmt: skip
        request = dataclasses.replace(request, input_tokens=count_input_tokens(request))
        reply = self._reply(request)
        status = 504 if isinstance(reply, Hang) else 200
        status = reply.status if isinstance(reply, HttpError) else status
        read = written = 0
        if status == 200 and wire is Wire.MESSAGES:
            read, written = self._cache(body, request.input_tokens)
        with self._lock:
            number = len(self.requests)
            self.requests.append(dataclasses.replace(
                request, status=status, cache_read_tokens=read, cache_write_tokens=written,
            ))  # fmt: skip
        if isinstance(reply, Hang):
            return reply
        if isinstance(reply, HttpError):
            return JSONResponse(dict(error_body(wire, reply)), reply.status, dict(reply.headers))
        usage = (request.input_tokens, count_output_tokens(reply))
        return JSONResponse(dict(render(
            wire, reply, model=parsed.model, number=number, usage=usage, cached=(read, written),
        )))  # fmt: skip

    def _cache(self, body: dict[str, Any], tokens: int) -> tuple[int, int]:
        """Input tokens read from and written to the prompt cache by this request: the
        longest prefix already written is read; the rest, up to the last breakpoint, is
        written."""
        prefixes = cache_prefixes(body, tokens)  # (key, tokens) per breakpoint, shortest first
        with self._lock:
            read = max((t for key, t in prefixes if key in self._cached), default=0)
            self._cached.update(key for key, _ in prefixes)
        longest = prefixes[-1][1] if prefixes else 0
        return read, longest - read

    def _reply(self, request: Request) -> Reply:
        if request.body.get("stream"):
            return HttpError(400, "the fake provider does not stream")
        try:
            return self.script(request)
        except Exception as exc:  # a broken script is the test's bug: say it, don't retry
            with self._lock:
                self.failures.append(traceback.format_exc())
            return HttpError(400, f"fake provider script failed: {type(exc).__name__}: {exc}")
