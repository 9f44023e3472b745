"""Small text helpers every tool renders with."""

from __future__ import annotations

from diagnoser.constants import MAX_LINE_CHARS


def clip(line: str, limit: int = MAX_LINE_CHARS) -> str:
    """One line, cut to `limit` characters with a visible mark."""
    line = line.rstrip("\r\n")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def numbered(number: int, text: str, width: int, *, mark: str = ":") -> str:
    """`  42: text` — the line-number prefix every tool uses."""
    return f"{number:>{width}}{mark} {clip(text)}"
