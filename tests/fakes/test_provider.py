"""The fake provider itself, over raw HTTP: what it parses from each wire, what it answers
(usage included), and how it reports its own script's failures."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from repomap.render import estimate_tokens
from tests.fakes.provider import (
    FakeProvider,
    Hang,
    HttpError,
    Request,
    Text,
    ToolCall,
    Wire,
    call,
    malformed,
    replies,
)

GREP = {"name": "grep", "description": "Search.", "parameters": {"type": "object"}}
CHAT_BODY: dict[str, Any] = {
    "model": "gpt-chat-x",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Why does it crash?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "grep", "arguments": '{"pattern": "total"}'}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "src/app.py:9: return total"},
        {"role": "system", "content": "The following tool(s) are now available: `focus`"},
    ],
    "tools": [{"type": "function", "function": GREP}],
}  # fmt: skip


@pytest.fixture(scope="module")
def server() -> Iterator[FakeProvider]:
    with FakeProvider(replies()) as fake:
        yield fake


def post(fake: FakeProvider, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(fake.url + path, json=body, timeout=10)


def test_a_chat_request_is_parsed_and_answered_with_its_usage(server: FakeProvider) -> None:
    fake = server.replay(replies(call("grep", pattern="None")))
    answer = post(fake, "/v1/chat/completions", CHAT_BODY).json()
    [request] = fake.requests
    assert (request.wire, request.model, request.instructions) == (
        Wire.CHAT,
        "gpt-chat-x",
        "Be brief.",
    )
    assert [m.role for m in request.messages] == ["user", "assistant", "tool", "system"]
    assert request.messages[1].tool_calls == (
        ToolCall("grep", call_id="c1", raw_args='{"pattern": "total"}'),
    )
    [result] = request.results()
    assert (result.name, result.text) == ("grep", "src/app.py:9: return total")
    assert request.tools == ("grep",) and request.added_tools == ()
    assert request.input_tokens == estimate_tokens(request.text) > 0
    assert (
        "Be brief." in request.text and "return total" in request.text and '"grep"' in request.text
    )
    message = answer["choices"][0]["message"]
    assert message["tool_calls"][0]["function"] == {
        "name": "grep",
        "arguments": '{"pattern": "None"}',
    }
    assert answer["choices"][0]["finish_reason"] == "tool_calls"
    assert answer["usage"]["prompt_tokens"] == request.input_tokens
    assert answer["usage"]["completion_tokens"] == estimate_tokens('grep{"pattern": "None"}')


def test_responses_items_and_tools_added_mid_run_are_parsed(server: FakeProvider) -> None:
    fake = server.replay(replies(Text("done")))
    body = {
        "model": "gpt-x", "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": "Why?"},
            {"type": "function_call", "call_id": "c1", "name": "grep", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "no matches"},
            {"type": "additional_tools", "role": "developer", "tools": [{"name": "focus"}]},
        ],
        "tools": [{"type": "function", **GREP}],
    }  # fmt: skip
    answer = post(fake, "/v1/responses", body).json()
    [request] = fake.requests
    assert request.tools == ("grep",) and request.added_tools == ("focus",)
    assert [r.name for r in request.results()] == ["grep"]
    assert answer["output"][0]["content"][0]["text"] == "done"
    assert answer["usage"]["input_tokens"] == request.input_tokens


def test_anthropic_blocks_are_parsed_and_bad_arguments_sent_verbatim(server: FakeProvider) -> None:
    fake = server.replay(replies(malformed("grep", '{"pattern": ')))
    body = {
        "model": "claude-x", "system": [{"type": "text", "text": "Be brief."}], "max_tokens": 9,
        "messages": [
            {"role": "user", "content": "Why?"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "grep", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "bad", "is_error": True},
                {"type": "text", "text": "<system>focus is available</system>"}]},
        ],
    }  # fmt: skip
    answer = post(fake, "/v1/messages", body).json()
    [request] = fake.requests
    assert request.instructions == "Be brief."
    assert [m.role for m in request.messages] == ["user", "assistant", "tool", "user"]
    [result] = request.results()
    assert (result.name, result.is_error) == ("grep", True)
    assert answer["content"] == [{"type": "tool_use", "id": "call_0_0", "name": "grep",
                                  "input": '{"pattern": '}]  # fmt: skip
    assert answer["stop_reason"] == "tool_use"


def test_an_http_error_keeps_its_status_headers_and_the_wires_error_shape(
    server: FakeProvider,
) -> None:
    limited = HttpError(429, "slow down", {"Retry-After": "7"})
    fake = server.replay(replies(limited, limited))
    chat = post(fake, "/v1/chat/completions", CHAT_BODY)
    anthropic = post(fake, "/v1/messages", {"model": "claude-x", "messages": []})
    assert (chat.status_code, chat.headers["retry-after"]) == (429, "7")
    assert chat.json()["error"]["message"] == "slow down"
    error = {"type": "rate_limit_error", "message": "slow down"}
    assert anthropic.json() == {"type": "error", "error": error}
    assert [r.status for r in fake.requests] == [429, 429]


def test_a_failing_script_and_a_streamed_request_are_answered_400(server: FakeProvider) -> None:
    def broken(request: Request) -> Text:
        raise KeyError("no such step")

    fake = server.replay(broken)
    failed = post(fake, "/v1/chat/completions", CHAT_BODY)
    assert failed.status_code == 400 and "KeyError" in failed.json()["error"]["message"]
    assert len(fake.failures) == 1 and "no such step" in fake.failures[0]
    streamed = post(fake.replay(replies(Text("x"))), "/v1/chat/completions",
                    {**CHAT_BODY, "stream": True})  # fmt: skip
    assert streamed.status_code == 400 and "does not stream" in streamed.text
    exhausted = post(fake.replay(replies()), "/v1/chat/completions", CHAT_BODY)
    assert exhausted.status_code == 400 and "ScriptExhausted" in exhausted.text


MARK = {"type": "ephemeral"}


def anthropic_body(question: str) -> dict[str, Any]:
    """A Messages request with the three breakpoints PydanticAI sets (last tool, system,
    last message)."""
    return {
        "model": "claude-x", "max_tokens": 100,
        "tools": [{"name": "grep", "input_schema": {"type": "object"}, "cache_control": MARK}],
        "system": [{"type": "text", "text": "Be brief. " * 200, "cache_control": MARK}],
        "messages": [{"role": "user", "content": [
            {"type": "text", "text": question, "cache_control": MARK}]}],
    }  # fmt: skip


def test_the_anthropic_wire_reads_back_a_cached_prefix_as_anthropic_reports_it(
    server: FakeProvider,
) -> None:
    fake = server.replay(replies(Text("a"), Text("b"), Text("c")))
    first = post(fake, "/v1/messages", anthropic_body("Why?")).json()["usage"]
    second = post(fake, "/v1/messages", anthropic_body("Why again?")).json()["usage"]
    fake.replay(replies(Text("d")))  # a new run: the cache is cleared with the record
    third = post(fake, "/v1/messages", anthropic_body("Why again?")).json()["usage"]
    [three] = fake.requests
    # The first request writes all it marks; the second reads the tools and system it
    # shares and writes its own new message.
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > 0
    assert 0 < second["cache_read_input_tokens"] < first["cache_creation_input_tokens"]
    assert second["cache_creation_input_tokens"] > 0
    assert third["cache_read_input_tokens"] == 0
    # Anthropic's input_tokens are the uncached rest; the three add up to the whole.
    total = three.input_tokens
    assert third["input_tokens"] + third["cache_creation_input_tokens"] == total
    assert three.cache_write_tokens == third["cache_creation_input_tokens"]


def test_a_hang_holds_the_connection_then_answers_504(server: FakeProvider) -> None:
    fake = server.replay(lambda request: Hang(0.3))
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(fake.url + "/v1/chat/completions", json=CHAT_BODY, timeout=0.1)
    answer = post(fake, "/v1/chat/completions", CHAT_BODY)
    assert answer.status_code == 504
    assert [r.status for r in fake.requests] == [504, 504]


def test_a_delay_holds_each_answer() -> None:
    delay = 0.3
    with FakeProvider(replies(Text("a")), delay_seconds=delay) as fake:
        started = time.monotonic()
        answer = post(fake, "/v1/chat/completions", CHAT_BODY)
        took = time.monotonic() - started
    assert answer.status_code == 200 and took >= delay
