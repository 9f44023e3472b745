"""A poisoned data directory costs a rebuild and a warning, never an error or a hang.

Each case starts from a sound cache of the golden repo, damages `tags.bin` or
`graph.bin` (valid header and CRC around bad data, or something that is not a cache file
at all), then checks that the map and the index are exactly what a clean build gives,
that a warning names the problem, and that the next open finds a sound cache again.
"""

from __future__ import annotations

import json
import marshal
import os
import resource
import subprocess
import sys
import threading
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from repomap import cachefile
from repomap.cache import GRAPH_FILE, TAGS_FILE
from repomap.constants import MAX_CACHE_FILE_BYTES
from repomap.repository import Repository
from tests.conftest import GOLDEN_REPO

PROJECT_ROOT = Path(__file__).resolve().parents[2]
BOUND_SECONDS = 60.0
"""A generous bound: these tests are about termination, not speed."""
SUBPROCESS_MEMORY = 4 << 30
"""Address-space cap of the child that meets /dev/zero: an unbounded read fails, not the box."""
DAMAGE_WORDS = ("damaged", "corrupt", "symbolic link", "not a regular file", "larger than")
OPEN_AND_MAP = """
import json, sys
from repomap.repository import Repository
repo = Repository.open(sys.argv[1])
body = repo.map().split("\\nwarnings (")[0]
found = [[s.path, s.definition.qualified, s.definition.line]
         for s in repo.index.find("NoteStore.get").matches]
print(json.dumps({"map": body, "find": found, "warnings": [w.reason for w in repo.warnings]}))
"""

STORE = "notes/store.py"
"""The file whose cache entry is damaged: it has classes, methods and references."""

Outcome = tuple[str, list[tuple[str, str]], list[tuple[str, str, int]]]
Poison = Callable[[Path], None]


def outcome(repo: Repository) -> Outcome:
    """What a user gets: the map (without its warnings, whose budget they share), a
    focused ranking, a lookup."""
    body = repo.map().split("\nwarnings (")[0]
    focused = [(d.path, d.definition.qualified) for d in repo.rank(["notes/api.py"]).definitions]
    found = repo.index.find("NoteStore.get").matches
    return body, focused, [(s.path, s.definition.qualified, s.definition.line) for s in found]


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    return outcome(Repository.open(GOLDEN_REPO, home=tmp_path_factory.mktemp("clean")))


@pytest.fixture
def cache_dir(home: Path) -> Path:
    """A sound cache of the golden repo, graph included."""
    repo = Repository.open(GOLDEN_REPO, home=home)
    assert repo.graph.size
    directory = Path(repo.stats.cache_dir)
    assert {TAGS_FILE, GRAPH_FILE} <= {p.name for p in directory.iterdir()}
    return directory


def bounded(call: Callable[[], Repository]) -> Repository:
    """`call()`, failing (not hanging) the test if it does not return in time."""
    done: list[Repository] = []
    worker = threading.Thread(target=lambda: done.append(call()), daemon=True)
    worker.start()
    worker.join(BOUND_SECONDS)
    assert done, f"no answer within {BOUND_SECONDS} s"
    return done[0]


def damage_reported(warnings: list[str]) -> list[str]:
    return [w for w in warnings if any(word in w for word in DAMAGE_WORDS)]


def assert_miss_then_sound(home: Path, clean: Outcome, expect: str) -> None:
    repo = bounded(lambda: Repository.open(GOLDEN_REPO, home=home))
    assert outcome(repo) == clean
    assert any(expect in w.reason for w in repo.warnings), repo.warnings
    again = Repository.open(GOLDEN_REPO, home=home)
    assert again.stats.reused == again.stats.files
    assert outcome(again) == clean
    assert damage_reported([w.reason for w in again.warnings]) == []


def rewrite(change: Callable[[Any], Any]) -> Poison:
    """Replace the payload with `change(payload)` behind a valid header and CRC."""

    def poison(path: Path) -> None:
        found = cachefile.read(path)
        assert found is not None
        key, payload = found
        cachefile.write(path, change(payload), key=key)

    return poison


def entry(field: int, value: object, path: str = STORE) -> Poison:
    def change(table: dict[str, tuple[object, ...]]) -> dict[str, tuple[object, ...]]:
        fields = list(table[path])
        fields[field] = value(fields[field]) if callable(value) else value
        return {**table, path: tuple(fields)}

    return rewrite(change)


def packed(change: Callable[[tuple[Any, ...]], Any]) -> Poison:
    """Replace one file's packed tags with `change(decoded tags)`, re-marshalled."""
    return entry(3, lambda blob: marshal.dumps(change(marshal.loads(blob))))


def raw(change: Callable[[bytes], bytes]) -> Poison:
    def poison(path: Path) -> None:
        path.write_bytes(change(path.read_bytes()))

    return poison


