"""Hostile intake: bodies and texts built to crash, hang or bloat intake.

Every input goes the way the service takes it — `read_limited` → `load_json` →
`from_payload` → `build_report` — and must end in an `Intake`/`Report` or an
`IntakeError`, bounded in frames, traces and time, saying in `Report.truncated` what was
cut. Property tests run every provider over arbitrary JSON and over the real payloads
(fixtures, reference webhooks, sample reports) with their field types scrambled.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnoser.constants import (
    MAX_FRAMES,
    MAX_JSON_CONTAINERS,
    MAX_JSON_DEPTH,
    MAX_JSON_INT_DIGITS,
    MAX_PAYLOAD_BYTES,
    MAX_REPORT_BYTES,
    MAX_REVIEWS,
    MAX_THREADS,
    MAX_TRACES,
)
from diagnoser.intake import (
    IntakeError,
    Kind,
    PayloadTooLarge,
    Report,
    ReportIn,
    build_report,
    from_payload,
    load_json,
    read_limited,
)
from diagnoser.intake.payloads import PROVIDERS
from diagnoser.intake.traces._common import MAX_SCANNED_LINES
from diagnoser.pipeline import diagnose
from diagnoser.workspace import Workspace
from tests.conftest import MakeRepo

ROOT = Path(__file__).resolve().parents[2]
TRACE_TEXTS = sorted((ROOT / "tests" / "fixtures" / "traces").iterdir())
PREFIXES = (
    ("appstore", "app_store"),
    ("app_store", "app_store"),
    ("appfollow", "appfollow"),
    ("googleplay", "google_play"),
    ("google_play", "google_play"),
    ("firebase_crashlytics", "crashlytics"),
    ("crashlytics", "crashlytics"),
    ("standard", "standard"),
    ("sentry", "sentry"),
    ("bugsnag", "bugsnag"),
    ("rollbar", "rollbar"),
    ("github", "github"),
)
"""File-name prefix of a real payload → the provider that takes it."""


def _seeds() -> list[tuple[str, Any]]:
    folders = [
        ROOT / "tests" / "fixtures" / "payloads",
        ROOT / "sample_reports" / "reports",
        ROOT.parent / "shared" / "reference" / "webhooks",  # absent outside the workspace
    ]
    seeds = []
    for path in sorted(p for folder in folders if folder.is_dir() for p in folder.glob("*.json")):
        provider = next(p for prefix, p in PREFIXES if path.name.startswith(prefix))
        seeds.append((provider, json.loads(path.read_text(encoding="utf-8"))))
    return seeds


SEEDS = _seeds()
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=30)
    | st.sampled_from(["9" * 5_000, "²", "", "  ", "0x1f", "-1", "12"])
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=25,
)


def _scrambled(value: Any, data: st.DataObject, rate: int) -> Any:
    """`value` with about one node in `rate` replaced by random JSON (any type) and about
    one in `rate` members dropped: the real key names, with wrong types behind them."""
    if data.draw(st.integers(0, rate)) == 0:
        return data.draw(JSON)
    if isinstance(value, dict):
        kept = [k for k in value if data.draw(st.integers(0, rate)) != 0]
        return {key: _scrambled(value[key], data, rate) for key in kept}
    if isinstance(value, list):
        return [_scrambled(item, data, rate) for item in value[:6]]
    return value


def _check(provider: str, payload: object, resource: str | None = None) -> None:
    """The payload gives reports (bounded, with usable frames) or an `IntakeError`."""
    try:
        intakes = from_payload(provider, payload, resource=resource)
    except IntakeError as exc:
        assert str(exc)
        return
    for intake in intakes:
        assert intake.report.text.strip()
        assert len(intake.traces) <= MAX_TRACES
        for trace in intake.traces:
            assert trace.frames or trace.exception is not None
            assert len(trace.frames) <= MAX_FRAMES
            assert all(f.file or f.function or f.module for f in trace.frames)
        report = build_report(intake.report, traces=intake.traces, truncated=intake.truncated)
        assert report.truncated == list(intake.truncated)


@settings(max_examples=150, deadline=None)
@given(
    provider=st.sampled_from(PROVIDERS),
    payload=JSON,
    resource=st.sampled_from([None, "event_alert", "error", "issue", "comment"]),
)
def test_arbitrary_json_gives_reports_or_intake_error(
    provider: str, payload: object, resource: str | None
) -> None:
    _check(provider, payload, resource if provider == "sentry" else None)


@settings(max_examples=200, deadline=None)
@given(seed=st.sampled_from(SEEDS), other=st.sampled_from(PROVIDERS), data=st.data())
def test_real_payloads_with_scrambled_types_give_reports_or_intake_error(
    seed: tuple[str, Any], other: str, data: st.DataObject
) -> None:
    provider, payload = seed
    rate = data.draw(st.sampled_from([1, 3, 10, 40]))
    _check(data.draw(st.sampled_from([provider, provider, other])), _scrambled(payload, data, rate))


def _spliced(body: bytes, at: int, junk: bytes) -> bytes:
    return body[:at] + junk + body[at:]


BYTES = (
    st.binary(max_size=300)
    | JSON.map(lambda v: json.dumps(v).encode())
    | st.text(alphabet='[]{}",:0123456789-.eE \\ntrufalsN', max_size=300).map(str.encode)
    | st.builds(
        lambda v, at, junk: _spliced(json.dumps(v).encode(), at, junk),
        JSON,
        st.integers(0, 50),
        st.binary(max_size=3),
    )
)


@settings(max_examples=300, deadline=None)
@given(BYTES)
def test_load_json_parses_what_json_does_or_refuses_in_words(raw: bytes) -> None:
    try:
        parsed = load_json(raw)
    except IntakeError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert parsed == json.loads(raw.decode("utf-8").removeprefix("\ufeff"))


TEXTS = (
    st.text(min_size=1)
    | st.binary(min_size=1).map(lambda b: b.decode("utf-8", errors="replace"))
    | st.lists(
        st.sampled_from(
            [line for p in TRACE_TEXTS for line in p.read_text(encoding="utf-8").splitlines()]
        )
        | st.text(max_size=20),
        min_size=1,
        max_size=40,
    ).map("\n".join)
).filter(lambda text: len(text) > 0)


@settings(max_examples=200, deadline=None)
@given(TEXTS)
def test_any_text_gives_a_bounded_report(text: str) -> None:
    report = build_report(ReportIn(text=text))
    assert len(report.traces) <= MAX_TRACES
    assert all(len(t.frames) <= MAX_FRAMES for t in report.traces)
    assert isinstance(report.classification.kind, Kind)


@settings(max_examples=60, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(256, 8_192))
def test_random_bytes_are_noise(rng: random.Random, size: int) -> None:
    report = build_report(ReportIn(text=rng.randbytes(size).decode("utf-8", errors="replace")))
    assert report.classification.kind is Kind.NOISE
    assert report.classification.signals[0].startswith("binary:")


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(TRACE_TEXTS), st.randoms(use_true_random=False))
def test_a_crash_log_with_a_few_stray_bytes_is_still_a_crash(
    path: Path, rng: random.Random
) -> None:
    raw = bytearray(path.read_bytes())
    for _ in range(len(raw) // 200):  # 0.5% stray bytes
        raw.insert(rng.randrange(len(raw)), rng.randrange(0x80, 0x100))
    report = build_report(ReportIn(text=raw.decode("utf-8", errors="replace")))
    assert report.classification.kind is not Kind.NOISE


# The probes that found each problem, end to end.


def _report(provider: str, body: bytes) -> Report:
    (intake,) = from_payload(provider, load_json(read_limited(io.BytesIO(body), MAX_PAYLOAD_BYTES)))
    return build_report(intake.report, traces=intake.traces, truncated=intake.truncated)


def test_a_10000_deep_body_is_refused_in_words() -> None:
    with pytest.raises(IntakeError, match=r"data\.text is nested deeper than 64 levels"):
        _report("standard", b'{"type":"x","data":{"text":' + b"[" * 10_000 + b"]" * 10_000 + b"}}")


def test_a_5000_digit_integer_is_refused_as_a_number_and_ignored_as_a_string() -> None:
    with pytest.raises(IntakeError, match="more than 40 digits"):
        _report("standard", b'{"type":"x","data":{"text":"t","rating":' + b"9" * 5_000 + b"}}")
    frame = {"filename": "a.py", "lineno": "9" * 5_000, "colno": "9" * 5_000}
    event = {"exception": {"values": [{"type": "E", "stacktrace": {"frames": [frame]}}]}}
    report = _report("sentry", json.dumps(event).encode())
    assert report.traces[0].frames[0].line is None


def test_a_sentry_payload_of_wrong_types_is_refused_naming_the_field() -> None:
    garbage = {
        "event_id": 1,
        "exception": {"values": [{"type": 1, "value": [], "stacktrace": {"frames": [{"a": 1}]}}]},
        "message": {"x": 1},
        "title": 5,
        "platform": [],
    }
    with pytest.raises(IntakeError, match="sentry event: nothing to diagnose") as caught:
        _report("sentry", json.dumps(garbage).encode())
    assert caught.value.field == "exception"


def test_endless_bodies_are_refused_after_the_limit() -> None:
    with open("/dev/zero", "rb") as zero:
        for limit in (MAX_PAYLOAD_BYTES, MAX_REPORT_BYTES):
            with pytest.raises(PayloadTooLarge):
                read_limited(zero, limit)
    with pytest.raises(PayloadTooLarge):
        load_json(b" " * (MAX_PAYLOAD_BYTES + 1))


def test_a_runaway_bugsnag_stack_is_cut_before_reading_and_said() -> None:
    frames = [{"file": f"f{i}.kt", "lineNumber": 1, "method": "m"} for i in range(12_000)]
    body = json.dumps({"error": {"exceptionClass": "E", "stackTrace": frames}}).encode()
    report = _report("bugsnag", body)
    assert report.truncated == [
        "bugsnag: 12,000 frames in error.stackTrace; kept the innermost 512"
    ]
    assert report.frames[-1].frame.file == "f0.kt" and len(report.frames) == MAX_FRAMES


def test_a_text_of_frame_lines_is_bounded_and_said() -> None:
    lines = '  File "a.py", line 1, in f\n' * 30_000  # its time: bench/hostile_bench.py
    report = build_report(ReportIn(text="Traceback (most recent call last):\n" + lines))
    assert len(report.frames) == MAX_FRAMES
    assert report.truncated[0] == (
        "text: 30,000 frames in the python trace at character 0; kept the innermost 512"
    )
    assert report.truncated[1].startswith("text: the report's text was cut from 840,035 to")


def test_binary_is_noise_but_a_log_with_stray_bytes_is_a_crash() -> None:
    trace = (ROOT / "tests" / "fixtures" / "traces" / "python_chained.txt").read_bytes()
    junk = random.Random(3).randbytes(20_000)
    noise = build_report(ReportIn(text=(junk + trace + junk).decode("utf-8", errors="replace")))
    assert noise.classification.kind is Kind.NOISE
    log = build_report(ReportIn(text=(b"\xff\xfe" + trace).decode("utf-8", errors="replace")))
    assert log.classification.kind is Kind.CRASH


def test_diagnose_forwards_what_intake_cut(make_repo: MakeRepo, tmp_path: Path) -> None:
    workspace = Workspace(make_repo({"app.py": "x = 1\n"}), home=tmp_path / "home")
    forged = ReportIn.model_validate({"text": "Love it, thanks!", "truncated": ["forged"]})
    outcome = diagnose(forged, workspace, truncated=["sentry: a real note"])
    assert outcome.report is not None
    assert outcome.report.truncated == ["sentry: a real note"]


def test_the_readme_states_the_limits_in_force() -> None:
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    stated = [
        f"{MAX_REPORT_BYTES // 1_000_000} MB of text",
        f"{MAX_PAYLOAD_BYTES // 1_000_000} MB of JSON",
        f"deeper than {MAX_JSON_DEPTH}",
        f"more than {MAX_JSON_CONTAINERS:,} objects",
        f"more than {MAX_JSON_INT_DIGITS} digits",
        f"{MAX_FRAMES} frames per trace",
        f"{MAX_TRACES} exceptions",
        f"{MAX_REVIEWS} reviews per poll",
        f"{MAX_THREADS:,} threads",
        f"first {MAX_SCANNED_LINES:,} lines",
    ]
    assert [s for s in stated if s not in readme] == []
