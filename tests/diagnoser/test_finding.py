from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from diagnoser.finding import Finding, Location, finding_schema
from diagnoser.intake.report import Kind

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "schemas" / "finding.schema.json"


def test_the_published_json_schema_is_current() -> None:
    schema = json.dumps(finding_schema(), indent=1, sort_keys=True) + "\n"
    if os.environ.get("UPDATE_GOLDEN"):
        SCHEMA.write_text(schema)
    assert SCHEMA.read_text() == schema


def test_a_location_range_must_be_ordered() -> None:
    with pytest.raises(ValidationError, match="end_line 3 is before start_line 7"):
        Location(path="a.py", start_line=7, end_line=3)


def test_a_not_actionable_finding_needs_no_files() -> None:
    finding = Finding(classification=Kind.PRAISE, title="Praise — not investigated")
    assert finding.files == [] and finding.status.value == "unverified"
    assert Finding.model_validate_json(finding.model_dump_json()) == finding
