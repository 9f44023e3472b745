"""What a report names, found in the repository: files by path, module or compound name,
and definitions (`diagnoser.named`)."""

from __future__ import annotations

import pytest

from diagnoser import named
from diagnoser.candidate import Source
from diagnoser.intake import ReportIn
from diagnoser.intake.intake import build_report
from diagnoser.workspace import Workspace
from tests.diagnoser.ranking import FILES, STEMS, rank, workspace_of


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return workspace_of(FILES, tmp_path_factory)


@pytest.fixture(scope="module")
def stems(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return workspace_of(STEMS, tmp_path_factory)


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


def test_a_compound_name_anywhere_in_the_report_names_the_file_called_so(
    stems: Workspace,
) -> None:
    index = stems.repository.index
    text = "The border is lost; `PageState` is rebuilt, and add is called twice."
    report = build_report(ReportIn(text=text), files=index.files, index=index)
    assert named.named_files(report, index) == ["app/page_state.py"]


def test_only_a_compound_name_names_the_files_called_so(
    stems: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = stems.repository.index
    names = ["add", "PageState", "page-state", "render_widget"]
    assert named.files_named_by(names, index) == [["app/page_state.py"], ["app/page_state.py"]]
    monkeypatch.setattr(named, "NAMES_AS_FILES", False)
    assert named.files_named_by(names, index) == []
