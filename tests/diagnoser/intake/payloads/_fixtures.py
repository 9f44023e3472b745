"""Loading the payload fixtures in `tests/fixtures/payloads/` and the reference samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from diagnoser.intake.report import Source

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "payloads"
REFERENCE = Path(__file__).resolve().parents[5] / "shared" / "reference" / "webhooks"
"""The shared reference samples (../shared beside the repository, as in CI); tests using
them skip where it is absent."""


PROVIDER_CASES: list[tuple[str, str, Source, int]] = [
    ("sentry", "sentry_event_alert_chained.json", Source.SENTRY, 1),
    ("bugsnag", "bugsnag_exception_android.json", Source.BUGSNAG, 1),
    ("rollbar", "rollbar_trace_chain.json", Source.ROLLBAR, 1),
    ("github", "github_issue_edited_no_body.json", Source.GITHUB, 1),
    ("standard", "standard_crash_message_stack.json", Source.WEBHOOK, 1),
    ("appfollow", "appfollow_review_1star_de.json", Source.REVIEW, 1),
    ("slack", "appfollow_review_1star_de.json", Source.REVIEW, 1),
    ("app_store", "appstore_reviews_ja.json", Source.APP_STORE, 2),
    ("google_play", "googleplay_reviews_fr.json", Source.GOOGLE_PLAY, 2),
    ("crashlytics", "crashlytics_regression_cloudevent.json", Source.CRASHLYTICS, 1),
]
"""Per intake provider: a fixture, the Source its reports get, how many it yields."""


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def load_reference(name: str) -> Any:
    path = REFERENCE / name
    if not path.exists():
        pytest.skip(f"reference sample {name} not available")
    return json.loads(path.read_text(encoding="utf-8"))


def wrong_types(value: Any) -> Any:
    """`value` with every scalar swapped for one of another type (containers kept): the
    shape an adapter looks for, with nothing usable in it."""
    if isinstance(value, dict):
        return {key: wrong_types(item) for key, item in value.items()}
    if isinstance(value, list):
        return [wrong_types(item) for item in value]
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, str):
        return 0
    if isinstance(value, int | float):
        return [value]
    return value
