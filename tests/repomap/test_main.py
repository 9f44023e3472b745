from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from repomap.__main__ import EXIT_OK, EXIT_USAGE, main
from tests.conftest import FIXTURES, GOLDEN_REPO


def test_prints_the_map_and_stats(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(GOLDEN_REPO), "--stats"]) == EXIT_OK
    out, err = capsys.readouterr()
    assert out == (FIXTURES / "golden_repo.map").read_text()
    assert "files 7  parsed 7  cached 0" in err
    assert main([str(GOLDEN_REPO), "--stats"]) == EXIT_OK
    assert "parsed 0  cached 7" in capsys.readouterr().err


def test_focus_and_tokens(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(GOLDEN_REPO), "--tokens", "80", "--focus", "notes/api.py"]) == EXIT_OK
    assert capsys.readouterr().out == (FIXTURES / "golden_repo.focus_api.map").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/definitely/not/here"], "error: no such directory: /definitely/not/here"),
        ([str(GOLDEN_REPO / "notes" / "api.py")], "error: not a directory"),
        ([str(GOLDEN_REPO), "--tokens", "0"], "error: --tokens must be a positive number"),
    ],
)
def test_bad_input_is_a_clear_message_and_exit_2(
    home: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(args) == EXIT_USAGE
    out, err = capsys.readouterr()
    assert err.startswith(message)
    assert "Traceback" not in err and out == ""


def test_data_home_inside_the_repo_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    monkeypatch.setenv("DIAGNOSER_HOME", str(tmp_path / ".cache"))
    assert main([str(tmp_path)]) == EXIT_USAGE
    assert "set DIAGNOSER_HOME to a folder outside it" in capsys.readouterr().err
    assert not (tmp_path / ".cache").exists()


def test_runs_as_a_module(home: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "repomap", str(GOLDEN_REPO), "--tokens", "60", "--focus", "request"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout == (FIXTURES / "golden_repo.focus_js.map").read_text()


def test_help_names_the_languages(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert "Languages: c, cpp, csharp, go, java, javascript, kotlin, php, python, ruby," in text
    assert "never inside the repository" in text
