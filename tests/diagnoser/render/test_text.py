from __future__ import annotations

import pytest

from diagnoser.render.languages import language_for
from diagnoser.render.text import block, code_span, fence, inline, table_cell


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("src/app.py", "python"),
        ("web/a.JS", "javascript"),
        ("web/App.tsx", "tsx"),
        ("cmd/main.go", "go"),
        ("app/src/Main.kt", "kotlin"),
        ("build\\Dockerfile", "dockerfile"),
        ("LICENSE", "text"),
        ("notes.unknownext", "text"),
    ],
)
def test_language_for(path: str, language: str) -> None:
    assert language_for(path) == language


def test_fence_is_longer_than_any_backtick_run_inside() -> None:
    text = "a\n```\nb\n`````\n"
    assert fence(text, "python") == "``````python\na\n```\nb\n`````\n``````"
    assert fence("plain") == "```\nplain\n```"


def test_code_span_survives_backticks() -> None:
    assert code_span("a.py") == "`a.py`"
    assert code_span("x`y") == "``x`y``"
    assert code_span("`x`") == "`` `x` ``"


def test_inline_escapes_markup_but_keeps_balanced_code_spans() -> None:
    assert inline("a *b* [c](d) <e> | f\nnext") == r"a \*b\* \[c\](d) \<e\> \| f next"
    assert inline("call `f(*args)` now") == "call `f(*args)` now"
    assert inline("half `open") == r"half \`open"


def test_block_keeps_paragraphs_and_starts_no_block() -> None:
    text = "# h\n- item\n2. item\n===\n    indented\n\nsecond paragraph"
    assert block(text) == "\\# h\n\\- item\n2\\. item\n\\===\nindented\n\nsecond paragraph"


@pytest.mark.parametrize(
    ("markdown", "cell"),
    [
        ("`a|b`", "`a\\|b`"),  # inside a code span too
        ("a\\|b", "a\\|b"),  # already escaped by `inline`
        ("a\\\\|b", "a\\\\\\|b"),  # an escaped backslash, then a bare pipe
        ("plain", "plain"),
    ],
)
def test_a_table_cell_escapes_every_bare_pipe(markdown: str, cell: str) -> None:
    assert table_cell(markdown) == cell
