"""`Workspaces`: a workspace per configured repository, new when the tree changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnoser.errors import DiagnoserError, UnknownRepo
from diagnoser.intake import ReportIn
from diagnoser.pipeline import diagnose
from diagnoser.registry import REFRESH_SECONDS, Workspaces, tree_state, walk_signature
from diagnoser.render import to_markdown
from diagnoser.settings import Settings
from repomap.cache import cache_dir_for
from tests.conftest import MakeRepo
from tests.diagnoser.git_repo import commit, git, make_git_repo, needs_git


class Clock:
    """Time that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@needs_git
def test_a_commit_shows_after_the_refresh_interval_as_a_new_workspace(tmp_path: Path) -> None:
    root = make_git_repo(tmp_path / "app", {"app.py": "def f():\n    return 1\n"})
    clock = Clock()
    workspaces = Workspaces({"app": root}, Settings(), home=tmp_path / "home", clock=clock)
    first = workspaces.get("app")
    assert workspaces.state("app").commit == git(root, "rev-parse", "HEAD")
    assert first.file_paths == {"app.py"}

    head = commit(root, {"app.py": "def f():\n    return 2\n", "new.py": "N = 1\n"}, "edit")
    assert workspaces.get("app") is first  # not looked at again within the interval
    clock.now += REFRESH_SECONDS
    fresh = workspaces.get("app")
    assert fresh is not first and "new.py" in fresh.file_paths
    assert workspaces.state("app").commit == head
    assert workspaces.get("app") is fresh  # unchanged since: the same workspace


@needs_git
def test_a_checkout_of_another_commit_changes_the_state(tmp_path: Path) -> None:
    root = make_git_repo(tmp_path / "app", {"app.py": "A = 1\n"})
    first = git(root, "rev-parse", "HEAD")
    second = commit(root, {"b.py": "B = 1\n"}, "second")
    assert tree_state(root, Settings().deny_list()).commit == second
    git(root, "checkout", "-q", first)
    assert tree_state(root, Settings().deny_list()).commit == first


