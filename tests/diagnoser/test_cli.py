from __future__ import annotations

import http.server
import io
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from diagnoser.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, main
from diagnoser.constants import MAX_REPORT_BYTES
from diagnoser.executor import default_executor_id
from diagnoser.finding import Finding
from repomap import allocator

SAMPLES = Path(__file__).resolve().parents[2] / "sample_reports"
CRASH = SAMPLES / "reports" / "issue_load_more_500.md"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_diagnose_prints_the_finding_as_json_and_progress_on_stderr(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "diagnose", str(CRASH))
    assert code == EXIT_OK
    finding = Finding.model_validate_json(out)
    assert (
        finding.classification.value == "crash"
        and finding.files[0].path == "backend/notes/store.py"
    )
    assert "classified" in err and "complete" in err


def test_markdown_and_sarif(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "diagnose", str(CRASH), "--format", "markdown", "--quiet")
    assert code == EXIT_OK and out.startswith("# ") and "## Locations" in out
    code, out, _ = run(capsys, "diagnose", str(CRASH), "--format", "sarif", "--quiet")
    sarif = json.loads(out)
    assert code == EXIT_OK and sarif["version"] == "2.1.0"
    location = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "backend/notes/store.py"


def test_not_actionable_still_prints_its_finding(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b"Love this app, best notes app ever! 5 stars"))
    monkeypatch.setattr("sys.stdin", stdin)
    code, out, _ = run(capsys, "diagnose", "-", "--quiet")
    finding = Finding.model_validate_json(out)
    assert code == EXIT_OK and finding.classification.value == "praise" and finding.files == []


def test_webhook_json_through_its_provider(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sentry = SAMPLES / "reports" / "sentry_event_alert_share.json"
    code, out, _ = run(capsys, "diagnose", str(sentry), "--provider", "sentry", "--quiet")
    assert code == EXIT_OK and Finding.model_validate_json(out).classification.value == "crash"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["diagnose", "/no/such/report.txt"], "cannot read the report"),
        (["diagnose", str(CRASH), "--repo", "/no/such/repo"], "not a directory"),
        (["diagnose", str(CRASH), "--provider", "sentry"], "is not JSON"),
        (["diagnose", str(CRASH), "--model", "nonsense:foo"], "--model 'nonsense:foo'"),
        (["diagnose", str(CRASH), "--model", ""], "--model is empty"),
        (["diagnose", str(CRASH), "--formatter-model", "nonsense:foo"], "--formatter-model"),
        (["diagnose", str(CRASH), "--formatter-model", ""], "--formatter-model is empty"),
        (["diagnose", str(CRASH), "--formatter-model", "offline"], "cannot be 'offline'"),
    ],
)
def test_bad_input_exits_2_with_a_message(
    home: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = run(capsys, *args)
    assert code == EXIT_USAGE and out == ""
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_a_cli_run_allocates_from_one_arena(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One diagnosis per process: the pipeline's thread reuses what the parse freed."""
    asked: list[int] = []
    monkeypatch.setattr(allocator, "configure", asked.append)
    code, _, err = run(capsys, "diagnose", str(SAMPLES / "no-such-report.md"))
    assert code == EXIT_USAGE and "no-such-report.md" in err
    assert asked == [allocator.ONE_RUN_ARENAS]


def test_an_unknown_provider_is_a_usage_error_listing_the_known_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["diagnose", str(CRASH), "--provider", "nope"])
    err = capsys.readouterr().err
    assert stopped.value.code == EXIT_USAGE and "invalid choice: 'nope'" in err and "sentry" in err


def test_an_oversized_report_is_refused_after_reading_its_limit(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Endless(io.RawIOBase):
        """/dev/zero as a stream that counts what was asked of it."""

        served = 0

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            view = memoryview(buffer)
            view[:] = b"x" * len(view)
            Endless.served += len(view)
            return len(view)

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(Endless())))
    code, out, err = run(capsys, "diagnose", "-", "--quiet")
    assert code == EXIT_USAGE and out == ""
    assert err == f"error: the report is over the {MAX_REPORT_BYTES:,}-byte limit for a report\n"
    assert MAX_REPORT_BYTES < Endless.served <= MAX_REPORT_BYTES + 2 * io.DEFAULT_BUFFER_SIZE


