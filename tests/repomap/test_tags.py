"""Tag extraction for every supported language, against the fixtures in tests/fixtures/languages."""

from __future__ import annotations

import pickle
from array import array
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from repomap.languages import LANGUAGES, language_for, query_files, query_for
from repomap.tags import (
    Definition,
    Definitions,
    FileTags,
    References,
    extract_tags,
    file_words,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "languages"
QUERIES = Path(__file__).resolve().parents[2] / "repomap" / "queries"


class Case(NamedTuple):
    language: str
    definitions: list[tuple[str, str, int, int]]
    """(qualified name, kind, name line, end line), in source order."""
    references: dict[str, int]
    """A name the file uses → one line it is used on."""


CASES: dict[str, Case] = {
    "sample.py": Case(
        "python",
        [
            ("MAX_NOTES", "constant", 6, 6),
            ("Note", "class", 10, 15),
            ("Note.render", "method", 14, 15),
            ("NoteStore", "class", 18, 27),
            ("NoteStore.__init__", "method", 19, 21),
            ("NoteStore.save", "method", 23, 27),
            ("format_note", "function", 30, 31),
        ],
        {"format_note": 15, "Note": 23},
    ),
    "sample.js": Case(
        "javascript",
        [
            ("Repository", "class", 6, 17),
            ("Repository.constructor", "method", 7, 10),
            ("Repository.load", "method", 12, 16),
            ("UserRepository", "class", 19, 23),
            ("UserRepository.findUser", "method", 20, 22),
            ("parseRecord", "function", 25, 27),
            ("formatUser", "function", 29, 31),
            ("main", "function", 33, 36),
        ],
        {
            "parseRecord": 15,  # plain call
            "load": 21,  # member call
            "Repository": 19,  # extends
            "UserRepository": 34,  # new
            "readFile": 1,  # import
            "path": 2,  # default import
        },
    ),
    "sample.ts": Case(
        "typescript",
        [
            ("Shape", "interface", 3, 6),
            ("Shape.area", "method", 4, 4),
            ("ShapeList", "type", 8, 8),
            ("Color", "enum", 10, 13),
            ("Base", "class", 15, 18),
            ("Base.area", "method", 17, 17),
            ("Circle", "class", 20, 28),
            ("Circle.constructor", "method", 21, 23),
            ("Circle.area", "method", 25, 27),
            ("square", "function", 30, 32),
            ("totalArea", "function", 34, 35),
            ("Geometry", "namespace", 37, 41),
            ("Geometry.unit", "function", 38, 40),
        ],
        {
            "square": 26,
            "Shape": 15,  # implements
            "Base": 20,  # extends
            "ShapeList": 34,  # type annotation
            "Circle": 39,  # new
            "Color": 21,  # parameter type
            "EventEmitter": 43,
            "unit": 44,
        },
    ),
    "sample.tsx": Case(
        "tsx",
        [
            ("ButtonProps", "interface", 3, 6),
            ("Theme", "type", 8, 8),
            ("Button", "function", 10, 12),
            ("Counter", "function", 14, 21),
            ("Panel", "class", 23, 27),
            ("Panel.render", "method", 24, 26),
            ("formatCount", "function", 29, 31),
        ],
        {
            "Panel": 17,  # <Panel …>
            "Button": 18,  # <Button … />
            "formatCount": 18,
            "useState": 15,
            "ButtonProps": 10,
            "Component": 23,
        },
    ),
    "Sample.java": Case(
        "java",
        [
            ("Priced", "interface", 6, 8),
            ("Priced.price", "method", 7, 7),
            ("Category", "enum", 10, 13),
            ("Sample", "class", 15, 46),
            ("Sample.Sample", "method", 18, 20),
            ("Sample.add", "method", 22, 24),
            ("Sample.total", "method", 26, 32),
            ("Sample.Item", "class", 34, 45),
            ("Sample.Item.Item", "method", 37, 39),
            ("Sample.Item.price", "method", 42, 44),
            ("Point", "class", 48, 48),
        ],
        {
            "apply": 31,
            "Discounts": 31,
            "price": 29,
            "Priced": 34,  # implements
            "Item": 22,  # parameter type
            "ArrayList": 16,  # new
            "List": 4,  # import
        },
    ),
    "sample.kt": Case(
        "kotlin",
        [
            ("Repository", "interface", 5, 7),
            ("Repository.save", "method", 6, 6),
            ("Priority", "enum", 9, 9),
            ("Note", "class", 11, 11),
            ("NoteRepository", "class", 13, 22),
            ("NoteRepository.save", "method", 16, 19),
            ("NoteRepository.latest", "method", 21, 21),
            ("Registry", "object", 24, 30),
            ("Registry.register", "method", 27, 29),
            ("NoteList", "type", 32, 32),
            ("log", "function", 34, 36),
            ("main", "function", 38, 40),
        ],
        {
            "log": 18,
            "register": 39,
            "Registry": 39,
            "Repository": 13,  # supertype
            "NoteRepository": 25,  # constructor call
            "Note": 16,
            "Instant": 3,  # import
        },
    ),
    "sample.go": Case(
        "go",
        [
            ("Saver", "interface", 9, 11),
            ("Saver.Save", "method", 10, 10),
            ("Store", "struct", 13, 15),
            ("Key", "type", 17, 17),
            ("ErrEmpty", "constant", 19, 19),  # a package-level sentinel error
            ("NewStore", "function", 21, 23),
            ("Store.Save", "method", 25, 31),
            ("Store.Len", "method", 33, 35),
            ("Describe", "function", 37, 41),
        ],
        {"NewStore": 38, "Save": 39, "Sprintf": 40, "Saver": 37, "Store": 22},
    ),
    "sample.rs": Case(
        "rust",
        [
            ("Shape", "trait", 4, 6),
            ("Shape.area", "method", 5, 5),
            ("Rect", "struct", 9, 12),
            ("Kind", "enum", 14, 17),
            ("Rect.new", "method", 20, 22),
            ("Rect.kind", "method", 24, 26),
            ("Rect.area", "method", 30, 32),
            ("Rect.fmt", "method", 36, 38),
            ("Registry", "type", 41, 41),
            ("classify", "function", 43, 45),
            ("util", "module", 47, 51),
            ("util.total", "function", 48, 50),
            ("MAX_SIDES", "constant", 53, 53),
            ("UNIT", "constant", 54, 54),
        ],
        {
            "classify": 25,
            "Shape": 29,  # impl Shape for Rect
            "Display": 35,
            "Kind": 44,  # Kind::Square
            "HashMap": 1,  # use
            "iter": 49,
            "area": 49,
        },
    ),
    "sample.rb": Case(
        "ruby",
        [
            ("Shop", "module", 3, 32),
            ("Shop.Cart", "class", 4, 25),
            ("Shop.Cart.initialize", "method", 7, 9),
            ("Shop.Cart.add", "method", 11, 14),
            ("Shop.Cart.total", "method", 16, 18),
            ("Shop.Cart.from_json", "method", 20, 24),
            ("Shop.Item", "class", 27, 31),
            ("Shop.Item.to_s", "method", 28, 30),
            ("format_price", "function", 34, 36),
        ],
        {"format_price": 29, "Logger": 13, "info": 13, "Item": 22, "add": 22, "Struct": 27},
    ),
    "Sample.cs": Case(
        "csharp",
        [
            ("Shop.Orders", "namespace", 4, 46),
            ("Shop.Orders.IOrderRepository", "interface", 6, 9),
            ("Shop.Orders.IOrderRepository.Save", "method", 8, 8),
            ("Shop.Orders.Status", "enum", 11, 11),
            ("Shop.Orders.Money", "struct", 13, 16),
            ("Shop.Orders.Customer", "class", 18, 18),
            ("Shop.Orders.Order", "class", 20, 34),
            ("Shop.Orders.Order.Order", "method", 25, 28),
            ("Shop.Orders.Order.Total", "method", 30, 33),
            ("Shop.Orders.Pricing", "class", 36, 45),
            ("Shop.Orders.Pricing.Sum", "method", 38, 44),
        ],
        {
            "Sum": 32,
            "Pricing": 32,
            "Status": 22,  # property type
            "Money": 38,  # generic argument
            "List": 23,
            "WriteLine": 42,
        },
    ),
    "sample.c": Case(
        "c",
        [
            ("MAX_ITEMS", "constant", 4, 4),  # `#define`
            ("color_t", "enum", 6, 6),
            ("color_t.RED", "constant", 6, 6),
            ("color_t.GREEN", "constant", 6, 6),
            ("buffer", "struct", 8, 11),
            ("node", "struct", 13, 16),
            ("node_t", "type", 16, 16),
            ("buffer_new", "function", 18, 24),  # returns a pointer
            ("list_sum", "function", 26, 33),
            ("main", "function", 35, 42),
        ],
        {"buffer_new": 37, "list_sum": 39, "node_t": 26, "buffer": 20, "len": 39},
    ),
    "sample.cpp": Case(
        "cpp",
        [
            ("geo", "namespace", 4, 41),
            ("geo.Unit", "enum", 6, 6),
            ("geo.Unit.Meters", "constant", 6, 6),
            ("geo.Unit.Feet", "constant", 6, 6),
            ("geo.Point", "struct", 8, 11),
            ("geo.Shape", "class", 13, 17),
            ("geo.Shape.area", "method", 16, 16),
            ("geo.Polygon", "class", 19, 27),
            ("geo.Polygon.Polygon", "method", 21, 21),
            ("geo.Polygon.area", "method", 22, 22),
            ("geo.Polygon.size", "method", 23, 23),
            (
                "geo.Polygon.area",
                "method",
                29,
                35,
            ),  # out-of-class `double Polygon::area()` in `namespace geo`
            ("geo.cross", "function", 37, 39),
            ("Polygons", "type", 43, 43),
            ("main", "function", 45, 48),
        ],
        {"cross": 32, "Shape": 19, "Point": 37, "Polygon": 46, "area": 47, "size": 31},
    ),
    "sample.php": Case(
        "php",
        [
            ("App\\Billing", "namespace", 3, 3),
            ("Payable", "interface", 7, 10),
            ("Payable.amount", "method", 9, 9),
            ("Loggable", "trait", 12, 18),
            ("Loggable.log", "method", 14, 17),
            ("Currency", "enum", 20, 24),
            ("Invoice", "class", 26, 39),
            ("Invoice.__construct", "method", 30, 32),
            ("Invoice.amount", "method", 34, 38),
            ("round_money", "function", 41, 44),
        ],
        {
            "round_money": 37,
            "log": 36,
            "write": 16,
            "Logger": 16,
            "Payable": 26,
            "Loggable": 28,
            "Invoice": 46,
            "Currency": 30,
        },
    ),
    "sample.swift": Case(
        "swift",
        [
            ("Drawable", "interface", 3, 5),
            ("Drawable.draw", "method", 4, 4),
            ("Direction", "enum", 7, 10),
            ("Point", "struct", 12, 15),
            ("Canvas", "class", 17, 27),
            ("Canvas.init", "method", 20, 22),
            ("Canvas.draw", "method", 24, 26),
            ("Point.distance", "method", 30, 32),  # from `extension Point`
            ("PointList", "type", 35, 35),
            ("describe", "function", 37, 39),
        ],
        {"describe": 25, "draw": 42, "Drawable": 17, "Point": 30, "Canvas": 41, "map": 25},
    ),
}


def _tags(filename: str) -> tuple[str, FileTags]:
    path = FIXTURES / filename
    language = language_for(str(path))
    assert language is not None
    return language, extract_tags(path.read_bytes(), language)


def test_every_language_has_a_case() -> None:
    covered = {case.language for case in CASES.values()}
    assert covered == set(LANGUAGES)
    assert sorted(p.name for p in FIXTURES.iterdir()) == sorted(CASES)


@pytest.mark.parametrize("filename", sorted(CASES))
def test_definitions(filename: str) -> None:
    case = CASES[filename]
    language, tags = _tags(filename)
    assert language == case.language
    assert not tags.syntax_error
    got = [(d.qualified, d.kind, d.line, d.end_line) for d in tags.definitions]
    assert got == case.definitions


@pytest.mark.parametrize("filename", sorted(CASES))
def test_references(filename: str) -> None:
    _, tags = _tags(filename)
    for name, line in CASES[filename].references.items():
        assert line in tags.references.get(name, ()), f"{name} not referenced on line {line}"


@pytest.mark.parametrize(
    ("filename", "absent"),
    [
        # locals, parameters, HTML elements, and names every file of the language uses
        ("sample.js", {"JSON", "Map", "user", "repo"}),
        ("sample.ts", {"Math", "Array", "x", "shapes"}),
        ("sample.tsx", {"div", "button", "count"}),
        ("Sample.java", {"Override", "sum"}),
        ("sample.kt", {"String", "println", "mutableListOf", "item"}),
        ("sample.go", {"string", "int", "byte", "error", "len", "make", "key"}),
        ("sample.rs", {"write", "Self", "String", "f64"}),
        ("sample.rb", {"require", "attr_reader", "new", "row"}),
        ("Sample.cs", {"Console", "System", "Collections", "total"}),
        ("sample.c", {"printf", "malloc", "free", "sum"}),
        ("sample.cpp", {"std", "vector", "size_t", "static_cast", "i"}),
        ("sample.swift", {"String", "Double", "print", "other"}),
    ],
)
def test_noise_is_not_referenced(filename: str, absent: set[str]) -> None:
    _, tags = _tags(filename)
    assert absent.isdisjoint(tags.references)


def test_signature_and_start_line() -> None:
    _, tags = _tags("Sample.java")
    price = next(d for d in tags.definitions if d.qualified == "Sample.Item.price")
    assert (price.start_line, price.line) == (41, 42)  # the annotation opens the definition
    assert price.signature == "public double price() {"


def test_words_count_the_whole_text_comments_and_strings_too() -> None:
    source = b'/* Parse a date. */\nfn parse_date(s: &str) { fail("bad date: {}", s) }\n'
    tags, said = extract_tags(source, "rust"), file_words(source)
    assert said["date"] == 3 and said["parse_date"] == 1 and said["bad"] == 1
    assert "bad" not in tags.references and "str" in said


def test_kotlin_extension_functions_are_qualified_by_receiver() -> None:
    source = b"fun String.shout(): String = uppercase()\n\nfun plain() {}\n"
    tags = extract_tags(source, "kotlin")
    assert [(d.qualified, d.kind) for d in tags.definitions] == [
        ("String.shout", "method"),
        ("plain", "function"),
    ]


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_every_query_compiles(language: str) -> None:
    assert query_for(language).pattern_count > 0


def test_every_query_file_belongs_to_a_language() -> None:
    used = {name for language in LANGUAGES for name in query_files(language)}
    assert {p.stem for p in QUERIES.glob("*.scm")} == used


@pytest.mark.parametrize(
    ("language", "source", "expected"),
    [
        (
            "python",
            b"class Kept:\n    def ok(self):\n        return 1\n\ndef broken(:\n    pass\n",
            "Kept.ok",
        ),
        (
            "javascript",
            b"class Kept {\n  ok() { return 1; }\n}\n\nfunction broken( {\n",
            "Kept.ok",
        ),
        ("go", b"package p\n\nfunc Kept() int { return 1 }\n\nfunc broken( {\n", "Kept"),
    ],
)
def test_syntax_error_gives_best_effort_tags(language: str, source: bytes, expected: str) -> None:
    tags = extract_tags(source, language)
    assert tags.syntax_error
    assert expected in {d.qualified for d in tags.definitions}


@given(
    st.dictionaries(
        st.sampled_from(["a", "save", "get_x", "QuerySet", "é"]),
        st.sets(st.integers(1, 10_000), min_size=1, max_size=5),
    )
)
def test_packed_references_answer_as_the_dict_they_pack(found: dict[str, set[int]]) -> None:
    references = References.from_lines(found)
    expected = {name: tuple(sorted(lines)) for name, lines in found.items()}
    assert dict(references.uses()) == expected
    assert {name: references[name] for name in references} == expected
    assert references.get("missing") is None and "missing" not in references
    with pytest.raises(KeyError):
        references["missing"]


_DEFINITION = st.builds(
    Definition,
    name=st.sampled_from(["save", "Note", "é", "get_x"]),
    qualified=st.sampled_from(
        ["save", "Note.save", "a.b.c", "", "=Note.save", ".save", "Note.", "=", "Notesave", "é.é"]
    ),
    kind=st.sampled_from(["function", "method", "class"]),
    line=st.integers(1, 100_000),
    start_line=st.integers(1, 100_000),
    end_line=st.integers(1, 100_000),
    signature=st.text(alphabet=st.characters(blacklist_characters="\0"), max_size=30),
)


@given(st.lists(_DEFINITION, max_size=6))
def test_packed_definitions_answer_as_the_tuple_they_pack(found: list[Definition]) -> None:
    definitions = Definitions.of(found)
    assert len(definitions) == len(found) and list(definitions) == found
    assert [definitions[i] for i in range(len(found))] == found  # one at a time, any order
    assert [definitions[-i - 1] for i in range(len(found))] == found[::-1]
    assert definitions[1:3] == tuple(found[1:3]) and definitions == tuple(found)
    assert pickle.loads(pickle.dumps(definitions)) == definitions
    assert list(definitions.names_and_lines()) == [(d.name, d.line) for d in found]
    assert list(definitions.spans()) == [(d.line, d.start_line, d.end_line) for d in found]
    with pytest.raises(IndexError):
        definitions[len(found)]


def test_packed_definitions_keep_a_qualified_name_without_the_name_it_ends_in() -> None:
    method = Definition("save", "Note.save", "method", 3, 3, 4, "def save(self):")
    function = Definition("save", "save", "function", 9, 9, 9, "def save():")
    odd = Definition("save", "=Note.save", "method", 1, 1, 1, "")  # kept whole, marked
    texts, _ = Definitions.of([method, function, odd]).packed()
    assert texts.split("\0") == [
        "save", "Note.", "method", "def save(self):",
        "save", "", "function", "def save():",
        "save", "==Note.save", "method", "",
    ]  # fmt: skip
    assert list(Definitions.of([method, function, odd])) == [method, function, odd]


def test_a_definition_shares_its_name_with_every_other_of_that_name() -> None:
    """Made on demand, a definition's name is still one string across files."""
    one = extract_tags(b"def handle_request_now():\n    pass\n", "python").definitions[0]
    two = extract_tags(b"def handle_request_now(x):\n    pass\n", "python").definitions[0]
    assert one.name is two.name and one.qualified is one.name


def test_packed_definitions_hash_as_the_tuple_they_equal() -> None:
    found = extract_tags(b"class A:\n    def f(self):\n        pass\n", "python").definitions
    assert found == tuple(found) and hash(found) == hash(tuple(found))


@pytest.mark.parametrize("last_line", [65_535, 65_536, 4_000_000])
def test_line_numbers_and_counts_keep_their_values_in_whichever_width_holds_them(
    last_line: int,
) -> None:
    """Held in two bytes while they fit (they nearly always do), else in four: the same
    values and the same packed uint32 form either way."""
    references = References.from_lines({"total": {3, last_line}, "rate": {7}})
    assert references["total"] == (3, last_line) and references["rate"] == (7,)
    assert dict(references.counts()) == {"total": 2, "rate": 1}
    names, counts, lines = references.packed()
    assert lines == array("I", [3, last_line, 7]).tobytes()
    assert References(names, counts, lines) == references
    assert pickle.loads(pickle.dumps(references)) == references
    definition = Definition("f", "f", "function", last_line, 2, last_line, "def f():")
    definitions = Definitions.of([definition])
    assert definitions[0] == definition and list(pickle.loads(pickle.dumps(definitions))) == [
        definition
    ]
    assert Definitions(*definitions.packed(), 1) == definitions
    width = 2 if last_line < 1 << 16 else 4
    assert references._numbers.itemsize == definitions._lines.itemsize == width  # held
