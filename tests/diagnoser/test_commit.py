"""The checked-out commit, read from `.git` files: loose, packed, detached, worktree,
and a hostile `.git` that must not hang or leak."""

from __future__ import annotations

import os
from pathlib import Path

from diagnoser.commit import git_dir, head_commit
from tests.diagnoser.git_repo import git, make_git_repo, needs_git

SHA = "0123456789abcdef0123456789abcdef01234567"


@needs_git
def test_the_commit_of_a_branch_then_packed_then_detached(tmp_path: Path) -> None:
    root = make_git_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    head = git(root, "rev-parse", "HEAD")
    assert head_commit(root) == head and git_dir(root) == root / ".git"
    git(root, "pack-refs", "--all")
    assert not (root / ".git" / "refs" / "heads" / "main").exists()
    assert head_commit(root) == head
    git(root, "checkout", "-q", "--detach")
    assert head_commit(root) == head


@needs_git
def test_a_worktree_reads_its_own_head_and_the_shared_refs(tmp_path: Path) -> None:
    root = make_git_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    git(root, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    side = tmp_path / "side"
    assert (side / ".git").is_file()
    assert head_commit(side) == git(side, "rev-parse", "HEAD")
    assert git_dir(side) == root / ".git" / "worktrees" / "side"


def test_not_a_checkout_or_no_commit_yet_is_none(tmp_path: Path) -> None:
    assert head_commit(tmp_path) is None and git_dir(tmp_path) is None
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert head_commit(tmp_path) is None


def test_a_hostile_git_folder_neither_hangs_nor_leaks(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text(SHA + "\n")  # even a name-shaped secret outside the repo stays unread
    (tmp_path / "plain.txt").write_text("not a commit\n")
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    head = root / ".git" / "HEAD"
    for ref in ("ref: ../../secret", "ref: refs/../../../secret", "ref: /etc/hostname"):
        head.write_text(ref + "\n")
        assert head_commit(root) is None, ref
    head.write_text("ref: refs/heads/main\n")
    (root / ".git" / "refs" / "heads").mkdir(parents=True)
    (root / ".git" / "refs" / "heads" / "main").write_text("TOPSECRET not hex\n")
    assert head_commit(root) is None
    head.unlink()
    os.mkfifo(head)  # opened non-blocking and refused: not a regular file
    assert head_commit(root) is None
