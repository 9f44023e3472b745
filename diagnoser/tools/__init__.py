"""The four read-only tools over a `Workspace`. Each returns a typed result that also
renders to compact text for a model (`str(result)` / `result.render()`)."""

from __future__ import annotations

from diagnoser.tools.find_symbol import SymbolResult, find_symbol
from diagnoser.tools.grep import GrepResult, grep
from diagnoser.tools.list_dir import ListResult, list_dir
from diagnoser.tools.read_range import ReadResult, read_range

__all__ = [
    "GrepResult",
    "ListResult",
    "ReadResult",
    "SymbolResult",
    "find_symbol",
    "grep",
    "list_dir",
    "read_range",
]
