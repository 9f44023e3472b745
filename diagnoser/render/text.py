"""Make arbitrary text safe inside a Markdown document: escape it, or fence it.

Everything in a Finding comes from a model or a repository, so none of it may be trusted
to leave the surrounding document intact: a stray `*` opens emphasis, a line of three
backticks ends a code block early, `<script>` is raw HTML to many renderers.
"""

from __future__ import annotations

import re

from diagnoser.render.constants import MIN_FENCE

_INLINE_SPECIALS = re.compile(r"([\\`*_\[\]<>|~&#!])")
"""Characters with inline meaning in CommonMark/GFM (`#` and `!` for headings and images)."""

_BLOCK_MARKER = re.compile(r"^[-+=]")
"""Line starts that would make a list item, a setext underline or a thematic break."""

_ORDERED_MARKER = re.compile(r"^(\d+)([.)])")
"""`1.` or `1)` at a line start would make an ordered list item."""

_BACKTICK_RUN = re.compile(r"`+")

_UNESCAPED_PIPE = re.compile(r"(?<!\\)((?:\\\\)*)\|")
"""A `|` after an even number of backslashes (none, or escaped backslashes)."""

_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
"""A balanced code span on one line: kept as it is, since nothing inside it is markup."""


def inline(text: str) -> str:
    """`text` as one escaped line: whitespace (newlines included) collapsed to spaces."""
    return _escape(" ".join(text.split()))


def block(text: str) -> str:
    """Escaped prose that keeps its paragraphs (blank lines); no line can start a block."""
    lines = [_escape(line.strip()) for line in text.strip().splitlines()]
    return "\n".join(_block_safe(line) for line in lines)


def code_span(text: str) -> str:
    """`text` as inline code, with a delimiter longer than any backtick run inside it."""
    one_line = " ".join(text.split())
    ticks = "`" * (_longest_backtick_run(one_line) + 1)
    pad = " " if one_line.startswith("`") or one_line.endswith("`") else ""
    return f"{ticks}{pad}{one_line}{pad}{ticks}"


def table_cell(markdown: str) -> str:
    """Already-safe inline Markdown (`inline`, `code_span`) made safe in a GFM table cell:
    every `|` not yet escaped gets a backslash — inside code spans too, where GFM splits
    cells before it parses spans."""
    return _UNESCAPED_PIPE.sub(r"\1\\|", markdown)


def fence(text: str, language: str = "") -> str:
    """`text` in a fenced code block that nothing inside it can close."""
    ticks = "`" * max(MIN_FENCE, _longest_backtick_run(text) + 1)
    body = text.rstrip("\n")
    return f"{ticks}{language}\n{body}\n{ticks}"


def _block_safe(line: str) -> str:
    line = _BLOCK_MARKER.sub(lambda match: "\\" + match.group(0), line)
    return _ORDERED_MARKER.sub(r"\1\\\2", line)


def _escape(text: str) -> str:
    """Escape markup outside balanced code spans; the spans themselves stay code."""
    parts, position = [], 0
    for span in _CODE_SPAN.finditer(text):
        parts.append(_INLINE_SPECIALS.sub(r"\\\1", text[position : span.start()]))
        parts.append(span.group(0))
        position = span.end()
    parts.append(_INLINE_SPECIALS.sub(r"\\\1", text[position:]))
    return "".join(parts)


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
