"""Where the candidates point, on a small repository with known call chains."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnoser.candidates import Candidate, Source, headline, is_peripheral, rank_candidates
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
    ),
    "app/service.py": (
        "from app.mail import notify\n"  # 1
        "\n"
        "\n"
        "def share_note(users, email, share):\n"  # 4
        "    share.recipient = users.get(email)\n"  # 5
        "    return notify(share)\n"  # 6
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


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    root = tmp_path_factory.mktemp("repo")
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return Workspace(root, home=tmp_path_factory.mktemp("home"))


def rank(workspace: Workspace, text: str, title: str | None = None) -> list[Candidate]:
    index = workspace.repository.index
    report = build_report(ReportIn(text=text, title=title), files=index.files, index=index)
    return rank_candidates(report, workspace)


def places(found: list[Candidate]) -> list[tuple[str, str | None, Source]]:
    return [(c.path, c.symbol, c.source) for c in found]


PLOT_TRACE = trace(
    ("app/axes.py", 6, "plot"),
    ("app/stackplot.py", 5, "stackplot"),
    ("app/utils.py", 3, "check_positive"),
    error="ValueError: must be positive",
)


def test_frames_come_first_with_a_utility_module_after_the_others(workspace: Workspace) -> None:
    found = rank(workspace, PLOT_TRACE)
    assert places(found)[:3] == [
        ("app/stackplot.py", "stackplot", Source.FRAME),
        ("app/axes.py", "Axes.plot", Source.FRAME),
        ("app/utils.py", "check_positive", Source.FRAME),
    ]
    assert found[0].line == 5 and found[0].start == 4
    assert "shared utility module" in found[2].reason


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
            ("app/service.py", 6, "share_note"),
            ("app/mail.py", 2, "notify"),
            error="AttributeError: 'NoneType' object has no attribute 'email'",
        ),
    )
    assert [c.symbol for c in found[:2]] == ["share_note", "notify"]
    assert found[0].reason.startswith("passes the missing value on")
    assert found[1].reason == "where it failed: the innermost in-app frame"


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


def test_peripheral_paths() -> None:
    assert is_peripheral("tests/test_x.py") and is_peripheral("docs/conf.py")
    assert is_peripheral("src/foo_test.py") and is_peripheral("setup.py")
    assert not is_peripheral("android/src/com/demo/notes/Note.kt")
    assert not is_peripheral("lib/matplotlib/rcsetup.py")


def test_an_empty_repository_gives_no_candidates(make_repo: MakeRepo, home: Path) -> None:
    workspace = Workspace(make_repo({"README.md": "# nothing\n", "x.py": "X = 1\n"}), home=home)
    assert rank(workspace, "it is broken") == []
