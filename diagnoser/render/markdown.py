"""A Finding as a Markdown report for a person: what broke, where, why, and what to change.

Every string that came from a model or a repository is escaped (`text.inline`,
`text.block`) or fenced (`text.fence`, `text.code_span`), so no value can break the
document around it.
"""

from __future__ import annotations

from collections.abc import Mapping

from diagnoser.finding import (
    RANKING_ONLY,
    BlastRadius,
    Change,
    Check,
    Finding,
    Location,
    Origin,
    Provenance,
    Reproduction,
    ReproductionStatus,
    Risk,
    Suspect,
    Tested,
    TestStatus,
)
from diagnoser.render.constants import (
    CHECK_FAILED,
    CHECK_PASSED,
    COMMIT_CHARS,
    LOG_COMMAND,
    MAX_TRIAGE_SIGNALS,
    REPRODUCER_WORDS,
    REPRODUCTION_WORDS,
    STATUS_BADGES,
    TEST_WORDS,
)
from diagnoser.render.languages import language_for
from diagnoser.render.text import block, code_span, fence, inline, table_cell

SUSPECTS_NOTE = "_Ranked from the report's trace, names and words; hints, not checked findings._"
PLACED_NOTE = f"_{RANKING_ONLY[0].upper()}{RANKING_ONLY[1:]}._"


def to_markdown(finding: Finding) -> str:
    """The report for `finding`; a short note when it was not investigated."""
    if is_actionable(finding):
        blocks = [
            *_header(finding),
            *_root_cause(finding),
            *_reproduction(finding.reproduction),
            *_locations(finding.files),
            *_suspects(finding.suspects),
            *_changes(finding.changes),
            *_risk(finding.risk),
            *_checks(finding.checks),
            *_provenance(finding.provenance),
        ]
    else:
        blocks = [
            _title(finding),
            f"Classified as {finding.classification.value} — not investigated.",
            *_triage(finding),
            *_suspects(finding.suspects, note=PLACED_NOTE),
        ]
    return "\n\n".join(blocks) + "\n"


def is_actionable(finding: Finding) -> bool:
    """Whether there is anything to report beyond the classification."""
    return bool(finding.files) or finding.root_cause is not None


def location_label(location: Location) -> str:
    """`path:start-end` (or `path:line` for one line)."""
    lines = f"{location.start_line}"
    if location.end_line != location.start_line:
        lines += f"-{location.end_line}"
    return f"{location.path}:{lines}"


def _title(finding: Finding) -> str:
    title = inline(finding.title) or f"{finding.classification.value} report"
    return f"# {title}"


def _header(finding: Finding) -> list[str]:
    badge = f"**{finding.classification.value}** · {STATUS_BADGES[finding.status]}"
    return [_title(finding), badge, *_triage(finding), *_not_attempted(finding.reproduction)]


def _triage(finding: Finding) -> list[str]:
    """One line: the intake's kind, its confidence and the signals that decided it."""
    triage = finding.triage
    if triage is None:
        return []
    signals = ", ".join(code_span(signal) for signal in triage.signals[:MAX_TRIAGE_SIGNALS])
    more = len(triage.signals) - MAX_TRIAGE_SIGNALS
    signals += f" (+{more} more)" if more > 0 else ""
    line = f"Triage: {triage.kind.value} · {triage.confidence:.0%} confident"
    return [f"{line} · {signals}" if signals else line]


def _root_cause(finding: Finding) -> list[str]:
    cause = finding.root_cause
    if cause is None:
        return ["## Root cause", "_No root cause was established._"]
    blocks = ["## Root cause", f"**{inline(cause.summary)}**"]
    if cause.explanation.strip():
        blocks.append(block(cause.explanation))
    blocks.append(f"Confidence: {cause.confidence:.0%}")
    return blocks


