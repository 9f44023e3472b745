"""The offline investigator: its own judgement (risk from how widely the fault is used),
and its report — a Draft rendered in the template, written from the lines it read as
values, not from the text the tool showed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagnoser.candidate import Candidate, Source
from diagnoser.finding import Level, Status
from diagnoser.intake import ReportIn, from_payload
from diagnoser.offline import _risk
from diagnoser.pipeline import Outcome, diagnose
from diagnoser.settings import Settings
from diagnoser.template import parse_report, render
from diagnoser.tools.read_range import ReadResult
from diagnoser.workspace import Workspace
from tests.conftest import MakeRepo

SAMPLES = Path(__file__).resolve().parents[2] / "sample_reports"
EXPECTED = json.loads((SAMPLES / "expected.json").read_text())
LONG = "x" * 300
"""Longer than a tool shows a line (MAX_LINE_CHARS): the model sees it cut with `…`."""


@pytest.mark.parametrize(
    ("users", "level"),
    [(0, Level.LOW), (2, Level.LOW), (3, Level.MEDIUM), (11, Level.HIGH)],
)
def test_risk_follows_how_many_other_files_use_the_fault(
    make_repo: MakeRepo, home: Path, users: int, level: Level
) -> None:
    files: dict[str, str | bytes] = {"core.py": "def shared_total(items):\n    return sum(items)\n"}
    files |= {
        f"user{n}.py": "from core import shared_total\nshared_total([])\n" for n in range(users)
    }
    workspace = Workspace(make_repo(files), home=home)
    fault = Candidate("core.py", 2, 1, 2, "shared_total", Source.FRAME)
    risk, rationale = _risk(fault, workspace)
    assert risk is level and f"used in {users} other file(s)" in rationale


def _crash(make_repo: MakeRepo, home: Path) -> tuple[Workspace, str]:
    code = f"def total(items):\n    return sum(i.price for i in items) + len('{LONG}')\n"
    trace = (
        'Traceback (most recent call last):\n  File "/srv/shop.py", line 2, in total\n'
        "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'\n"
    )
    return Workspace(make_repo({"shop.py": code}), home=home), trace


def test_the_report_is_a_rendered_draft_with_the_whole_line_as_evidence(
    make_repo: MakeRepo, home: Path
) -> None:
    """The evidence is the file's line, not the tool's cut rendering of it: it grounds."""
    workspace, trace = _crash(make_repo, home)
    finding = diagnose(ReportIn(text=trace), workspace).finding
    assert finding is not None and finding.status is Status.GROUNDED
    assert LONG in finding.files[0].evidence and "…" not in finding.files[0].evidence
    assert render(parse_report(finding.report_markdown)) == finding.report_markdown


def test_how_read_range_renders_does_not_change_what_offline_finds(
    make_repo: MakeRepo, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, trace = _crash(make_repo, home)
    plain = diagnose(ReportIn(text=trace), workspace).finding
    monkeypatch.setattr(ReadResult, "__str__", lambda self: "<a rendering nobody parses>")
    redrawn = diagnose(ReportIn(text=trace), workspace).finding
    assert plain is not None and redrawn is not None
    assert redrawn.files == plain.files and redrawn.status is plain.status is Status.GROUNDED
    assert redrawn.report_markdown == plain.report_markdown


def _run_sample(entry: dict[str, object], workspace: Workspace) -> Outcome:
    text = (SAMPLES / str(entry["report"])).read_text()
    if entry["kind"] == "text":
        return diagnose(ReportIn(text=text, rating=entry.get("rating")), workspace)  # type: ignore[arg-type]
    [intake, *_] = from_payload(str(entry["kind"]), json.loads(text))
    return diagnose(intake.report, workspace, traces=intake.traces)


def test_offline_reports_on_the_sample_reports_round_trip(tmp_path: Path) -> None:
    """Each investigated sample report's markdown parses to the Draft it was rendered
    from: rendering it again gives the same text, and it holds the Finding's locations."""
    demo = Workspace(SAMPLES / "demo_app", home=tmp_path / "home")
    investigated = [e for e in EXPECTED if e["fault"] is not None]
    assert len(investigated) >= 5
    for entry in investigated:
        finding = _run_sample(entry, demo).finding
        assert finding is not None and finding.report_markdown, entry["report"]
        draft = parse_report(finding.report_markdown)
        assert render(draft) == finding.report_markdown, entry["report"]
        assert draft.files[: len(finding.files)] == finding.files  # all grounded
        assert (draft.title, draft.root_cause) == (finding.title, finding.root_cause)


@pytest.mark.parametrize("budget", [5, 2])
def test_the_deep_dive_reads_its_candidates_in_one_request_within_its_budget(
    home: Path, budget: int
) -> None:
    """One model request reads every candidate the deep-dive's budget allows (five on the
    sample issue), not one request per read: find_symbol, focus, the reads, the report."""
    workspace = Workspace(SAMPLES / "demo_app", Settings(deep_dive_calls=budget), home=home)
    text = (SAMPLES / "reports" / "issue_load_more_500.md").read_text()
    finding = diagnose(ReportIn(text=text), workspace).finding
    assert finding is not None
    provenance = finding.provenance
    assert provenance.tool_calls == {"explore": 1, "deep_dive": budget, "report": 0}  # focus: free
    assert provenance.requests == 4
