from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from diagnoser.finding import (
    VERIFY_OFF_REASON,
    Change,
    Finding,
    Localization,
    Location,
    ProposedChange,
    ReproducerSource,
    Reproduction,
    ReproductionStatus,
    RunFrame,
    Status,
    Tested,
    TestStatus,
    finding_schema,
)
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
    assert finding.files == [] and finding.status.value == "ungrounded"
    assert Finding.model_validate_json(finding.model_dump_json()) == finding


@pytest.mark.parametrize(
    ("legacy", "status"),
    [
        ("verified", Status.GROUNDED),
        ("partially_verified", Status.PARTIALLY_GROUNDED),
        ("unverified", Status.UNGROUNDED),
    ],
)
def test_a_legacy_status_name_is_read_as_its_new_one(legacy: str, status: Status) -> None:
    data = {"classification": "crash", "title": "t", "status": legacy}
    assert Finding.model_validate(data).status is status
    read = Finding.model_validate_json(json.dumps(data))
    assert read.status is status and Status(legacy) is status
    assert json.loads(read.model_dump_json())["status"] == status.value  # written as new


def test_an_unknown_status_is_still_refused() -> None:
    with pytest.raises(ValidationError, match="'grounded', 'partially_grounded' or 'ungrounded'"):
        Finding.model_validate({"classification": "crash", "title": "t", "status": "checked"})


def test_nothing_ran_unless_said_so() -> None:
    finding = Finding(
        classification=Kind.CRASH, title="t", changes=[Change(path="a.py", summary="fix")]
    )
    reproduction = finding.reproduction
    assert reproduction.status is ReproductionStatus.NOT_ATTEMPTED
    assert reproduction.reason == VERIFY_OFF_REASON and "--verify" in reproduction.reason
    assert (reproduction.source, reproduction.command, reproduction.exception) == (None, "", "")
    assert (reproduction.frames, reproduction.seconds, reproduction.log) == ([], 0.0, None)
    assert finding.changes[0].tested == Tested(status=TestStatus.NOT_RUN, command="", detail="")
    assert finding.changes[0].tested.log is None
    assert finding.provenance.localized_from is Localization.REPORT


def test_the_run_fields_round_trip_and_are_checked() -> None:
    reproduction = Reproduction(
        status=ReproductionStatus.REPRODUCED, reason="raised KeyError in shop/cart.py",
        source=ReproducerSource.SNIPPET, command="python snippet.py",
        exception="KeyError: 'name'", seconds=1.5, log="0123456789abcdef",
        frames=[RunFrame(path="shop/cart.py", line=12, function="total")],
    )  # fmt: skip
    tested = Tested(status=TestStatus.FAILED, command="pytest -x", detail="test_total failed")
    finding = Finding(
        classification=Kind.CRASH, title="t", reproduction=reproduction,
        changes=[Change(path="a.py", summary="fix", tested=tested)],
    )  # fmt: skip
    assert Finding.model_validate_json(finding.model_dump_json()) == finding
    with pytest.raises(ValidationError):
        RunFrame(path="a.py", line=0)
    with pytest.raises(ValidationError):
        Reproduction(seconds=-1.0)


def test_a_draft_change_has_nothing_we_compute() -> None:
    """A Draft's changes (what a model is asked for) carry no `tested`: only a Finding's do."""
    assert "tested" not in ProposedChange.model_fields
    assert issubclass(Change, ProposedChange) and "tested" in Change.model_fields
