from __future__ import annotations

from pathlib import Path

import pytest

from repomap.index import MatchKind, ReferenceSite, SymbolIndex
from repomap.repository import Repository
from tests.conftest import GOLDEN_REPO


@pytest.fixture
def index(home: Path) -> SymbolIndex:
    return Repository.open(GOLDEN_REPO, home=home).index


def where(lookup_matches: tuple) -> list[tuple[str, str, int]]:  # type: ignore[type-arg]
    return [(s.path, s.definition.qualified, s.definition.line) for s in lookup_matches]


def test_exact_name(index: SymbolIndex) -> None:
    found = index.find("NoteStore")
    assert found.how is MatchKind.EXACT
    assert where(found.matches) == [("notes/store.py", "NoteStore", 4)]


def test_qualified_name_and_dotted_suffix(index: SymbolIndex) -> None:
    assert where(index.find("NoteStore.get").matches) == [("notes/store.py", "NoteStore.get", 16)]
    dotted = index.find("notes.store.NoteStore.search")
    assert dotted.how is MatchKind.QUALIFIED
    assert where(dotted.matches) == [("notes/store.py", "NoteStore.search", 22)]


def test_case_insensitive(index: SymbolIndex) -> None:
    found = index.find("notestore")
    assert found.how is MatchKind.CASE_INSENSITIVE
    assert where(found.matches) == [("notes/store.py", "NoteStore", 4)]


def test_did_you_mean(index: SymbolIndex) -> None:
    found = index.find("NoteStor")
    assert found.how is MatchKind.NONE and not found.matches
    assert found.suggestions[0] == "NoteStore"
    assert index.find("zzzzqqqq").suggestions == ()


def test_kind_filter(index: SymbolIndex) -> None:
    assert where(index.find("Note", kind="class").matches) == [("notes/models.py", "Note", 7)]
    assert index.find("Note", kind="function").how is MatchKind.NONE


def test_definitions_in_a_file(index: SymbolIndex) -> None:
    assert [d.qualified for d in index.definitions_in("notes/models.py")] == [
        "MAX_TITLE",
        "Note",
        "Note.summary",
        "Note.validate",
        "NoteNotFound",
    ]
    assert index.definitions_in("missing.py") == ()


def test_enclosing_definition_of_a_line(index: SymbolIndex) -> None:
    inner = index.enclosing("notes/store.py", 20)  # `raise NoteNotFound(note_id)`
    assert inner is not None and inner.qualified == "NoteStore.get"
    klass = index.enclosing("notes/store.py", 5)  # `def __init__` line is inside NoteStore
    assert klass is not None and klass.qualified == "NoteStore.__init__"
    assert index.enclosing("notes/store.py", 2) is None
    assert index.enclosing("nope.py", 1) is None


def test_references_are_callers_with_lines(index: SymbolIndex) -> None:
    assert index.references("summary") == [
        ReferenceSite("notes/api.py", 14),
        ReferenceSite("notes/store.py", 23),
    ]
    assert index.references("NoteStore.create") == [ReferenceSite("notes/api.py", 8)]
    assert index.reference_count("slugify") == 2  # the import and the call
    assert index.defining_files("request") == {"web/http.js"}


def folded_index(sources: dict[str, str]) -> SymbolIndex:
    from repomap.tags import extract_tags  # noqa: PLC0415

    return SymbolIndex(
        {path: extract_tags(text.encode(), "python") for path, text in sources.items()}
    )


def test_case_variants_come_names_first_each_in_the_order_defined() -> None:
    index = folded_index({
        "a.py": "class Item:\n    def Get(self): ...\n",
        "b.py": "def item(): ...\nclass ITEM:\n    def get(self): ...\n",
        "c.py": "class Box:\n    pass\n",
    })  # fmt: skip
    found = index.find("iTeM")
    assert found.how is MatchKind.CASE_INSENSITIVE
    assert where(found.matches) == [("a.py", "Item", 1), ("b.py", "item", 1), ("b.py", "ITEM", 2)]
    # a qualified name in any case, after the names that fold to the same key
    assert where(index.find("item.GET").matches) == [
        ("a.py", "Item.Get", 2),
        ("b.py", "ITEM.get", 3),
    ]
    assert where(index.find("box").matches) == [("c.py", "Box", 1)]
    assert index.find("ITEM.get").how is MatchKind.EXACT


def test_an_exact_qualified_name_is_found_through_its_last_part() -> None:
    index = folded_index({"a.py": "class A:\n    class B:\n        def run(self): ...\n"})
    assert where(index.find("A.B.run").matches) == [("a.py", "A.B.run", 3)]
    assert where(index.find("B.run").matches) == [("a.py", "A.B.run", 3)]  # a dotted suffix
    assert index.find("A.run").how is MatchKind.NONE


CASE_TANGLE = {
    "a.py": "class Item:\n    def Get(self): ...\n    class Inner:\n        def get(self): ...\n",
    "b.py": "def item(): ...\nclass ITEM:\n    def get(self): ...\n    def GET(self): ...\n",
    "c.py": "class iTem:\n    def get(self): ...\nclass Box:\n    def Item(self): ...\n",
}


def folded_by_hand(index: SymbolIndex, lowered: str) -> list[tuple[str, str, int]]:
    """Case-insensitive matches as documented: the names that fold to `lowered` in the
    order first defined, each's definitions in file order; then the qualified names that
    fold to it, ordered by their name's first definition, then file order."""
    every = [(path, d) for path in index.files for d in index.definitions_in(path)]
    first = {name: at for at, name in reversed(list(enumerate(d.name for _, d in every)))}
    names = sorted({d.name for _, d in every if d.name.lower() == lowered}, key=first.__getitem__)
    found = [(p, d) for name in names for p, d in every if d.name == name]
    qualifieds: list[str] = []
    for _, d in sorted(every, key=lambda pair: first[pair[1].name]):  # stable: file order kept
        if (
            d.qualified != d.name
            and d.qualified.lower() == lowered
            and d.qualified not in qualifieds
        ):
            qualifieds.append(d.qualified)
    found += [(p, d) for q in qualifieds for p, d in every if d.qualified == q]
    return [(p, d.qualified, d.line) for p, d in found]


def test_case_insensitive_matches_are_every_name_and_qualified_name_that_folds() -> None:
    index = folded_index(CASE_TANGLE)
    every = [d for path in index.files for d in index.definitions_in(path)]
    keys = {k.lower() for d in every for k in (d.name, d.qualified)} | {"nothing", "box.nothing"}
    for lowered in sorted(keys):
        assert where(index._folded(lowered)) == folded_by_hand(index, lowered), lowered