def _not_attempted(reproduction: Reproduction) -> list[str]:
    """One line under the badge when nothing was run: `grounded` is no claim that it was."""
    if reproduction.status is not ReproductionStatus.NOT_ATTEMPTED:
        return []
    words = REPRODUCTION_WORDS[reproduction.status]
    reason = inline(reproduction.reason)
    return [f"Reproduction: {words} — {reason}" if reason else f"Reproduction: {words}"]


def _reproduction(reproduction: Reproduction) -> list[str]:
    """What ran to reproduce the report's failure, and how it ended (when something was
    tried: else `_not_attempted`)."""
    if reproduction.status is ReproductionStatus.NOT_ATTEMPTED:
        return []
    verdict = f"**{REPRODUCTION_WORDS[reproduction.status]}**"
    if reproduction.reason.strip():
        verdict += f" — {inline(reproduction.reason)}"
    items = []
    if reproduction.source is not None:
        items.append(f"- Reproducer: {REPRODUCER_WORDS[reproduction.source]}")
    if reproduction.command.strip():
        items.append(f"- Command: {code_span(reproduction.command)}")
    if reproduction.exception.strip():
        items.append(f"- Exception: {code_span(reproduction.exception)}")
    if reproduction.command.strip() or reproduction.seconds:
        items.append(f"- Time: {_seconds(reproduction.seconds)}")
    if reproduction.log:
        items.append(f"- Log: {_log(reproduction.log)}")
    blocks = ["## Reproduction", verdict]
    if items:
        blocks.append("\n".join(items))
    if reproduction.frames:
        frames = [
            f"{number}. {code_span(f'{frame.path}:{frame.line}')}"
            + (f" in {code_span(frame.function)}" if frame.function else "")
            for number, frame in enumerate(reproduction.frames, start=1)
        ]
        blocks += ["Frames in the repository, outermost first:", "\n".join(frames)]
    return blocks


def _log(reference: str) -> str:
    return f"{code_span(reference)} ({code_span(f'{LOG_COMMAND} {reference}')} prints it)"


def _locations(files: list[Location]) -> list[str]:
    blocks = ["## Locations"]
    if not files:
        return [*blocks, "_No grounded locations._"]
    for number, location in enumerate(files, start=1):
        parts = [code_span(location_label(location))]
        if location.symbol:
            parts.append(code_span(location.symbol))
        parts.append(f"**{location.role.value}**")
        if location.reason.strip():
            parts.append(inline(location.reason))
        blocks.append(f"{number}. " + " — ".join(parts))
        if location.evidence.strip():
            blocks.append(fence(location.evidence, language_for(location.path)))
    return blocks


def _suspects(suspects: list[Suspect], note: str = SUSPECTS_NOTE) -> list[str]:
    """A short table of the ranked files: hints beside the grounded locations."""
    if not suspects:
        return []
    rows = ["| # | file:line | function | score | why |", "|---:|---|---|---:|---|"]
    for rank, suspect in enumerate(suspects, start=1):
        where = table_cell(code_span(f"{suspect.path}:{suspect.line}"))
        function = table_cell(code_span(suspect.symbol)) if suspect.symbol else "—"
        why = table_cell(inline(f"{suspect.source.value}: {suspect.reason}".rstrip(": ")))
        rows.append(f"| {rank} | {where} | {function} | {suspect.score:.2f} | {why} |")
    return ["## Suspects", note, "\n".join(rows)]


def _changes(changes: list[Change]) -> list[str]:
    if not changes:
        return []
    blocks = ["## Proposed changes"]
    for number, change in enumerate(changes, start=1):
        made = " _(repair template, not a model; kept because a run passed it)_" \
            if change.origin is Origin.TEMPLATE else ""  # fmt: skip
        blocks.append(f"{number}. {code_span(change.path)} — {inline(change.summary)}{made}")
        if change.rationale.strip():
            blocks.append(block(change.rationale))
        if change.diff and change.diff.strip():
            blocks.append(fence(change.diff, "diff"))
        blocks.append(_tested(change.tested))
    return blocks


