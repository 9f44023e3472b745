"""The report steps: `intake` (the normalized report, frames mapped onto the workspace, a
store review the rules are unsure of classified by its nearest labelled reviews) and
`triage` (its kind refined by a model when still unsure)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic_ai.models import Model

from diagnoser.encoder import encoder
from diagnoser.intake import Report, ReportIn, Trace, build_report
from diagnoser.intake.prototypes import refine as by_prototypes
from diagnoser.intake.prototypes import review_text, unsure_review
from diagnoser.triage import Triage, refine
from diagnoser.workspace import Workspace

__all__ = ["intake", "triage"]


def intake(
    report_in: ReportIn,
    workspace: Workspace,
    traces: Sequence[Trace] = (),
    truncated: Sequence[str] = (),
) -> Report:
    """The normalized report: frames mapped onto the workspace's files, index and
    packages, which are walked and built here if the workspace is not warm; an unsure
    store review's kind from its nearest prototypes (`Settings.review_encoder`). Blocking."""
    report = build_report(
        report_in,
        traces=traces,
        files=workspace.file_paths,
        index=workspace.repository.index,
        truncated=truncated,
        packages=workspace.packages,
    )
    if not workspace.settings.review_encoder or not unsure_review(report.classification):
        return report  # the encoder is loaded only for a review that needs it
    refined = by_prototypes(report.classification, review_text(report), encoder())
    return report.model_copy(update={"classification": refined})


async def triage(
    report: Report,
    model: Model | None,
    workspace: Workspace,
    *,
    on_note: Callable[[str], None] | None = None,
) -> Triage:
    """The report's classification, refined by `model` when the rules are unsure of it
    and the workspace's settings allow (`Settings.triage_*`); what happened is told to
    `on_note`. Never raises for the model's sake."""
    settings = workspace.settings
    triaged = await refine(
        report, model if settings.triage_enabled else None, below=settings.triage_below,
        timeout=settings.triage_timeout_seconds,
    )  # fmt: skip
    if on_note and triaged.note:
        on_note(triaged.note)
    return triaged
