"""The `diagnoser` command started the wrong way, as real processes: a database URL no
parser accepts (its password never shown), a data directory that is not a folder, a
Ctrl-C while the modules still load. Each ends in one line, never a traceback."""

from __future__ import annotations

import contextlib
import io
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from api import cli, workers
from api.cli import main
from diagnoser.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from repomap.signals import EXIT_INTERRUPTED
from tests.api.server import ROOT, command, free_port, server_env

DEADLINE_SECONDS = 120.0
"""A command that should end at once, on a loaded machine: a hang guard."""
SAMPLES = ROOT / "sample_reports" / "reports"
SCRIPT = Path(sys.executable).with_name("diagnoser")
"""The console script, as installed (`[project.scripts]`)."""


def _secret(tag: str) -> str:
    return f"pw{tag}Zq7"


MALFORMED = {
    "double-at": "postgresql://u:{}@@127.0.0.1/db",
    "port-not-a-number": "postgresql://u:{}@127.0.0.1:notaport/db",
    "unclosed-ipv6": "postgres://u:{}@[::1/db",
    "unknown-driver": "postgresql+nodriver://u:{}@127.0.0.1/db",
    "unsupported-scheme": "mysql://u:{}@127.0.0.1/db",
    "password-as-port": "postgresql://u:{}/db",
    "password-in-query": "postgresql://u@127.0.0.1:1/db?password={}",
    "bad-query-option": "postgresql://u:{}@127.0.0.1:1/db?nonsense=1",
}
"""Malformed database URLs, each with a password `{}` to look for in what is printed."""


@pytest.mark.parametrize("name", MALFORMED)
def test_serve_never_prints_the_password_of_a_malformed_database_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    url = MALFORMED[name].format(_secret(name))
    env = {"DIAGNOSER_HOME": str(tmp_path / "home"), "DIAGNOSER_DATABASE_URL": url}
    code, out, err = _in_process(monkeypatch, ["serve", "--port", str(free_port())], env)
    assert _secret(name) not in out + err, err
    assert (code, err.count("\n"), out) == (EXIT_USAGE, 1, ""), err
    assert err.startswith("error: DIAGNOSER_DATABASE_URL")


MODEL_URLS = {
    "not-http": {"DIAGNOSER_MODEL_BASE_URL": "ftp://u:{}@h/v1"},
    "unreachable": {
        "DIAGNOSER_MODEL_BASE_URL": "http://u:{}@127.0.0.1:1/v1",
        "DIAGNOSER_MODEL": "openai:gpt-4o",
        "OPENAI_API_KEY": "sk-test",
    },
}
"""Model base URLs with a password `{}`: refused by the settings, or probed and refused."""


@pytest.mark.parametrize("name", MODEL_URLS)
@pytest.mark.parametrize("run", ["serve", "doctor"])
def test_no_command_prints_the_password_of_a_model_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, run: str
) -> None:
    env = {key: value.replace("{}", _secret(name)) for key, value in MODEL_URLS[name].items()}
    args = ["serve", "--port", str(free_port())] if run == "serve" else ["doctor"]
    code, out, err = _in_process(monkeypatch, args, {"DIAGNOSER_HOME": str(tmp_path), **env})
    assert _secret(name) not in out + err and "u:***@" in out + err
    assert code == (EXIT_USAGE if run == "serve" else EXIT_FAILED)


