"""Each file's relevance to the report: its words, its headline, the names in it, and
the discounts (`diagnoser.relevance`)."""

from __future__ import annotations

import pytest

from diagnoser import named, relevance
from diagnoser.intake import ReportIn
from diagnoser.intake.intake import build_report
from diagnoser.relevance import headline
from diagnoser.workspace import Workspace
from tests.diagnoser.ranking import FILES, STEMS, rank, trace, workspace_of


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return workspace_of(FILES, tmp_path_factory)


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
    monkeypatch.setattr(relevance, "DECLARATION_FACTOR", 1.0)
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
    return relevance.headline_names(report, workspace.repository)


def test_a_name_in_the_headline_lifts_the_file_named_after_it(homes: Workspace) -> None:
    title = "PageWidget breaks the page layout border and title"
    text = "render page layout border title of a page"
    # shared by the two definers: the home keeps its part, the other definer a little
    half = relevance.HEADLINE_NAME_WEIGHT / 2
    other = relevance.HEADLINE_NAME_OTHER / 2
    assert 0 < other < half
    assert headline_names(homes, title) == {"app/page_widget.py": half, "app/panel.py": other}
    assert rank(homes, text, title=title)[0].path == "app/page_widget.py"


def test_a_headline_name_counts_for_every_definer_when_switched_off(
    homes: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    title = "PageWidget breaks the page layout border and title"
    monkeypatch.setattr(relevance, "HEADLINE_NAME_OWN_FILE", False)
    half = relevance.HEADLINE_NAME_WEIGHT / 2
    assert headline_names(homes, title) == {"app/page_widget.py": half, "app/panel.py": half}
    monkeypatch.setattr(relevance, "HEADLINE_NAME_WEIGHT", 0.0)
    assert headline_names(homes, title) == {}
    text = "render page layout border title of a page"
    monkeypatch.setattr(named, "NAMES_AS_FILES", False)  # `PageWidget` names its file
    assert rank(homes, text, title=title)[0].path == "app/render.py"


def test_a_file_of_declarations_is_no_home(
    homes: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = {"app/status_code.py": relevance.HEADLINE_NAME_OTHER}
    assert headline_names(homes, "StatusCode is reported wrong") == other
    monkeypatch.setattr(relevance, "HEADLINE_NAME_OTHER", 0.0)
    assert headline_names(homes, "StatusCode is reported wrong") == {}


@pytest.fixture(scope="module")
def stems(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return workspace_of(STEMS, tmp_path_factory)


def test_a_compound_name_in_the_headline_names_the_file_called_so(
    stems: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    title = "page_state: the page layout border and title are lost"
    text = "render page layout border title of a page"
    weight = relevance.HEADLINE_NAME_WEIGHT
    assert headline_names(stems, title) == {"app/page_state.py": weight}
    assert rank(stems, text, title=title)[0].path == "app/page_state.py"
    monkeypatch.setattr(named, "NAMES_AS_FILES", False)
    assert headline_names(stems, title) == {}
    assert rank(stems, text, title=title)[0].path == "app/render.py"


def test_a_plain_word_names_no_file(stems: Workspace) -> None:
    assert headline_names(stems, "add: the page layout border is lost") == {}


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
    monkeypatch.setattr(relevance, "OTHER_PLATFORM_FACTOR", 1.0)
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
    monkeypatch.setattr(relevance, "TEXT_HEADLINE_WEIGHT", 0.0)
    assert [c.path for c in rank(workspace, text, title)] == ["src/reader.cpp", "src/stream.cpp"]
