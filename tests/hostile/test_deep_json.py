"""Deep JSON: a payload nested deeper than `MAX_JSON_DEPTH` where intake does not read it
(Sentry `extra`, `contexts`) is diagnosed, with the cut said in `Report.truncated`; where
intake reads it (an exception, its frames) it is refused in words; either way the parse
stays bounded (Python's `json` recurses: the depth is cut on the raw text first).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from diagnoser.cli import EXIT_OK, main
from diagnoser.constants import MAX_JSON_DEPTH, MAX_JSON_SCANNED_CONTAINERS
from diagnoser.intake import IntakeError, Report, build_report, from_payload, load_json
from diagnoser.intake.payloads.nesting import DEEP_CUT
from tests.api.conftest import (  # noqa: F401 (fixtures)
    SECRETS,
    client,
    database_url,
    service_settings,
    wait_for_job,
)

ROOT = Path(__file__).resolve().parents[2]
SENTRY = ROOT / "sample_reports" / "reports" / "sentry_event_alert_share.json"
PAYLOADS = ROOT / "tests" / "fixtures" / "payloads"
HANG_GUARD_SECONDS = 60.0
"""A generous bound: the 100,000-deep body takes well under a second here."""


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": "end"}
    for _ in range(levels):
        value = {"a": value}
    return value


def _wrapped(value: object, levels: int) -> object:
    for _ in range(levels):
        value = [value]
    return value


def _report(provider: str, payload: object, resource: str | None = None) -> Report:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    (intake,) = from_payload(provider, load_json(body), resource=resource)
    return build_report(intake.report, traces=intake.traces, truncated=intake.truncated)


def _sentry() -> dict[str, Any]:
    return dict(json.loads(SENTRY.read_text(encoding="utf-8")))


def test_a_sentry_event_with_a_200_deep_extra_is_diagnosed_with_its_frames() -> None:
    plain = _report("sentry", _sentry(), "event_alert")
    event = _sentry()
    event["data"]["event"]["extra"] = {"state": _deep(200)}
    report = _report("sentry", event, "event_alert")
    assert report.traces == plain.traces and len(report.frames) == len(plain.frames) > 1
    assert report.truncated == [
        f"sentry: nested deeper than {MAX_JSON_DEPTH} levels, not read and cut at "
        "data.event.extra.state…"
    ]


def test_a_deep_context_stays_in_the_metadata_as_a_marker() -> None:
    event = _sentry()
    event["data"]["event"]["contexts"]["deep"] = _deep(100)
    report = _report("sentry", event, "event_alert")
    assert DEEP_CUT in json.dumps(report.metadata["contexts"])
    assert report.truncated[0].endswith("data.event.contexts.deep…")


def test_a_100000_deep_extra_is_cut_in_bounded_time() -> None:
    event = _sentry()
    event["data"]["event"]["extra"] = {"state": None}
    deep = b"[" * 100_000 + b"]" * 100_000
    body = json.dumps(event).encode().replace(b'"state": null', b'"state": ' + deep)
    found: list[Report] = []
    worker = threading.Thread(target=lambda: found.append(_report("sentry", body, "event_alert")))
    worker.start()
    worker.join(HANG_GUARD_SECONDS)
    assert not worker.is_alive(), f"no answer within {HANG_GUARD_SECONDS} s"
    (report,) = found
    assert report.frames and report.truncated[0].endswith("data.event.extra.state…")


def test_a_stacktrace_nested_past_the_limit_is_refused_naming_it() -> None:
    event = _sentry()
    stack = event["data"]["event"]["exception"]["values"][0]["stacktrace"]
    stack["frames"] = _wrapped(stack["frames"], MAX_JSON_DEPTH + 6)
    with pytest.raises(IntakeError) as caught:
        _report("sentry", event, "event_alert")
    where = "data.event.exception.values[0].stacktrace.frames[0]"
    assert str(caught.value) == (
        f"sentry event_alert: {where} is nested deeper than {MAX_JSON_DEPTH} levels; intake "
        f"reads it, so it must be at most {MAX_JSON_DEPTH} deep"
    )
    assert caught.value.field == where


def test_a_string_we_read_nested_past_the_limit_is_refused_naming_it() -> None:
    body = b'{"type":"x","data":{"text":' + b"[" * 10_000 + b"]" * 10_000 + b"}}"
    with pytest.raises(IntakeError, match=r"data\.text is nested deeper than 64 levels"):
        _report("standard", body)


@pytest.mark.parametrize(
    ("provider", "fixture", "read"),
    [
        ("bugsnag", PAYLOADS / "bugsnag_exception_android.json", ("error", "stackTrace")),
        ("rollbar", PAYLOADS / "rollbar_trace_chain.json", ("data", "item")),
        ("github", ROOT / "sample_reports" / "reports" / "github_issue_opened_share_expiry.json",
         ("issue", "body")),
    ],
)  # fmt: skip
def test_the_other_adapters_cut_what_they_do_not_read_and_refuse_what_they_do(
    provider: str, fixture: Path, read: tuple[str, str]
) -> None:
    payload = json.loads(fixture.read_text(encoding="utf-8"))
    plain = _report(provider, payload)
    payload["extra"] = {"state": _deep(120)}
    report = _report(provider, payload)
    assert report.traces == plain.traces and report.text == plain.text
    assert report.truncated == [
        *plain.truncated,
        f"{provider}: nested deeper than {MAX_JSON_DEPTH} levels, not read and cut at "
        "extra.state.a.a…",
    ]
    outer, inner = read
    payload[outer][inner] = _wrapped(payload[outer][inner], MAX_JSON_DEPTH + 2)
    with pytest.raises(IntakeError, match=f"{outer}.{inner}.* is nested deeper than 64 levels"):
        _report(provider, payload)


def test_a_callers_constant_is_still_refused_beside_a_deep_part() -> None:
    body = b'{"a": NaN, "b": ' + b"[" * 70 + b"]" * 70 + b"}"
    with pytest.raises(IntakeError, match="NaN is not a JSON number"):
        load_json(body)


def test_an_unclosed_deep_part_is_refused_in_words() -> None:
    with pytest.raises(IntakeError, match="nested deeper than 64 levels is not closed"):
        load_json(b'{"a": ' + b"[" * 10_000)


def test_a_deep_sentry_event_is_diagnosed_through_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DIAGNOSER_HOME", str(tmp_path / "home"))
    event = _sentry()
    event["data"]["event"]["extra"] = {"state": _deep(200)}
    body = tmp_path / "event.json"
    body.write_text(json.dumps(event), encoding="utf-8")
    demo = ROOT / "sample_reports" / "demo_app"
    code = main(["diagnose", "--repo", str(demo), "--provider", "sentry", str(body)])
    out, err = capsys.readouterr()
    assert code == EXIT_OK, err
    assert "intake cut sentry: nested deeper than 64 levels, not read and cut at" in err
    assert "web/src/" in out or "backend/" in out or "android/" in out


def test_the_scan_for_deep_parts_is_bounded() -> None:
    deep = "[" * (MAX_JSON_SCANNED_CONTAINERS + 1) + "]" * (MAX_JSON_SCANNED_CONTAINERS + 1)
    with pytest.raises(IntakeError, match=f"at most {MAX_JSON_SCANNED_CONTAINERS:,}"):
        load_json('{"extra": ' + deep + "}")


def test_a_deep_sentry_webhook_is_diagnosed_through_the_api(client: TestClient) -> None:  # noqa: F811
    event = _sentry()
    event["data"]["event"]["extra"] = {"state": _deep(200)}
    body = json.dumps(event).encode()
    digest = hmac.new(SECRETS["sentry_secret"].encode(), body, hashlib.sha256).hexdigest()
    headers = {"Sentry-Hook-Signature": digest, "Sentry-Hook-Resource": "event_alert",
               "Request-ID": "deep-1", "Content-Type": "application/json"}  # fmt: skip
    answer = client.post("/webhooks/sentry?repo=demo", content=body, headers=headers)
    assert answer.status_code == 202, answer.text
    job = wait_for_job(client, answer.json()["job_id"])
    assert job["state"] == "complete", job
    details = [e["detail"] for e in client.get(f"/jobs/{job['id']}/events").json()]
    assert any(d.startswith("intake cut sentry: nested deeper than 64 levels") for d in details)