def test_a_plain_folder_changes_its_signature_when_a_file_is_added(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    root = make_repo({"src/app.py": "A = 1\n", ".env": "TOKEN=x\n"})
    deny = Settings().deny_list()
    before = walk_signature(root, deny)
    (root / ".env.local").write_text("TOKEN=y\n")  # denied: the workspace never sees it
    assert walk_signature(root, deny) == before
    workspaces = Workspaces({"plain": root}, Settings(), home=tmp_path / "home", refresh_seconds=0)
    first = workspaces.get("plain")
    assert workspaces.state("plain").commit is None
    (root / "src" / "new.py").write_text("N = 1\n")
    assert walk_signature(root, deny) != before
    fresh = workspaces.get("plain")
    assert fresh is not first and "src/new.py" in fresh.file_paths


def test_warm_builds_the_index_and_a_change_makes_it_cold_again(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    root = make_repo({"app.py": "def f():\n    return 1\n"})
    workspaces = Workspaces({"app": root}, Settings(), home=tmp_path / "home", refresh_seconds=0)
    assert not workspaces.is_warm("app")
    warmed = workspaces.warm("app")
    assert workspaces.is_warm("app") and warmed is workspaces.get("app")
    assert warmed.repository.index.find("f")
    (root / "more.py").write_text("def g():\n    return 2\n")
    assert not workspaces.is_warm("app")
    assert workspaces.warm("app").repository.index.find("g")


def test_an_unknown_name_lists_the_configured_ones(make_repo: MakeRepo) -> None:
    workspaces = Workspaces({"web": make_repo({}), "api": make_repo({})}, Settings())
    assert workspaces.names() == ["api", "web"]
    with pytest.raises(UnknownRepo, match="no repository named 'nope'; configured: api, web"):
        workspaces.get("nope")
    assert issubclass(UnknownRepo, DiagnoserError) and issubclass(UnknownRepo, LookupError)


def test_from_settings_serves_the_configured_repositories(make_repo: MakeRepo) -> None:
    root = make_repo({"a.py": "A = 1\n"})
    workspaces = Workspaces.from_settings(Settings(repos={"mine": root}))
    assert workspaces.names() == ["mine"] and workspaces.root("mine") == root.resolve()
    assert workspaces.get("mine").root == root.resolve()


# ---- git repositories, at the commit a report names ----------------------------------

DIVIDE = "def divide(a, b):\n    return a / b\n\n\ndef main():\n    print(divide(1, 0))\n"
MOVED = "import math\n\n\n# moved down\n" + DIVIDE
UTIL = "def helper(value):\n    return value * 2\n"


def _trace(divide_line: int, main_line: int) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "app.py", line {main_line}, in main\n    print(divide(1, 0))\n'
        f'  File "app.py", line {divide_line}, in divide\n    return a / b\n'
        "ZeroDivisionError: division by zero\n"
    )


@needs_git
def test_two_reports_naming_two_commits_are_diagnosed_on_each_commits_file(
    tmp_path: Path,
) -> None:
    root = make_git_repo(tmp_path / "origin", {"app.py": DIVIDE, "util.py": UTIL})
    first = git(root, "rev-parse", "HEAD")
    git(root, "tag", "v1.0.0")
    second = commit(root, {"app.py": MOVED}, "move divide down")
    settings = Settings(repos={}, git_repos={"app": f"file://{root}"})
    workspaces = Workspaces.from_settings(settings, home=tmp_path / "home")
    assert workspaces.names() == ["app"]
    for asked, sha, text, lines in (
        ("1.0.0", first, DIVIDE, (2, 6)), (second, second, MOVED, (6, 10)),
    ):  # fmt: skip
        workspace = workspaces.get("app", asked)
        outcome = diagnose(ReportIn(text=_trace(*lines), release=asked), workspace)
        assert outcome.finding is not None, outcome.reason
        provenance = outcome.finding.provenance
        assert (provenance.commit, provenance.revision_note) == (sha, "")
        fault = outcome.finding.files[0]
        assert fault.path == "app.py" and fault.end_line == lines[0]
        cited = text.splitlines()[fault.start_line - 1 : fault.end_line]
        assert fault.evidence.strip() in "\n".join(cited)
    stats = workspace.repository.stats  # the second commit's index: util.py lent by the first
    assert (stats.parsed, stats.reused) == (1, 1)
    assert git(root, "status", "--porcelain") == ""  # the user's tree: untouched


@needs_git
def test_an_evicted_snapshot_takes_its_index_cache_with_it(tmp_path: Path) -> None:
    root = make_git_repo(tmp_path / "origin", {"app.py": DIVIDE, "util.py": UTIL})
    first = git(root, "rev-parse", "HEAD")
    second = commit(root, {"app.py": MOVED}, "move divide down")
    settings = Settings(repos={}, git_repos={"app": f"file://{root}"}, snapshot_budget_bytes=1)
    home = tmp_path / "home"
    workspaces = Workspaces.from_settings(settings, home=home)
    old = workspaces.get("app", first)
    old.warm()
    old_cache = cache_dir_for(old.root, home)
    assert old_cache.is_dir()
    new = workspaces.get("app", second)  # over the budget: the first goes
    assert new.root.is_dir() and not old.root.exists() and not old_cache.exists()


@needs_git
def test_an_unknown_release_is_said_in_the_finding_and_the_default_ref_diagnosed(
    tmp_path: Path,
) -> None:
    root = make_git_repo(tmp_path / "origin", {"app.py": DIVIDE})
    head = git(root, "rev-parse", "HEAD")
    workspaces = Workspaces.from_settings(
        Settings(repos={}, git_repos={"app": f"file://{root}"}), home=tmp_path / "home"
    )
    outcome = diagnose(ReportIn(text=_trace(2, 6), release="7.7.7"), workspaces.get("app", "7.7.7"))
    assert outcome.finding is not None
    provenance = outcome.finding.provenance
    assert provenance.commit == head
    assert "'7.7.7' is not in app" in provenance.revision_note
    assert "Release not found" in to_markdown(outcome.finding)
    default = workspaces.current("app")  # the default ref's own: no note
    assert (default.commit, default.note) == (head, "")
