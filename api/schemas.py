"""What the API takes and returns (apart from the stored rows in `tables`), and the job
state machine. Examples come from `sample_reports/`, so Swagger UI's "Try it out" sends a
real report."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from diagnoser import Finding, ReportIn

SAMPLES = Path(__file__).resolve().parent.parent / "sample_reports" / "reports"


class JobState(StrEnum):
    QUEUED = "queued"  # stored and on the queue
    RUNNING = "running"  # a worker took it
    COMPLETE = "complete"  # terminal: a grounded Finding
    NOT_ACTIONABLE = "not_actionable"  # terminal: praise, a request…: a Finding, no model
    FAILED = "failed"  # terminal: with a reason (bad input, model error)
    TIMED_OUT = "timed_out"  # terminal: the per-job timeout fired
    DUPLICATE = "duplicate"  # terminal: an identical report's job answers (`duplicate_of`)


TRANSITIONS: dict[JobState, frozenset[JobState]] = {
    JobState.QUEUED: frozenset({JobState.RUNNING, JobState.FAILED, JobState.DUPLICATE}),
    JobState.RUNNING: frozenset(JobState) - {JobState.QUEUED},
}
"""Allowed moves; RUNNING → RUNNING is a restart after a crash (recovery)."""
TERMINAL = frozenset(JobState) - frozenset(TRANSITIONS)


@cache
def sample(name: str) -> str:
    """A sample report's text (for the OpenAPI examples)."""
    return (SAMPLES / name).read_text(encoding="utf-8")


def diagnose_examples() -> dict[str, dict[str, Any]]:
    return {
        "crash": {
            "summary": "An Android crash (logcat)",
            "value": {
                "repo": "demo",
                "report": {"text": sample("android_logcat_open_shared.txt"),
                           "source": "crash_log", "platform": "android"},
            },
        },
        "issue": {
            "summary": "A bug report with a Python traceback",
            "value": {"report": {"text": sample("issue_load_more_500.md"),
                                 "source": "github"}},
        },
        "praise": {
            "summary": "A five-star review (not investigated)",
            "value": {"report": {"text": sample("review_praise.txt"), "source": "review",
                                 "rating": 5}},
        },
    }  # fmt: skip


REPO_DESCRIPTION = (
    "The configured repository to diagnose against (its name, as `GET /repos` lists). "
    "Optional only when the service serves a single repository; with several, a report "
    "that names none is refused with 422."
)
"""The schema marks `repo` optional, as it is for one repo: this says when it is not
(`Service.repo`), on the JSON field and on the `?repo=` query parameter alike."""


class DiagnoseIn(BaseModel):
    """A report to diagnose against one configured repository."""

    model_config = ConfigDict(extra="forbid")
    repo: str | None = Field(default=None, max_length=64, description=REPO_DESCRIPTION)
    """A configured repository (`GET /repos`); optional when only one is configured."""
    report: ReportIn


class Accepted(BaseModel):
    """The job that answers this report (an identical report's job, when one exists)."""

    job_id: str
    status_url: str
    state: JobState
    attached: bool = False
    """True when an identical report's job answers this one (counted as an occurrence)."""
    occurrences: int = 1


class AttemptOut(BaseModel):
    """One run of a job: by which executor (`diagnoser.executor`), from when."""

    number: int
    executor: str
    started_at: datetime


class JobOut(BaseModel):
    id: str
    repo: str
    state: JobState
    reason: str = ""
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    finding_id: str | None = None
    duplicate_of: str | None = None
    """Set when an identical report's job answered this one."""
    occurrences: int = 1
    """Reports answered by this job: the first and every identical one attached to it."""
    attempts: list[AttemptOut] = []
    """Who ran it: one entry per run, more than one when a runner died or stopped
    mid-job and another took it over (only on `GET /jobs/{id}`)."""


class JobDone(JobOut):
    """A job that ended while the caller waited (`?wait=`), with its Finding."""

    finding: Finding | None = None


class EventOut(BaseModel):
    seq: int
    at: datetime
    state: str
    detail: str = ""


class FindingSummary(BaseModel):
    id: str
    job_id: str
    repo: str
    classification: str
    status: str
    title: str
    created_at: datetime


class FindingPage(BaseModel):
    items: list[FindingSummary]
    next_cursor: str | None = None
    """Pass as `?cursor=` for the next (older) page; none when this is the last."""


class RepoOut(BaseModel):
    name: str
    files: int | None = None
    """Files the map indexes (none until the index is warm)."""
    commit: str | None = None
    warm: bool = False


class WebhookAck(BaseModel):
    """A delivery taken (a job queued), replayed (its first job) or ignored (why)."""

    job_id: str | None = None
    status_url: str | None = None
    ignored: bool = False
    replayed: bool = False
    reason: str = ""


class Problem(BaseModel):
    """Every error: what went wrong and what to change."""

    detail: str


class FindingOut(FindingSummary):
    finding: Finding