def test_doctor_and_repomap(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "doctor")
    assert code == EXIT_OK and "ok  grammars: 14 languages load" in out
    assert "ok  model: 'offline'" in out
    assert f"ok  executor: {default_executor_id(home)} (the job runner's name" in out
    code, out, _ = run(capsys, "doctor", "--formatter-model", "nosuch:model")
    assert code == EXIT_FAILED and "FAIL formatter model: formatter model 'nosuch:model'" in out
    code, out, _ = run(capsys, "repomap", str(SAMPLES / "demo_app"), "--tokens", "200")
    assert code == EXIT_OK and "backend/notes/" in out


def test_stray_bytes_in_a_log_are_replaced_not_fatal(
    home: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = tmp_path / "crash.log"
    log.write_bytes(CRASH.read_bytes() + b"\n\xff\xfe garbage \x80\n")
    code, out, _ = run(capsys, "diagnose", str(log), "--quiet")
    assert code == EXIT_OK and Finding.model_validate_json(out).classification.value == "crash"


def test_a_data_directory_inside_the_repo_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("def f():\n    return 1\n")
    monkeypatch.setenv("DIAGNOSER_HOME", str(repo / ".cache"))
    code, _, err = run(capsys, "diagnose", str(CRASH), "--repo", str(repo), "--quiet")
    assert code == EXIT_USAGE and "set DIAGNOSER_HOME to a folder outside it" in err


@pytest.mark.parametrize(
    ("variable", "value"),
    [("DIAGNOSER_MAX_FILE_BYTES", "-1"), ("DIAGNOSER_GREP_TIME_SECONDS", "soon")],
)
def test_a_bad_setting_is_named_exit_2_for_diagnose_and_a_failed_check_for_doctor(
    home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
) -> None:
    monkeypatch.setenv(variable, value)
    code, out, err = run(capsys, "diagnose", str(CRASH), "--quiet")
    assert code == EXIT_USAGE and out == "" and err.startswith(f"error: {variable}: ")
    assert "report" not in err
    code, out, _ = run(capsys, "doctor")
    assert code == EXIT_FAILED and out.startswith(f"FAIL settings: {variable}: ")


def test_the_models_default_to_the_settings_and_a_flag_overrides_them(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DIAGNOSER_MODEL", "nonsense:foo")
    code, out, err = run(capsys, "diagnose", str(CRASH), "--quiet")
    assert code == EXIT_USAGE and out == ""
    assert err.startswith("error: DIAGNOSER_MODEL 'nonsense:foo': Unknown model")
    code, out, _ = run(capsys, "doctor")  # the doctor checks what a run would use
    assert code == EXIT_FAILED and "FAIL model: model 'nonsense:foo'" in out
    code, out, _ = run(capsys, "diagnose", str(CRASH), "--quiet", "--model", "offline")
    assert code == EXIT_OK and Finding.model_validate_json(out).provenance.models == ["offline"]

    monkeypatch.setenv("DIAGNOSER_FORMATTER_MODEL", "offline")
    code, _, err = run(capsys, "diagnose", str(CRASH), "--quiet", "--model", "offline")
    assert code == EXIT_USAGE and "DIAGNOSER_FORMATTER_MODEL cannot be 'offline'" in err
    code, _, err = run(capsys, "diagnose", str(CRASH), "--quiet", "--model", "offline",
                       "--formatter-model", "nonsense:foo")  # fmt: skip
    assert code == EXIT_USAGE and "--formatter-model 'nonsense:foo'" in err


class _Refusing(http.server.BaseHTTPRequestHandler):
    """Every request: 401, as a gateway answers a wrong key (the SDK does not retry it)."""

    def do_POST(self) -> None:
        body = b'{"error": {"message": "invalid key", "type": "invalid_request_error"}}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def refusing() -> Iterator[str]:
    """A loopback gateway that refuses every request."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_a_fallback_chain_from_the_flag_ends_in_offline(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    refusing: str,
) -> None:  # fmt: skip
    monkeypatch.setenv("DIAGNOSER_FALLBACK_MODELS", "nonsense:foo")  # the flag wins
    monkeypatch.setenv("DIAGNOSER_MODEL_BASE_URL", refusing)
    monkeypatch.setenv("DIAGNOSER_MODEL_API_KEY", "sk-test")
    code, out, err = run(capsys, "diagnose", str(CRASH), "--model", "openai-chat:gw",
                         "--fallback-models", "offline")  # fmt: skip
    assert code == EXIT_OK, err
    assert "exploring       model gw → offline" in err
    provenance = Finding.model_validate_json(out).provenance
    assert provenance.answered == {"investigate": ["offline"]}  # the gateway refused
    code, _, err = run(capsys, "diagnose", str(CRASH), "--quiet", "--model", "openai-chat:gw")
    assert code == EXIT_USAGE and err.startswith("error: DIAGNOSER_FALLBACK_MODELS 'nonsense:foo'")


def test_a_missing_key_or_dead_gateway_is_one_line_before_any_work(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code, out, err = run(capsys, "diagnose", str(CRASH), "--model", "anthropic:claude-x")
    assert code == EXIT_USAGE and out == ""
    assert err == (
        "error: --model 'anthropic:claude-x' needs ANTHROPIC_API_KEY (or DIAGNOSER_MODEL_API_KEY)\n"
    )
    monkeypatch.setenv("DIAGNOSER_MODEL_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("DIAGNOSER_MODEL_API_KEY", "sk-test")
    code, out, err = run(capsys, "diagnose", str(CRASH), "--model", "openai-chat:gw")
    assert code == EXIT_USAGE and out == "" and len(err.splitlines()) == 1
    assert "http://127.0.0.1:1/v1/ is unreachable" in err
    assert err.rstrip().endswith("check DIAGNOSER_MODEL_BASE_URL")


def test_the_doctor_checks_every_fallback(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("DIAGNOSER_FALLBACK_MODELS", "anthropic:claude-x,offline")
    code, out, _ = run(capsys, "doctor")
    assert code == EXIT_FAILED
    assert "ok   model: 'offline'" not in out and "ok  model: 'offline'" in out
    assert (
        "FAIL fallback model 1: fallback model 1 'anthropic:claude-x' needs ANTHROPIC_API_KEY"
        in out
    )
    assert "ok  fallback model 2: 'offline' (embedded, no key needed)" in out
    assert "FAIL fallback model: 'offline' never fails: put it last" in out


def test_the_timeout_comes_from_the_settings(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DIAGNOSER_TIMEOUT_SECONDS", "1e-9")
    code, out, err = run(capsys, "diagnose", str(CRASH), "--quiet")
    assert code == EXIT_FAILED and out == ""
    assert err == "diagnosis timed_out: timed out after 1e-09 s in received\n"


def test_verify_reproduces_the_snippet_and_tests_a_template_fix_with_its_log(
    home: Path, capsys: pytest.CaptureFixture[str], lean_python: str
) -> None:
    snippet = SAMPLES / "reports" / "issue_last_page_snippet.md"
    code, out, err = run(capsys, "diagnose", str(snippet), "--verify", "--python", lean_python)
    assert code == EXIT_OK, err
    finding = Finding.model_validate_json(out)
    assert finding.reproduction.status.value == "reproduced"
    assert finding.reproduction.frames[-1].path == "backend/notes/store.py"
    assert "reproducing" in err and "testing" in err
    made = [c for c in finding.changes if c.origin.value == "template"]
    assert made and made[0].tested.status.value == "passed"
    assert "-(-total // per_page)" in (made[0].diff or "")  # bug 1's real fix
    code, out, _ = run(capsys, "log", finding.reproduction.log or "")
    assert code == EXIT_OK and "PageOutOfRangeError: page 3 of 2" in out
    assert out.startswith(f"$ {finding.reproduction.command}")


def test_without_verify_nothing_runs_and_a_bad_log_reference_is_a_usage_error(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snippet = SAMPLES / "reports" / "issue_last_page_snippet.md"
    code, out, _ = run(capsys, "diagnose", str(snippet), "--quiet")
    finding = Finding.model_validate_json(out)
    assert code == EXIT_OK and finding.reproduction.status.value == "not_attempted"
    assert all(c.origin.value == "model" for c in finding.changes)
    for ref in ("0123456789abcdef", "../../etc/passwd", ""):
        code, _, err = run(capsys, "log", ref)
        assert code == EXIT_USAGE and "no run log" in err
