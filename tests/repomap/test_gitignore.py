"""`repomap.gitignore` and the walk's use of it, checked against git itself: on generated
trees with random pattern sets, the files the walk lists are the untracked, non-ignored
files `git ls-files --others --exclude-standard` lists."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from repomap.constants import DEFAULT_IGNORED_DIRS
from repomap.files import walk_files
from repomap.gitignore import Rules, compile_pattern, ignore_verdict

PATTERNS = (
    "*", "!*.*", "!*/", "*.log", "!keep.log", "out/", "/out", "docs/*", "!docs/keep.md",
    "**/tmp", "a/**/b", "*.c", "!src/", "src/*", "!src/*.c", "gen", "\\!x", "#c", "x?.py",
    "[ab].txt", "[!a]*.txt", "[a-c].py", "x[0-9].py", "dir/", "!dir/", "/*.md", "sub/*.h",
    "**/sub/**", "docs/**", "**", "/src/", "!/src/", "*.md ", "\\#c", "a/*/b", "**/keep.*",
    "!**/keep.*",
)  # fmt: skip
FOLDERS = ("a", "b", "src", "docs", "out", "gen", "tmp", "dir", "sub")
FILES = ("x.py", "x1.py", "a.txt", "b.txt", "keep.log", "e.log", "main.c", "keep.md",
         "README.md", "Makefile", "f.h", "gen")  # fmt: skip
TREES = 60
"""Generated trees per run: ~1 s; 1,350 more (three seeds) matched when this was written."""
GIT = shutil.which("git")


def _listed(root: Path) -> list[str]:
    return sorted(f.path for f in walk_files(root).files if not f.path.endswith(".gitignore"))


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_ignore_everything_without_an_extension_keeps_every_folder(tmp_path: Path) -> None:
    """A common idiom that hid whole repositories: `*`, then re-include names with a dot
    and every folder."""
    _write(tmp_path, {".gitignore": "*\n!*.*\n!*/\n", "src/main.c": "", "src/lib/util.h": "",
                      "src/Makefile": "", "README.md": "", "LICENSE": ""})  # fmt: skip
    assert _listed(tmp_path) == ["README.md", "src/lib/util.h", "src/main.c"]


def test_a_deeper_gitignore_re_includes_what_a_parent_excluded(tmp_path: Path) -> None:
    _write(tmp_path, {".gitignore": "*.log\n", "app/.gitignore": "!keep.log\n",
                      "app/keep.log": "", "app/other.log": "", "keep.log": ""})  # fmt: skip
    assert _listed(tmp_path) == ["app/keep.log"]


def test_nothing_comes_back_from_inside_an_excluded_folder(tmp_path: Path) -> None:
    _write(tmp_path, {".gitignore": "out/\n!out/keep.c\n", "out/keep.c": "", "main.c": ""})
    assert _listed(tmp_path) == ["main.c"]


def test_git_info_exclude_counts_below_every_gitignore(tmp_path: Path) -> None:
    _write(tmp_path, {".git/info/exclude": "*.tmp\nscratch/\n", ".gitignore": "!keep.tmp\n",
                      "a.tmp": "", "keep.tmp": "", "scratch/x.py": "", "main.py": ""})  # fmt: skip
    assert _listed(tmp_path) == ["keep.tmp", "main.py"]


def test_a_pattern_line_compiles_by_gitignores_rules() -> None:
    assert compile_pattern("") is None and compile_pattern("# note") is None
    hashed = compile_pattern("\\#notes")
    assert hashed is not None and hashed.regex.fullmatch("#notes")
    spaced = compile_pattern("*.md   ")
    assert spaced is not None and spaced.regex.fullmatch("a/b.md")
    folder = compile_pattern("build/")
    assert folder is not None and folder.folders_only and folder.regex.fullmatch("x/build")
    anchored = compile_pattern("/build")
    assert anchored is not None and not anchored.regex.fullmatch("x/build")
    klass = compile_pattern("x[!0-9].py")
    assert klass is not None and klass.regex.fullmatch("xa.py")
    assert not klass.regex.fullmatch("x1.py")


def test_the_deepest_file_with_a_matching_pattern_decides() -> None:
    stack = [("", Rules.parse(["*.log"])), ("app", Rules.parse(["!keep.log"]))]
    assert not ignore_verdict("app/keep.log", is_dir=False, stack=stack)
    assert ignore_verdict("app/x.log", is_dir=False, stack=stack)
    assert ignore_verdict("keep.log", is_dir=False, stack=stack)
    assert not ignore_verdict("app", is_dir=True, stack=stack)


def _tree(rng: random.Random, depth: int = 0) -> list[str]:
    paths = []
    for folder in rng.sample(FOLDERS, 3):
        if depth < 3 and rng.random() < 0.7:
            paths += [f"{folder}/{p}" for p in _tree(rng, depth + 1)]
    return paths + rng.sample(FILES, 4)


@pytest.mark.skipif(GIT is None, reason="git is not installed")
@pytest.mark.parametrize("seed", [0, 1])
def test_the_walk_lists_what_git_lists(seed: int, tmp_path: Path) -> None:
    assert not set(FOLDERS) & DEFAULT_IGNORED_DIRS  # those the walk skips on its own
    rng = random.Random(seed)
    for trial in range(TREES // 2):
        root = tmp_path / str(trial)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        paths = sorted(set(_tree(rng)))
        files = [p for p in paths if not any(q.startswith(p + "/") for q in paths)]
        _write(root, dict.fromkeys(files, ""))
        ignores = {"": rng.sample(PATTERNS, rng.randint(1, 5))}
        if trial % 3 == 0:
            ignores[""] = ["*", "!*.*", "!*/", *ignores[""][:1]]
        folders = sorted({f.rsplit("/", 1)[0] for f in files if "/" in f})
        for folder in rng.sample(folders, min(len(folders), 2)):
            ignores[folder] = rng.sample(PATTERNS, rng.randint(1, 3))
        if trial % 4 == 1:
            ignores[".git/info/exclude"] = rng.sample(PATTERNS, 2)
        for where, patterns in ignores.items():
            name = where if where.endswith("exclude") else f"{where}/.gitignore".lstrip("/")
            _write(root, {name: "\n".join(patterns) + "\n"})
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files", "--others", "--exclude-standard"],
            capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
        expected = sorted(p for p in listed if not p.endswith(".gitignore"))
        assert _listed(root) == expected, ignores
