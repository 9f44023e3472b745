from __future__ import annotations

import os
from pathlib import Path

import pytest

from repomap import links
from repomap.deny import DenyList
from repomap.errors import InvalidRepoError
from repomap.files import LINKS_UNCHECKED, NOT_UTF8, resolve_root, walk_files
from tests.conftest import MakeRepo


def paths(root: Path) -> list[str]:
    return [f.path for f in walk_files(root).files]


def test_walk_lists_files_sorted_with_language(make_repo: MakeRepo) -> None:
    root = make_repo({"b.py": "x = 1\n", "a/c.go": "package a\n", "README.md": "hi\n"})
    result = walk_files(root)
    assert [(f.path, f.language) for f in result.files] == [
        ("README.md", None),
        ("a/c.go", "go"),
        ("b.py", "python"),
    ]
    assert result.files[2].size == 6


def test_gitignore_root_and_nested_are_honoured(make_repo: MakeRepo) -> None:
    root = make_repo(
        {
            ".gitignore": "*.gen.py\nsecret/\n",
            "keep.py": "",
            "x.gen.py": "",
            "secret/a.py": "",
            "pkg/.gitignore": "local_only.py\n",
            "pkg/local_only.py": "",
            "pkg/shared.py": "",
            "other/local_only.py": "",
        }
    )
    assert paths(root) == [
        ".gitignore",
        "keep.py",
        "other/local_only.py",
        "pkg/.gitignore",
        "pkg/shared.py",
    ]


def test_default_ignores_skip_dependencies_builds_and_minified(make_repo: MakeRepo) -> None:
    root = make_repo(
        {
            "node_modules/lib/index.js": "",
            ".git/config": "",
            ".venv/lib/site.py": "",
            "venv/bin/activate.py": "",
            "build/out.py": "",
            "dist/bundle.js": "",
            "vendor/dep.go": "",
            "pkg.egg-info/PKG-INFO": "",
            "static/app.min.js": "",
            "src/app.js": "",
        }
    )
    assert paths(root) == ["src/app.js"]


def test_symlinks_never_lead_outside_the_root(make_repo: MakeRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("TOKEN = 1\n")
    root = make_repo({"inside.py": "x = 1\n", "pkg/real.py": "y = 2\n"})
    (root / "escape.py").symlink_to(outside / "secret.py")
    (root / "escape_dir").symlink_to(outside, target_is_directory=True)
    (root / "alias.py").symlink_to(root / "inside.py")
    (root / "pkg_link").symlink_to(root / "pkg", target_is_directory=True)
    result = walk_files(root)
    assert [f.path for f in result.files] == ["alias.py", "inside.py", "pkg/real.py"]
    reasons = {s.path: s.reason for s in result.skipped}
    assert reasons["escape.py"] == "symlink points outside the repository"
    assert "escape_dir" not in [f.path.split("/")[0] for f in result.files]


def test_symlink_loops_and_broken_links_do_not_hang(make_repo: MakeRepo) -> None:
    root = make_repo({"a.py": ""})
    (root / "loop").symlink_to(root, target_is_directory=True)
    (root / "self.py").symlink_to(root / "self.py")
    (root / "dangling.py").symlink_to(root / "missing.py")
    result = walk_files(root)
    assert paths(root) == ["a.py"]
    reasons = {s.path: s.reason for s in result.skipped}
    assert reasons["self.py"] == reasons["dangling.py"] == "broken or looping symlink"


def test_fifo_is_not_a_file(make_repo: MakeRepo) -> None:
    root = make_repo({"a.py": ""})
    os.mkfifo(root / "pipe.py")
    assert paths(root) == ["a.py"]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: tmp / "nope", "no such directory"),
        (lambda tmp: (tmp / "f.py").write_text("x") and tmp / "f.py", "not a directory"),
    ],
)
def test_resolve_root_explains_bad_paths(tmp_path: Path, make: object, message: str) -> None:
    with pytest.raises(InvalidRepoError, match=message):
        resolve_root(make(tmp_path))  # type: ignore[operator]


