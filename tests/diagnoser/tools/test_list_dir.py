from __future__ import annotations

from pathlib import Path

from diagnoser.settings import Settings
from diagnoser.tools import list_dir
from diagnoser.workspace import Kind, Workspace


def test_root_listing_hides_ignored_and_denied_entries(workspace: Workspace) -> None:
    result = list_dir(workspace)
    assert [(e.path, e.kind, e.files, e.language) for e in result.entries] == [
        ("README.md", Kind.FILE, 1, None),
        ("alias.py", Kind.FILE, 1, "python"),
        ("secrets.py", Kind.FILE, 1, "python"),
        ("src", Kind.DIRECTORY, 2, "python"),
    ]
    text = result.render()
    assert text.splitlines()[0] == "./"
    assert "src/        2 files" in text
    for hidden in ("node_modules", ".git", ".env", "config", "keys", "fifo_pipe"):
        assert hidden not in text


def test_depth_nests_and_sizes_add_up(repo: Path, tmp_path: Path) -> None:
    for name in ("a.go", "b.go", "c.py"):
        (repo / "pkg" / "inner").mkdir(parents=True, exist_ok=True)
        (repo / "pkg" / "inner" / name).write_text("x" * 100)
    workspace = Workspace(repo, home=tmp_path / "h")
    result = list_dir(workspace, "pkg", depth=2)
    assert [(e.path, e.size, e.files, e.language) for e in result.entries] == [
        ("pkg/inner", 300, 3, "go"),
        ("pkg/inner/a.go", 100, 1, "go"),
        ("pkg/inner/b.go", 100, 1, "go"),
        ("pkg/inner/c.py", 100, 1, "python"),
    ]
    assert list_dir(workspace, "pkg", depth=1).entries[0].path == "pkg/inner"


def test_cap_says_how_to_see_more(repo: Path, tmp_path: Path) -> None:
    for i in range(10):
        (repo / f"m{i}.py").write_text("")
    workspace = Workspace(repo, Settings(list_max_entries=3), home=tmp_path / "h")
    result = list_dir(workspace)
    assert len(result.entries) == 3
    assert result.render().endswith(
        "(showing 3 of 14 entries — list a subfolder or lower the depth)"
    )


def test_empty_folder(repo: Path, tmp_path: Path) -> None:
    (repo / "empty").mkdir()
    result = list_dir(Workspace(repo, home=tmp_path / "h"), "empty")
    assert result.render() == "empty/ has no listed files (ignored and denied files are hidden)"
