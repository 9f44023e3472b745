"""Repair templates: small, mechanical fixes at the blamed lines, chosen by the failure's
kind — proposed only to be tried (`diagnoser.verify.trial`); a template fix is shown only
when a sandboxed run passed it. Pure (Python source in, candidate edits out).

By the exception (at the fault line):
- `KeyError`      a default for the missing key: `d["k"]` → `d.get("k")`
- `ZeroDivisionError` a guard: `a / b` → `(a / b if b else 0)`
- `IndexError`    a bounds check: `xs[i]` → `(xs[i] if -len(xs) <= i < len(xs) else None)`
- `AttributeError`/`TypeError` on `None` a guard: `if x is None: return None` before the line
- a coroutine never awaited: `await` the call
Whatever the exception (at the fault line, then the lines of the functions that compute
what it checked): an off-by-one on a range end (`range(n)` → `range(n + 1)`, `len(xs) - 1`
→ `len(xs)`), floor division where a count needs ceiling division (`a // b` → `-(-a // b)`),
and a comparison's bound (`<` ↔ `<=`, `>` ↔ `>=`), one edit at a time.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeGuard

MAX_CANDIDATES = 12
_MISSING_ATTRIBUTE = re.compile(r"has no attribute '(?P<name>\w+)'")
_COMPARISON_FLIPS: dict[type[ast.cmpop], str] = {
    ast.Lt: "<=",
    ast.LtE: "<",
    ast.Gt: ">=",
    ast.GtE: ">",
}
NONE_FAILURES = frozenset({"AttributeError", "TypeError"})


@dataclass(frozen=True, slots=True)
class Repair:
    """One candidate edit of one file."""

    template: str
    """Which template made it (`default-for-missing-key`, `ceiling-division`…)."""
    summary: str
    path: str
    line: int
    diff: str
    """A unified diff against the file."""


def repairs(
    path: str, source: str, *, fault_line: int, context_lines: Sequence[int] = (),
    exception: str = "", message: str = "",
) -> list[Repair]:  # fmt: skip
    """Candidate edits of `path` (its text `source`), most specific first: the failure
    kind's templates at `fault_line`, then the generic ones there and at `context_lines`."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    lines = source.splitlines(keepends=True)
    kind = exception.rsplit(".", 1)[-1]
    found: dict[str, Repair] = {}
    edits = [*_specific(tree, lines, fault_line, kind, message)]
    for line in (fault_line, *context_lines):
        edits += _generic(tree, lines, line)
    for template, summary, line, new_lines in edits:
        diff = _diff(path, lines, new_lines)
        if diff and diff not in found:
            found[diff] = Repair(template, summary, path, line, diff)
        if len(found) == MAX_CANDIDATES:
            break
    return list(found.values())


_Edit = tuple[str, str, int, list[str]]


def _specific(tree: ast.AST, lines: list[str], line: int, kind: str,
              message: str) -> Iterator[_Edit]:  # fmt: skip
    on_line = _on_line(tree, line)
    by_kind = _BY_KIND.get(kind)
    if by_kind is not None:
        yield from by_kind(on_line, lines, line, message)
    if kind in NONE_FAILURES and "NoneType" in message:
        yield from _none_guard(on_line, lines, line, message)
    if "coroutine" in message or "never awaited" in message:
        awaited = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Await)}
        for node in on_line:
            if isinstance(node, ast.Call) and id(node) not in awaited:
                new = f"await {_text(lines, node)}"
                yield "await-call", "await the coroutine", line, _replace(lines, node, new)


def _missing_key(
    on_line: list[ast.expr], lines: list[str], line: int, message: str
) -> Iterator[_Edit]:
    key = message.strip().strip("'\"")
    for node in on_line:
        if (
            _read_subscript(node)
            and isinstance(node.slice, ast.Constant)
            and (not key or str(node.slice.value) == key)
        ):
            new = f"{_text(lines, node.value)}.get({_text(lines, node.slice)})"
            yield "default-for-missing-key", "a default for the missing key", line, \
                _replace(lines, node, new)  # fmt: skip


def _division(
    on_line: list[ast.expr], lines: list[str], line: int, message: str
) -> Iterator[_Edit]:
    for node in on_line:
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)):
            new = f"({_text(lines, node)} if {_text(lines, node.right)} else 0)"
            yield "guard-division", "a guard against dividing by zero", line, \
                _replace(lines, node, new)  # fmt: skip


