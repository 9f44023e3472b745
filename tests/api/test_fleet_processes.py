"""A fleet of real processes on a fresh PostgreSQL database (issue 25 §3): one
`diagnoser serve --no-jobs` takes the reports, `diagnoser worker`s run them.

- A Sentry webhook naming a release, for a repository given as a bare `file://` git
  URL: the worker's Finding is read from that release's snapshot.

- 200 distinct reports; one worker `kill -9`-ed mid-burst and never restarted, another
  stopped with SIGTERM and no grace mid-burst: every report ends in exactly one terminal
  job with at most one Finding, and the killed worker's running jobs are run again by
  another worker within the takeover time.
- With a fleet limit of 2 and four workers of 2 each, never more than 2 jobs run at once
  (the jobs' recorded start and end times).

The test reads the database the processes share, as an operator would; times are hang
guards, except the takeover bound, which is what the fleet promises.
"""

from __future__ import annotations

import signal
import time
from datetime import datetime
from pathlib import Path

from sqlalchemy import func, select, text

from api.schemas import TERMINAL
from api.store import Store
from api.tables import FindingRow
from tests.api.conftest import SAMPLES, SECRETS
from tests.api.databases import postgres_database
from tests.api.server import Server, Worker, fleet, until
from tests.api.test_git_repos import DIVIDE, MOVED, sentry_event, signed
from tests.diagnoser.git_repo import commit, git, make_git_repo, needs_git

ISSUE = (SAMPLES / "issue_load_more_500.md").read_text()
EXCEPTION = "PageOutOfRangeError: page"
REPORTS = 200
TAKEOVER_SECONDS = 3
COMMON = {"DIAGNOSER_TAKEOVER_SECONDS": str(TAKEOVER_SECONDS)}
RUN_SLICE_SECONDS = 0.01
"""How long a worker runs between two looks; a diagnosis takes ~30× that."""
TAKEOVER_SLACK_SECONDS = 10.0
"""Beyond the takeover time: a beat (takeover / 4), the queue's poll (0.25 s) and a busy
2-core machine running five processes."""


def distinct(n: int) -> str:
    """The sample issue with its exception renamed: a report of its own (no dedupe)."""
    assert EXCEPTION in ISSUE
    return ISSUE.replace(EXCEPTION, f"PageOutOfRangeError{n}: page")


def executor_of(store: Store, worker: Worker) -> str:
    return next(m.id for m in store.executors() if m.pid == worker.process.pid)


def running_under(store: Store, executor: str) -> set[str]:
    """Unfinished jobs whose latest attempt is `executor`'s."""
    found = set()
    for job_id in store.unfinished():
        job = store.job(job_id)
        if job is not None and job.attempts and job.attempts[-1].executor == executor:
            found.add(job_id)
    return found


def catch_running(store: Store, worker: Worker, executor: str) -> set[str]:
    """Freeze `worker` at a moment it runs jobs (a frozen process commits nothing, so
    what the database says then is what it held); those jobs. It stays frozen."""

    def held() -> bool:
        worker.freeze()
        if running_under(store, executor):
            return True
        worker.send(signal.SIGCONT)
        time.sleep(RUN_SLICE_SECONDS)
        return False

    until("the worker is caught running a job", held)
    return running_under(store, executor)


def submit(api: Server, count: int) -> list[str]:
    ids = []
    for n in range(count):
        answer = api.client.post("/diagnose", json={"report": {"text": distinct(n)}})
        assert answer.status_code == 202, answer.text
        ids.append(str(answer.json()["job_id"]))
    assert len(set(ids)) == count  # distinct reports, distinct jobs
    return ids


def all_ended(store: Store, job_ids: list[str]) -> bool:
    return not store.unfinished() and len(job_ids) > 0