def huge_length(blob: bytes) -> bytes:
    magic, version, key, _, crc, tail, tail_crc = cachefile.HEADER.unpack_from(blob)
    header = cachefile.HEADER.pack(magic, version, key, 1 << 40, crc, tail, tail_crc)
    return header + blob[cachefile.HEADER.size :]


def oversized(path: Path) -> None:
    with open(path, "r+b") as out:  # sparse: costs no disk
        out.truncate(MAX_CACHE_FILE_BYTES + 1)


def directory(path: Path) -> None:
    path.unlink()
    (path / "inside").mkdir(parents=True)
    (path / "inside" / "file").write_text("x")


FILE_SYSTEM_CASES: dict[str, tuple[Poison, str]] = {
    "truncated": (raw(lambda blob: blob[:-10]), "corrupt"),
    "truncated header": (raw(lambda blob: blob[:7]), "truncated header"),
    "huge declared length": (raw(huge_length), "checksum mismatch"),
    "larger than the cap": (oversized, "larger than"),
    "a directory": (directory, "not a regular file"),
}
TAGS_CASES: dict[str, tuple[Poison, str]] = {
    "table is a list": (rewrite(lambda table: list(table.items())), "not a table of files"),
    "file name not text": (rewrite(lambda table: {**table, 7: ()}), "damaged entries"),
    "entry too short": (
        rewrite(lambda table: {**table, STORE: table[STORE][:3]}),
        "damaged entries",
    ),
    "size is text": (entry(0, "12"), "damaged entries"),
    "notes not text": (entry(5, (1, 2)), "damaged entries"),
    "negative count": (entry(6, -1), "damaged entries"),
    "count disagrees": (entry(6, lambda count: count + 1), "damaged"),
    "packed not marshal": (entry(3, b"\xff\x00junk"), "damaged"),
    "packed is a number": (entry(3, marshal.dumps(42)), "damaged"),
    "packed is text": (entry(3, "text"), "damaged entries"),
    "definitions are bytes": (packed(lambda t: (t[0].encode(), *t[1:])), "damaged"),
    "lines not whole numbers": (packed(lambda t: (t[0], t[1][:-1], *t[2:])), "damaged"),
    "reference names not text": (
        packed(lambda t: (t[0], t[1], (tuple(range(len(t[2][0]))), *t[2][1:]), t[3])),
        "damaged",
    ),
    "fewer reference lines": (
        packed(lambda t: (t[0], t[1], (*t[2][:2], t[2][2][:-4]), t[3])),
        "damaged",
    ),
    "syntax flag is a number": (packed(lambda t: (*t[:3], 1)), "damaged"),
}


def graph_array(name: str, change: Callable[[bytes], bytes]) -> Poison:
    return rewrite(lambda payload: {**payload, name: change(payload[name])})


def int32s(*values: int) -> bytes:
    return array("i", values).tobytes()


def one_more_definition(payload: dict[str, Any]) -> dict[str, Any]:
    """A definition the tags do not have, consistent with everything else in the graph."""
    files = array("i", payload["def_file"])
    last, count = files[-1], files.tolist().count(files[-1])
    extra = {"def_file": last, "def_index": count, "def_ident": 0, "def_line": 1, "def_link": -1}
    return {**payload, **{name: payload[name] + int32s(v) for name, v in extra.items()}}