def _bounds(on_line: list[ast.expr], lines: list[str], line: int, message: str) -> Iterator[_Edit]:
    for node in on_line:
        if _read_subscript(node) and not isinstance(node.slice, ast.Slice):
            seq, index = _text(lines, node.value), _text(lines, node.slice)
            new = f"({seq}[{index}] if -len({seq}) <= {index} < len({seq}) else None)"
            yield "bounds-check", "a bounds check", line, _replace(lines, node, new)


def _read_subscript(node: ast.expr) -> TypeGuard[ast.Subscript]:
    return isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)


def _none_guard(
    on_line: list[ast.expr], lines: list[str], line: int, message: str
) -> Iterator[_Edit]:
    wanted = _MISSING_ATTRIBUTE.search(message)
    for node in on_line:
        if isinstance(node, ast.Attribute) and (not wanted or node.attr == wanted["name"]):
            subject = _text(lines, node.value)
            indent = re.match(r"\s*", lines[line - 1]).group()  # type: ignore[union-attr]
            guard = [f"{indent}if {subject} is None:\n", f"{indent}    return None\n"]
            yield "guard-none", f"a guard for a None {subject}", line, \
                [*lines[: line - 1], *guard, *lines[line - 1 :]]  # fmt: skip


def _generic(tree: ast.AST, lines: list[str], line: int) -> Iterator[_Edit]:
    on_line = _on_line(tree, line)
    for node in on_line:
        if isinstance(node, ast.Call) and _text(lines, node.func) == "range" and node.args:
            end = node.args[-1] if len(node.args) <= 2 else node.args[1]
            yield "range-end", "an off-by-one on the range's end", line, \
                _replace(lines, end, f"{_text(lines, end)} + 1")  # fmt: skip
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and _is_len_minus_one(node):
            yield "range-end", "an off-by-one: len(…) - 1", line, \
                _replace(lines, node, _text(lines, node.left))  # fmt: skip
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            left = _paren(node.left, _text(lines, node.left))
            right = _paren(node.right, _text(lines, node.right))
            yield "ceiling-division", "ceiling division where a count rounds down", line, \
                _replace(lines, node, f"-(-{left} // {right})")  # fmt: skip
    for node in on_line:
        if isinstance(node, ast.Compare):
            yield from _flips(node, lines, line)


_BY_KIND: dict[str, Callable[[list[ast.expr], list[str], int, str], Iterator[_Edit]]] = {
    "KeyError": _missing_key, "ZeroDivisionError": _division, "IndexError": _bounds,
}  # fmt: skip


def _flips(node: ast.Compare, lines: list[str], line: int) -> Iterator[_Edit]:
    """Each comparison operator of `node` with its bound moved by one, one at a time."""
    operands = [node.left, *node.comparators]
    for index, op in enumerate(node.ops):
        flipped = _COMPARISON_FLIPS.get(type(op))
        if flipped is None:
            continue
        parts = [_text(lines, operands[0])]
        for position, (other, right) in enumerate(zip(node.ops, operands[1:], strict=True)):
            symbol = flipped if position == index else _SYMBOLS[type(other)]
            parts += [symbol, _text(lines, right)]
        yield "comparison-bound", f"the comparison's bound ({flipped})", line, \
            _replace(lines, node, " ".join(parts))  # fmt: skip


_SYMBOLS: dict[type[ast.cmpop], str] = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
    ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
}  # fmt: skip


def _is_len_minus_one(node: ast.BinOp) -> bool:
    left, right = node.left, node.right
    return (isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "len"
            and isinstance(right, ast.Constant) and right.value == 1)  # fmt: skip


def _on_line(tree: ast.AST, line: int) -> list[ast.expr]:
    """The expressions written on `line` alone (one spanning lines is left as it is)."""
    found = [n for n in ast.walk(tree) if isinstance(n, ast.expr)]
    return [n for n in found if n.lineno == line == n.end_lineno]


def _text(lines: list[str], node: ast.expr) -> str:
    """The source of a one-line node (ast's columns count UTF-8 bytes)."""
    raw = lines[node.lineno - 1].encode()
    return raw[node.col_offset : node.end_col_offset].decode()


def _replace(lines: list[str], node: ast.expr, new: str) -> list[str]:
    raw = lines[node.lineno - 1].encode()
    edited = raw[: node.col_offset] + new.encode() + raw[node.end_col_offset :]
    return [*lines[: node.lineno - 1], edited.decode(), *lines[node.lineno :]]


def _paren(node: ast.expr, text: str) -> str:
    simple = isinstance(node, (ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.Subscript))
    return text if simple else f"({text})"


def _diff(path: str, old: list[str], new: list[str]) -> str:
    if old == new:
        return ""
    return "".join(difflib.unified_diff(old, new, f"a/{path}", f"b/{path}", n=2))
