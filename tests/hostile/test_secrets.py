"""Secrets behind every kind of name and link: none reaches a repo map, a tool's output,
a Finding or a rendered format.

Each planted file holds SECRET in its content and in a definition's name
(`def leak_SECRET_<tag>()`), so a map or a symbol lookup that indexed it shows it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from diagnoser.errors import ToolError
from diagnoser.intake import ReportIn
from diagnoser.pipeline import diagnose
from diagnoser.render import to_json, to_markdown, to_sarif_json
from diagnoser.settings import Settings
from diagnoser.tools import find_symbol, grep, list_dir, read_range
from diagnoser.workspace import Workspace
from repomap import Repository
from repomap.__main__ import EXIT_OK, EXIT_USAGE, main

PROJECT = Path(__file__).resolve().parents[2]
SECRET = "TOPSECRET9c4e"
EXTRA = "local_overrides.py"
"""Denied only by `DIAGNOSER_DENY_EXTRA`."""
DENIED = {
    ".env": "env",
    ".env.py": "envpy",
    "prod.env": "prodenv",
    "credentials.py": "creds",
    "secrets.yml": "secretsyml",
    "id_rsa": "idrsa",
    "server.pem": "pem",
    ".aws/credentials": "aws",
    ".ssh/keys.py": "ssh",
    ".git/config": "git",
    EXTRA: "extra",
}
"""Secret files, by path → the tag in their definitions' names."""
SYMLINKS = {
    "settings_local.py": ".env",
    "aws_helper.py": ".aws/credentials",
    "ssh_helper.py": ".ssh/keys.py",
    "pem_view.py": "server.pem",
    "overrides_link.py": EXTRA,
    "chain_a.py": "lib/chain_b.py",  # link -> link -> .env
    "lib/chain_b.py": "../.env",
}
HARD_LINKS = {"innocent_hard.py": ".env", "keys_hard.py": ".ssh/keys.py", "extra_hard.py": EXTRA}
LEAKY = [*DENIED, *SYMLINKS, *HARD_LINKS, "awsdir", "awsdir/credentials"]
"""Every path whose content is a secret's."""
ORDINARY = {
    "src/app.py": "def app():\n    return handle()\n",
    "src/views.py": "def handle():\n    return 1\n",
    "lib/util.py": "def helper():\n    return 2\n",
}


def secret_source(tag: str) -> str:
    return (
        f'TOKEN = "{SECRET}-{tag}"\n'
        f"def leak_{SECRET}_{tag}():\n    pass\n"
        f'def planted_{tag}(token="{SECRET}"):\n    return token.upper()\n'
    )


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("secrets") / "repo"
    for rel, text in [*ORDINARY.items(), *((p, secret_source(t)) for p, t in DENIED.items())]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for link, target in SYMLINKS.items():
        (root / link).symlink_to(target)
    for link, target in HARD_LINKS.items():
        os.link(root / target, root / link)
    (root / "awsdir").symlink_to(".aws", target_is_directory=True)
    return root


@pytest.fixture
def extra_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """`DIAGNOSER_DENY_EXTRA` set, and a private `DIAGNOSER_HOME`; yields the home."""
    monkeypatch.setenv("DIAGNOSER_DENY_EXTRA", EXTRA)
    monkeypatch.setenv("DIAGNOSER_HOME", str(tmp_path / "home"))
    yield tmp_path / "home"


