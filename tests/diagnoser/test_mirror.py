"""A git repository read from the service's mirror at the exact commit
(`diagnoser.mirror`): revisions resolve as a SHA, a prefix, a tag or a release version;
one that does not is said; snapshots are read-only trees of one commit, kept within a
budget; the user's repository is never written."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest

from diagnoser.errors import ToolError
from diagnoser.mirror import SIZE_FILE, Mirror, is_git_source
from tests.diagnoser.git_repo import commit, git, make_git_repo, needs_git

pytestmark = needs_git

FIRST = "def divide(a, b):\n    return a / b\n"
SECOND = "import math\n\n\n# moved down\ndef divide(a, b):\n    return a / b\n"


@pytest.fixture
def origin(tmp_path: Path) -> tuple[Path, str, str]:
    """A user's repository: `app.py` at two commits, the first tagged v1.2.3."""
    root = make_git_repo(tmp_path / "origin", {"app.py": FIRST})
    first = git(root, "rev-parse", "HEAD")
    git(root, "tag", "v1.2.3")
    second = commit(root, {"app.py": SECOND}, "move divide down")
    return root, first, second


def _mirror(origin: Path, home: Path, budget: int = 1 << 30) -> Mirror:
    return Mirror("app", f"file://{origin}", home, budget_bytes=budget)


def test_revisions_resolve_as_git_and_release_versions_name_them(
    origin: tuple[Path, str, str], tmp_path: Path
) -> None:
    root, first, second = origin
    mirror = _mirror(root, tmp_path / "home")
    assert mirror.resolve(None).commit == second  # the default ref
    for asked in (first, first[:8], "v1.2.3", "1.2.3", "app@1.2.3+45", "refs/tags/v1.2.3"):
        found = mirror.resolve(asked)
        assert (found.commit, found.asked, found.note) == (first, asked, ""), asked


@pytest.mark.parametrize("asked", ["9.9.9", "--upload-pack=touch /tmp/x", "a..b", "x" * 300])
def test_a_revision_that_names_nothing_is_said_and_the_default_diagnosed(
    origin: tuple[Path, str, str], tmp_path: Path, asked: str
) -> None:
    root, _first, second = origin
    found = _mirror(root, tmp_path / "home").resolve(asked)
    assert found.commit == second
    assert "is not in app" in found.note and f"diagnosed HEAD at {second[:12]}" in found.note


def test_a_commit_the_mirror_lacks_is_fetched(
    origin: tuple[Path, str, str], tmp_path: Path
) -> None:
    root, _first, _second = origin
    mirror = _mirror(root, tmp_path / "home")
    mirror.resolve(None)
    third = commit(root, {"app.py": SECOND + "# later\n"}, "later")
    assert mirror.resolve(third).commit == third


def test_a_snapshot_is_that_commits_tree_read_only_and_nothing_of_the_user_is_written(
    origin: tuple[Path, str, str], tmp_path: Path
) -> None:
    root, first, second = origin
    refs, status = git(root, "show-ref"), git(root, "status", "--porcelain")
    mirror = _mirror(root, tmp_path / "home")
    old, new = mirror.snapshot(mirror.resolve(first).commit), mirror.snapshot(second)
    assert (old / "app.py").read_text() == FIRST and (new / "app.py").read_text() == SECOND
    assert old.is_relative_to(tmp_path / "home") and not (old / ".git").exists()
    for path in (old, old / "app.py"):
        assert not stat.S_IMODE(path.stat().st_mode) & 0o222, path  # no write bit
    assert mirror.snapshot(first) == old  # made once
    assert (git(root, "show-ref"), git(root, "status", "--porcelain")) == (refs, status)
    assert git(mirror.path, "show-ref") == refs  # the mirror holds the remote's refs, no more


def test_snapshots_past_the_budget_go_least_recently_used_first(
    origin: tuple[Path, str, str], tmp_path: Path
) -> None:
    root, first, second = origin
    mirror = _mirror(root, tmp_path / "home", budget=len(SECOND))
    old = mirror.snapshot(first)
    assert int((old / SIZE_FILE).read_text()) == len(FIRST)
    new = mirror.snapshot(second)
    assert new.is_dir() and not old.exists()  # both are over the budget: the older went


def test_an_unreachable_repository_is_one_clear_error_without_its_password(
    tmp_path: Path,
) -> None:
    mirror = Mirror("app", "https://user:hunter2@127.0.0.1:1/x.git", tmp_path, budget_bytes=1)
    with pytest.raises(
        ToolError, match=re.escape("git clone https://user:***@127.0.0.1:1/x.git")
    ) as err:
        mirror.resolve(None)
    assert "hunter2" not in str(err.value)
    with pytest.raises(ToolError, match="not a commit name"):
        mirror.snapshot("../../etc")


def test_what_names_a_git_repository(origin: tuple[Path, str, str], tmp_path: Path) -> None:
    root, _first, _second = origin
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(root), str(bare))
    sources = ["https://github.com/o/r.git", "ssh://git@h/r", "git@github.com:o/r.git"]
    sources += [f"file://{root}", f"file://{root}#main", str(bare), f"{bare}#v1.2.3"]
    for source in sources:
        assert is_git_source(source), source
    for folder in (str(root), str(tmp_path), "relative/path"):
        assert not is_git_source(folder), folder


def test_made_up_releases_cost_one_fetch_per_interval(
    origin: tuple[Path, str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _first, _second = origin
    mirror = _mirror(root, tmp_path / "home")
    mirror.resolve(None)
    fetches: list[int] = []
    real = mirror._fetch
    monkeypatch.setattr(mirror, "_fetch", lambda: fetches.append(1) or real())
    for n in range(5):
        assert mirror.resolve(f"0.0.{n}").note  # none of them exists
    assert len(fetches) == 1
    later = commit(root, {"app.py": SECOND + "# later\n"}, "later")
    assert mirror.resolve(later).note  # within the interval: not fetched for
    monkeypatch.setattr(mirror, "_fruitless", -float("inf"))  # the interval has passed
    assert mirror.resolve(later).commit == later


def test_a_remote_gone_quiet_leaves_the_mirror_as_last_fetched(
    origin: tuple[Path, str, str], tmp_path: Path
) -> None:
    root, first, second = origin
    mirror = _mirror(root, tmp_path / "home")
    mirror.resolve(None)
    moved = root.rename(tmp_path / "moved")  # the remote no longer answers
    mirror.fetch_seconds = 0  # a refresh is due
    assert mirror.resolve(None).commit == second  # what the mirror has
    assert mirror.resolve(first).commit == first
    missing = mirror.resolve("7.7.7")
    assert missing.commit == second and "fetching failed: git fetch" in missing.note
    assert moved.is_dir()
