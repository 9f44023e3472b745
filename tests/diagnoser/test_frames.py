"""The trace's frames as candidates: which frames, in what order, and what the crash
site moves (`diagnoser.frames`)."""

from __future__ import annotations

import pytest

from diagnoser import crash_site, frames
from diagnoser.candidate import Source
from diagnoser.candidates import rank_candidates
from diagnoser.frames import is_guard_name
from diagnoser.intake import ReportIn
from diagnoser.intake.intake import build_report
from diagnoser.workspace import Workspace
from tests.diagnoser.ranking import FILES, PLOT_TRACE, places, rank, trace, workspace_of


def frame_files(workspace: Workspace, text: str) -> list[str]:
    """The files of the ranking's trace-frame places, in order."""
    return [c.path for c in rank(workspace, text) if c.source is Source.FRAME]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return workspace_of(FILES, tmp_path_factory)


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
    monkeypatch.setattr(frames, "GUARD_NOT_WHEN_IT_CRASHED", False)
    assert [c.symbol for c in rank(workspace, text)[:2]] == ["submit", "validate_form"]


def test_a_raise_under_a_parameter_test_stays_first_unless_switched_on(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = trace(
        ("app/checkout.py", 5, "place"), ("app/orders.py", 4, "resize"), error="ValueError: -10"
    )
    assert [c.symbol for c in rank(workspace, text)[:2]] == ["Order.resize", "place"]
    monkeypatch.setattr(frames, "ARGUMENT_CHECK_PENALTY", 1.0)
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


def test_a_guard_is_named_for_checking_its_input() -> None:
    for name in ("check_array", "_check_sample_weight", "Validate.notNull", "requireNonNull",
                 "assertIsValid", "ensure_str", "Form._validate_unique", "verify"):  # fmt: skip
        assert is_guard_name(name), name
    for name in ("checkout", "requirements", "Validator.build", "render", "assertion_text"):
        assert not is_guard_name(name), name


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
    found = [c for c in rank_candidates(report, workspace) if c.source is Source.FRAME]
    assert [c.path for c in found] == ["decode.go"]
    monkeypatch.setattr(frames, "PANIC_HANDLERS_LAST", False)
    found = [c for c in rank_candidates(report, workspace) if c.source is Source.FRAME]
    assert [c.path for c in found] == ["yaml.go", "decode.go"]


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
    monkeypatch.setattr(frames, "ERROR_CONSTRUCTOR_NOT_A_FRAME", False)
    found = [c for c in rank(workspace, THROWN_STACK) if c.source is Source.FRAME]
    assert [c.path for c in found] == ["lib/error/parameter.js", "lib/document.js"]


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


FACTORY = {
    "app/errors.py": (
        "def invalid(name, value):\n"  # 1
        '    """The error for a value out of range."""\n'
        '    return ValueError(f"{name} out of range: {value} (see the docs)?")\n'  # 3
        "\n"
        "\n"
        "def refuse(reason):\n"  # 6
        "    if reason:\n"
        "        raise ValueError(reason)\n"  # 8
        "    return None\n"
    ),
    "app/order.py": (
        "from app.errors import invalid, refuse\n"  # 1
        "\n"
        "\n"
        "def place(quantity):\n"  # 4
        '    raise invalid("quantity", quantity)\n'  # 5
        "\n"
        "\n"
        "def cancel(reason):\n"  # 8
        "    refuse(reason)\n"  # 9
    ),
}


def test_a_function_that_only_makes_the_exception_goes_after_its_caller(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = workspace_of(FACTORY, tmp_path_factory)
    made = trace(("app/order.py", 5, "place"), ("app/errors.py", 3, "invalid"),
                 error="ValueError: quantity out of range: -1")  # fmt: skip
    found = frame_files(workspace, made)
    assert found == ["app/order.py", "app/errors.py"]  # the "?" in its message decides nothing
    # a function that decides (an `if`) is where it failed, as before
    decided = trace(("app/order.py", 9, "cancel"), ("app/errors.py", 8, "refuse"),
                    error="ValueError: late")  # fmt: skip
    found = frame_files(workspace, decided)
    assert found == ["app/errors.py", "app/order.py"]
    monkeypatch.setattr(frames, "EXCEPTION_FACTORY_PENALTY", 0.0)
    found = frame_files(workspace, made)
    assert found == ["app/errors.py", "app/order.py"]


RELEASED = {
    "app/errors.py": (
        "def invalid(name, value):\n"  # 1
        "    return ValueError(name)\n"
        "\n"
        "\n"
        "def invalid(name, value, hint):\n"  # 5: an overload, as in Java
        "    if hint:\n"
        "        return ValueError(hint)\n"  # 7
        "    invalid_hint = lambda: ValueError(name)  # create_error in a comment\n"
        '    return invalid_hint("a create error")\n'
    ),
    "app/order.py": (
        "from app.errors import invalid\n"  # 1
        "\n"
        "\n"
        "def place(quantity):\n"  # 4
        "    if quantity < 0:\n"
        '        raise invalid("quantity", quantity)\n'  # 6
        "    return quantity\n"
    ),
    "app/field.py": (
        "from app.checks import check_range\n"  # 1
        "\n"
        "\n"
        "def set_value(record, value):\n"  # 4
        "    check_range(record.name, value, 0, 10)\n"  # 5: hands `value` on as it came
        "    record.value = value\n"
        "\n"
        "\n"
        "def set_double(record, value):\n"  # 9
        "    check_range(record.name, value * 2, 0, 10)\n"  # 10: computes what it checks
        "    record.value = value\n"
    ),
    "app/checks.py": (
        "def check_range(name, value, low, high):\n"  # 1
        "    if not low <= value <= high:\n"
        '        raise ValueError(f"{name} must be in [{low}, {high}]")\n'  # 3
    ),
    "app/period.py": (
        "from app.field import set_double, set_value\n"  # 1
        "\n"
        "\n"
        "def between(record, start, end):\n"  # 4
        "    set_value(record, end - start)\n"  # 5
        "    set_double(record, end - start)\n"  # 6
    ),
}


def test_of_several_definitions_a_moved_frame_names_the_one_nearest_its_line(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    workspace = workspace_of(RELEASED, tmp_path_factory)
    moved = trace(("app/order.py", 6, "place"), ("app/errors.py", 4, "invalid"),
                  error="ValueError: quantity")  # fmt: skip
    [made] = [c for c in rank(workspace, moved) if c.path == "app/errors.py"]
    assert made.line == 5 and "the code has moved since" in made.reason


def test_a_frame_file_that_does_not_define_the_frames_function_goes_after_the_others(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = workspace_of(RELEASED, tmp_path_factory)
    other_release = trace(("app/order.py", 6, "place"), ("app/errors.py", 7, "create_error"),
                          error="ValueError: quantity")  # fmt: skip
    found = [c for c in rank(workspace, other_release) if c.source is Source.FRAME]
    assert [c.path for c in found] == ["app/order.py", "app/errors.py"]
    assert "does not define" in found[1].reason
    # a closure the definitions do not list is still in the file's code: what ran
    closure = other_release.replace("create_error", "invalid_hint")
    assert frame_files(workspace, closure) == ["app/errors.py", "app/order.py"]
    monkeypatch.setattr(frames, "ABSENT_FUNCTION_PENALTY", 0.0)
    assert frame_files(workspace, other_release) == ["app/errors.py", "app/order.py"]


def test_a_frame_that_hands_its_parameter_to_a_check_goes_after_its_callers(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = workspace_of(RELEASED, tmp_path_factory)
    error = "ValueError: count must be in [0, 10]"
    forwarded = trace(("app/period.py", 5, "between"), ("app/field.py", 5, "set_value"),
                      ("app/checks.py", 3, "check_range"), error=error)  # fmt: skip
    found = frame_files(workspace, forwarded)
    assert found == ["app/period.py", "app/field.py", "app/checks.py"]
    # a frame that computes what it checks decided the value: it stays first
    computed = trace(("app/period.py", 6, "between"), ("app/field.py", 10, "set_double"),
                     ("app/checks.py", 3, "check_range"), error=error)  # fmt: skip
    found = frame_files(workspace, computed)
    assert found == ["app/field.py", "app/period.py", "app/checks.py"]
    monkeypatch.setattr(frames, "PASS_THROUGH_PENALTY", 0.0)
    found = frame_files(workspace, forwarded)
    assert found == ["app/field.py", "app/period.py", "app/checks.py"]
