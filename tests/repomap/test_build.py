from __future__ import annotations

import os
from pathlib import Path

import pytest

from repomap import build as build_module
from repomap import cache, wordsfile
from repomap.build import build
from repomap.constants import MAX_FILE_BYTES, MIN_FILES_FOR_POOL
from repomap.deny import DenyList
from repomap.spill import Spilled
from repomap.tags import file_words
from repomap.words import Words
from tests.conftest import MakeRepo

NOTE = "class Note:\n    def save(self):\n        return store(self)\n"


def all_files_in(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_cold_build_then_warm_build_parses_nothing(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo({"a.py": NOTE, "b.py": "def store(x):\n    return x\n"})
    cold = build(root, home=home)
    warm = build(root, home=home)
    assert cold.stats.parsed == 2
    assert (warm.stats.parsed, warm.stats.reused) == (0, 2)
    assert warm.tags == cold.tags
    assert [d.qualified for d in warm.tags["a.py"].definitions] == ["Note", "Note.save"]


def test_editing_one_file_reparses_only_that_file(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo({"a.py": NOTE, "b.py": "def store(x):\n    return x\n"})
    build(root, home=home)
    (root / "b.py").write_text("def store(x):\n    return x\n\n\ndef load(y):\n    return y\n")
    result = build(root, home=home)
    assert result.stats.parsed == 1
    assert [d.name for d in result.tags["b.py"].definitions] == ["store", "load"]


def test_touch_without_change_is_settled_by_content_hash(
    make_repo: MakeRepo, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({"a.py": NOTE})
    build(root, home=home)
    stat = (root / "a.py").stat()
    os.utime(root / "a.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    result = build(root, home=home)
    assert result.stats.parsed == 0
    assert result.tags["a.py"] == build(root, home=home, use_cache=False).tags["a.py"]
    hashed: list[bytes] = []
    real_digest = build_module.cache.content_digest
    monkeypatch.setattr(
        build_module.cache, "content_digest", lambda data: hashed.append(data) or real_digest(data)
    )
    again = build(root, home=home)  # the new mtime was saved: no second hashing
    assert again.stats.parsed == 0 and hashed == []


def test_same_size_edit_with_new_mtime_is_reparsed(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo({"a.py": "def aaaa():\n    pass\n"})
    build(root, home=home)
    stat = (root / "a.py").stat()
    (root / "a.py").write_text("def bbbb():\n    pass\n")
    os.utime(root / "a.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    result = build(root, home=home)
    assert [d.name for d in result.tags["a.py"].definitions] == ["bbbb"]


def test_delete_and_rename_are_seen(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo({"a.py": NOTE, "b.py": "def store(x):\n    return x\n"})
    build(root, home=home)
    (root / "b.py").unlink()
    (root / "a.py").rename(root / "renamed.py")
    result = build(root, home=home)
    assert sorted(result.tags) == ["renamed.py"]
    assert result.stats.parsed == 1
    assert sorted(build(root, home=home).tags) == ["renamed.py"]


@pytest.mark.parametrize("damage", [b"", b"garbage" * 10, None])
def test_corrupt_cache_is_detected_and_rebuilt(
    make_repo: MakeRepo, home: Path, damage: bytes | None
) -> None:
    root = make_repo({"a.py": NOTE})
    first = build(root, home=home)
    cache_file = Path(first.stats.cache_dir) / "tags.bin"
    blob = cache_file.read_bytes()
    # None: flip one byte in the middle of the payload (CRC must catch it)
    damaged = damage if damage is not None else blob[:100] + bytes([blob[100] ^ 0xFF]) + blob[101:]
    cache_file.write_bytes(damaged)
    result = build(root, home=home)
    assert result.tags == first.tags
    assert result.stats.parsed == 1
    assert any("rebuilt" in w.reason for w in result.warnings)
    assert build(root, home=home).stats.parsed == 0


def test_cache_lives_outside_the_repository(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo({"a.py": NOTE})
    before = all_files_in(root)
    result = build(root, home=home)
    assert all_files_in(root) == before
    assert Path(result.stats.cache_dir).is_relative_to(home)


def test_bad_files_become_warnings_not_errors(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo(
        {
            "ok.py": NOTE,
            "binary.py": b"\x00\x01\x02 not text",
            "big.py": "x = 1\n" * (MAX_FILE_BYTES // 6 + 10),
            "minified.js": "var a=1;" * 700_000,  # one 5.6 MB line
            "latin1.py": "def caf\xe9():\n    pass\n".encode("latin-1"),
            "broken.py": "def oops(:\n    pass\n\ndef fine():\n    pass\n",
        }
    )
    result = build(root, home=home)
    reasons = {(w.path, w.reason.split(" ")[0]) for w in result.warnings}
    assert ("binary.py", "binary") in reasons
    assert ("big.py", "larger") in reasons
    assert ("minified.js", "larger") in reasons
    assert ("latin1.py", "invalid") in reasons
    assert ("broken.py", "syntax") in reasons
    assert "fine" in [d.name for d in result.tags["broken.py"].definitions]
    assert sorted(result.tags) == ["broken.py", "latin1.py", "ok.py"]


def test_minified_line_under_size_cap_is_skipped(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo({"bundle.js": "var a=1;" * 10_000})
    result = build(root, home=home)
    assert not result.tags
    assert "minified" in result.warnings[0].reason


@pytest.mark.parametrize(
    "header",
    [
        "# Generated by the protocol buffer compiler.  DO NOT EDIT!",
        "// Code generated by stringer; DO NOT EDIT.",
        "/* Generated by Cython 0.29.36 */",
        "# @generated by a codegen tool",
    ],
)
def test_generated_code_is_skipped(make_repo: MakeRepo, home: Path, header: str) -> None:
    root = make_repo({"gen.py": f"{header}\n{NOTE}", "ok.py": NOTE})
    result = build(root, home=home)
    assert sorted(result.tags) == ["ok.py"]
    assert [(w.path, "generated" in w.reason) for w in result.warnings] == [("gen.py", True)]


def test_a_marker_past_the_header_keeps_the_file(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo({"ok.py": NOTE + "# padding\n" * 300 + "# DO NOT EDIT below\n"})
    assert sorted(build(root, home=home).tags) == ["ok.py"]


def test_unreadable_file_is_a_warning(
    make_repo: MakeRepo, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({"ok.py": NOTE, "locked.py": NOTE})
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "locked.py":
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    result = build(root, home=home)
    assert sorted(result.tags) == ["ok.py"]
    assert ("locked.py", "unreadable: Permission denied") in {
        (w.path, w.reason) for w in result.warnings
    }


def test_parallel_build_matches_serial_and_reports_progress(
    make_repo: MakeRepo, home: Path
) -> None:
    files = {
        f"pkg/m{i}.py": f"def f{i}():\n    return f{i + 1}()\n"
        for i in range(MIN_FILES_FOR_POOL + 5)
    }
    root = make_repo(files)
    seen: list[tuple[int, int]] = []
    parallel = build(
        root, home=home, use_cache=False, workers=2, progress=lambda d, t: seen.append((d, t))
    )
    serial = build(root, home=home, use_cache=False, workers=1)
    assert parallel.tags == serial.tags
    assert seen[0] == (0, len(files)) and seen[-1] == (len(files), len(files))


def test_no_cache_mode_writes_nothing(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo({"a.py": NOTE})
    build(root, home=home, use_cache=False)
    assert not home.exists()


def test_failed_cache_write_is_a_warning_and_leaves_no_debris(
    make_repo: MakeRepo, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({"a.py": NOTE})
    first = build(root, home=home)
    (root / "a.py").write_text(NOTE + "\ndef more():\n    pass\n")

    def explode(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(build_module.cache.os, "replace", explode)
    result = build(root, home=home)
    monkeypatch.undo()
    assert "more" in [d.name for d in result.tags["a.py"].definitions]
    assert any(w.reason == "cache not saved: No space left on device" for w in result.warnings)
    names = sorted(p.name for p in Path(first.stats.cache_dir).iterdir())
    assert names == ["tags.bin", "words.bin"]
    assert build(root, home=home).stats.parsed == 1


def test_a_cold_build_spills_each_files_words_and_reads_them_back_unsaved(
    make_repo: MakeRepo, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The words wait in the spill, not in memory, until saved; a failed save loses none."""
    files = {
        f"pkg/m{i}.py": f"def f{i}():\n    return g{i}('word{i} said')\n"
        for i in range(MIN_FILES_FOR_POOL + 5)
    }
    root = make_repo(files)

    def explode(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(build_module.cache.os, "replace", explode)
    result = build(root, home=home, workers=2)
    monkeypatch.undo()
    assert any(w.reason.startswith("cache not saved") for w in result.warnings)
    assert all(isinstance(result.tags.cached(p).words, Spilled) for p in files)

    def recount(path: str) -> Words:
        raise AssertionError(f"{path}: counted again")

    view = cache.WordsView(result.tags, None, recount=recount)
    counted = {path: dict(file_words((root / path).read_bytes())) for path in files}
    assert {path: dict(view[path]) for path in files} == counted


def test_deny_list_keeps_files_out(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo({"a.py": NOTE, "private/b.py": "def hidden():\n    pass\n"})
    result = build(root, home=home, deny=DenyList(("private/",)))
    assert sorted(result.tags) == ["a.py"]
    assert result.stats.files == 1


def test_a_seed_tree_lends_its_tags_to_files_of_the_same_content(
    make_repo: MakeRepo, home: Path, tmp_path: Path
) -> None:
    """Another commit's snapshot: the unchanged files are not parsed again, a changed one
    is, even at the same size and mtime (mtimes of two trees say nothing)."""
    store = "def store(x):\n    return x\n"
    old = make_repo({"a.py": NOTE, "b.py": store, "c.py": "def c():\n    return 1\n"})
    build(old, home=home)
    new = tmp_path / "new"
    new.mkdir()
    (new / "a.py").write_text(NOTE)  # the same
    (new / "b.py").write_text(store.replace("x", "y"))  # same size, other content
    (new / "d.py").write_text("def d():\n    return 2\n")  # new
    for name in ("a.py", "b.py"):  # the same mtimes as the old tree's
        stamp = (old / name).stat()
        os.utime(new / name, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    seeded = build(new, home=home, seed=old)
    assert (seeded.stats.parsed, seeded.stats.reused) == (2, 1)  # b and d parsed; a lent
    assert seeded.tags == build(new, use_cache=False).tags  # as a cold build of it says
    # a lent file's words come from the seed's words.bin, with the tags
    lent = wordsfile.StoredWords(Path(seeded.stats.cache_dir))
    assert set(lent) == {"a.py", "b.py", "d.py"}
    original = wordsfile.StoredWords(Path(build(old, home=home).stats.cache_dir))
    assert lent.read("a.py") == original.read("a.py") is not None
    assert build(new, home=home, seed=old).stats.parsed == 0  # its own cache now
    assert build(new, home=home, seed=tmp_path / "gone").stats.parsed == 0
