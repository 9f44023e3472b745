"""Huge reports: any text intake accepts (up to `MAX_REPORT_BYTES`) can be diagnosed.

A 1.9 MB log with a real traceback in it is read whole by intake, but the model is shown
a bounded view of it (`intake.excerpt`: head, tail, every trace), so the run stays far
under its token budget and says what it was not shown — through the pipeline, the CLI
and the API, with the offline model.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from diagnoser.cli import EXIT_OK, main
from diagnoser.constants import MAX_INPUT_TOKENS, MAX_REPORT_BYTES, REPORT_VIEW_CHARS
from diagnoser.events import State
from diagnoser.intake import ReportIn, build_report
from diagnoser.intake.excerpt import excerpt
from diagnoser.pipeline import diagnose
from diagnoser.workspace import Workspace
from tests.api.conftest import (  # noqa: F401 (fixtures)
    DEMO,
    SAMPLES,
    client,
    database_url,
    service_settings,
    wait_for_job,
)

HUGE_CHARS = 1_900_000
"""Near `MAX_REPORT_BYTES`: the size that failed with 434,676 input tokens on `main`."""
TRACEBACK = (SAMPLES / "issue_load_more_500.md").read_text(encoding="utf-8")
"""A real report: a Flask 500 whose traceback ends in `backend/notes/store.py`."""
FAULT_FILE = "backend/notes/store.py"
HANG_GUARD_SECONDS = 60.0
"""A generous bound for what takes a second or two (most of it importing)."""


def _log_line(i: int) -> str:
    stamp = f"2024-05-02 14:{i // 60 % 60:02d}:{i % 60:02d} +0000"
    return f"[{stamp}] [4123] [INFO] GET /api/notes/{i} 200 in 12 ms\n"


def _huge(where: str) -> str:
    """`HUGE_CHARS` of server log with the traceback report in the middle or at the end."""
    log = "".join(_log_line(i) for i in range(HUGE_CHARS // 70 + 1))
    log = log[: log.rindex("\n", 0, HUGE_CHARS - len(TRACEBACK)) + 1]
    if where == "end":
        return log + TRACEBACK
    middle = log.index("\n", len(log) // 2) + 1
    return log[:middle] + TRACEBACK + log[middle:]


@pytest.fixture(scope="module", params=["middle", "end"])
def huge(request: pytest.FixtureRequest) -> str:
    text = _huge(request.param)
    assert len(text.encode()) <= MAX_REPORT_BYTES and len(text) > HUGE_CHARS - 80
    return text


def test_the_view_keeps_head_tail_and_the_whole_traceback(huge: str) -> None:
    report = build_report(ReportIn(text=huge))
    view = excerpt(report.text, report.traces)
    assert report.traces and view.cut and view.shown <= REPORT_VIEW_CHARS
    assert len(view.text) < REPORT_VIEW_CHARS + 1_000  # the markers
    trace = huge[report.traces[0].start : report.traces[0].end]
    assert trace in view.text and "page 3 of 2" in trace
    assert view.text.startswith(huge[:1_000]) and view.text.endswith(huge[-1_000:])
    assert "left out (" in view.text
    assert report.truncated == [view.note]
    assert view.note.startswith(
        f"text: the report's text was cut from {len(huge):,} to {view.shown:,} characters"
    )


def test_a_short_report_is_shown_whole() -> None:
    report = build_report(ReportIn(text=TRACEBACK))
    view = excerpt(report.text, report.traces)
    assert view.text == TRACEBACK and not view.cut and view.note == ""
    assert report.truncated == []


def test_every_trace_of_many_is_shown_within_its_cap() -> None:
    trace = 'Traceback (most recent call last):\n  File "app/t{i}.py", line 3, in f\nE{i}: boom\n'
    log = "".join(_log_line(i) for i in range(1_000))
    text = "".join(log + trace.format(i=i) for i in range(20)) + log
    report = build_report(ReportIn(text=text))
    view = excerpt(report.text, report.traces)
    assert len(report.traces) == 20 and view.traces == 20
    assert all(f"E{i}: boom" in view.text and f"app/t{i}.py" in view.text for i in range(20))
    assert view.shown <= REPORT_VIEW_CHARS


def test_a_huge_report_is_diagnosed_through_the_pipeline(huge: str, tmp_path: Path) -> None:
    outcome = diagnose(ReportIn(text=huge), Workspace(DEMO, home=tmp_path / "home"))
    assert outcome.state is State.COMPLETE, outcome.reason
    assert outcome.finding is not None and outcome.report is not None
    assert FAULT_FILE in [location.path for location in outcome.finding.files]
    (note,) = outcome.report.truncated
    assert f"cut from {len(huge):,} to" in note
    assert any(e.detail == f"intake cut {note}" for e in outcome.events)
    assert outcome.finding.provenance.input_tokens < MAX_INPUT_TOKENS // 4


def test_a_huge_report_is_diagnosed_through_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DIAGNOSER_HOME", str(tmp_path / "home"))
    huge = _huge("end")
    report = tmp_path / "huge.log"
    report.write_text(huge, encoding="utf-8")
    code = main(["diagnose", "--repo", str(DEMO), str(report), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == EXIT_OK, err[-2_000:]
    finding = json.loads(out)
    assert FAULT_FILE in [location["path"] for location in finding["files"]]
    assert f"intake cut text: the report's text was cut from {len(huge):,} to" in err
    assert finding["provenance"]["input_tokens"] < MAX_INPUT_TOKENS // 4


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # storage is not under test
def test_a_huge_report_is_diagnosed_through_the_api(client: TestClient) -> None:  # noqa: F811
    text = _huge("middle")
    answer = client.post(
        "/diagnose?repo=demo", content=text.encode(), headers={"Content-Type": "text/plain"}
    )
    assert answer.status_code == 202, answer.text
    job = wait_for_job(client, answer.json()["job_id"])
    assert job["state"] == "complete", job
    finding = client.get(f"/findings/{job['finding_id']}").json()["finding"]
    assert FAULT_FILE in [location["path"] for location in finding["files"]]
    assert finding["provenance"]["input_tokens"] < MAX_INPUT_TOKENS // 4
    details = [e["detail"] for e in client.get(f"/jobs/{job['id']}/events").json()]
    assert any(
        d.startswith(f"intake cut text: the report's text was cut from {len(text):,}")
        for d in details
    )


def test_a_text_of_blank_lines_is_classified_in_bounded_time() -> None:
    """`^\\s*` in a multi-line pattern ran across the blank lines from every line start:
    2,000 of them took 2.5 s, 2 MB of them did not end. A process, not a thread: the
    regex holds the GIL, so only a process can be stopped by the guard."""
    code = (
        "from diagnoser.intake import ReportIn, build_report\n"
        "text = 'It crashes.\\n' + '\\n' * 20_000 + 'Thanks\\n'\n"
        "print(build_report(ReportIn(text=text)).classification.kind.value)\n"
    )
    command = [sys.executable, "-c", code]
    done = subprocess.run(
        command, check=False, capture_output=True, text=True, timeout=HANG_GUARD_SECONDS
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "crash"  # "crashes": classified, whatever the blank lines
