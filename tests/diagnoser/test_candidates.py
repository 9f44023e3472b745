"""Where the candidates point, on a small repository with known call chains."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnoser import candidates, crash_site
from diagnoser.candidate import Candidate, Source
from diagnoser.candidates import (
    MAX_CANDIDATES,
    headline,
    is_guard_name,
    rank_candidates,
)
from diagnoser.file_roles import is_peripheral
from diagnoser.intake import ReportIn
from diagnoser.intake.intake import build_report
from diagnoser.workspace import Workspace
from tests.conftest import MakeRepo

FILES = {
    "app/utils.py": (
        "def check_positive(value):\n"  # 1
        "    if value <= 0:\n"
        '        raise ValueError("must be positive")\n'
        "    return value\n"
    ),
    "app/stackplot.py": (
        "from app.utils import check_positive\n"  # 1
        "\n"
        "\n"
        "def stackplot(axes, values):\n"  # 4
        "    check_positive(len(values))\n"  # 5
        "    return axes.draw(values)\n"
    ),
    "app/axes.py": (
        "from app.stackplot import stackplot\n"  # 1
        "\n"
        "\n"
        "class Axes:\n"  # 4
        "    def plot(self, values):\n"  # 5
        "        return stackplot(self, values)\n"  # 6
        "\n"
        "    def draw(self, values):\n"  # 8
        "        return self.canvas.paint(values)\n"  # 9
    ),
    "app/mail.py": (
        "def notify(share):\n"  # 1
        "    return share.recipient.email\n"  # 2
        "\n"
        "\n"
        "def banner(self):\n"  # 5
        "    return self.owner.name\n"  # 6
        "\n"
        "\n"
        "def greet(recipient):\n"  # 9
        '    return "Hi " + recipient.email\n'  # 10
    ),
    "app/service.py": (
        "from app.mail import greet, notify\n"  # 1
        "\n"
        "\n"
        "def share_note(users, email, share):\n"  # 4
        "    share.recipient = users.get(email)\n"  # 5
        "    return notify(share)\n"  # 6
        "\n"
        "\n"
        "def welcome(users, email):\n"  # 9
        "    return greet(users.get(email))\n"  # 10
    ),
    "app/cart.py": (
        "def cart_size(cart):\n"  # 1
        "    return cart.items.count\n"  # 2
        "\n"
        "\n"
        "def checkout(cart):\n"  # 5
        "    return cart_size(cart)\n"  # 6
    ),
    "app/common/dom.py": "def build_node(tag):\n    return tag.upper() + 1\n",
    "app/forms.py": (
        "def require_amount(amount):\n"  # 1
        "    if amount is None:\n"  # 2
        '        raise ValueError("amount")\n'  # 3
    ),
    "app/render.py": (
        "from app.common.dom import build_node\n"  # 1
        "from app.forms import require_amount\n"  # 2
        "\n"
        "\n"
        "def render(tag, amount):\n"  # 5
        "    require_amount(amount)\n"  # 6
        "    return build_node(tag)\n"  # 7
    ),
    "app/orders.py": (
        "class Order:\n"  # 1
        "    def resize(self, size):\n"  # 2
        "        if size < 0:\n"  # 3
        "            raise ValueError(size)\n"  # 4
        "        self.size = size\n"  # 5
    ),
    "app/checkout.py": (
        "from app.orders import Order\n"  # 1
        "\n"
        "\n"
        "def place(order, size):\n"  # 4
        "    return order.resize(size - 10)\n"  # 5
    ),
    "app/charts.py": "def draw_chart(series):\n    return [point.value for point in series]\n",
    "app/assets/charts.js": (
        "function drawChart(series){return series.map(function(point){return point.value})}"
        + ";var padding=0" * 100
        + "\n"
    ),
    "app/static/vendor_js/lib/chart-2.9.4.js": (
        "function drawChart(series) { return series.map(function (point) {"
        " return point.value; }); }\n"
    ),
    "app/billing.py": "def invoice_total(lines):\n    return sum(line.amount for line in lines)\n",
    "app/pages.py": (
        "class Pager:\n"  # 1
        "    def page_count(self, total, per_page):\n"  # 2
        "        return max(1, total // per_page)\n"  # 3
        "\n"
        "    def page(self, total, number, per_page):\n"  # 5
        "        pages = self.page_count(total, per_page)\n"  # 6
        "        if number > pages:\n"  # 7
        "            raise IndexError(number)\n"  # 8
        "        return number\n"  # 9
    ),
    "app/exporter.py": (
        "import json\n"
        "\n"
        "\n"
        "class Exporter:\n"
        "    def __init__(self, rows):\n"
        "        self.rows = rows\n"
        "\n"
        "    def to_csv(self):\n"
        '        return ",".join(self.rows)\n'
        "\n"
        "    def to_json(self):\n"
        "        return json.dumps(self.rows)\n"
    ),
    "tests/test_billing.py": "def test_invoice_total():\n    assert invoice_total([]) == 0\n",
    "examples/invoice_demo.py": "def invoice_total_demo():\n    return invoice_total([])\n",
}


def trace(*frames: tuple[str, int, str], error: str) -> str:
    lines = ["Traceback (most recent call last):"]
    lines += [
        f'  File "/srv/project/{path}", line {line}, in {name}' for path, line, name in frames
    ]
    return "\n".join([*lines, error, ""])


def workspace_of(files: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    root = tmp_path_factory.mktemp("repo")
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return Workspace(root, home=tmp_path_factory.mktemp("home"))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return workspace_of(FILES, tmp_path_factory)


def rank(
    workspace: Workspace, text: str, title: str | None = None, *, limit: int = MAX_CANDIDATES
) -> list[Candidate]:
    index = workspace.repository.index
    report = build_report(ReportIn(text=text, title=title), files=index.files, index=index)
    return rank_candidates(report, workspace, limit=limit)


def places(found: list[Candidate]) -> list[tuple[str, str | None, Source]]:
    return [(c.path, c.symbol, c.source) for c in found]


PLOT_TRACE = trace(
    ("app/axes.py", 6, "plot"),
    ("app/stackplot.py", 5, "stackplot"),
    ("app/utils.py", 3, "check_positive"),
    error="ValueError: must be positive",
)


def test_frames_come_first_with_an_input_check_after_the_others(workspace: Workspace) -> None:
    found = rank(workspace, PLOT_TRACE)
    assert places(found)[:3] == [
        ("app/stackplot.py", "stackplot", Source.FRAME),
        ("app/axes.py", "Axes.plot", Source.FRAME),
        ("app/utils.py", "check_positive", Source.FRAME),
    ]
    assert found[0].line == 5 and found[0].start == 4
    assert "input check" in found[2].reason


def test_an_input_check_goes_after_its_caller_wherever_it_lives(workspace: Workspace) -> None:
    found = rank(
        workspace,
        trace(("app/render.py", 6, "render"), ("app/forms.py", 3, "require_amount"),
              error="ValueError: amount"),
    )  # fmt: skip
    assert [c.symbol for c in found[:2]] == ["render", "require_amount"]


def test_a_check_that_crashes_on_a_null_value_is_not_sent_after_its_caller(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = workspace_of(
        {
            "app/validate.py": "def validate_form(form):\n    return form.fields.count > 0\n",
            "app/submit.py": (
                "from app.validate import validate_form\n\n\n"
                "def submit(form):\n    validate_form(form)\n    return form\n"
            ),
        },
        tmp_path_factory,
    )
    text = trace(
        ("app/submit.py", 5, "submit"),
        ("app/validate.py", 2, "validate_form"),
        error="AttributeError: 'NoneType' object has no attribute 'count'",
    )
    found = rank(workspace, text)
    assert [c.symbol for c in found[:2]] == ["validate_form", "submit"]
    assert found[0].reason == "where it failed: the innermost in-app frame"
    monkeypatch.setattr(candidates, "GUARD_NOT_WHEN_IT_CRASHED", False)
    assert [c.symbol for c in rank(workspace, text)[:2]] == ["submit", "validate_form"]


def test_a_raise_under_a_parameter_test_stays_first_unless_switched_on(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = trace(
        ("app/checkout.py", 5, "place"), ("app/orders.py", 4, "resize"), error="ValueError: -10"
    )
    assert [c.symbol for c in rank(workspace, text)[:2]] == ["Order.resize", "place"]
    monkeypatch.setattr(candidates, "ARGUMENT_CHECK_PENALTY", 1.0)
    assert [c.symbol for c in rank(workspace, text)[:2]] == ["place", "Order.resize"]


def test_a_frame_in_a_common_folder_is_product_code(workspace: Workspace) -> None:
    found = rank(
        workspace,
        trace(("app/render.py", 7, "render"), ("app/common/dom.py", 2, "build_node"),
              error="TypeError: can only concatenate str (not \"int\") to str"),
    )  # fmt: skip
    assert [c.symbol for c in found[:2]] == ["build_node", "render"]
    assert found[0].reason == "where it failed: the innermost in-app frame"


def test_the_headline_lifts_the_frame_it_is_about(workspace: Workspace) -> None:
    found = rank(workspace, PLOT_TRACE, title="Axes.plot fails for an empty list")
    assert [c.path for c in found[:2]] == ["app/axes.py", "app/stackplot.py"]


def test_a_frame_whose_code_moved_points_at_the_definition_it_names(
    workspace: Workspace,
) -> None:
    moved = trace(("app/axes.py", 9, "plot"), error="ValueError: must be positive")
    [first, *_] = rank(workspace, moved)
    assert (first.path, first.symbol, first.line) == ("app/axes.py", "Axes.plot", 5)
    assert "the code has moved since" in first.reason


def test_a_guarded_raise_points_at_what_computed_the_guarded_value(workspace: Workspace) -> None:
    found = rank(workspace, trace(("app/pages.py", 8, "page"), error="IndexError: 3"))
    assert places(found)[:2] == [
        ("app/pages.py", "Pager.page", Source.FRAME),
        ("app/pages.py", "Pager.page_count", Source.DATAFLOW),
    ]
    assert found[1].reason == "computes `page_count(…)`, which the failing check at line 8 tests"
    unguarded = rank(workspace, trace(("app/pages.py", 3, "page_count"), error="ZeroDivisionError"))
    assert all(c.source is not Source.DATAFLOW for c in unguarded)


def test_a_null_argument_puts_the_caller_first(workspace: Workspace) -> None:
    found = rank(
        workspace,
        trace(
            ("app/service.py", 10, "welcome"),
            ("app/mail.py", 10, "greet"),
            error="AttributeError: 'NoneType' object has no attribute 'email'",
        ),
    )
    assert [c.symbol for c in found[:2]] == ["welcome", "greet"]
    assert found[0].reason.startswith("passes the missing value on")
    assert found[1].reason == "where it failed: the innermost in-app frame"


def test_a_null_field_of_an_argument_keeps_the_crash_site_first(workspace: Workspace) -> None:
    found = rank(
        workspace,
        trace(
            ("app/cart.py", 6, "checkout"),
            ("app/cart.py", 2, "cart_size"),
            error="AttributeError: 'NoneType' object has no attribute 'count'",
        ),
    )  # `cart.items.count`: the missing value is the field read right there
    assert [c.symbol for c in found[:2]] == ["cart_size", "checkout"]


def test_a_null_field_the_caller_sets_puts_the_caller_first(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = trace(
        ("app/service.py", 6, "share_note"),
        ("app/mail.py", 2, "notify"),
        error="AttributeError: 'NoneType' object has no attribute 'email'",
    )  # `share.recipient.email`, and share_note sets `share.recipient = …`
    assert [c.symbol for c in rank(workspace, text)[:2]] == ["share_note", "notify"]
    monkeypatch.setattr(crash_site, "_sets_field", lambda caller, field, workspace: False)
    assert [c.symbol for c in rank(workspace, text)[:2]] == ["notify", "share_note"]


def test_a_null_attribute_of_self_keeps_the_crash_site_first(workspace: Workspace) -> None:
    found = rank(
        workspace,
        trace(
            ("app/service.py", 6, "share_note"),
            ("app/mail.py", 6, "banner"),
            error="AttributeError: 'NoneType' object has no attribute 'name'",
        ),
    )
    assert [c.symbol for c in found[:2]] == ["banner", "share_note"]


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


def test_a_headline_that_only_repeats_the_exception_says_nothing(workspace: Workspace) -> None:
    index = workspace.repository.index
    text = "AttributeError: 'NoneType' object has no attribute 'email'\n" + trace(
        ("app/mail.py", 2, "notify"),
        error="AttributeError: 'NoneType' object has no attribute 'email'",
    )
    report = build_report(ReportIn(text=text), files=index.files, index=index)
    assert headline(report) == ""
    titled = build_report(
        ReportIn(text=text, title="Sharing a note crashes"), files=index.files, index=index
    )
    assert headline(titled) == "Sharing a note crashes"


def test_the_exception_line_is_the_headline_when_no_frame_is_in_the_repository(
    workspace: Workspace,
) -> None:
    index = workspace.repository.index
    error = "TypeError: Exporter.to_csv() got an unexpected keyword argument 'sep'"
    text = f"{error}\n" + trace(
        ("/usr/lib/python3/dist-packages/tool/main.py", 9, "run"), error=error
    )
    report = build_report(ReportIn(text=text), files=index.files, index=index)
    assert report.exception is not None and not any(m.in_app for m in report.frames)
    assert headline(report) == error


def test_a_guard_is_named_for_checking_its_input() -> None:
    for name in ("check_array", "_check_sample_weight", "Validate.notNull", "requireNonNull",
                 "assertIsValid", "ensure_str", "Form._validate_unique", "verify"):  # fmt: skip
        assert is_guard_name(name), name
    for name in ("checkout", "requirements", "Validator.build", "render", "assertion_text"):
        assert not is_guard_name(name), name


def test_vendored_and_minified_files_do_not_rank_first(workspace: Workspace) -> None:
    found = rank(workspace, "drawChart draws the wrong point value for a series", limit=10)
    paths = [c.path for c in found]
    assert paths[0] == "app/charts.py"
    assert paths.index("app/static/vendor_js/lib/chart-2.9.4.js") > 0
    assert paths.index("app/assets/charts.js") > 0  # one 1,000-character line: minified


def test_a_trace_without_a_frame_in_the_repository_falls_back_to_names(
    workspace: Workspace,
) -> None:
    text = (
        "Paging past the end crashes\n\n```\n>>> from app.pages import Pager\n"
        ">>> Pager().page(10, 3, 0)\nTraceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\n'
        '  File "/usr/lib/python3.11/site-packages/numpy/core/fromnumeric.py", line 3, in sum\n'
        "ZeroDivisionError: integer division or modulo by zero\n```\n"
    )
    [first, *_] = rank(workspace, text)
    assert (first.path, first.symbol, first.source) == (
        "app/pages.py",
        "Pager.page",
        Source.MENTION,
    )


def test_an_empty_repository_gives_no_candidates(make_repo: MakeRepo, home: Path) -> None:
    workspace = Workspace(make_repo({"README.md": "# nothing\n", "x.py": "X = 1\n"}), home=home)
    assert rank(workspace, "it is broken") == []


MULTI = {
    "encoding/json/encode.go": (
        "package json\n\nfunc Marshal(v any) ([]byte, error) {\n\treturn nil, nil\n}\n"
    ),
    "encoding/xml/encode.go": (
        "package xml\n\nfunc Marshal(v any) ([]byte, error) {\n\treturn nil, nil\n}\n"
        "\nfunc fieldTags(v any) []string {\n\treturn nil\n}\n"
    ),
    "src/main/java/com/acme/Cart.java": (
        "package com.acme;\n\npublic class Cart {\n  public int total() { return 0; }\n}\n"
    ),
    "src/main/java/com/other/Cart.java": (
        "package com.other;\n\npublic class Cart {\n  public int total() { return 1; }\n}\n"
    ),
}


@pytest.fixture(scope="module")
def multi(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return workspace_of(MULTI, tmp_path_factory)


def test_a_package_qualified_name_points_into_that_package(multi: Workspace) -> None:
    [first, *_] = rank(multi, "json.Marshal drops the field tags of embedded structs")
    assert (first.path, first.symbol, first.source) == (
        "encoding/json/encode.go", "Marshal", Source.MENTION,
    )  # fmt: skip


def test_a_module_in_any_language_names_its_file(multi: Workspace) -> None:
    [first, *_] = rank(multi, "The total of com.acme.Cart is wrong")
    assert (first.path, first.source) == ("src/main/java/com/acme/Cart.java", Source.MENTION)


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


DECLARED = {
    "src/types.ts": (
        "export interface QueryObserverOptions {\n  refetchInterval: number;\n}\n"
        "export type QueryObserverResult = { refetchInterval: number };\n"
        "export enum QueryStatus { Idle, Refetch }\n"
    ),
    "src/queryObserver.ts": (
        "export class QueryObserver {\n"
        "  setOptions(options) {\n"
        "    this.refetchInterval = options.refetchInterval;\n"
        "  }\n"
        "}\n"
    ),
}


@pytest.fixture(scope="module")
def declared(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return workspace_of(DECLARED, tmp_path_factory)


def test_a_file_of_type_declarations_goes_after_the_code(
    declared: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "QueryObserverOptions refetchInterval is ignored by the query observer result status"
    assert [c.path for c in rank(declared, text)] == ["src/queryObserver.ts", "src/types.ts"]
    monkeypatch.setattr(candidates, "DECLARATION_FACTOR", 1.0)
    assert rank(declared, text)[0].path == "src/types.ts"


HOMES = {
    "app/render.py": (
        "def render_page(page):\n    return page_layout(page) + page_border(page) + page.title\n"
    ),
    "app/page_widget.py": "class PageWidget:\n    def draw(self):\n        return 1\n",
    "app/panel.py": "class PageWidget:\n    def show(self):\n        return 2\n",
    "app/status_code.py": "class StatusCode:\n    OK = 1\n",
    "mixture/gaussian_mixture.py": (
        "class GaussianMixture(BaseMixture):\n    def _estimate(self):\n        return 1\n"
    ),
    "mixture/base.py": "class BaseMixture:\n    def fit_predict(self, X):\n        return X\n",
}


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return workspace_of(HOMES, tmp_path_factory)


def headline_names(workspace: Workspace, title: str) -> dict[str, float]:
    index = workspace.repository.index
    report = build_report(ReportIn(text="see title", title=title), files=index.files, index=index)
    return candidates._headline_names(report, workspace.repository)


def test_a_name_in_the_headline_lifts_the_file_named_after_it(homes: Workspace) -> None:
    title = "PageWidget breaks the page layout border and title"
    text = "render page layout border title of a page"
    # shared by the two definers: the home keeps its part, the other definer a little
    half = candidates.HEADLINE_NAME_WEIGHT / 2
    other = candidates.HEADLINE_NAME_OTHER / 2
    assert 0 < other < half
    assert headline_names(homes, title) == {"app/page_widget.py": half, "app/panel.py": other}
    assert rank(homes, text, title=title)[0].path == "app/page_widget.py"


def test_a_headline_name_counts_for_every_definer_when_switched_off(
    homes: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    title = "PageWidget breaks the page layout border and title"
    monkeypatch.setattr(candidates, "HEADLINE_NAME_OWN_FILE", False)
    half = candidates.HEADLINE_NAME_WEIGHT / 2
    assert headline_names(homes, title) == {"app/page_widget.py": half, "app/panel.py": half}
    monkeypatch.setattr(candidates, "HEADLINE_NAME_WEIGHT", 0.0)
    assert headline_names(homes, title) == {}
    text = "render page layout border title of a page"
    monkeypatch.setattr(candidates, "NAMES_AS_FILES", False)  # `PageWidget` names its file
    assert rank(homes, text, title=title)[0].path == "app/render.py"


def test_a_file_of_declarations_is_no_home(
    homes: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = {"app/status_code.py": candidates.HEADLINE_NAME_OTHER}
    assert headline_names(homes, "StatusCode is reported wrong") == other
    monkeypatch.setattr(candidates, "HEADLINE_NAME_OTHER", 0.0)
    assert headline_names(homes, "StatusCode is reported wrong") == {}


STEMS = {
    "app/render.py": (
        "def render_page(page):\n    return page_layout(page) + page_border(page) + page.title\n"
    ),
    "app/page_state.py": "def draw(page):\n    return 1\n",
    "app/add.py": "def run():\n    return 2\n",
}


@pytest.fixture(scope="module")
def stems(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return workspace_of(STEMS, tmp_path_factory)


def test_a_compound_name_in_the_headline_names_the_file_called_so(
    stems: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    title = "page_state: the page layout border and title are lost"
    text = "render page layout border title of a page"
    weight = candidates.HEADLINE_NAME_WEIGHT
    assert headline_names(stems, title) == {"app/page_state.py": weight}
    assert rank(stems, text, title=title)[0].path == "app/page_state.py"
    monkeypatch.setattr(candidates, "NAMES_AS_FILES", False)
    assert headline_names(stems, title) == {}
    assert rank(stems, text, title=title)[0].path == "app/render.py"


def test_a_plain_word_names_no_file(stems: Workspace) -> None:
    assert headline_names(stems, "add: the page layout border is lost") == {}


def test_a_compound_name_anywhere_in_the_report_names_the_file_called_so(
    stems: Workspace,
) -> None:
    index = stems.repository.index
    text = "The border is lost; `PageState` is rebuilt, and add is called twice."
    report = build_report(ReportIn(text=text), files=index.files, index=index)
    assert candidates._named_files(report, index) == ["app/page_state.py"]


PANICKED = {
    "go.mod": "module example.com/yaml\n\ngo 1.20\n",
    "yaml.go": (
        "package yaml\n\nfunc handleErr(err *error) {\n"  # 1-3
        "\tif v := recover(); v != nil {\n\t\tpanic(v)\n\t}\n}\n"  # 4-7
    ),
    "decode.go": (
        "package yaml\n\ntype parser struct{}\n\n"  # 1-4
        'func (p *parser) parse() {\n\tpanic("attempted to parse unknown event")\n}\n'  # 5-7
    ),
}
GO_PANIC = """panic: attempted to parse unknown event [recovered]
\tpanic: attempted to parse unknown event

