"""The ranking as a whole: frames, then relevant files placed at a function, native
before managed, copies and tests last (`diagnoser.candidates`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnoser import candidates
from diagnoser.candidate import Source
from diagnoser.file_roles import is_peripheral
from diagnoser.workspace import Workspace
from tests.conftest import MakeRepo
from tests.diagnoser.ranking import FILES, places, rank, workspace_of


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
    ordinary = [c.path for c in rank(binding, text, title="encode of a dict is wrong")]
    crash = [c.path for c in rank(binding, text, title="encode of a dict segfaults")]
    assert ordinary == ["speedups/encoder.py", "speedups/_speedups.c"]
    assert crash == ["speedups/_speedups.c", "speedups/encoder.py"]


def test_a_native_failure_orders_nothing_when_switched_off(
    binding: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(candidates, "NATIVE_FAILURE_FIRST", False)
    text = "encode() of a dict of str values: {}\n\n```python\nencode_dict({'a': 'b'})\n```\n"
    found = [c.path for c in rank(binding, text, title="encode of a dict segfaults")]
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