GRAPH_CASES: dict[str, tuple[Poison, str]] = {
    "not a table": (rewrite(lambda payload: [1, 2, 3]), "graph.bin was corrupt"),
    "array missing": (
        rewrite(lambda p: {k: v for k, v in p.items() if k != "use_file"}),
        "graph.bin was corrupt",
    ),
    "array of text": (rewrite(lambda p: {**p, "def_line": "text"}), "graph.bin was corrupt"),
    "array not whole numbers": (graph_array("def_file", lambda b: b[:-1]), "graph.bin"),
    "arrays disagree in length": (graph_array("def_index", lambda b: b[:-4]), "def_index has"),
    "index out of range": (
        graph_array("def_index", lambda b: int32s(*[10**6] * (len(b) // 4))),
        "graph.bin was corrupt",
    ),
    "edge to no file": (
        graph_array("link_file", lambda b: int32s(*[-5] * (len(b) // 4))),
        "out of range",
    ),
    "weights not numbers": (
        graph_array("use_weight", lambda b: b"\xff" * len(b)),
        "weights that are not numbers",
    ),
    "paths renamed": (
        rewrite(lambda p: {**p, "paths": tuple("x" + path for path in p["paths"])}),
        "does not fit",
    ),
    "names not text": (
        rewrite(lambda p: {**p, "idents": tuple(range(len(p["idents"])))}),
        "graph.bin was corrupt",
    ),
    "more definitions than the tags": (rewrite(one_more_definition), "does not fit"),
    "definitions linked to another file": (
        graph_array("def_link", lambda b: int32s(*[0] * (len(b) // 4))),
        "a definition's link to another file or name",
    ),
    "a link's own use by another file": (
        graph_array("link_use", lambda b: int32s(*range(len(b) // 4))),
        "a link's use of another file or name",
    ),
}


@pytest.mark.parametrize("case", sorted(TAGS_CASES) + sorted(FILE_SYSTEM_CASES))
def test_poisoned_tags_file_is_a_miss(
    case: str, cache_dir: Path, home: Path, clean: Outcome
) -> None:
    poison, expect = {**TAGS_CASES, **FILE_SYSTEM_CASES}[case]
    poison(cache_dir / TAGS_FILE)
    assert_miss_then_sound(home, clean, expect)


@pytest.fixture(params=["arrays in the head", "arrays in the tail"])
def graph_file(
    request: pytest.FixtureRequest, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The golden repo's graph file. Its arrays are small, so they are in the head; with
    the tail's threshold at one byte they are where a large repository's are."""
    if request.param == "arrays in the tail":
        monkeypatch.setattr(cachefile, "TAIL_MIN_BYTES", 1)
        rewrite(lambda payload: payload)(cache_dir / GRAPH_FILE)
    return cache_dir / GRAPH_FILE


@pytest.mark.parametrize("case", sorted(GRAPH_CASES) + sorted(FILE_SYSTEM_CASES))
def test_poisoned_graph_file_is_a_miss(
    case: str, graph_file: Path, home: Path, clean: Outcome
) -> None:
    poison, expect = {**GRAPH_CASES, **FILE_SYSTEM_CASES}[case]
    poison(graph_file)
    assert_miss_then_sound(home, clean, expect)


@pytest.mark.parametrize("name", [TAGS_FILE, GRAPH_FILE])
def test_a_link_is_replaced_never_written_through(
    name: str, cache_dir: Path, home: Path, clean: Outcome, tmp_path: Path
) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text("not yours")
    (cache_dir / name).unlink()
    (cache_dir / name).symlink_to(precious)
    assert_miss_then_sound(home, clean, "symbolic link")
    assert precious.read_text() == "not yours"
    assert not (cache_dir / name).is_symlink() and (cache_dir / name).is_file()


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (SUBPROCESS_MEMORY, SUBPROCESS_MEMORY))


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero"])
def test_fifo_or_endless_file_never_hangs(
    kind: str, cache_dir: Path, home: Path, clean: Outcome
) -> None:
    targets = [cache_dir / TAGS_FILE, cache_dir / GRAPH_FILE]  # one run meets both
    for target in targets:
        target.unlink()
        if kind == "fifo":
            os.mkfifo(target)
        else:
            target.symlink_to("/dev/zero")
    # In a child with a time and memory bound: the unfixed reader blocks on the FIFO
    # for ever, and reads /dev/zero until memory runs out.
    ran = subprocess.run(
        [sys.executable, "-c", OPEN_AND_MAP, str(GOLDEN_REPO)],
        cwd=PROJECT_ROOT,
        env={**os.environ, "DIAGNOSER_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS,
        preexec_fn=_limit_memory,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    seen = json.loads(ran.stdout)
    assert (seen["map"], [tuple(f) for f in seen["find"]]) == (clean[0], clean[2])
    expect = "is not a regular file" if kind == "fifo" else "is a symbolic link"
    for name in (TAGS_FILE, GRAPH_FILE):
        assert any(w.startswith(f"{name} {expect}") for w in seen["warnings"]), seen["warnings"]
    for target in targets:  # replaced by the rebuild
        assert target.is_file() and not target.is_symlink()
    again = Repository.open(GOLDEN_REPO, home=home)
    assert again.stats.reused == again.stats.files
    assert outcome(again) == clean
    assert damage_reported([w.reason for w in again.warnings]) == []


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_cache_directory_that_is_not_a_directory_is_a_warning(
    kind: str, cache_dir: Path, home: Path, clean: Outcome, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for child in cache_dir.iterdir():
        child.unlink()
    cache_dir.rmdir()
    if kind == "link":
        cache_dir.symlink_to(elsewhere, target_is_directory=True)
    else:
        os.mkfifo(cache_dir)
    repo = bounded(lambda: Repository.open(GOLDEN_REPO, home=home))
    assert outcome(repo) == clean
    expect = "is a symbolic link" if kind == "link" else "is not a directory"
    assert any(expect in w.reason and str(cache_dir) in w.reason for w in repo.warnings)
    assert list(elsewhere.iterdir()) == []  # nothing written through the link