goroutine 1 [running]:
example.com/yaml.handleErr(0xc000010000)
\t/go/pkg/mod/example.com/yaml@v1.0.0/yaml.go:5 +0x6d
panic({0x4a0, 0xc0})
\t/usr/local/go/src/runtime/panic.go:884 +0x213
example.com/yaml.(*parser).parse(0xc0)
\t/go/pkg/mod/example.com/yaml@v1.0.0/decode.go:6 +0x1e5
main.main()
\t/tmp/main.go:9 +0x45
"""


def test_a_go_panics_deferred_handler_is_not_where_it_failed(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = workspace_of(PANICKED, tmp_path_factory)
    index = workspace.repository.index
    report = build_report(
        ReportIn(text=GO_PANIC), files=index.files, index=index, packages=workspace.packages
    )
    frames = [c for c in rank_candidates(report, workspace) if c.source is Source.FRAME]
    assert [c.path for c in frames] == ["decode.go"]
    monkeypatch.setattr(candidates, "PANIC_HANDLERS_LAST", False)
    frames = [c for c in rank_candidates(report, workspace) if c.source is Source.FRAME]
    assert [c.path for c in frames] == ["yaml.go", "decode.go"]


THROWN = {
    "lib/error/parameter.js": (
        "class ParameterError extends Error {\n"  # 1
        "  constructor(name) {\n"  # 2
        "    super(`bad ${name}`);\n"  # 3
        "  }\n}\n"
    ),
    "lib/document.js": (
        "function Document(obj) {\n"  # 1
        "  if (typeof obj !== 'object') {\n"  # 2
        "    throw new ParameterError('obj');\n"  # 3
        "  }\n}\n"
    ),
}
THROWN_STACK = """ParameterError: bad obj
    at new ParameterError (/srv/app/lib/error/parameter.js:3:5)
    at Document (/srv/app/lib/document.js:3:11)
    at main (/srv/app/index.js:9:3)
