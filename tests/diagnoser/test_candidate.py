"""A candidate's span: the lines worth reading around its line, inside its definition."""

from __future__ import annotations

from pathlib import Path

from diagnoser.candidate import CONTEXT_LINES, Source, span
from diagnoser.workspace import Workspace
from tests.conftest import MakeRepo


def test_a_span_reads_around_its_line_and_stays_inside_the_definition(
    make_repo: MakeRepo, home: Path
) -> None:
    body = "".join(f"    x{n} = {n}\n" for n in range(60))
    root = make_repo({"app/long.py": f"def long():\n{body}    return x0\n"})
    [definition] = Workspace(root, home=home).repository.index.definitions_in("app/long.py")
    middle = span("app/long.py", definition, 30, Source.FRAME, "why")
    assert (middle.start, middle.line, middle.end) == (30 - CONTEXT_LINES, 30, 30 + CONTEXT_LINES)
    assert (middle.symbol, middle.source, middle.reason) == ("long", Source.FRAME, "why")
    top = span("app/long.py", definition, 3, Source.MENTION, "")
    assert (top.start, top.end) == (definition.start_line, 3 + CONTEXT_LINES)
    bottom = span("app/long.py", definition, definition.end_line, Source.MENTION, "")
    assert (bottom.start, bottom.end) == (definition.end_line - CONTEXT_LINES, definition.end_line)
