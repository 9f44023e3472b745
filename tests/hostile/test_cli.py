"""The `diagnoser` command under hostile input and hostile stops: exit 0, 1 or 2 (or the
signal's 130/143), one line of explanation, never a traceback."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnoser.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, main
from diagnoser.intake import PROVIDERS
from repomap.signals import EXIT_INTERRUPTED, EXIT_TERMINATED

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 60.0
"""Generous bound on a loaded machine: the assertion is that it stops, not how fast."""


def _waiting_on_stdin(home: Path) -> subprocess.Popen[bytes]:
    """`diagnoser diagnose -` blocked reading a report that never ends."""
    env = {**os.environ, "DIAGNOSER_HOME": str(home)}
    process = subprocess.Popen(
        [sys.executable, "-m", "diagnoser", "diagnose", "-"],
        cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None
    process.stdin.write(b"Traceback (most recent call last):\n")
    process.stdin.flush()
    deadline = time.monotonic() + STARTUP_SECONDS
    # Until it is past its imports and blocked reading the pipe (the kernel's wait channel).
    while "pipe_read" not in Path(f"/proc/{process.pid}/wchan").read_text():
        assert time.monotonic() < deadline, "never started reading stdin"
        time.sleep(0.05)
    return process


@pytest.mark.parametrize(
    ("signum", "code", "said"),
    [
        (signal.SIGTERM, EXIT_TERMINATED, "diagnoser: terminated"),
        (signal.SIGINT, EXIT_INTERRUPTED, "diagnoser: interrupted"),
    ],
)
def test_a_stop_signal_is_one_line_and_the_signal_exit_code(
    tmp_path: Path, signum: int, code: int, said: str
) -> None:
    process = _waiting_on_stdin(tmp_path / "home")
    process.send_signal(signum)
    out, err = process.communicate(timeout=STARTUP_SECONDS)
    assert process.returncode == code
    assert err.decode().strip() == said and out == b""


@pytest.fixture(scope="module")
def warm_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One data directory for every example (the demo app's index is built once)."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DIAGNOSER_HOME", str(home))
        yield home


def _main_on_stdin(body: bytes, *args: str) -> tuple[int, str]:
    """`diagnoser diagnose - ARGS` in this process, `body` on stdin: (exit code, stderr).
    Any exception other than argparse's exit escapes and fails the test."""
    stdin, stderr = io.TextIOWrapper(io.BytesIO(body)), io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        previous, sys.stdin = sys.stdin, stdin
        try:
            code = main(["diagnose", "-", "--quiet", *args])
        finally:
            sys.stdin = previous
    return code, stderr.getvalue()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=20,
)
SENTRY_KEYS = st.sampled_from(["exception", "threads", "stacktrace", "entries", "event_id"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.binary(max_size=3_000))
def test_any_bytes_on_stdin_end_in_exit_0_1_or_2_without_a_traceback(
    warm_home: Path, body: bytes
) -> None:
    code, err = _main_on_stdin(body)
    assert code in (EXIT_OK, EXIT_FAILED, EXIT_USAGE)
    assert "Traceback" not in err
    assert code == EXIT_OK or err.count("\n") == 1  # a failure is one line


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    provider=st.sampled_from(PROVIDERS),
    payload=JSON | st.dictionaries(SENTRY_KEYS, JSON, min_size=1),
    raw=st.binary(max_size=200),
)
def test_any_json_or_bytes_to_any_provider_ends_in_exit_0_1_or_2_without_a_traceback(
    warm_home: Path, provider: str, payload: object, raw: bytes
) -> None:
    for body in (json.dumps(payload).encode(), raw):
        code, err = _main_on_stdin(body, "--provider", provider)
        assert code in (EXIT_OK, EXIT_FAILED, EXIT_USAGE)
        assert "Traceback" not in err
        assert code == EXIT_OK or err.count("\n") == 1


SAMPLES = ROOT / "sample_reports" / "reports"
WRONG_TYPES = {
    "event_id": 7,
    "exception": {"values": [{"type": 1, "stacktrace": {"frames": [{}]}}]},
}


