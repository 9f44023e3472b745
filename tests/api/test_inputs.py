"""`read_input`: a stored body → its reports, for `/diagnose` and every webhook provider;
anything wrong with it is an `IntakeError` (the job then fails with its message)."""

from __future__ import annotations

import pytest

from api.inputs import DIAGNOSE, RESOURCE_HEADER, read_input
from diagnoser import ReportIn
from diagnoser.intake import PROVIDERS, IntakeError, Source
from tests.diagnoser.intake.payloads._fixtures import FIXTURES, PROVIDER_CASES

TRACE = (
    "Traceback (most recent call last):\n"
    '  File "backend/notes/api.py", line 52, in list_notes\n'
    "IndexError: list index out of range\n"
)


def test_a_diagnose_body_is_one_report_as_sent() -> None:
    sent = ReportIn(text=TRACE, source=Source.BUG_REPORT, title="Load more", rating=None)
    intakes = read_input(DIAGNOSE, sent.model_dump_json().encode(), {})
    assert len(intakes) == 1
    assert intakes[0].report == sent and intakes[0].traces == ()


def test_every_provider_is_read() -> None:
    assert sorted(PROVIDERS) == sorted(name for name, *_ in PROVIDER_CASES)


@pytest.mark.parametrize(("provider", "fixture", "source", "count"), PROVIDER_CASES)
def test_a_provider_body_gives_its_reports(
    provider: str, fixture: str, source: Source, count: int
) -> None:
    intakes = read_input(provider, (FIXTURES / fixture).read_bytes(), {})
    assert len(intakes) == count
    assert all(intake.report.source is source and intake.report.text for intake in intakes)


def test_sentry_reads_the_stored_resource_header() -> None:
    raw = (FIXTURES / "sentry_event_alert_chained.json").read_bytes()
    assert read_input("sentry", raw, {RESOURCE_HEADER: "event_alert"})
    with pytest.raises(IntakeError, match=r"^sentry issue: missing data\.issue$"):
        read_input("sentry", raw, {RESOURCE_HEADER: "issue"})


@pytest.mark.parametrize(
    ("source", "raw", "says"),
    [
        ("github", b"{", "not JSON"),
        ("github", b"\xff\xfe{}", "UTF-8"),
        ("github", b'"just a string"', "must be a JSON object or array"),
        ("github", b"{}", "github"),
        ("google_play", b'{"reviews": [{"reviewId": "r1"}]}', "comments"),
        ("jira", b"{}", "unknown provider 'jira'"),
        (DIAGNOSE, b"{", "report"),
        (DIAGNOSE, b'{"source": "crash_log"}', "text"),
        (DIAGNOSE, b'{"text": "boom", "rating": 9}', "rating"),
    ],
)
def test_a_bad_body_is_an_intake_error_saying_what_is_wrong(
    source: str, raw: bytes, says: str
) -> None:
    with pytest.raises(IntakeError) as caught:
        read_input(source, raw, {})
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)
