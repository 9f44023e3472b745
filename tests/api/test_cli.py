"""`diagnoser serve` as a user starts it (`python -m api.cli serve`, a real process): a bad
setting stops the start in one line, the banner says where to go and what to paste, no
API keys means loopback only, SIGTERM stops it cleanly; `diagnoser diagnose` still
works through the same entry point."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
from pathlib import Path

import pytest
import uvicorn

from api import cli, workers
from api.service import Service
from api.settings import ServiceSettings
from tests.api.server import ROOT, command, free_port, serve, server_env

RUN_DEADLINE_SECONDS = 120.0
"""A command that should end at once: a hang guard."""
LOOPBACK_HEX = "0100007F"
"""127.0.0.1 as /proc/net/tcp writes it (little-endian hex)."""
TCP_LISTEN = "0A"


def _settings(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "DIAGNOSER_HOME": str(tmp_path / "home"),
        "DIAGNOSER_DATABASE_URL": f"sqlite:///{tmp_path / 'db' / 'diagnoser.sqlite'}",
        **extra,
    }


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(*args), cwd=ROOT, env=server_env(env), capture_output=True, text=True,
        timeout=RUN_DEADLINE_SECONDS, check=False,
    )  # fmt: skip


BAD_SETTINGS = {
    "repo-not-a-folder": ("DIAGNOSER_REPOS", "x=/nonexistent", "not an existing directory"),
    "rate-limit-zero": ("DIAGNOSER_RATE_LIMIT_PER_MINUTE", "0", "greater than 0"),
    "not-a-number": ("DIAGNOSER_JOB_CONCURRENCY", "many", "integer"),
    "mysql": ("DIAGNOSER_DATABASE_URL", "mysql://x", "not supported"),
    "not-a-url": ("DIAGNOSER_DATABASE_URL", "notaurl", "not a database URL"),
    "postgres-down": ("DIAGNOSER_DATABASE_URL", "postgresql://nobody@127.0.0.1:1/x", "port 1"),
    "unknown-model": ("DIAGNOSER_MODEL", "nope:model", "'nope:model': Unknown model"),
    "missing-key": ("DIAGNOSER_MODEL", "anthropic:claude-x", "needs ANTHROPIC_API_KEY (or "),
    "after-offline": ("DIAGNOSER_FALLBACK_MODELS", "test", "'test' comes after 'offline'"),
    "base-url": ("DIAGNOSER_MODEL_BASE_URL", "localhost:4000", "not an http(s) URL"),
    "bad-proxy": ("DIAGNOSER_TRUSTED_PROXIES", "127.0.0.1,proxy", "'proxy' is not an IP address"),
    "offline-formatter": ("DIAGNOSER_FORMATTER_MODEL", "offline", "cannot be 'offline'"),
    "short-key-hash": ("DIAGNOSER_API_KEYS", "sha256:abc", "64 hex digits"),
    "no-settings-file": ("DIAGNOSER_SETTINGS_FILE", "/nonexistent.toml", "no such file"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD_SETTINGS))
def test_a_bad_setting_stops_the_start_in_one_line(case: str, tmp_path: Path) -> None:
    variable, value, says = BAD_SETTINGS[case]
    done = _run("serve", "--port", str(free_port()), env=_settings(tmp_path, **{variable: value}))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [done.stderr.strip()]
    assert done.stderr.startswith(f"error: {variable}") and says in done.stderr


def test_a_database_folder_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    url = f"sqlite:///{tmp_path / 'file' / 'sub' / 'diagnoser.sqlite'}"
    done = _run("serve", env=_settings(tmp_path, DIAGNOSER_DATABASE_URL=url))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        f"error: DIAGNOSER_DATABASE_URL: cannot make the folder {tmp_path / 'file' / 'sub'}: "
        "Not a directory"
    )


def test_a_settings_file_that_does_not_parse_is_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "diagnoser.toml"
    broken.write_text("api_keys = [unclosed\n")
    done = _run("serve", env=_settings(tmp_path, DIAGNOSER_SETTINGS_FILE=str(broken)))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        done.stderr.startswith("error: DIAGNOSER_SETTINGS_FILE")
        and len(done.stderr.splitlines()) == 1
    )


def _listening(port: int) -> set[str]:
    """The local addresses (hex, as /proc/net/tcp* write them) listening on `port`."""
    addresses = set()
    for table in (Path("/proc/net/tcp"), Path("/proc/net/tcp6")):
        if not table.exists():
            continue
        for line in table.read_text().splitlines()[1:]:
            fields = line.split()
            address, _, hex_port = fields[1].partition(":")
            if int(hex_port, 16) == port and fields[3] == TCP_LISTEN:
                addresses.add(address)
    return addresses


def test_with_no_api_keys_it_binds_loopback_only_and_says_so(tmp_path: Path) -> None:
    with serve(_settings(tmp_path), args=["--host", "0.0.0.0"], log=tmp_path / "log") as server:
        server.wait_ready()
        output = server.output
        assert "no API keys configured (DIAGNOSER_API_KEYS): listening on 127.0.0.1 only" in output
        assert f"Uvicorn running on http://127.0.0.1:{server.port}" in output
        assert _listening(server.port) == {LOOPBACK_HEX}


def test_the_banner_names_swagger_and_a_curl_line_that_works(tmp_path: Path) -> None:
    with serve(_settings(tmp_path), log=tmp_path / "log") as server:
        server.wait_ready()
        lines = server.output.splitlines()
        assert f"Swagger UI: http://localhost:{server.port}/docs" in lines
        assert server.client.get("/docs").status_code == 200
        curl = next(line for line in lines if line.startswith("try it:"))
        done = subprocess.run(
            shlex.split(curl.removeprefix("try it:")), cwd=ROOT, capture_output=True,
            text=True, timeout=RUN_DEADLINE_SECONDS, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        job = json.loads(done.stdout)
        assert job["state"] == "complete" and job["finding"]["files"]


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_ends_it_cleanly(stop: signal.Signals, tmp_path: Path) -> None:
    """Exit 0 after the graceful shutdown (uvicorn alone: -15, or a KeyboardInterrupt
    traceback at Ctrl+C)."""
    with serve(_settings(tmp_path), log=tmp_path / "log") as server:
        server.wait_ready()
        body = {"report": {"text": "IndexError in list_notes", "source": "bug_report"}}
        assert server.client.post("/diagnose?wait=30", json=body).status_code in (200, 202)
        assert server.send(stop) == 0, server.output
        assert "Application shutdown complete" in server.output
        assert "Traceback" not in server.output


def test_serve_help(tmp_path: Path) -> None:
    done = _run("serve", "--help", env=_settings(tmp_path))
    assert done.returncode == 0 and done.stdout.startswith("usage: diagnoser serve")
    assert "--host" in done.stdout and "--port" in done.stdout and "DIAGNOSER_" in done.stdout


def test_the_diagnosis_cli_answers_through_the_same_entry_point(tmp_path: Path) -> None:
    done = _run("diagnose", "--help", env=_settings(tmp_path))
    assert done.returncode == 0 and done.stdout.startswith("usage: diagnoser diagnose")
    assert "--format" in done.stdout


def test_web_workers_get_time_to_start_on_a_busy_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """uvicorn replaces a worker that has not started within `timeout_worker_healthcheck`
    (5 s by default): too short for a worker importing the app on a loaded machine."""
    for name, value in _settings(tmp_path).items():
        monkeypatch.setenv(name, value)
    started: list[uvicorn.Config] = []

    def run(service: Service, config: uvicorn.Config, metrics: Path) -> int:
        started.append(config)
        service.store.engine.dispose()
        return 0

    monkeypatch.setattr(workers, "run", run)
    monkeypatch.setattr(workers, "metrics_directory", lambda: tmp_path / "metrics")
    assert cli.serve(["--workers", "2", "--port", str(free_port())]) == 0
    [config] = started
    assert config.workers == 2
    assert config.timeout_worker_healthcheck == workers.HEALTHCHECK_SECONDS >= 30


def test_serve_model_flags_override_the_settings() -> None:
    settings = ServiceSettings(model="offline")
    args = cli.parser().parse_args(
        ["--model", "openai:gpt-4o", "--fallback-models", "anthropic:claude-x, offline"]
    )
    chosen = cli.with_flags(settings, args)
    assert chosen.model == "openai:gpt-4o"
    assert chosen.fallback_models == ("anthropic:claude-x", "offline")
    assert chosen.formatter_model is None and chosen.repos == settings.repos
    assert cli.with_flags(settings, cli.parser().parse_args([])) is settings
    assert "model openai:gpt-4o → anthropic:claude-x → offline;" in cli.banner(
        chosen, "127.0.0.1", 8000
    )
