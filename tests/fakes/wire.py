"""The three wire formats the fake provider speaks: each parses a request body into the
neutral view (`script.Request`'s fields) and renders a neutral reply as that provider's
JSON answer, usage included. Non-streaming only: `Agent.run` sends non-streamed requests.

Formats as the SDKs read them (openai 3.x, anthropic 2.x):
- Responses: `instructions` + `input` items (`message`, `function_call`,
  `function_call_output`) → `output` items, `usage.input_tokens`/`output_tokens`.
- Chat Completions: `messages` (`system`/`developer`, `user`, `assistant` with
  `tool_calls`, `tool`) → `choices[0].message`, `usage.prompt_tokens`/`completion_tokens`.
- Anthropic Messages: `system` + `messages` of blocks (`text`, `tool_use`, `tool_result`)
  → `content` blocks, `usage.input_tokens`/`output_tokens`.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tests.fakes.script import (
    Calls,
    HttpError,
    Message,
    Reply,
    Text,
    ToolCall,
    ToolResult,
    Wire,
    merge,
)

Body = Mapping[str, Any]

SYSTEM_ROLES = frozenset({"system", "developer"})

PATHS: dict[str, Wire] = {
    "/v1/responses": Wire.RESPONSES,
    "/v1/chat/completions": Wire.CHAT,
    "/v1/messages": Wire.MESSAGES,
}
"""Where each wire is served (OpenAI clients get `base_url=<fake>/v1`, Anthropic's the root)."""


@dataclass(frozen=True, slots=True)
class Parsed:
    model: str
    instructions: str
    messages: tuple[Message, ...]
    tool_specs: tuple[Mapping[str, Any], ...]
    tools: tuple[str, ...]
    added_tools: tuple[str, ...]


def parse(wire: Wire, body: Body) -> Parsed:
    """The neutral view of a request body."""
    raw = _PARSERS[wire](body)
    lead = next((i for i, m in enumerate(raw.messages) if m.role != "system"), len(raw.messages))
    system = [*raw.system, *(m.text for m in raw.messages[:lead])]
    names: dict[str, str] = {}
    resolved: list[Message] = []
    for message in raw.messages[lead:]:  # tool results carry only the call's id: name them
        names.update({c.call_id: c.name for c in message.tool_calls})
        results = tuple(
            ToolResult(r.call_id, names.get(r.call_id, ""), r.text, r.is_error)
            for r in message.tool_results
        )
        resolved.append(Message(message.role, message.text, message.tool_calls, results))
    tools = tuple(str(s.get("name") or s.get("function", {}).get("name", "")) for s in raw.specs)
    return Parsed(
        model=str(body.get("model", "")),
        instructions="\n\n".join(system),
        messages=merge(resolved),
        tool_specs=(*raw.specs, *raw.added),
        tools=tools,
        added_tools=tuple(str(s.get("name")) for s in raw.added),
    )


def render(
    wire: Wire, reply: Reply, *, model: str, number: int, usage: tuple[int, int],
    cached: tuple[int, int] = (0, 0),
) -> Body:  # fmt: skip
    """The provider's JSON answer for `reply` (not an HttpError: see `error_body`);
    `cached`: of the input tokens, those read from and written to the prompt cache
    (Anthropic reports them beside the uncached rest)."""
    if wire is Wire.MESSAGES:
        return _render_messages(reply, model, number, usage, cached)
    return _RENDERERS[wire](reply, model, number, usage)


def cache_prefixes(body: Body, tokens: int) -> list[tuple[str, int]]:
    """An Anthropic request's cacheable prefixes, one per `cache_control` breakpoint, in
    Anthropic's order (tools, system, messages): a key for the content up to and including
    the marked block (the model's name first, the marks themselves left out), and its share
    of the request's `tokens` (by characters)."""
    blocks: list[tuple[str, Mapping[str, Any]]] = [("tool", t) for t in body.get("tools") or ()]
    system = body.get("system") or []
    system = [{"type": "text", "text": system}] if isinstance(system, str) else system
    blocks += [("system", b) for b in system]
    for message in body.get("messages") or []:
        content = message.get("content")
        content = [{"type": "text", "text": content}] if isinstance(content, str) else content
        blocks += [(str(message.get("role")), b) for b in content]
    texts = [
        role + json.dumps({k: v for k, v in b.items() if k != "cache_control"}, sort_keys=True)
        for role, b in blocks
    ]
    total = sum(map(len, texts)) or 1
    digest = hashlib.sha256(str(body.get("model")).encode())
    prefixes: list[tuple[str, int]] = []
    size = 0
    for (_, block), text in zip(blocks, texts, strict=True):
        digest.update(text.encode())
        size += len(text)
        if "cache_control" in block:
            prefixes.append((digest.copy().hexdigest(), tokens * size // total))
    return prefixes


def error_body(wire: Wire, error: HttpError) -> Body:
    if error.body is not None:
        return error.body
    if wire is Wire.MESSAGES:
        kind = "rate_limit_error" if error.status == 429 else "api_error"
        return {"type": "error", "error": {"type": kind, "message": error.message}}
    return {"error": {"message": error.message, "type": "fake_error", "code": str(error.status)}}


def _text(content: Any) -> str:
    """Text of a content field: a string, or a list of blocks with `text`."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, Mapping))


@dataclass(frozen=True, slots=True)
class _Raw:
    """A body's parts before tool results are named and turns merged. System messages
    stay in `messages` (as `system`): only those before the first turn are instructions."""

    system: list[str]
    messages: list[Message]
    specs: tuple[Mapping[str, Any], ...]
    added: list[Mapping[str, Any]]
    """Tool definitions revealed by `additional_tools` input items (Responses)."""


def _parse_responses(body: Body) -> _Raw:
    system = [str(body["instructions"])] if body.get("instructions") else []
    items = body.get("input") or []
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    messages: list[Message] = []
    added: list[Mapping[str, Any]] = []
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call":
            args = ToolCall(
                str(item["name"]),
                call_id=str(item["call_id"]),
                raw_args=str(item.get("arguments", "")),
            )
            messages.append(Message("assistant", tool_calls=(args,)))
        elif kind == "function_call_output":
            result = ToolResult(str(item["call_id"]), "", _text(item.get("output")))
            messages.append(Message("tool", tool_results=(result,)))
        elif kind == "additional_tools":  # pydantic-ai's channel for tools added mid-run
            added.extend(item.get("tools") or ())
        elif kind == "message":
            role = str(item.get("role"))
            role = "system" if role in SYSTEM_ROLES else role
            messages.append(Message(role, _text(item.get("content"))))
    return _Raw(system, messages, tuple(body.get("tools") or ()), added)


def _parse_chat(body: Body) -> _Raw:
    messages: list[Message] = []
    for item in body.get("messages") or []:
        role = str(item.get("role"))
        if role in SYSTEM_ROLES:
            messages.append(Message("system", _text(item.get("content"))))
        elif role == "tool":
            result = ToolResult(str(item.get("tool_call_id")), "", _text(item.get("content")))
            messages.append(Message("tool", tool_results=(result,)))
        else:
            calls = tuple(
                ToolCall(
                    str(c["function"]["name"]),
                    call_id=str(c["id"]),
                    raw_args=str(c["function"].get("arguments", "")),
                )
                for c in item.get("tool_calls") or ()
            )
            messages.append(Message(role, _text(item.get("content")), calls))
    specs = tuple(dict(t.get("function", t)) for t in body.get("tools") or ())
    return _Raw([], messages, specs, [])


def _parse_messages(body: Body) -> _Raw:
    system = [_text(body["system"])] if body.get("system") else []
    messages: list[Message] = []
    for item in body.get("messages") or []:
        content = item.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
        calls = tuple(
            ToolCall(str(b["name"]), call_id=str(b["id"]), raw_args=json.dumps(b.get("input")))
            for b in blocks
            if b.get("type") == "tool_use"
        )
        results = tuple(
            ToolResult(str(b["tool_use_id"]), "", _text(b.get("content")), bool(b.get("is_error")))
            for b in blocks
            if b.get("type") == "tool_result"
        )
        if results:  # tool results first, then any text the client put beside them
            messages.append(Message("tool", tool_results=results))
        if texts or calls or not results:
            messages.append(Message(str(item.get("role")), "\n".join(texts), calls))
    return _Raw(system, messages, tuple(body.get("tools") or ()), [])


def _calls(reply: Reply, number: int) -> list[tuple[str, ToolCall]]:
    """Each tool call of a reply with the id the fake gives it."""
    if not isinstance(reply, Calls):
        return []
    return [(f"call_{number}_{i}", c) for i, c in enumerate(reply.calls)]


def _reply_text(reply: Reply) -> str:
    return reply.text if isinstance(reply, Text | Calls) else ""


def _render_responses(reply: Reply, model: str, number: int, usage: tuple[int, int]) -> Body:
    output: list[dict[str, Any]] = []
    if text := _reply_text(reply):
        content = [{"type": "output_text", "text": text, "annotations": []}]
        output.append(
            {
                "type": "message",
                "id": f"msg_{number}",
                "role": "assistant",
                "status": "completed",
                "content": content,
            }
        )
    for call_id, c in _calls(reply, number):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{call_id}",
                "call_id": call_id,
                "name": c.name,
                "arguments": c.arguments(),
                "status": "completed",
            }
        )
    tokens_in, tokens_out = usage
    return {
        "id": f"resp_{number}",
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "incomplete_details": None,
        "error": None,
        "usage": {
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _render_chat(reply: Reply, model: str, number: int, usage: tuple[int, int]) -> Body:
    calls = [
        {
            "id": call_id,
            "type": "function",
            "function": {"name": c.name, "arguments": c.arguments()},
        }
        for call_id, c in _calls(reply, number)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": _reply_text(reply) or None}
    if calls:
        message["tool_calls"] = calls
    tokens_in, tokens_out = usage
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        },
    }


def _render_messages(
    reply: Reply, model: str, number: int, usage: tuple[int, int],
    cached: tuple[int, int] = (0, 0),
) -> Body:  # fmt: skip
    content: list[dict[str, Any]] = []
    if text := _reply_text(reply):
        content.append({"type": "text", "text": text})
    for call_id, c in _calls(reply, number):
        # Anthropic sends parsed JSON; bad arguments go as the raw string they are.
        args: Any = c.raw_args if c.raw_args is not None else dict(c.args)
        content.append({"type": "tool_use", "id": call_id, "name": c.name, "input": args})
    tokens_in, tokens_out = usage
    stop = "tool_use" if isinstance(reply, Calls) and reply.calls else "end_turn"
    return {
        "id": f"msg_{number}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": tokens_in - sum(cached),  # Anthropic's: the uncached rest
            "output_tokens": tokens_out,
            "cache_creation_input_tokens": cached[1],
            "cache_read_input_tokens": cached[0],
        },
    }


_PARSERS = {
    Wire.RESPONSES: _parse_responses,
    Wire.CHAT: _parse_chat,
    Wire.MESSAGES: _parse_messages,
}
_RENDERERS = {
    Wire.RESPONSES: _render_responses,
    Wire.CHAT: _render_chat,
    Wire.MESSAGES: _render_messages,
}