def test_diagnoser_serve_as_started_prints_one_line_without_the_password(tmp_path: Path) -> None:
    """The real command, where a log handler or a warning could still print the URL."""
    probes = ("double-at", "unknown-driver")  # a traceback with the password before
    started = {
        name: subprocess.Popen(
            command("serve", "--port", str(free_port())), cwd=ROOT,
            env=server_env({
                "DIAGNOSER_HOME": str(tmp_path / "home"),
                "DIAGNOSER_DATABASE_URL": MALFORMED[name].format(_secret(name)),
            }),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for name in probes
    }  # fmt: skip
    for name, process in started.items():
        out, err = process.communicate(timeout=DEADLINE_SECONDS)
        assert _secret(name) not in out + err and "Traceback" not in err, err
        assert (process.returncode, err.count("\n"), out) == (EXIT_USAGE, 1, ""), err


def _no_server(*_args: object) -> int:
    raise AssertionError("the server would have started")


def _in_process(
    monkeypatch: pytest.MonkeyPatch, args: list[str], env: dict[str, str]
) -> tuple[int, str, str]:
    """`diagnoser ARGS` in this process (its modules are loaded): (exit code, out, err).
    Only for runs that end before a server would start: one that would start fails."""
    monkeypatch.setattr(cli, "_run", _no_server)
    monkeypatch.setattr(workers, "run", _no_server)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name", MALFORMED)
def test_doctor_never_prints_the_password_of_a_malformed_database_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    url = MALFORMED[name].format(_secret(name))
    env = {"DIAGNOSER_HOME": str(tmp_path / "home"), "DIAGNOSER_DATABASE_URL": url}
    code, out, err = _in_process(monkeypatch, ["doctor"], env)
    assert _secret(name) not in out + err and err == ""
    # `u:pw@@127.0.0.1` reaches the local PostgreSQL, as psycopg would read it: exit 0
    assert code in (EXIT_OK, EXIT_FAILED)
    assert len([line for line in out.splitlines() if line.split(":")[0].endswith("database")]) == 1


def _not_a_folder(tmp_path: Path) -> dict[str, Path]:
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    return {"a-file": a_file, "below-a-file": a_file / "home", "dev-null": Path("/dev/null")}


@pytest.mark.parametrize("kind", ["a-file", "below-a-file", "dev-null"])
@pytest.mark.parametrize("run", ["diagnose", "repomap", "serve", "doctor"])
def test_a_data_directory_that_is_not_a_folder_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, run: str
) -> None:
    home = _not_a_folder(tmp_path)[kind]
    args = {
        "diagnose": ["diagnose", str(SAMPLES / "issue_load_more_500.md"), "--quiet"],
        "repomap": ["repomap", str(ROOT / "sample_reports" / "demo_app")],
        "serve": ["serve", "--port", str(free_port())],  # stops before the server starts
        "doctor": ["doctor"],
    }[run]
    code, out, err = _in_process(monkeypatch, args, {"DIAGNOSER_HOME": str(home)})
    if run == "doctor":  # a failed check among the others
        assert code == EXIT_FAILED and err == ""
        assert re.search(r"^FAIL data directory: DIAGNOSER_HOME: .*folder", out, re.M)
        return
    assert (code, err.count("\n")) == (EXIT_USAGE, 1), err
    assert err.startswith("error: DIAGNOSER_HOME: ") and out == ""


def test_doctor_reports_an_sqlite_file_name_too_long_as_a_failed_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / ('x' * 300)}.sqlite"
    env = {"DIAGNOSER_HOME": str(tmp_path / "home"), "DIAGNOSER_DATABASE_URL": url}
    code, out, err = _in_process(monkeypatch, ["doctor"], env)
    assert code == EXIT_FAILED and err == ""
    assert re.search(r"^FAIL database: .*File name too long$", out, re.M)


LOADED = {
    "early": "_pydantic_core",
    "middle": "_multiarray_umath",
    "late": "_re2",
    "service": "_psycopg",
}
"""Extension modules a `diagnose` run's imports load, early to late, and one only the
service's load: once one is mapped into the process, its imports have begun — after
Python's own start, which no code can guard. (`--help` loads none: it is done at once.)"""


def _wait_until_loaded(process: subprocess.Popen[str], library: str) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    maps = Path(f"/proc/{process.pid}/maps")
    while library not in maps.read_text():
        assert process.poll() is None, "ended before it was interrupted"
        assert time.monotonic() < deadline, f"{library} never loaded"
        time.sleep(0.002)


@pytest.mark.parametrize(
    ("args", "when"),
    [(["diagnose", "-"], "early"), (["diagnose", "-"], "middle"), (["diagnose", "-"], "late"),
     (["serve", "--port", "0"], "service")],
    ids=["diagnose-early", "diagnose-middle", "diagnose-late", "serve"],
)  # fmt: skip
def test_ctrl_c_while_the_modules_load_is_one_line(
    tmp_path: Path, args: list[str], when: str
) -> None:
    installed = SCRIPT.read_text() if SCRIPT.exists() else ""
    assert "diagnoser_entry" in installed, f"{SCRIPT} is out of date: pip install -e ."
    process = subprocess.Popen(
        [str(SCRIPT), *args], cwd=ROOT, env=server_env({"DIAGNOSER_HOME": str(tmp_path)}),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        _wait_until_loaded(process, LOADED[when])
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=DEADLINE_SECONDS)
    finally:
        process.kill()
    assert out == "" and "Traceback" not in err
    assert (process.returncode, err) == (EXIT_INTERRUPTED, "diagnoser: interrupted\n")
