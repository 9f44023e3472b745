"""grep: a regex or literal search over the workspace, grouped per file, with each match's
enclosing definition. RE2 (linear time) runs the patterns, so no pattern can hang it;
patterns RE2 does not support (backreferences, lookaround) get a clear error."""

from __future__ import annotations

import fnmatch
import time
from dataclasses import dataclass, field

import re2

from diagnoser.constants import (
    GREP_DEFAULT_RESULTS,
    GREP_MAX_CONTEXT,
    REGEX_MAX_MEMORY,
)
from diagnoser.errors import ToolError
from diagnoser.tools.text import clip, numbered
from diagnoser.workspace import Workspace


@dataclass(frozen=True, slots=True)
class Match:
    path: str
    line: int
    text: str
    symbol: str | None
    """Qualified name of the innermost definition around the line, if the file is mapped."""
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()


@dataclass(slots=True)
class GrepResult:
    pattern: str
    matches: list[Match] = field(default_factory=list)
    total: int = 0
    """All matches found (may exceed `len(matches)`)."""
    files_with_matches: int = 0
    files_scanned: int = 0
    timed_out: bool = False
    cut_by_chars: bool = False

    def render(self) -> str:
        if not self.matches:
            scope = f" in {self.files_scanned} files" + (
                " (time cap hit)" if self.timed_out else ""
            )
            return f"no matches for {self.pattern!r}{scope}"
        lines: list[str] = []
        current = None
        width = len(str(max(m.line + len(m.after) for m in self.matches)))
        for match in self.matches:
            if match.path != current:
                current = match.path
                lines.append(f"{match.path}:")
            for offset, text in enumerate(match.before, start=-len(match.before)):
                lines.append(numbered(match.line + offset, text, width, mark="-"))
            where = f"  [{match.symbol}]" if match.symbol else ""
            lines.append(numbered(match.line, match.text, width) + where)
            for offset, text in enumerate(match.after, start=1):
                lines.append(numbered(match.line + offset, text, width, mark="-"))
        lines.extend(self._notes())
        return "\n".join(lines)

    def _notes(self) -> list[str]:
        notes = []
        if self.total > len(self.matches) or self.cut_by_chars:
            notes.append(
                f"(showing {len(self.matches)} of {self.total}{'+' if self.timed_out else ''} "
                f"matches in {self.files_with_matches} files — "
                "narrow the pattern or add a path_glob)"
            )
        if self.timed_out:
            notes.append(f"(time cap hit after {self.files_scanned} files; results are partial)")
        return notes

    __str__ = render


def grep(
    workspace: Workspace,
    pattern: str,
    *,
    path_glob: str | None = None,
    fixed: bool = False,
    case_sensitive: bool = False,
    context: int = 0,
    max_results: int = GREP_DEFAULT_RESULTS,
) -> GrepResult:
    """Search every listed text file for `pattern` (line by line semantics)."""
    if not pattern:
        raise ToolError("empty pattern; give a word, a literal or an RE2 regex")
    regex = _compile(pattern, fixed=fixed, case_sensitive=case_sensitive)
    limit = max(1, min(max_results, workspace.settings.grep_max_results))
    context = max(0, min(context, GREP_MAX_CONTEXT))
    result = GrepResult(pattern)
    deadline = time.monotonic() + workspace.settings.grep_time_seconds
    budget = workspace.settings.grep_max_chars
    for entry in workspace.files:
        if path_glob and not _glob_match(entry.path, path_glob):
            continue
        if time.monotonic() > deadline:
            result.timed_out = True
            break
        data = workspace.read_listed(entry)
        result.files_scanned += 1
        if data is None or regex.search(data) is None:
            continue
        result.files_with_matches += 1
        budget = _collect(
            workspace, entry.path, data, regex, result, limit=limit, context=context, budget=budget
        )
    return result


def _collect(
    workspace: Workspace,
    path: str,
    data: bytes,
    regex: re2._Regexp,
    result: GrepResult,
    *,
    limit: int,
    context: int,
    budget: int,
) -> int:
    """Add one file's matches (one per line); returns the character budget left."""
    line_numbers: list[int] = []
    line, counted = 1, 0
    for found in regex.finditer(data):  # in order: count newlines incrementally
        line += data.count(b"\n", counted, found.start())
        counted = found.start()
        if not line_numbers or line_numbers[-1] != line:
            line_numbers.append(line)
    lines = data.decode("utf-8", errors="replace").split("\n")
    result.total += len(line_numbers)
    for number in line_numbers:
        if len(result.matches) >= limit or budget <= 0:
            result.cut_by_chars = result.cut_by_chars or budget <= 0
            break
        before = tuple(lines[max(0, number - 1 - context) : number - 1])
        after = tuple(lines[number : number + context])
        match = Match(
            path, number, clip(lines[number - 1]), _symbol(workspace, path, number), before, after
        )
        result.matches.append(match)
        budget -= len(match.text) + len(path) // 4 + sum(len(clip(t)) for t in before + after)
    return budget


def _symbol(workspace: Workspace, path: str, line: int) -> str | None:
    definition = workspace.repository.index.enclosing(path, line)
    return definition.qualified if definition else None


def _compile(pattern: str, *, fixed: bool, case_sensitive: bool) -> re2._Regexp:
    options = re2.Options()
    options.log_errors = False
    options.never_nl = True  # line semantics: a match never spans lines
    options.case_sensitive = case_sensitive
    options.literal = fixed
    options.max_mem = REGEX_MAX_MEMORY
    source = pattern if fixed else f"(?m){pattern}"
    try:
        return re2.compile(source.encode("utf-8"), options)
    except re2.error as exc:
        detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise ToolError(
            f"invalid pattern {pattern!r}: {detail}. Patterns use RE2 syntax (no "
            "backreferences or lookaround); pass fixed=true to search a literal"
        ) from None


def _glob_match(path: str, glob: str) -> bool:
    """`*.py`, `django/db/**`, `**/tests/*.py`: matched on the whole path or the file name."""
    name = path.rsplit("/", 1)[-1]
    return fnmatch.fnmatchcase(path, glob) or ("/" not in glob and fnmatch.fnmatchcase(name, glob))