def test_walk_leaves_out_denied_files_and_folders_by_default(make_repo: MakeRepo) -> None:
    root = make_repo(
        {
            "app.py": "",
            ".env.py": "",
            "credentials.py": "",
            "config/secrets.yml": "",
            "secrets/keep_out.py": "",
            "secrets.py": "",
        }
    )
    assert paths(root) == ["app.py", "secrets.py"]
    everything = [f.path for f in walk_files(root, deny=DenyList(())).files]
    assert "secrets/keep_out.py" in everything and ".env.py" in everything


def test_symlinks_are_denied_by_their_name_and_by_their_target(make_repo: MakeRepo) -> None:
    root = make_repo({"app.py": "", ".env": "", "secrets/token.py": "", "real.py": ""})
    (root / "settings_local.py").symlink_to(".env")
    (root / "token_alias.py").symlink_to("secrets/token.py")
    (root / "hop.py").symlink_to("settings_local.py")  # link -> link -> .env
    (root / "credentials.py").symlink_to("real.py")  # innocent target, denied name
    assert paths(root) == ["app.py", "real.py"]
    opened = {f.path: f.target for f in walk_files(root, deny=DenyList(())).files}
    assert opened["hop.py"] == ".env" and opened["token_alias.py"] == "secrets/token.py"


def test_hard_links_to_denied_files_are_denied(make_repo: MakeRepo) -> None:
    root = make_repo({"app.py": "", ".env": "K=1\n", ".aws/credentials": "k\n", "a.py": ""})
    os.link(root / ".env", root / "innocent.py")
    os.link(root / ".aws" / "credentials", root / "pkg.py")  # the other name is in a denied,
    (root / "via_symlink.py").symlink_to("innocent.py")  # never-walked folder
    os.link(root / "a.py", root / "b.py")  # two ordinary names: both stay
    assert paths(root) == ["a.py", "app.py", "b.py"]
    assert [f.path for f in walk_files(root, mapped_only=True).files] == ["a.py", "app.py", "b.py"]


def test_hard_link_scan_has_a_cap_and_says_so(
    make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({"a.py": "", "notes.txt": ""})
    os.link(root / "notes.txt", root / "b.py")
    monkeypatch.setattr(links, "MAX_LINK_SCAN_ENTRIES", 0)
    result = walk_files(root, mapped_only=True)  # notes.txt is not walked: b.py is scanned for
    assert [s.reason for s in result.skipped] == [LINKS_UNCHECKED]


def test_names_that_are_not_utf8_are_skipped_with_a_warning(make_repo: MakeRepo) -> None:
    root = make_repo({"ok.py": "", "pkg/fine.py": ""})
    raw = os.fsencode(root)
    (Path(os.fsdecode(raw + b"/bad\xffname.py"))).write_text("x = 1\n")
    os.mkdir(raw + b"/dir\xfe")
    (Path(os.fsdecode(raw + b"/dir\xfe/inner.py"))).write_text("")
    (root / "alias.py").symlink_to(os.fsdecode(b"bad\xffname.py"))
    result = walk_files(root)
    assert [f.path for f in result.files] == ["ok.py", "pkg/fine.py"]
    reasons = {s.path: s.reason for s in result.skipped}
    assert reasons["bad\\xffname.py"] == NOT_UTF8
    assert reasons["dir\\xfe"] == NOT_UTF8
    assert reasons["alias.py"] == f"symlink target's {NOT_UTF8}"
    assert all(s.path.encode("utf-8") for s in result.skipped)


def test_a_root_whose_path_is_not_utf8_is_refused(tmp_path: Path) -> None:
    root = os.fsencode(tmp_path) + b"/repo\xff"
    os.mkdir(root)
    with pytest.raises(InvalidRepoError, match=r"not valid UTF-8: .*repo\\xff"):
        resolve_root(os.fsdecode(root))
