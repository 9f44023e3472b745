"""What a fake provider sees and says, in no provider's format: a request parsed into
messages (role, text, tool calls, tool results), the tools offered and the instructions;
a reply that is text, tool calls (well-formed or not) or an HTTP error. A script is any
callable from one to the other; `replies` makes one from a list.

    script = replies(call("grep", pattern="total"), Text("# Title\\n..."))
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from threading import Lock
from typing import Any

from repomap.render import estimate_tokens


class Wire(StrEnum):
    RESPONSES = "responses"  # OpenAI Responses: POST /v1/responses (`openai:`)
    CHAT = "chat"  # OpenAI Chat Completions: POST /v1/chat/completions (`openai-chat:`)
    MESSAGES = "messages"  # Anthropic Messages: POST /v1/messages (`anthropic:`)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the model makes (in a reply) or made (in the history of a request)."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    call_id: str = ""
    """Empty in a reply: the fake numbers its calls."""
    raw_args: str | None = None
    """Sent instead of `args` when set: arguments that need not be JSON at all."""

    def arguments(self) -> str:
        """The arguments as the wire carries them (a JSON string)."""
        return self.raw_args if self.raw_args is not None else json.dumps(dict(self.args))


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool returned, as the client sent it back."""

    call_id: str
    name: str
    """The tool's name, found from the call with the same id earlier in the request."""
    text: str
    is_error: bool = False
    """Only Anthropic marks failed calls; elsewhere a retry prompt is plain text."""


@dataclass(frozen=True, slots=True)
class Message:
    """One turn: `user`, `assistant`, `tool` (tool results) or `system` (a system message
    after the first turn; those before it are `Request.instructions`)."""

    role: str
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()


@dataclass(frozen=True, slots=True)
class Request:
    """One request the fake received, parsed."""

    wire: Wire
    model: str
    instructions: str
    messages: tuple[Message, ...]
    tools: tuple[str, ...]
    """Names of the tools in the request's tool list, in the order sent."""
    added_tools: tuple[str, ...]
    """Tools declared in the input instead (Responses `additional_tools` items: how
    pydantic-ai reveals a tool that became available mid-run), oldest first."""
    tool_specs: tuple[Mapping[str, Any], ...]
    """The tool definitions as sent (name, description, JSON schema): the tool list's,
    then those declared in the input."""
    body: Mapping[str, Any]
    """The raw JSON body."""
    headers: Mapping[str, str]
    at: float
    """`time.monotonic()` when it arrived."""
    input_tokens: int = 0
    """Estimated: see `count_input_tokens`."""
    status: int = 200
    """The status the fake answered with."""
    cache_read_tokens: int = 0
    """Of `input_tokens`, read from the fake's prompt cache (Anthropic wire)."""
    cache_write_tokens: int = 0
    """Of `input_tokens`, written to it."""

    @property
    def text(self) -> str:
        """Everything the model reads in this request, as one string."""
        return _request_text(self)

    def last(self, role: str) -> Message | None:
        return next((m for m in reversed(self.messages) if m.role == role), None)

    def results(self) -> list[ToolResult]:
        """Every tool result in the request, oldest first."""
        return [r for m in self.messages for r in m.tool_results]


@dataclass(frozen=True, slots=True)
class Text:
    """A reply in words (the final output, for a text-output agent)."""

    text: str


@dataclass(frozen=True, slots=True)
class Calls:
    """A reply that calls tools, with optional text beside the calls."""

    calls: tuple[ToolCall, ...]
    text: str = ""


@dataclass(frozen=True, slots=True)
class HttpError:
    """An HTTP error answer. `body` is sent as is; without one, the wire's usual error
    body carrying `message`."""

    status: int
    message: str = "error"
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Hang:
    """No answer: the fake holds the connection open for `seconds` (or until it stops),
    then answers 504 — a provider that accepted the request and died."""

    seconds: float = 60.0


Reply = Text | Calls | HttpError | Hang
Script = Callable[[Request], Reply]


def call(name: str, /, **args: Any) -> Calls:
    """A reply with one well-formed tool call."""
    return Calls((ToolCall(name, args),))


def malformed(name: str, raw_args: str) -> Calls:
    """A reply with one tool call whose arguments are `raw_args` verbatim (bad JSON)."""
    return Calls((ToolCall(name, raw_args=raw_args),))


class ScriptExhausted(Exception):
    """A `replies` script was asked for more replies than it holds."""


def replies(*script: Reply) -> Script:
    """A script answering each request with the next reply, in order."""
    queue = list(script)
    lock = Lock()

    def next_reply(request: Request) -> Reply:
        with lock:
            if not queue:
                raise ScriptExhausted(f"no reply left for request {request.model!r}")
            return queue.pop(0)

    return next_reply


def count_input_tokens(request: Request) -> int:
    """Input tokens of a request, estimated as the map's budgets are (`estimate_tokens`:
    characters / 3.7, calibrated on GPT-4o's tokenizer — tiktoken itself downloads its
    encodings at first use and so fails offline) over what the model reads: the
    instructions, every message's text, tool calls and results, and the tool definitions
    as JSON. Providers add a few tokens of framing per message; this leaves them out."""
    return estimate_tokens(request.text)


def count_output_tokens(reply: Reply) -> int:
    """Output tokens of a reply, estimated as for the input."""
    if isinstance(reply, Text):
        return estimate_tokens(reply.text)
    if isinstance(reply, Calls):
        calls = "".join(c.name + c.arguments() for c in reply.calls)
        return estimate_tokens(reply.text + calls)
    return 0


def _request_text(request: Request) -> str:
    parts: list[str] = [request.instructions]
    for message in request.messages:
        parts.append(message.text)
        parts.extend(c.name + c.arguments() for c in message.tool_calls)
        parts.extend(r.text for r in message.tool_results)
    parts.extend(json.dumps(dict(spec), separators=(",", ":")) for spec in request.tool_specs)
    return "\n".join(p for p in parts if p)


def merge(messages: Sequence[Message]) -> tuple[Message, ...]:
    """Consecutive messages of one role as one (wires split a turn into items)."""
    merged: list[Message] = []
    for message in messages:
        if merged and merged[-1].role == message.role:
            last = merged[-1]
            text = "\n".join(t for t in (last.text, message.text) if t)
            merged[-1] = Message(
                message.role,
                text,
                last.tool_calls + message.tool_calls,
                last.tool_results + message.tool_results,
            )
        else:
            merged.append(message)
    return tuple(merged)
