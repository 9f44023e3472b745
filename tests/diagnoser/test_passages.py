"""A repository's functions as passages in the encoder's space (`diagnoser.passages`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from diagnoser import passages
from diagnoser.encoder import Encoder, Vectors, encoder
from diagnoser.passages import (
    CACHE_FILE,
    PASSAGE_CHARS,
    PassageIndex,
    passage,
    passage_index,
    pending,
)
from diagnoser.workspace import Workspace
from repomap import Definition
from tests.conftest import MakeRepo
from tests.diagnoser.ranking import PLAYER


class Counting(Encoder):
    """The real encoder, counting the passages it is asked to embed."""

    def __init__(self, inner: Encoder) -> None:
        self.inner = inner
        self.passages: list[str] = []

    def query(self, texts: Sequence[str]) -> Vectors:
        return self.inner.query(texts)

    def passage(self, texts: Sequence[str]) -> Vectors:
        self.passages += texts
        return self.inner.passage(texts)


def _model() -> Encoder:
    model = encoder()
    assert model is not None
    return model


def _definition(qualified: str, start: int, end: int) -> Definition:
    name = qualified.rsplit(".", 1)[-1]
    return Definition(name, qualified, "method", start, start, end, f"def {name}(self):")


def test_a_passage_is_the_name_in_words_then_what_the_function_says() -> None:
    body = [
        "def save_note(self, note):",
        '    """Save the note, or say why not."""',
        "    # retry once when the disk is busy",
        '    log.debug("%s", note.id)',
        '    raise SaveError(f"Could not save {note.title}")',
    ]
    text = passage("app/notes_store.py", _definition("NoteStore.save_note", 1, 5), body)
    assert text == (
        "note store save note (notes store): Save the note, or say why not.; "
        "retry once when the disk is busy; Could not save {note.title}"
    )
    long = passage("a.py", _definition("f", 1, 2), ["def f():", f'    "{"word " * 100}"'])
    assert len(long) == PASSAGE_CHARS
    assert passage("a.py", _definition("f", 1, 1), ["def f(): return 1"]) == "f (a)"


def test_a_review_in_another_language_finds_the_function_it_is_about(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    model = _model()
    workspace = Workspace(make_repo(PLAYER), home=tmp_path / "home")
    index = passage_index(workspace, model)
    assert index.complete
    assert sorted(d.qualified for _, d in index.places) == [
        "delete_account",
        "export_playlist",
        "shuffle",
    ]  # fmt: skip  (the test file is not a place)
    review = "Die Wiedergabeliste lässt sich nicht als Datei exportieren"
    [(path, first, similarity), *_] = index.nearest(model.query([review]))
    assert (path, first.qualified) == ("player/playlists.py", "export_playlist")
    assert 0 < similarity <= 1
    [(_, first, _), *_] = index.nearest(model.query(["アカウントを削除できない"]))
    assert first.qualified == "delete_account"


def test_vectors_are_read_back_by_passage_and_only_new_ones_embedded(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    root = make_repo(PLAYER)
    home = tmp_path / "home"
    first = Counting(_model())
    assert pending(Workspace(root, home=home))  # nothing embedded yet
    passage_index(Workspace(root, home=home), first)
    assert len(first.passages) == 3
    assert not pending(Workspace(root, home=home))  # all of it in the cache directory
    caches = list(home.rglob(CACHE_FILE))
    assert len(caches) == 1
    again = Counting(_model())
    assert passage_index(Workspace(root, home=home), again).complete
    assert again.passages == []
    (root / "player" / "account.py").write_text(
        PLAYER["player/account.py"].replace("everything", "all")
    )
    changed = Counting(_model())
    assert passage_index(Workspace(root, home=home), changed).complete
    assert len(changed.passages) == 1 and "Remove the user and all" in changed.passages[0]
    assert not (root / CACHE_FILE).exists()  # never written into the repository


def test_past_its_budget_a_call_returns_and_the_rest_is_embedded_behind_it(
    make_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    many = {
        f"app/m{n}.py": "".join(f"def f{n}_{i}():\n    return {i}\n\n" for i in range(10))
        for n in range(6)
    }
    monkeypatch.setattr(passages, "BATCH", 8)
    workspace = Workspace(make_repo(many), home=tmp_path / "home")
    index = passage_index(workspace, _model(), budget=0)
    assert len(index.places) == 60
    assert index.embedded >= 8  # one batch before the budget is looked at
    deadline = time.monotonic() + 60
    while not index.complete and time.monotonic() < deadline:
        time.sleep(0.05)
    assert index.complete
    assert passage_index(workspace, _model()) is index  # one per repository
    with np.load(next((tmp_path / "home").rglob(CACHE_FILE))) as saved:
        assert len(saved["keys"]) == 60


def test_a_large_repository_lists_its_most_central_functions_up_to_the_cap(
    make_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        f"app/m{n}.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n" for n in range(5)
    }
    files["app/core.py"] = "".join(f"from app.m{n} import f\n" for n in range(5))
    monkeypatch.setattr(passages, "MAX_PASSAGES", 5)
    workspace = Workspace(make_repo(files), home=tmp_path / "home")
    index = passage_index(workspace, _model())
    assert len(index.places) == 4  # whole files only: two of two functions each
    central = [path for path, _ in workspace.repository.rank(limit=0).files]
    with_functions = [path for path in central if path != "app/core.py"]
    assert list(dict.fromkeys(path for path, _ in index.places)) == with_functions[:2]


def test_only_embedded_functions_are_ranked() -> None:
    places = tuple(("a.py", _definition(f"f{i}", i, i)) for i in range(3))
    vectors = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]], dtype=np.float32)
    ready = np.array([False, True, True])
    index = PassageIndex(places, ("", "", ""), (b"", b"", b""), vectors, ready)
    ranked = index.nearest(np.array([1.0, 0.0], dtype=np.float32))
    assert [d.qualified for _, d, _ in ranked] == ["f1", "f2"]
    assert not index.complete and index.embedded == 2