"""


def test_the_errors_own_constructor_is_not_where_it_failed(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = workspace_of(THROWN, tmp_path_factory)
    found = [c for c in rank(workspace, THROWN_STACK) if c.source is Source.FRAME]
    assert [c.path for c in found] == ["lib/document.js"]
    assert found[0].reason.startswith("where it failed")
    monkeypatch.setattr(candidates, "ERROR_CONSTRUCTOR_NOT_A_FRAME", False)
    found = [c for c in rank(workspace, THROWN_STACK) if c.source is Source.FRAME]
    assert [c.path for c in found] == ["lib/error/parameter.js", "lib/document.js"]


PORTS = {
    "pkg/_psaix.py": "def net_if_stats():\n    return speed_duplex(nic)\n",
    "pkg/_pslinux.py": "def net_if_stats():\n    return speed_of(nic)\n",
    "pkg/__init__.py": "def net_if_stats():\n    return _psplatform.net_if_stats()\n",
}


def test_files_for_another_platform_than_the_report_names_go_after(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = workspace_of(PORTS, tmp_path_factory)
    text = "On Ubuntu 20.04 `net_if_stats()` reports a wrong speed and duplex for the nic."
    order = [c.path for c in rank(workspace, text)]
    assert order.index("pkg/_pslinux.py") < order.index("pkg/_psaix.py")
    monkeypatch.setattr(candidates, "OTHER_PLATFORM_FACTOR", 1.0)
    assert rank(workspace, text)[0].path == "pkg/_psaix.py"


STREAMS = {
    "src/reader.cpp": "char Reader::get() {\n    return next(input);\n}\n",
    "src/stream.cpp": (
        "// A lone carriage return ends a line, like a line feed.\n"
        "char Stream::get() {\n    return next(input);\n}\n"
    ),
}


def test_the_headline_finds_the_file_whose_comments_say_it(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = workspace_of(STREAMS, tmp_path_factory)
    title = "A lone carriage return is not treated as a line break"
    text = "`get()` reads one line where the input holds two."
    assert [c.path for c in rank(workspace, text, title)] == ["src/stream.cpp", "src/reader.cpp"]
    monkeypatch.setattr(candidates, "TEXT_HEADLINE_WEIGHT", 0.0)
    assert [c.path for c in rank(workspace, text, title)] == ["src/reader.cpp", "src/stream.cpp"]


STRIPPED = """Segmentation fault when comparing two objects. coredumpctl shows:

#0  0x0000000001656a5a in PyUnicode_FromFormatV ()
#1  0x0000729b59ac0213 in objecthandle_equal(Handle, Handle) ()
#2  0x0000729b59ac0a60 in compare_handles(Handle, Handle) ()
"""


def test_a_stripped_native_frame_points_at_the_function_it_names(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    files = {
        "src/equality.cpp": "bool objecthandle_equal(Handle a, Handle b) {\n  return a == b;\n}\n",
        "src/handles.cpp": "bool compare_handles(Handle a, Handle b) {\n  return eq(a, b);\n}\n",
    }
    workspace = workspace_of(files, tmp_path_factory)
    found = [c for c in rank(workspace, STRIPPED) if c.source is Source.FRAME]
    assert [(c.path, c.symbol, c.line) for c in found] == [
        ("src/equality.cpp", "objecthandle_equal", 1),
        ("src/handles.cpp", "compare_handles", 1),
    ]
