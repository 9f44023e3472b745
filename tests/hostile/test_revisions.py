"""Revisions a stranger writes: anyone may open a GitHub issue on a public repository, so
the version or commit its body states reaches the service through a signed webhook. For
a repository served from git, made-up releases must cost a bounded number of fetches
(one per repository per interval, not one per report), never reach git as options, and
a `/diagnose` revision over its bound is a 422 naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api import ServiceSettings, create_app
from diagnoser.constants import MAX_REVISION_CHARS
from diagnoser.mirror import Mirror
from tests.api.conftest import SECRETS, wait_for_job
from tests.api.test_git_repos import DIVIDE, _github
from tests.diagnoser.git_repo import git, make_git_repo, needs_git

pytestmark = needs_git
ISSUES = 6


def _issue(number: int, version: str) -> bytes:
    return json.dumps({
        "action": "opened", "repository": {"full_name": "acme/app"},
        "issue": {"number": number, "title": "divide fails", "html_url": f"https://x/{number}",
                  "body": f"### Version\n\n{version}\n\nZeroDivisionError in divide\n"},
    }).encode()  # fmt: skip


def test_made_up_releases_cost_one_fetch_and_never_reach_git_as_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    origin = make_git_repo(tmp_path / "origin", {"app.py": DIVIDE})
    head = git(origin, "rev-parse", "HEAD")
    fetches: list[str] = []
    real_fetch = Mirror._fetch

    def counted(mirror: Mirror) -> None:
        fetches.append(mirror.name)
        real_fetch(mirror)

    monkeypatch.setattr(Mirror, "_fetch", counted)
    monkeypatch.setenv("DIAGNOSER_HOME", str(tmp_path / "home"))
    settings = ServiceSettings(
        database_url=f"sqlite:///{tmp_path / 'db.sqlite'}", repos={},
        git_repos={"app": f"file://{origin}"}, **SECRETS,
    )  # fmt: skip
    versions = [f"9.{n}.0" for n in range(ISSUES)]
    versions[0] = "--upload-pack=touch pwned"  # not a version: never a revision at all
    with TestClient(create_app(settings)) as client:
        jobs = []
        for number, version in enumerate(versions):
            body = _issue(number, version)
            answer = client.post(
                "/webhooks/github", content=body, headers=_github(body, f"d-{number}", "issues")
            )
            assert answer.status_code == 202, answer.text
            jobs.append(wait_for_job(client, answer.json()["job_id"]))
        too_long = client.post(
            "/diagnose", json={"report": {"text": "boom", "commit": "a" * (MAX_REVISION_CHARS + 1)}}
        )
    assert len(fetches) <= 1  # six made-up releases, at most one fetch
    assert all(job["state"] in ("complete", "not_actionable") for job in jobs), jobs
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()
    assert too_long.status_code == 422 and "report.commit" in too_long.text
    assert git(origin, "rev-parse", "HEAD") == head
