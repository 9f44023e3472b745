"""Every trace and payload fixture through intake, against a golden summary.

Regenerate after an intended change: `UPDATE_GOLDEN=1 pytest tests/diagnoser/intake/test_golden.py`,
then read the diff. The JSON Schema file in docs/ is regenerated the same way.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from diagnoser.intake import Report, ReportIn, build_report, from_payload, report_schema
from tests.conftest import FIXTURES

GOLDEN = FIXTURES / "intake_golden.json"
SCHEMA = Path(__file__).resolve().parents[3] / "docs" / "schemas" / "report.schema.json"
PROVIDERS = {
    "sentry": "sentry",
    "bugsnag": "bugsnag",
    "rollbar": "rollbar",
    "github": "github",
    "standard": "standard",
    "appfollow": "appfollow",
    "appstore": "app_store",
    "googleplay": "google_play",
    "crashlytics": "crashlytics",
}


def summary(report: Report) -> dict[str, object]:
    return {
        "source": report.source.value,
        "formats": [t.format.value for t in report.traces],
        "exception": [report.exception.type, len(report.exception.causes)]
        if report.exception
        else None,
        "frames": len(report.frames),
        "innermost": report.frames[-1].frame.function if report.frames else None,
        "kind": report.classification.kind.value,
        "rating": report.rating,
        "app_version": report.app_version,
        "fingerprint": report.fingerprint,
    }


def summaries() -> dict[str, object]:
    found: dict[str, object] = {}
    for path in sorted((FIXTURES / "traces").iterdir()):
        found[f"traces/{path.name}"] = summary(build_report(ReportIn(text=path.read_text())))
    for path in sorted((FIXTURES / "payloads").glob("*.json")):
        provider = PROVIDERS[path.name.split("_", 1)[0]]
        intakes = from_payload(provider, json.loads(path.read_text()))
        found[f"payloads/{path.name}"] = [
            summary(build_report(i.report, traces=i.traces)) for i in intakes
        ]
    return found


def test_intake_of_every_fixture_matches_the_golden_summary() -> None:
    found = summaries()
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n")
    assert found == json.loads(GOLDEN.read_text())


def test_the_published_json_schema_is_current() -> None:
    schema = json.dumps(report_schema(), indent=1, sort_keys=True) + "\n"
    if os.environ.get("UPDATE_GOLDEN"):
        SCHEMA.parent.mkdir(parents=True, exist_ok=True)
        SCHEMA.write_text(schema)
    assert SCHEMA.read_text() == schema
