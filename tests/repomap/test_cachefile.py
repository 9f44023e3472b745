from __future__ import annotations

import marshal
import os
import threading
import tracemalloc
import zlib
from pathlib import Path

import pytest

from repomap import cachefile
from repomap.constants import CACHE_FORMAT_VERSION, MAX_CACHE_FILE_BYTES

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


BIG = 1 << 20


def test_large_top_level_bytes_go_to_the_tail_and_come_back_equal(tmp_path: Path) -> None:
    path = tmp_path / "x.bin"
    big, small = bytes(range(256)) * (BIG // 256), b"\x01" * 10
    cachefile.write(path, {"big": big, "small": small, "names": ("a", "b")}, key=3)
    assert path.stat().st_size < 2 * BIG  # written once, not once per copy
    key, payload = cachefile.read(path) or (0, {})
    assert key == 3 and payload == {"big": big, "small": small, "names": ("a", "b")}
    assert type(payload["big"]) is bytearray and type(payload["small"]) is bytes


def test_reading_a_tail_allocates_it_once(tmp_path: Path) -> None:
    """The tail is read straight into its buffer: no whole-file bytes, no marshal copy."""
    path = tmp_path / "x.bin"
    cachefile.write(path, {"a": b"\x07" * (8 * BIG), "b": b"\x09" * (8 * BIG)})
    tracemalloc.start()
    try:
        found = cachefile.read(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found is not None and len(found[1]["a"]) == 8 * BIG
    assert peak < 17 * BIG  # the two arrays themselves, and next to nothing else


@pytest.mark.parametrize(
    ("where", "expect"),
    [(-1, "checksum mismatch"), (-BIG, "checksum mismatch"), ("cut", "checksum mismatch")],
)
def test_a_damaged_tail_is_refused(tmp_path: Path, where: int | str, expect: str) -> None:
    path = tmp_path / "x.bin"
    cachefile.write(path, {"a": b"\x00" * (2 * BIG)})
    blob = bytearray(path.read_bytes())
    if where == "cut":
        del blob[-5:]
    else:
        blob[where] ^= 0xFF
    path.write_bytes(bytes(blob))
    with pytest.raises(cachefile.CacheError, match=expect):
        cachefile.read(path)


def test_a_tail_table_that_lies_is_refused(tmp_path: Path) -> None:
    """A head whose table of tail parts does not add up (written with a valid CRC)."""
    path = tmp_path / "x.bin"
    head = marshal.dumps(({}, (("a", 1 << 40),)))
    header = cachefile.HEADER.pack(
        cachefile.MAGIC, CACHE_FORMAT_VERSION, 0, len(head), zlib.crc32(head), 4, 0
    )
    path.write_bytes(header + head + b"\0\0\0\0")
    with pytest.raises(cachefile.CacheError, match="disagrees"):
        cachefile.read(path)


def test_a_stream_is_written_from_its_chunks_and_read_back_by_ranges(tmp_path: Path) -> None:
    path = tmp_path / "x.bin"
    chunks = [b"abc", b"", b"defgh", b"\x00" * BIG]
    stream = cachefile.Stream(sum(map(len, chunks)), iter(chunks))
    cachefile.write(path, {"index": (1, 2), "part": stream, "small": b"s"}, key=5)
    # the same file a whole read takes, its CRCs and all
    assert cachefile.read(path) == (5, {"index": (1, 2), "part": b"".join(chunks), "small": b"s"})
    ranges = cachefile.open_ranges(path)
    assert ranges is not None and ranges.payload == {"index": (1, 2), "small": b"s"}
    assert ranges.parts == {"part": 8 + BIG}
    assert ranges.read("part", 3, 5) == b"defgh" and ranges.read("part", 0, 0) == b""
    for start, length in [(-1, 2), (8 + BIG, 1), (BIG, 9)]:
        with pytest.raises(cachefile.CacheError, match="outside"):
            ranges.read("part", start, length)
    with pytest.raises(cachefile.CacheError, match="outside"):
        ranges.read("index", 0, 1)
    ranges.close()


def test_a_stream_that_breaks_its_length_leaves_no_file(tmp_path: Path) -> None:
    path = tmp_path / "x.bin"
    with pytest.raises(ValueError, match="3 bytes, said 4"):
        cachefile.write(path, {"part": cachefile.Stream(4, [b"abc"])})
    assert list(tmp_path.iterdir()) == []


def test_ranges_of_a_file_that_shrank_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.bin"
    cachefile.write(path, {"part": cachefile.Stream(BIG, [bytes(BIG)])})
    ranges = cachefile.open_ranges(path)
    assert ranges is not None
    os.truncate(path, path.stat().st_size - 10)
    with pytest.raises(cachefile.CacheError, match="truncated"):
        ranges.read("part", BIG - 20, 20)
    assert ranges.read("part", 0, 20) == bytes(20)


def test_ranges_of_a_damaged_head_are_refused_and_close_the_file(tmp_path: Path) -> None:
    path = tmp_path / "x.bin"
    cachefile.write(path, {"part": cachefile.Stream(3, [b"abc"])})
    blob = bytearray(path.read_bytes())
    blob[cachefile.HEADER.size] ^= 0xFF
    path.write_bytes(bytes(blob))
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(cachefile.CacheError, match=r"x\.bin was corrupt"):
        cachefile.open_ranges(path)
    assert len(os.listdir("/proc/self/fd")) == before
    assert cachefile.open_ranges(tmp_path / "none.bin") is None


def test_a_part_left_in_its_file_is_checked_and_read_a_range_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "x.bin"
    left, kept = os.urandom(BIG + 5), b"k" * BIG
    cachefile.write(path, {"left": left, "kept": kept, "small": b"s"}, key=5)
    before = len(os.listdir("/proc/self/fd"))
    found = cachefile.read(path, leave=frozenset({"left", "small"}))
    assert found is not None
    key, payload = found
    part = payload["left"]
    assert key == 5 and payload["kept"] == kept and payload["small"] == b"s"  # in the head
    assert isinstance(part, cachefile.Part) and len(part) == BIG + 5
    assert part.read(BIG, 5) == left[BIG:] and b"".join(part.chunks()) == left
    assert len(os.listdir("/proc/self/fd")) == before + 1  # open while the part lives
    path.unlink()  # what it reads is the file it was read from
    assert part.read(0, 3) == left[:3]
    del part, payload, found
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_damaged_part_left_in_its_file_is_refused_and_closes_it(tmp_path: Path) -> None:
    path = tmp_path / "x.bin"
    cachefile.write(path, {"left": bytes(BIG), "kept": bytes(BIG)}, key=5)
    blob = bytearray(path.read_bytes())
    blob[-BIG - 1] ^= 0xFF  # the last byte of `left`, written first
    path.write_bytes(bytes(blob))
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(cachefile.CacheError, match="checksum mismatch"):
        cachefile.read(path, leave=frozenset({"left"}))
    assert len(os.listdir("/proc/self/fd")) == before