@pytest.fixture(scope="module")
def workspace(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    home = tmp_path_factory.mktemp("home")
    return Workspace(repo, Settings(deny_extra=(EXTRA,)), home=home)


def assert_no_leak(text: str) -> None:
    assert SECRET not in text, text
    assert "leak_" not in text and "planted_" not in text, text


def run(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", *args], cwd=PROJECT, capture_output=True, text=True, check=False
    )
    assert done.returncode == EXIT_OK, done.stderr
    return done.stdout


@pytest.mark.parametrize("command", ["repomap", "diagnoser repomap"])
def test_neither_cli_maps_a_secret(repo: Path, extra_env: Path, command: str) -> None:
    text = run(*command.split(), str(repo), "--tokens", "8000")
    assert_no_leak(text)
    assert "src/app.py" in text and "def handle" in text  # a real map, not an empty one


def test_repository_map_shows_no_secret(repo: Path, extra_env: Path) -> None:
    repository = Repository.open(repo, home=extra_env, deny=Settings().deny_list())
    assert_no_leak(repository.map(tokens=8000))
    assert sorted(repository.tags) == sorted(ORDINARY)
    # The default rule alone (no extra) still keeps every other secret out.
    default = Repository.open(repo, home=extra_env)
    assert sorted(default.tags) == sorted([*ORDINARY, EXTRA, "extra_hard.py", "overrides_link.py"])


def test_repomap_deny_flag_extends_the_list(
    repo: Path, extra_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(repo), "--tokens", "8000", "--deny", "src/views.py"]) == EXIT_OK
    text = capsys.readouterr().out
    assert "def app" in text and "def handle" not in text
    assert_no_leak(text)


def test_a_bad_extra_pattern_stops_the_map_naming_it(
    repo: Path, extra_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DIAGNOSER_DENY_EXTRA", "*.sql, !")
    assert main([str(repo)]) == EXIT_USAGE
    assert "DIAGNOSER_DENY_EXTRA: invalid deny pattern '!'" in capsys.readouterr().err


def test_grep_finds_no_secret(workspace: Workspace) -> None:
    for pattern in (SECRET, "TOKEN", "leak_", "planted_"):
        found = grep(workspace, pattern, fixed=True, max_results=1_000)
        assert found.total == 0, found.render()
    everything = grep(workspace, ".", max_results=1_000)
    assert_no_leak(everything.render())
    assert everything.files_with_matches == len(ORDINARY)


@pytest.mark.parametrize("path", LEAKY)
def test_read_range_refuses_every_secret_path(workspace: Workspace, path: str) -> None:
    with pytest.raises(ToolError) as refused:
        read_range(workspace, path)
    assert_no_leak(str(refused.value))


def test_list_dir_shows_no_secret_anywhere(workspace: Workspace) -> None:
    for folder in (".", "src", "lib"):
        text = list_dir(workspace, folder, depth=4).render()
        assert_no_leak(text)
        shown = {line.split()[0].rstrip("/") for line in text.splitlines()[1:]}
        assert not shown & {Path(p).name for p in LEAKY}, text
    for folder in (".aws", ".ssh", ".git", "awsdir"):
        with pytest.raises(ToolError):
            list_dir(workspace, folder)
    assert {f.path for f in workspace.files} == set(ORDINARY)


def test_find_symbol_finds_no_planted_definition(workspace: Workspace) -> None:
    for tag in [*DENIED.values(), "hard"]:
        for name in (f"leak_{SECRET}_{tag}", f"planted_{tag}"):
            result = find_symbol(workspace, name)
            assert not result.hits and not result.suggestions, result.render()
    assert_no_leak(find_symbol(workspace, "leak").render())
    assert_no_leak(find_symbol(workspace, "TOKEN").render())


REPORT = """RuntimeError in planted_env after a settings change

Traceback (most recent call last):
  File "/srv/app/src/app.py", line 2, in app
  File "/srv/app/settings_local.py", line 5, in planted_env
  File "/srv/app/innocent_hard.py", line 5, in planted_env
  File "/srv/app/aws_helper.py", line 5, in planted_aws
  File "/srv/app/chain_a.py", line 5, in planted_env
  File "/srv/app/credentials.py", line 5, in planted_creds
  File "/srv/app/local_overrides.py", line 5, in planted_extra
RuntimeError: TOKEN was rejected by planted_ssh in keys_hard.py and ssh_helper.py
"""


def test_no_finding_or_rendered_format_shows_a_secret(workspace: Workspace) -> None:
    outcome = diagnose(ReportIn(text=REPORT), workspace)
    assert outcome.finding is not None, outcome.reason
    finding = outcome.finding
    rendered = [to_json(finding), to_markdown(finding), to_sarif_json(finding)]
    for text in rendered:
        assert SECRET not in text
    located = {loc.path for loc in finding.files} | {change.path for change in finding.changes}
    assert not located & set(LEAKY), located