class Probe(NamedTuple):
    body: bytes
    args: tuple[str, ...]
    said: str
    """What the one line of stderr must contain."""
    env: dict[str, str] = {}  # noqa: RUF012 (read only)


PROBES = {
    # Deep parts intake does not read are cut (tests/hostile/test_deep_json.py); a deep
    # part it reads is refused, naming it.
    "json-10000-deep": Probe(b'{"event_id": "e1", "exception": {"values": [{"type": "E", '
                             b'"stacktrace": {"frames": ' + b"[" * 10_000 + b"]" * 10_000
                             + b"}}]}}", ("--provider", "sentry"),
                             "stacktrace.frames[0] is nested deeper than 64 levels"),
    "json-5000-digit-int": Probe(b'{"event_id": ' + b"9" * 5_000 + b"}",
                                 ("--provider", "sentry"), "digits"),
    "sentry-every-field-wrong": Probe(json.dumps(WRONG_TYPES).encode(), ("--provider", "sentry"),
                                      "sentry"),
    "unknown-model": Probe(b"x", ("--model", "nonsense:foo"), "--model 'nonsense:foo'"),
    "model-without-its-provider": Probe(b"x", ("--model", "openai:gpt-4o"),
                                        "--model 'openai:gpt-4o'"),
    "empty-formatter-model": Probe(b"x", ("--formatter-model", ""), "--formatter-model"),
    "bad-setting-named": Probe(b"x", (), "DIAGNOSER_MAX_FILE_BYTES",
                               {"DIAGNOSER_MAX_FILE_BYTES": "-1"}),
    "bad-deny-pattern": Probe(b"x", (), "DIAGNOSER_DENY_EXTRA", {"DIAGNOSER_DENY_EXTRA": "\\"}),
    "json-nan": Probe(b'{"event_id": "e1", "message": "boom", "extra": {"x": NaN}}',
                      ("--provider", "sentry"), "NaN is not a JSON number"),
    "json-1e999": Probe(b'{"event_id": "e1", "message": "boom", "extra": {"x": 1e999}}',
                        ("--provider", "sentry"), "1e999 is out of range"),
}  # fmt: skip


@pytest.mark.parametrize("probe", PROBES.values(), ids=PROBES.keys())
def test_each_probe_is_one_line_and_exit_2(
    warm_home: Path, monkeypatch: pytest.MonkeyPatch, probe: Probe
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a provider without its key
    for name, value in probe.env.items():
        monkeypatch.setenv(name, value)
    code, err = _main_on_stdin(probe.body, *probe.args)
    assert (code, err.count("\n")) == (EXIT_USAGE, 1)
    assert err.startswith("error: ") and probe.said in err


def test_a_settings_extra_pattern_in_list_form_is_accepted(
    warm_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DIAGNOSER_DENY_EXTRA", "*.py")  # was a SettingsError traceback
    code, err = _main_on_stdin((SAMPLES / "issue_load_more_500.md").read_bytes())
    assert code in (EXIT_OK, EXIT_FAILED) and "Traceback" not in err


def test_a_non_utf8_file_name_in_the_repo_is_skipped_not_fatal(
    warm_home: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "demo"
    shutil.copytree(ROOT / "sample_reports" / "demo_app", repo)
    bad = os.path.join(os.fsencode(repo), b"backend", b"bad\xffname.py")
    Path(os.fsdecode(bad)).write_text("def f():\n    return 1\n")
    code, err = _main_on_stdin(
        (SAMPLES / "issue_load_more_500.md").read_bytes(), "--repo", str(repo)
    )
    assert code == EXIT_OK and err == ""


def test_dev_zero_as_the_report_is_refused_after_its_limit(warm_home: Path) -> None:
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        code = main(["diagnose", "/dev/zero", "--quiet"])
    assert code == EXIT_USAGE and "over the 2,000,000-byte limit" in stderr.getvalue()
