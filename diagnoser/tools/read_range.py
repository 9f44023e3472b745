"""read_range: numbered lines of one file, at most a window, headed by the definitions
they fall in. Out-of-range requests are clamped with a note, never an error the model
cannot recover from."""

from __future__ import annotations

from dataclasses import dataclass

from diagnoser.errors import ToolError
from diagnoser.tools.text import numbered
from diagnoser.workspace import Workspace


@dataclass(frozen=True, slots=True)
class ReadResult:
    path: str
    start: int
    end: int
    """The lines actually returned (1-based, inclusive); end < start for an empty file."""
    lines: tuple[str, ...]
    total_lines: int
    enclosing: tuple[str, ...]
    """Definitions overlapping the range, outermost first, as `kind Name (lines a-b)`."""
    notes: tuple[str, ...] = ()

    def render(self) -> str:
        head = f"{self.path} lines {self.start}-{self.end} of {self.total_lines}"
        if self.enclosing:
            head += " — in " + "; ".join(self.enclosing)
        width = len(str(max(self.end, 1)))
        body = [numbered(self.start + i, text, width) for i, text in enumerate(self.lines)]
        return "\n".join([head, *body, *(f"({note})" for note in self.notes)])

    __str__ = render


def read_range(
    workspace: Workspace, path: str, start: int = 1, end: int | None = None
) -> ReadResult:
    """Lines `start`..`end` of `path` (1-based, inclusive), clamped to the file and the window."""
    resolved, lines = workspace.read_text_lines(path)
    total = len(lines)
    window = workspace.settings.read_window_lines
    notes: list[str] = []
    try:
        first = int(start)
        last = int(end) if end is not None else first + window - 1
    except (TypeError, ValueError):
        raise ToolError("start and end must be line numbers (integers)") from None
    if last < first:
        first, last = last, first
        notes.append("start and end were swapped")
    first = max(first, 1)
    if total and first > total:
        notes.append(f"the file has {total} lines; showing its last lines")
        first = max(1, total - window + 1)
        last = total
    if last > total:
        if end is not None and total:
            notes.append(f"the file ends at line {total}")
        last = total
    if last - first + 1 > window:
        notes.append(
            f"showing {window} lines, the window cap; continue with start={first + window}"
        )
        last = first + window - 1
    chosen = tuple(lines[first - 1 : last]) if total else ()
    return ReadResult(
        path=resolved.rel,
        start=first,
        end=last if total else 0,
        lines=chosen,
        total_lines=total,
        enclosing=_enclosing(workspace, resolved.rel, first, last),
        notes=tuple(notes),
    )


def _enclosing(workspace: Workspace, path: str, first: int, last: int) -> tuple[str, ...]:
    """Definitions that contain the start of the range, outermost first, plus any that
    begin inside it when the range starts outside every definition."""
    definitions = workspace.repository.index.definitions_in(path)
    around = [d for d in definitions if d.start_line <= first <= d.end_line]
    if not around:
        around = [d for d in definitions if first <= d.start_line <= last][:3]
    return tuple(f"{d.kind} {d.qualified} (lines {d.start_line}-{d.end_line})" for d in around)
