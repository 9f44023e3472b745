"""A real git repository in a temporary folder, made with the git command line."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
_ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=root, env=_ENV, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def make_git_repo(root: Path, files: dict[str, str]) -> Path:
    """`root` with `files`, committed on branch `main`."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    commit(root, files, "first")
    return root


def commit(root: Path, files: dict[str, str], message: str) -> str:
    """Write `files`, commit them all; the new commit's name."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")
