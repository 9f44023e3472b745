"""The escape corpus: every attempt is refused by every tool, and no output ever shows
anything from outside the root or from a secret file. Then the warm-up's order."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from diagnoser.errors import PathRefused, ToolError
from diagnoser.settings import Settings
from diagnoser.tools import find_symbol, grep, list_dir, read_range
from diagnoser.workspace import Kind, Workspace
from tests.conftest import MakeRepo
from tests.diagnoser.conftest import SECRET

ENV_SECRET = 'SECRET_TOKEN_ABC = "xyz"\ndef leak_secret_fn():\n    pass\n'

TRAVERSAL = [
    "../outside/secret.txt",
    "../../etc/passwd",
    "src/../../outside/secret.txt",
    "./../outside/secret.txt",
    "src/../../../../etc/passwd",
    "..",
    "../",
    "src/..\\..\\outside\\secret.txt",
    "..\\outside\\secret.txt",
    "src/./../../outside",
]
ABSOLUTE = [
    "/etc/passwd",
    "/etc/shadow",
    "//etc/passwd",
    "/proc/self/environ",
    "~/.ssh/id_rsa",
    "~root/.bashrc",
    "C:\\Windows\\win.ini",
    "c:/windows/win.ini",
    "%2Fetc%2Fpasswd",
    "\\\\server\\share\\secret.txt",
]
ENCODED = [
    "%2e%2e/outside/secret.txt",
    "%2e%2e%2fetc%2fpasswd",
    "..%2foutside%2fsecret.txt",
    "%2E%2E/%2E%2E/etc/passwd",
    "src/%2e%2e/%2e%2e/outside/secret.txt",
]
LOOK_ALIKES = [
    "\u2025/outside/secret.txt",  # ‥ two dot leader
    "\uff0e\uff0e/outside/secret.txt",  # fullwidth full stops
    "\uff0e\uff0e\uff0fetc\uff0fpasswd",  # fullwidth solidus too
    "\u2024\u2024/etc/passwd",  # one dot leaders
    "src/\uff0e\uff0e/\uff0e\uff0e/outside",
]
SYMLINKS = [
    "escape_link.txt",
    "sibling_link/secret.txt",
    "sibling_link",
    "etc_link/passwd",
    "etc_link",
    "zero_link",
    "env_alias",
    "loop_a",
]
NUL_AND_SIZE = [
    "src/app.py\x00.txt",
    "\x00",
    "src\x00/../../etc/passwd",
    "a/" * 600,
    "x" * 5_000,
    "y" * 300,
]
SECRETS = [
    ".env",
    ".env.local",
    "sub/.env",
    "prod.env",
    ".env.py",
    "config/secrets.yml",
    "config/credentials.json",
    "keys/server.pem",
    "keys/key.p12",
    "deploy/id_rsa",
    ".npmrc",
    ".pypirc",
    "terraform.tfstate",
    ".aws/credentials",
    ".aws",
    ".ssh/id_ed25519",
    ".git/config",
    ".git/HEAD",
    ".git",
]
DEVICES = ["fifo_pipe", "/dev/zero"]
CORPUS = TRAVERSAL + ABSOLUTE + ENCODED + LOOK_ALIKES + SYMLINKS + NUL_AND_SIZE + SECRETS + DEVICES
FORBIDDEN = (SECRET, "root:x:0:0", "[boot loader]")


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 50
    assert len(set(CORPUS)) == len(CORPUS)


@pytest.mark.parametrize("attempt", CORPUS)
def test_read_range_refuses(workspace: Workspace, attempt: str) -> None:
    with pytest.raises(ToolError) as refused:
        read_range(workspace, attempt, 1, 20)
    assert not any(word in str(refused.value) for word in FORBIDDEN)


@pytest.mark.parametrize("attempt", CORPUS)
def test_list_dir_refuses(workspace: Workspace, attempt: str) -> None:
    with pytest.raises(ToolError) as refused:
        list_dir(workspace, attempt, depth=2)
    assert not any(word in str(refused.value) for word in FORBIDDEN)


@pytest.mark.parametrize("attempt", CORPUS)
def test_grep_never_shows_outside_or_secret_content(workspace: Workspace, attempt: str) -> None:
    for pattern, fixed in (("7f3a", True), ("TOPSECRET", False), ("root:x", True)):
        result = grep(workspace, pattern, fixed=fixed, path_glob=attempt)
        assert result.total == 0
        assert not any(word in result.render() for word in FORBIDDEN)


def test_nothing_secret_or_outside_in_any_whole_repo_output(workspace: Workspace) -> None:
    outputs = [
        grep(workspace, "TOPSECRET").render(),
        grep(workspace, "token", context=2).render(),
        list_dir(workspace, ".", depth=4).render(),
        find_symbol(workspace, f"leaked_{SECRET.replace('-', '_')}").render(),
        find_symbol(workspace, "leaked").render(),
    ]
    for text in outputs:
        assert not any(word in text for word in FORBIDDEN), text
    listed = {f.path for f in workspace.files}
    assert listed == {"README.md", "alias.py", "secrets.py", "src/app.py", "src/views.py"}


@pytest.mark.parametrize(
    ("attempt", "reason"),
    [
        ("../outside/secret.txt", "'..' is not allowed"),
        ("\uff0e\uff0e/outside/secret.txt", "'..' is not allowed"),
        ("/etc/passwd", "relative to the repository root"),
        ("escape_link.txt", "leads outside the repository"),
        (".env", "secrets deny-list"),
        ("env_alias", "points at a file on the secrets deny-list"),
        ("fifo_pipe", "not a regular file"),
        ("src/app.py\x00.txt", "NUL byte"),
        ("x" * 5_000, "path longer than"),
    ],
)
def test_refusals_say_why(workspace: Workspace, attempt: str, reason: str) -> None:
    with pytest.raises(PathRefused, match=reason):
        workspace.resolve(attempt)


def test_absolute_path_inside_the_root_gets_a_hint(workspace: Workspace) -> None:
    with pytest.raises(PathRefused, match=r"use src/app\.py"):
        workspace.resolve(str(workspace.root / "src" / "app.py"))


@pytest.mark.parametrize("path", ["src/app.py", "./src/app.py", "src//app.py", "src/./app.py"])
def test_ordinary_paths_resolve(workspace: Workspace, path: str) -> None:
    resolved = workspace.resolve(path)
    assert (resolved.rel, resolved.kind) == ("src/app.py", Kind.FILE)


def test_symlink_inside_the_root_and_allowed_secret_named_code(workspace: Workspace) -> None:
    assert workspace.resolve("alias.py").rel == "src/app.py"
    assert read_range(workspace, "secrets.py").lines[0] == "def load_secrets():"


def test_missing_file_suggests_the_nearest_paths(workspace: Workspace) -> None:
    with pytest.raises(ToolError, match=r"no such file: app\.py; did you mean src/app\.py\?"):
        read_range(workspace, "app.py")
    with pytest.raises(ToolError, match=r"did you mean src/views\.py"):
        read_range(workspace, "src/view.py")


def test_directory_and_file_mixups_point_at_the_right_tool(workspace: Workspace) -> None:
    with pytest.raises(ToolError, match="is a directory; use list_dir"):
        read_range(workspace, "src")
    with pytest.raises(ToolError, match="is a file, not a directory; use read_range"):
        list_dir(workspace, "src/app.py")


def test_deny_list_is_configurable(repo: Path, tmp_path: Path) -> None:
    strict = Workspace(repo, Settings(deny_extra=("README.md",)), home=tmp_path / "h1")
    with pytest.raises(PathRefused, match="deny-list"):
        strict.resolve("README.md")
    open_ws = Workspace(repo, Settings(deny=()), home=tmp_path / "h2")
    assert open_ws.resolve("config/secrets.yml").rel == "config/secrets.yml"


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSER_READ_WINDOW_LINES", "30")
    monkeypatch.setenv("DIAGNOSER_DENY_EXTRA", '["*.sql"]')
    settings = Settings()
    assert settings.read_window_lines == 30 and settings.deny_extra == ("*.sql",)


def test_workspace_has_no_way_to_write() -> None:
    writers = {"write", "write_text", "write_bytes", "unlink", "remove", "rename", "mkdir"}
    assert not writers & set(dir(Workspace))


def test_large_and_binary_files_are_refused_with_a_reason(repo: Path, tmp_path: Path) -> None:
    (repo / "big.py").write_text("x = 1\n" * 1_000)
    (repo / "blob.py").write_bytes(b"\x00\x01binary")
    small = Workspace(repo, Settings(max_file_bytes=1_000), home=tmp_path / "h")
    with pytest.raises(ToolError, match="over the 1 kB cap; grep it instead"):
        read_range(small, "big.py")
    with pytest.raises(ToolError, match="binary file"):
        read_range(small, "blob.py")


def test_secrets_stay_out_of_the_repo_map(workspace: Workspace) -> None:
    repository = workspace.repository
    assert ".env.py" not in repository.tags
    assert SECRET.replace("-", "_") not in repository.map(tokens=2_000)
    assert sorted(repository.tags) == ["alias.py", "secrets.py", "src/app.py", "src/views.py"]


def test_a_symlink_with_an_innocent_name_stays_out_of_the_index(
    make_repo: MakeRepo, home: Path
) -> None:
    root = make_repo({"src/app.py": "def app():\n    return 1\n", ".env": ENV_SECRET})
    (root / "settings_local.py").symlink_to(".env")
    workspace = Workspace(root, home=home)
    assert not find_symbol(workspace, "leak_secret_fn").hits
    assert "SECRET_TOKEN_ABC" not in workspace.repository.map()
    assert "settings_local.py" not in workspace.file_paths
    with pytest.raises(PathRefused, match="points at a file on the secrets deny-list"):
        read_range(workspace, "settings_local.py")


def test_the_settings_rule_is_the_one_the_index_and_the_tools_apply(
    repo: Path, tmp_path: Path
) -> None:
    workspace = Workspace(repo, Settings(deny_extra=("src/views.py",)), home=tmp_path / "h")
    assert workspace.deny == Settings(deny_extra=("src/views.py",)).deny_list()
    assert "src/views.py" not in workspace.repository.tags
    assert "src/views.py" not in workspace.file_paths
    assert "src/app.py" in workspace.repository.tags
    with pytest.raises(PathRefused, match="deny-list"):
        workspace.resolve("src/views.py")


def test_hard_links_are_read_only_when_the_walk_listed_them(
    make_repo: MakeRepo, home: Path
) -> None:
    root = make_repo({"app.py": "x = 1\n", ".env": ENV_SECRET, "build/gen.py": "y = 2\n"})
    os.link(root / ".env", root / "innocent.py")
    os.link(root / "app.py", root / "copy.py")
    os.link(root / "build" / "gen.py", root / "build" / "gen_copy.py")  # an ignored folder
    workspace = Workspace(root, home=home)
    assert workspace.file_paths == {"app.py", "copy.py"}
    assert read_range(workspace, "copy.py").lines == ("x = 1",)
    for path in ("innocent.py", "build/gen_copy.py"):
        with pytest.raises(PathRefused, match="hard link to a file that is not listed"):
            read_range(workspace, path)
    assert read_range(workspace, "app.py").lines == ("x = 1",)


def test_file_names_that_are_not_utf8_cannot_break_the_tools(
    make_repo: MakeRepo, home: Path
) -> None:
    root = make_repo({"app.py": "def app():\n    return 1\n"})
    Path(os.fsdecode(os.fsencode(root) + b"/bad\xffname.py")).write_text("def bad():\n    pass\n")
    workspace = Workspace(root, home=home)
    assert workspace.file_paths == {"app.py"}
    outputs = [
        grep(workspace, ".").render(),
        list_dir(workspace, ".", depth=3).render(),
        find_symbol(workspace, "bad").render(),
        workspace.repository.map(),
    ]
    for text in outputs:
        text.encode("utf-8")  # a lone surrogate would raise here, as it did in print()
    assert "bad\\xffname.py: file name is not valid UTF-8" in outputs[-1]
    with pytest.raises(PathRefused, match="not valid UTF-8"):
        read_range(workspace, "bad\udcffname.py")


def test_a_warm_that_starts_while_another_runs_waits_for_it(make_repo: MakeRepo) -> None:
    """A job starting while the service's start-up warm still runs makes nothing beside it."""
    workspace = Workspace(make_repo({"a.py": "def f():\n    return 1\n"}))
    index = workspace.repository.index
    entered, release = threading.Event(), threading.Event()
    prepared: list[str] = []
    real_prepare = index.prepare

    def slow_prepare() -> None:
        prepared.append(threading.current_thread().name)
        entered.set()
        release.wait(10)
        real_prepare()

    index.prepare = slow_prepare  # type: ignore[method-assign]
    first = threading.Thread(target=workspace.warm, name="start-up")
    first.start()
    assert entered.wait(10)
    second = threading.Thread(target=workspace.warm, name="job")
    second.start()
    second.join(0.3)
    assert second.is_alive() and prepared == ["start-up"]  # waiting, not preparing
    release.set()
    first.join(10)
    second.join(10)
    assert not second.is_alive() and workspace.is_warm
