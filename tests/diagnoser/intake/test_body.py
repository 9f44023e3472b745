"""`read_limited` reads no more than its limit; `load_json` refuses what would blow up."""

from __future__ import annotations

import io
import json

import pytest

from diagnoser.constants import (
    MAX_JSON_CONTAINERS,
    MAX_JSON_DEPTH,
    MAX_JSON_INT_DIGITS,
    MAX_PAYLOAD_BYTES,
)
from diagnoser.intake.body import load_json, read_limited
from diagnoser.intake.payloads.errors import IntakeError, PayloadTooLarge
from diagnoser.intake.payloads.nesting import DEEP_CUT


class CountingStream(io.RawIOBase):
    """An endless stream of `x` that counts what was read and returns short reads, as
    sockets and pipes do."""

    def __init__(self, size: int | None = None, most_per_read: int = 1_000) -> None:
        self.size = size
        self.most_per_read = most_per_read
        self.served = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = min(len(buffer), self.most_per_read)
        if self.size is not None:
            n = min(n, self.size - self.served)
        buffer[:n] = b"x" * n
        self.served += n
        return n


def test_read_limited_returns_a_body_up_to_the_limit_whole() -> None:
    assert read_limited(CountingStream(size=5_000), 5_000) == b"x" * 5_000
    assert read_limited(io.BytesIO(b""), 10) == b""


def test_read_limited_stops_one_byte_past_the_limit() -> None:
    stream = CountingStream()  # endless
    with pytest.raises(PayloadTooLarge, match="larger than 10,000 bytes") as caught:
        read_limited(stream, 10_000)
    assert stream.served == 10_001
    assert caught.value.limit == 10_000


def test_read_limited_on_dev_zero_refuses_without_reading_it_all() -> None:
    with open("/dev/zero", "rb") as zero:
        with pytest.raises(PayloadTooLarge):
            read_limited(zero, MAX_PAYLOAD_BYTES)
        assert zero.tell() <= MAX_PAYLOAD_BYTES + 1 + io.DEFAULT_BUFFER_SIZE


def test_load_json_parses_bytes_and_text() -> None:
    assert load_json(b'{"a": [1, "x", null, true, 1.5]}') == {"a": [1, "x", None, True, 1.5]}
    assert load_json('{"ü": "ß"}') == {"ü": "ß"}
    assert load_json(b'\xef\xbb\xbf{"bom": 1}') == {"bom": 1}


def test_load_json_refuses_an_oversized_body_as_too_large() -> None:
    with pytest.raises(PayloadTooLarge, match="larger than 100 bytes"):
        load_json(b" " * 101, limit=100)
    with pytest.raises(PayloadTooLarge, match="larger than 100 characters"):
        load_json(" " * 101, limit=100)
    with pytest.raises(PayloadTooLarge):
        load_json(b"[" + b"0," * (MAX_PAYLOAD_BYTES // 2) + b"0]")


def test_load_json_says_where_utf8_and_json_are_broken() -> None:
    with pytest.raises(IntakeError, match=r"not UTF-8: invalid byte 0xff at offset 6"):
        load_json(b'{"a": \xff}')
    with pytest.raises(IntakeError, match=r"not JSON: .* at line 2 column 6$"):
        load_json(b'{"a":\n  1, }')
    with pytest.raises(IntakeError, match="NaN is not a JSON number"):
        load_json(b"[NaN]")
    with pytest.raises(IntakeError, match="1e999 is out of range"):  # was inf
        load_json(b'{"a": [1e999]}')


def test_deep_nesting_is_cut_not_a_recursion_error() -> None:
    parsed = load_json(b"[" * 10_000 + b"]" * 10_000)
    for _ in range(MAX_JSON_DEPTH):
        assert isinstance(parsed, list)
        (parsed,) = parsed
    assert parsed is DEEP_CUT
    assert load_json("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is not None
    deep = load_json('{"a":' * (MAX_JSON_DEPTH + 1) + "1" + "}" * (MAX_JSON_DEPTH + 1))
    assert json.dumps(deep).count("{") == MAX_JSON_DEPTH and DEEP_CUT in json.dumps(deep)


def test_brackets_and_digits_inside_strings_do_not_count() -> None:
    body = json.dumps({"text": "[{" * 10_000 + '\\"' + "9" * 5_000})
    assert load_json(body) == json.loads(body)


def test_too_many_containers_are_refused_before_parsing() -> None:
    many = "[" + ",".join(["{}"] * (MAX_JSON_CONTAINERS + 1)) + "]"
    with pytest.raises(IntakeError, match=f"{MAX_JSON_CONTAINERS + 2:,} objects and arrays"):
        load_json(many)
    at_the_limit = load_json("[" + ",".join(["[]"] * (MAX_JSON_CONTAINERS - 1)) + "]")
    assert isinstance(at_the_limit, list) and len(at_the_limit) == MAX_JSON_CONTAINERS - 1


def test_long_integers_are_refused_short_ones_kept() -> None:
    with pytest.raises(IntakeError, match=f"more than {MAX_JSON_INT_DIGITS} digits"):
        load_json(b'{"n": ' + b"9" * 5_000 + b"}")
    with pytest.raises(IntakeError, match="digits"):
        load_json(b'{"n": -' + b"1" * (MAX_JSON_INT_DIGITS + 1) + b"}")
    assert load_json(b'{"n": ' + b"9" * MAX_JSON_INT_DIGITS + b"}") == {
        "n": int("9" * MAX_JSON_INT_DIGITS)
    }