def test_the_fleet_ends_every_report_once_though_workers_die_and_stop(tmp_path: Path) -> None:
    with postgres_database() as url:
        workers = {"w1": {}, "w2": {"DIAGNOSER_STOP_GRACE_SECONDS": "0"}, "w3": {}}
        with fleet(url, tmp_path, workers, COMMON) as (api, running, store):
            victim, stopping = executor_of(store, running["w1"]), executor_of(store, running["w2"])
            job_ids = submit(api, REPORTS)

            lost = catch_running(store, running["w1"], victim)  # frozen, holding jobs
            running["w1"].kill()
            killed_at = datetime.now().astimezone()

            until("the stopping worker runs a job", lambda: bool(running_under(store, stopping)))
            assert running["w2"].send(signal.SIGTERM) == 143
            last = running["w2"].output.strip().splitlines()[-1]
            assert last.startswith("diagnoser worker: terminated: "), last
            assert "handed back to the fleet" in last

            until("every job ended", lambda: all_ended(store, job_ids))
            jobs = {job_id: store.job(job_id) for job_id in job_ids}
            with store.engine.connect() as connection:
                findings = dict(connection.execute(
                    select(FindingRow.job_id, func.count()).group_by(FindingRow.job_id)
                ).all())  # fmt: skip
                pending = connection.execute(text(
                    "SELECT count(*) FROM dbos.workflow_status "
                    "WHERE status IN ('PENDING', 'ENQUEUED')"
                )).scalar_one()  # fmt: skip
            survivor = executor_of(store, running["w3"])
            assert store.executor(victim) is None and store.executor(stopping) is None  # taken

    assert pending == 0
    for job_id, job in jobs.items():
        assert job is not None and job.state in TERMINAL, job
        assert job.state.value in ("complete", "not_actionable"), job  # nothing failed
        assert findings.get(job_id, 0) == (1 if job.finding_id else 0), job  # one Finding
    assert lost  # what this test is about: the kill caught jobs running
    for job_id in lost:
        attempts = jobs[job_id].attempts  # type: ignore[union-attr]
        assert victim in [a.executor for a in attempts], attempts
        again = [a for a in attempts if a.executor != victim]
        assert again, attempts
        waited = (again[0].started_at - killed_at).total_seconds()
        assert waited <= TAKEOVER_SECONDS + TAKEOVER_SLACK_SECONDS, (job_id, waited)
    ran = {a.executor for job in jobs.values() for a in job.attempts}  # type: ignore[union-attr]
    assert ran == {victim, stopping, survivor}


def test_the_fleet_limit_bounds_the_jobs_running_at_once(tmp_path: Path) -> None:
    with postgres_database() as url:
        limit = {"DIAGNOSER_FLEET_CONCURRENCY": "2", "DIAGNOSER_JOB_CONCURRENCY": "2"}
        workers = {f"w{n}": limit for n in range(4)}
        with fleet(url, tmp_path, workers, COMMON) as (api, _running, store):
            job_ids = submit(api, 16)
            until("every job ended", lambda: all_ended(store, job_ids))
            jobs = [store.job(job_id) for job_id in job_ids]
    spans = [(job.started_at, job.finished_at) for job in jobs if job is not None]
    assert len(spans) == 16 and all(start and end for start, end in spans)
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    at_once, most = 0, 0
    for _, step in edges:  # an end sorts before a start at the same instant
        at_once += step
        most = max(most, at_once)
    assert most <= 2, most
    assert len({a.executor for job in jobs if job for a in job.attempts}) >= 2  # shared out


@needs_git
def test_a_worker_diagnoses_a_webhook_at_the_release_of_a_bare_repository(tmp_path: Path) -> None:
    """Webhook → the API process → a job on a `diagnoser worker` → a Finding read from the
    snapshot of the release the event names, the repository given as a `file://` URL."""
    origin = make_git_repo(tmp_path / "origin", {"app.py": DIVIDE})
    tagged = git(origin, "rev-parse", "HEAD")
    git(origin, "tag", "v1.0.0")
    commit(origin, {"app.py": MOVED}, "move divide down")
    bare = tmp_path / "app.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin), str(bare))
    settings = {
        **COMMON, "DIAGNOSER_REPOS": f"app=file://{bare}",
        "DIAGNOSER_SENTRY_SECRET": SECRETS["sentry_secret"],
    }  # fmt: skip
    with postgres_database() as url, fleet(url, tmp_path, {"w1": {}}, settings) as (api, _, store):
        event = sentry_event("1.0.0", 2)
        answer = api.client.post("/webhooks/sentry", content=event, headers=signed(event, "r1"))
        assert answer.status_code == 202, answer.text
        job_id = answer.json()["job_id"]
        until(
            "the job ended",
            lambda: (job := store.job(job_id)) is not None and job.finding_id is not None,
        )
        job = store.job(job_id)
        assert job is not None and job.finding_id is not None
        found = store.finding(job.finding_id)
        [worker] = [member.id for member in store.executors()]  # --no-jobs runs none
    assert found is not None
    _summary, finding = found
    assert finding.provenance.commit == tagged and finding.provenance.revision_note == ""
    assert finding.files[0].path == "app.py" and finding.files[0].end_line == 2
    assert [a.executor for a in job.attempts] == [worker]  # run by the worker process
    assert git(origin, "status", "--porcelain") == ""
