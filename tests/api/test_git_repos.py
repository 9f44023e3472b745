"""A git repository served end to end (issue 25 §2): a bare repository named by a
`file://` URL; a signed Sentry webhook whose event names a release, a GitHub issue whose
form states its version, a failed GitHub check run (its `head_sha`), and a `/diagnose`
report naming a commit, each get a Finding
read from that commit's snapshot, its provenance naming the commit; a release that is
not there is said."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api import ServiceSettings, create_app
from tests.api.conftest import SECRETS, wait_for_job
from tests.diagnoser.git_repo import commit, git, make_git_repo, needs_git

pytestmark = needs_git

DIVIDE = "def divide(a, b):\n    return a / b\n\n\ndef main():\n    print(divide(1, 0))\n"
MOVED = "import math\n\n\n# moved down\n" + DIVIDE


def sentry_event(release: str, divide_line: int) -> bytes:
    frames = [
        {"filename": "app.py", "function": "main", "lineno": divide_line + 4, "in_app": True},
        {"filename": "app.py", "function": "divide", "lineno": divide_line, "in_app": True},
    ]
    event = {
        "event_id": "bb78c1407cea4519aa397afc059c793d", "platform": "python",
        "release": release, "title": "ZeroDivisionError: division by zero",
        "exception": {"values": [{"type": "ZeroDivisionError", "value": "division by zero",
                                  "stacktrace": {"frames": frames}}]},
    }  # fmt: skip
    return json.dumps({"action": "created", "data": {"error": event}}).encode()


def signed(body: bytes, request_id: str) -> dict[str, str]:
    digest = hmac.new(SECRETS["sentry_secret"].encode(), body, hashlib.sha256).hexdigest()
    return {
        "Content-Type": "application/json", "Sentry-Hook-Signature": digest,
        "Sentry-Hook-Resource": "error", "Request-ID": request_id,
    }  # fmt: skip


def _github(body: bytes, delivery: str, event: str) -> dict[str, str]:
    digest = hmac.new(SECRETS["github_secret"].encode(), body, hashlib.sha256).hexdigest()
    return {
        "X-Hub-Signature-256": f"sha256={digest}", "X-GitHub-Delivery": delivery,
        "X-GitHub-Event": event, "Content-Type": "application/json",
    }  # fmt: skip


def test_a_bare_repository_is_diagnosed_at_the_release_each_report_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    origin = make_git_repo(tmp_path / "origin", {"app.py": DIVIDE})
    first = git(origin, "rev-parse", "HEAD")
    git(origin, "tag", "v1.0.0")
    second = commit(origin, {"app.py": MOVED}, "move divide down")
    bare = tmp_path / "app.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin), str(bare))
    monkeypatch.setenv("DIAGNOSER_HOME", str(tmp_path / "home"))
    settings = ServiceSettings(
        database_url=f"sqlite:///{tmp_path / 'db.sqlite'}", repos={},
        git_repos={"app": f"file://{bare}"}, **SECRETS,
    )  # fmt: skip
    with TestClient(create_app(settings)) as client:
        hook = client.post(
            "/webhooks/sentry",
            content=sentry_event("1.0.0", 2),
            headers=signed(sentry_event("1.0.0", 2), "r1"),
        )
        assert hook.status_code == 202, hook.text
        by_release = wait_for_job(client, hook.json()["job_id"])
        trace = (
            'Traceback (most recent call last):\n  File "app.py", line 10, in main\n'
            '  File "app.py", line 6, in divide\nZeroDivisionError: division by zero\n'
        )
        posted = client.post("/diagnose", json={"report": {"text": trace, "commit": second[:10]}})
        by_commit = wait_for_job(client, posted.json()["job_id"])
        # `v1.0.0`: the tag itself, and another revision than the Sentry event's `1.0.0`,
        # so not folded into that job though the crash is the same
        issue = json.dumps({
            "action": "opened", "repository": {"full_name": "acme/app"},
            "issue": {"number": 3, "title": "divide fails", "html_url": "https://x/3",
                      "body": f"### Version\n\nv1.0.0\n\n```\n{trace}```\n"},
        }).encode()  # fmt: skip
        github = client.post(
            "/webhooks/github", content=issue, headers=_github(issue, "g-1", "issues")
        )
        assert github.status_code == 202, github.text
        by_issue = wait_for_job(client, github.json()["job_id"])
        check = json.dumps({
            "action": "completed", "repository": {"full_name": "acme/app"},
            "check_run": {"name": "pytest", "head_sha": first, "conclusion": "failure",
                          "output": {"title": "1 failed", "text": trace.replace("6", "2")}},
        }).encode()  # fmt: skip
        ci = client.post(
            "/webhooks/github", content=check, headers=_github(check, "g-2", "check_run")
        )
        assert ci.status_code == 202, ci.text
        by_check = wait_for_job(client, ci.json()["job_id"])
        unknown = client.post(
            "/diagnose", json={"report": {"text": trace + "again\n", "release": "9.9.9"}}
        )
        by_unknown = wait_for_job(client, unknown.json()["job_id"])
        findings = {
            name: client.get(f"/findings/{job['finding_id']}").json()["finding"]
            for name, job in (("release", by_release), ("commit", by_commit),
                              ("unknown", by_unknown), ("issue", by_issue), ("check", by_check))
        }  # fmt: skip
    release, at_commit, missing = (findings[k] for k in ("release", "commit", "unknown"))
    assert release["provenance"]["commit"] == first and release["provenance"]["revision_note"] == ""
    assert release["files"][0]["end_line"] == 2  # the first commit's line of `return a / b`
    assert at_commit["provenance"]["commit"] == second
    assert at_commit["files"][0]["end_line"] == 6  # the second commit's
    assert missing["provenance"]["commit"] == second  # the default ref, said:
    assert "'9.9.9' is not in app" in missing["provenance"]["revision_note"]
    assert findings["issue"]["provenance"]["commit"] == first  # its `### Version` field
    assert findings["check"]["provenance"]["commit"] == first  # the check run's head_sha
    assert git(origin, "status", "--porcelain") == ""


def test_a_git_remote_that_does_not_answer_is_one_log_line_and_not_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("DIAGNOSER_HOME", str(tmp_path / "home"))
    settings = ServiceSettings(
        database_url=f"sqlite:///{tmp_path / 'db.sqlite'}", repos={},
        git_repos={"gone": f"file://{tmp_path / 'nowhere.git'}"},
    )  # fmt: skip
    with (
        caplog.at_level(logging.INFO, logger="api.service"),
        TestClient(create_app(settings)) as client,
    ):
        deadline = time.monotonic() + 60
        while "could not index repo gone" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.05)
        ready = client.get("/readyz")
    [record] = [r for r in caplog.records if "could not index repo gone" in r.getMessage()]
    assert record.exc_info is None and "git clone" in record.getMessage()  # no traceback
    assert ready.status_code == 503
