from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from repomap import cachefile
from repomap.constants import MAX_CACHE_FILE_BYTES

BOUND_SECONDS = 30.0


def read_bounded(path: Path) -> tuple[int, object] | None:
    """`cachefile.read`, failing the test instead of hanging it."""
    out: list[tuple[int, object] | BaseException | None] = []

    def run() -> None:
        try:
            out.append(cachefile.read(path))
        except BaseException as exc:
            out.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(BOUND_SECONDS)
    assert out, "read did not return"
    if isinstance(out[0], BaseException):
        raise out[0]
    return out[0]


def test_round_trip_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "d" / "x.bin"
    assert cachefile.read(path) is None
    cachefile.write(path, {"a": (1, b"2")}, key=7)
    assert cachefile.read(path) == (7, {"a": (1, b"2")})
    assert [p.name for p in path.parent.iterdir()] == ["x.bin"]


@pytest.mark.parametrize("kind", ["fifo", "directory", "link"])
def test_what_is_not_a_regular_file_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "x.bin"
    if kind == "fifo":
        os.mkfifo(path)  # opening it for reading would wait for a writer
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")  # reading it would never end
    with pytest.raises(cachefile.CacheError, match=r"regular file|symbolic link"):
        read_bounded(path)


def test_an_oversized_file_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "x.bin"
    with open(path, "wb") as out:
        out.truncate(MAX_CACHE_FILE_BYTES + 1)  # sparse
    with pytest.raises(cachefile.CacheError, match="larger than"):
        cachefile.read(path)


def test_write_replaces_a_link_and_a_directory(tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.write_text("keep")
    link, folder = tmp_path / "c" / "link.bin", tmp_path / "c" / "dir.bin"
    link.parent.mkdir()
    link.symlink_to(precious)
    (folder / "sub").mkdir(parents=True)
    for path in (link, folder):
        cachefile.write(path, 1)
        assert path.is_file() and not path.is_symlink() and cachefile.read(path) == (0, 1)
    assert precious.read_text() == "keep"


def test_a_cache_directory_that_is_a_link_is_neither_read_nor_written(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "repomap").mkdir()
    (tmp_path / "repomap" / "key").symlink_to(elsewhere, target_is_directory=True)
    path = tmp_path / "repomap" / "key" / "x.bin"
    with pytest.raises(OSError, match="symbolic link"):
        cachefile.write(path, 1)
    with pytest.raises(cachefile.CacheError, match="symbolic link"):
        cachefile.read(path)
    assert list(elsewhere.iterdir()) == []
