"""`excerpt`: the bounded view of a report's text that a model is shown.

Intake reads the whole text (traces, fingerprint, mentions); a model is shown at most
`REPORT_VIEW_CHARS` of it: the head and the tail of the text and every trace intake found
(each whole, or its own head and tail when the traces together would take more than
their share), with a marker line where lines were left out. Pure and deterministic, so
intake's note (`Report.truncated`) and the model's prompt describe the same cut.

    view = excerpt(report.text, report.traces)
    prompt = f"{view.note}\\n{view.text}" if view.cut else report.text
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from diagnoser.constants import REPORT_VIEW_CHARS
from diagnoser.intake.payloads._render import render_traces
from diagnoser.intake.report import Trace

TRACE_SHARE = 0.5
"""Of the view, what the traces may take together; the head and the tail of the text share
the rest (and what the traces left). Half: a trace is the best evidence a report holds,
the first and last lines say what the reporter saw and did."""

SNAP_CHARS = 2_000
"""A cut moves back to the end of a line when one ends within this many characters, so
the model sees whole lines (the trace parsers' longest line, `MAX_LINE`)."""

FILL_PASSES = 3
"""Times the head and tail grow into the room a trace they overlap left unused."""

CONTEXT_LINES = 1
"""Lines shown before each trace: the log line that announced it (`[ERROR] Exception on
/api/notes`, `FATAL EXCEPTION: main`) often names the request or the thread."""

MIN_PART_CHARS = 200
"""A trace shown by its own head and tail keeps at least this much of each: its exception
line and a frame or two, however many traces share the view."""


@dataclass(frozen=True, slots=True)
class Excerpt:
    """What the model is shown of a text, and what was left out."""

    text: str
    """The view: kept parts in text order, a marker line for each gap."""
    total: int
    """Characters of the whole text."""
    shown: int
    """Characters of the whole text the view keeps (markers not counted)."""
    left_out: tuple[tuple[int, int], ...] = ()
    """Line ranges (1-based, inclusive) not shown."""
    traces: int = 0
    """Traces the view shows (each whole or by its head and tail)."""

    @property
    def cut(self) -> bool:
        return self.shown < self.total

    @property
    def note(self) -> str:
        """One line for `Report.truncated` and the prompt (empty when nothing was cut)."""
        if not self.cut:
            return ""
        ranges = [f"{a:,}–{b:,}" if a != b else f"{a:,}" for a, b in self.left_out]
        if len(ranges) > 4:
            ranges = [*ranges[:3], f"{len(ranges) - 3} more ranges"]
        lines = ", ".join(ranges[:-1]) + " and " + ranges[-1] if len(ranges) > 1 else ranges[0]
        kept = {0: "", 1: ", keeping its trace"}.get(
            self.traces, f", keeping its {self.traces} traces"
        )
        return (
            f"text: the report's text was cut from {self.total:,} to {self.shown:,} "
            f"characters for the model{kept}: lines {lines} left out"
        )


def excerpt(text: str, traces: Sequence[Trace], *, limit: int = REPORT_VIEW_CHARS) -> Excerpt:
    """The view of `text` a model is shown: all of it when it fits in `limit` characters,
    else its head, its tail and `traces` (parsed from it, or a payload's), in text order."""
    if len(text) <= limit:
        return Excerpt(text, len(text), len(text))
    spans, extra = _trace_spans(text, traces)
    count = len(spans) + len(extra)
    share = max(int(limit * TRACE_SHARE) // max(count, 1), 2 * MIN_PART_CHARS)
    keep = [part for start, end in spans for part in _head_and_tail(text, start, end, share)]
    blocks = [block if len(block) <= share else block[:share] + "\n…" for block in extra]
    room = limit - sum(len(b) for b in blocks)
    rest = max(room - sum(end - start for start, end in keep), 2 * MIN_PART_CHARS) // 2
    for _ in range(FILL_PASSES):  # the head or tail overlapped a trace: give them what it left
        merged = _merged(
            [
                *keep,
                (0, _snap_back(text, rest, 0)),
                (_snap_forward(text, len(text) - rest), len(text)),
            ]
        )
        spare = room - sum(end - start for start, end in merged)
        if spare < SNAP_CHARS:
            break
        rest += spare // 2
    parts: list[str] = []
    gaps: list[tuple[int, int]] = []
    for index, (start, end) in enumerate(merged):
        if index:
            gap = (_line(text, merged[index - 1][1]), _line(text, start - 1))
            gaps.append(gap)
            lines = f"{gap[0]:,}–{gap[1]:,}" if gap[0] != gap[1] else f"{gap[0]:,}"
            chars = start - merged[index - 1][1]
            parts.append(f"[… lines {lines} left out ({chars:,} characters) …]\n")
        parts.append(text[start:end])
    if blocks:
        parts.append("\n\n[traces from the payload]\n" + "\n\n".join(blocks))
    shown = sum(end - start for start, end in merged)
    return Excerpt("".join(parts), len(text), shown, tuple(gaps), count)


def _trace_spans(text: str, traces: Sequence[Trace]) -> tuple[list[tuple[int, int]], list[str]]:
    """Each trace's span in `text`, whole lines; a payload's trace (no span) where its
    rendering is found in `text`, else that rendering apart."""
    spans: list[tuple[int, int]] = []
    extra: list[str] = []
    for trace in traces:
        start, end = trace.start, trace.end
        if end <= start:  # a payload's trace: look for the adapter's rendering of it
            block = render_traces([trace])
            start = text.find(block)
            if start < 0:
                extra.append(block)
                continue
            end = start + len(block)
        for _ in range(1 + CONTEXT_LINES):  # back to the start of its line, then more
            window = max(0, start - SNAP_CHARS)
            newline = text.rfind("\n", window, max(start - 1, 0))
            start = newline + 1 if newline >= 0 else (0 if window == 0 else start)
        spans.append((start, _line_end(text, min(end, len(text)))))
    return spans, extra


def _head_and_tail(text: str, start: int, end: int, share: int) -> list[tuple[int, int]]:
    """The span whole if it fits in `share`, else its first and last halves of it."""
    if end - start <= share:
        return [(start, end)]
    half = share // 2
    return [(start, _snap_back(text, start + half, start)), (_snap_forward(text, end - half), end)]


def _snap_back(text: str, pos: int, floor: int) -> int:
    """`pos`, or just after the last line end before it (within `SNAP_CHARS`, past `floor`)."""
    newline = text.rfind("\n", max(floor, pos - SNAP_CHARS), pos)
    return newline + 1 if newline >= 0 else pos


def _snap_forward(text: str, pos: int) -> int:
    """`pos`, or just after the next line end (within `SNAP_CHARS`)."""
    newline = text.find("\n", pos, pos + SNAP_CHARS)
    return newline + 1 if newline >= 0 else pos


def _line_end(text: str, pos: int) -> int:
    """Just after the line `pos` is in (within `SNAP_CHARS`), or `pos`."""
    if pos == 0 or text[pos - 1] == "\n":
        return pos
    return _snap_forward(text, pos)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` sorted, overlapping or touching ones joined."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _line(text: str, pos: int) -> int:
    """The 1-based number of the line character `pos` is in."""
    return text.count("\n", 0, pos) + 1