def _tested(tested: Tested) -> str:
    """One line: whether the tests ran with the change applied, how, and how it ended."""
    line = f"Tested: **{TEST_WORDS[tested.status]}**"
    if tested.detail.strip():
        line += f" — {inline(tested.detail)}"
    if tested.status is not TestStatus.NOT_RUN and tested.command.strip():
        line += f" · {code_span(tested.command)}"
    if tested.log:
        line += f" · log {_log(tested.log)}"
    return line


def _risk(risk: Risk) -> list[str]:
    items = [
        f"- Complexity: **{risk.complexity.value}**",
        f"- Risk: **{risk.risk.value}**",
        f"- Blast radius: {_blast_radius(risk.blast_radius)}",
    ]
    blocks = ["## Risk", "\n".join(items)]
    if risk.rationale.strip():
        blocks.append(block(risk.rationale))
    return blocks


def _blast_radius(radius: BlastRadius) -> str:
    if not radius.symbols and not radius.references and not radius.files:
        return "none computed"
    symbols = ", ".join(code_span(symbol) for symbol in radius.symbols) or "no symbols"
    files = ", ".join(code_span(path) for path in radius.files)
    text = (
        f"{_count(len(radius.symbols), 'symbol')} ({symbols}); "
        f"{_count(radius.references, 'reference')} in {_count(len(radius.files), 'file')}"
    )
    return f"{text}: {files}" if files else text


def _checks(checks: list[Check]) -> list[str]:
    if not checks:
        return []
    lines = []
    for check in checks:
        mark = CHECK_PASSED if check.passed else CHECK_FAILED
        line = f"- {mark} **{inline(check.name)}**"
        if check.detail.strip():
            line += f": {inline(check.detail)}"
        lines.append(line)
    return ["## Checks", "\n".join(lines)]


def _provenance(provenance: Provenance) -> list[str]:
    lines = []
    if provenance.repo:
        repo = code_span(provenance.repo)
        if provenance.commit:
            repo += f" @ {code_span(provenance.commit[:COMMIT_CHARS])}"
        lines.append(f"- Repository: {repo}")
    if provenance.revision_note:
        lines.append(f"- **Release not found:** {inline(provenance.revision_note)}")
    models = ", ".join(code_span(model) for model in provenance.models) or "none recorded"
    lines.append(f"- Models: {models}")
    if provenance.tool_calls:
        lines.append(f"- Tool calls: {_tool_calls(provenance.tool_calls)}")
    cached = f" ({provenance.cache_read_tokens:,} cached)" if provenance.cache_read_tokens else ""
    lines.append(
        f"- Requests: {provenance.requests:,}; tokens: {provenance.input_tokens:,} in{cached}, "
        f"{provenance.output_tokens:,} out"
    )
    cost = "unknown" if provenance.cost_usd is None else f"${provenance.cost_usd:.4f}"
    unpriced = [name for name, price in provenance.costs.items() if price is None]
    if unpriced and provenance.cost_usd is None:
        cost += f" (no price known for {', '.join(code_span(name) for name in unpriced)})"
    lines.append(f"- Cost: {cost}")
    if provenance.durations:
        lines.append(f"- Durations: {_durations(provenance.durations)}")
    return ["## Provenance", "\n".join(lines)]


def _tool_calls(calls: Mapping[str, int]) -> str:
    stages = " · ".join(f"{inline(stage)} {count:,}" for stage, count in calls.items())
    return f"{stages} (total {sum(calls.values()):,})"


def _durations(durations: Mapping[str, float]) -> str:
    states = " · ".join(f"{inline(state)} {_seconds(secs)}" for state, secs in durations.items())
    return f"{states} (total {_seconds(sum(durations.values()))})"


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"


def _seconds(value: float) -> str:
    return f"{value:.2f} s"
