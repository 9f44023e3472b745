"""The golden sample reports: each loads, goes through intake as the service would take it,
classifies as expected, and its expected fault location is real code in the demo app."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from diagnoser.intake import Report, ReportIn, Source, build_report, from_payload
from repomap import Repository

SAMPLES = Path(__file__).resolve().parents[2] / "sample_reports"
DEMO_APP = SAMPLES / "demo_app"
EXPECTED: list[dict[str, Any]] = json.loads((SAMPLES / "expected.json").read_text("utf-8"))
DEMO_FILES = sorted(
    path.relative_to(DEMO_APP).as_posix()
    for path in DEMO_APP.rglob("*")
    if path.is_file() and "__pycache__" not in path.parts
)
KINDS = {"text", "sentry", "github", "app_store", "google_play"}
ACTIONABLE = {"crash", "bug", "performance"}
_PY_FRAME = re.compile(
    r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in .+\n(?P<code>.*)$', re.M
)


def _ids(entry: dict[str, Any]) -> str:
    return str(entry["report"]).rsplit("/", 1)[-1]


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _lines(path: str) -> list[str]:
    return (DEMO_APP / path).read_text("utf-8").splitlines()


def _intake(entry: dict[str, Any]) -> Report:
    """The report as the service builds it: text directly, webhook bodies via their adapter."""
    raw = (SAMPLES / entry["report"]).read_text("utf-8")
    kind = entry["kind"]
    if kind == "text":
        rating = entry.get("rating")
        source = Source.REVIEW if rating is not None else Source.BUG_REPORT
        return build_report(ReportIn(text=raw, rating=rating, source=source), files=DEMO_FILES)
    intakes = from_payload(kind, json.loads(raw))
    assert len(intakes) == 1, f"{kind} payload should hold exactly one report"
    intake = intakes[0]
    if "rating" in entry:
        assert intake.report.rating == entry["rating"]
    return build_report(intake.report, traces=intake.traces, files=DEMO_FILES)


def test_expected_is_well_formed() -> None:
    assert len(EXPECTED) >= 8
    reports = [entry["report"] for entry in EXPECTED]
    assert len(reports) == len(set(reports))
    on_disk = {p.relative_to(SAMPLES).as_posix() for p in (SAMPLES / "reports").iterdir()}
    assert set(reports) == on_disk, "every report file has exactly one expected entry"
    for entry in EXPECTED:
        assert entry["kind"] in KINDS
        assert entry["bug"].strip()
        assert (entry["fault"] is None) == (entry["classification"] not in ACTIONABLE)


@pytest.mark.parametrize("entry", EXPECTED, ids=_ids)
def test_classification(entry: dict[str, Any]) -> None:
    report = _intake(entry)
    assert report.classification.kind.value == entry["classification"], (
        report.classification.signals
    )
    assert report.classification.actionable == (entry["fault"] is not None)


@pytest.mark.parametrize("entry", [e for e in EXPECTED if e["fault"]], ids=_ids)
def test_fault_is_real_code(entry: dict[str, Any]) -> None:
    fault = entry["fault"]
    assert fault["path"] in DEMO_FILES
    lines = _lines(fault["path"])
    assert 1 <= fault["start_line"] <= fault["end_line"] <= len(lines)
    excerpt = "\n".join(lines[fault["start_line"] - 1 : fault["end_line"]])
    assert _squash(fault["evidence"]) in _squash(excerpt)
    name = fault["symbol"].rsplit(".", 1)[-1]
    assert re.search(rf"\b(?:def|fun|async|class)?\s*{re.escape(name)}\s*\(", "\n".join(lines))


@pytest.mark.parametrize("entry", [e for e in EXPECTED if e["fault"]], ids=_ids)
def test_traces_land_in_the_demo_app(entry: dict[str, Any]) -> None:
    report = _intake(entry)
    if not report.traces:
        assert entry["kind"] != "sentry", "a Sentry event carries frames"
        return
    in_app = [frame for frame in report.frames if frame.in_app]
    assert in_app, [frame.unmapped_reason for frame in report.frames]
    for frame in in_app:
        assert frame.repo_path in DEMO_FILES
        line = frame.frame.line
        assert line is not None
        lines = _lines(frame.repo_path)
        assert 1 <= line <= len(lines) and lines[line - 1].strip(), (frame.repo_path, line)
        name = (frame.frame.function or "").rsplit(".", 1)[-1]
        if name.isidentifier():  # not `<anonymous>`, `<module>`
            assert name in "\n".join(lines), (frame.repo_path, name)


@pytest.mark.parametrize("entry", [e for e in EXPECTED if e["fault"]], ids=_ids)
def test_quoted_source_lines_match(entry: dict[str, Any]) -> None:
    """Code a trace quotes (Python tracebacks, Sentry `context_line`) is on that real line."""
    raw = (SAMPLES / entry["report"]).read_text("utf-8")
    quoted: list[tuple[str, int, str]] = []
    if entry["kind"] == "sentry":
        event = json.loads(raw)["data"]["event"]
        for value in event["exception"]["values"]:
            for frame in value["stacktrace"]["frames"]:
                if frame.get("in_app"):
                    quoted.append((frame["abs_path"], frame["lineno"], frame["context_line"]))
    else:
        text = json.loads(raw)["issue"]["body"] if entry["kind"] == "github" else raw
        quoted = [(m["file"], int(m["line"]), m["code"]) for m in _PY_FRAME.finditer(text)]
    for file, line, code in quoted:
        if "/srv/demo/backend/" not in file:
            continue
        path = "backend/" + file.split("/srv/demo/backend/", 1)[1]
        assert _lines(path)[line - 1].strip() == code.strip(), (path, line)


def test_demo_app_has_all_three_clients() -> None:
    assert sum(p.startswith("backend/notes/") and p.endswith(".py") for p in DEMO_FILES) >= 6
    assert sum(p.startswith("web/src/") and p.endswith(".js") for p in DEMO_FILES) >= 3
    assert sum(p.startswith("android/") and p.endswith(".kt") for p in DEMO_FILES) >= 3


def test_fault_symbols_are_what_the_index_says(tmp_path: Path) -> None:
    """`symbol` is the qualified name the repo map's index gives the fault's first line."""
    index = Repository.open(DEMO_APP, home=tmp_path, use_cache=False).index
    for entry in EXPECTED:
        fault = entry["fault"]
        if fault is None:
            continue
        found = index.enclosing(fault["path"], fault["start_line"])
        assert found is not None and found.qualified == fault["symbol"], entry["report"]
