"""The last step: a `Structured` draft grounded against the files into a Finding, with
its provenance — every model that answered and what each step used and cost."""

from __future__ import annotations

from collections.abc import Sequence

from diagnoser.finding import Finding, Suspect, Usage
from diagnoser.grounding import ground
from diagnoser.intake import Kind
from diagnoser.pipeline.investigation import Investigation
from diagnoser.pipeline.step import INVESTIGATE, STRUCTURE, TRIAGE
from diagnoser.pipeline.structured import Structured
from diagnoser.provenance import make_provenance
from diagnoser.triage import Triage
from diagnoser.usage import merge_costs, record
from diagnoser.workspace import Workspace

__all__ = ["ground_finding", "triage_answered", "triage_stage"]


def ground_finding(
    structured: Structured,
    workspace: Workspace,
    investigation: Investigation,
    *,
    kind: Kind,
    durations: dict[str, float],
    suspected: Sequence[Suspect] = (),
    triaged: Triage | None = None,
) -> Finding:
    """The Finding the draft earns against the files (what fails is dropped, status,
    checks and blast radius decided), classified `kind`, with its provenance (`triaged`'s
    model and usage too) and our `suspected` files as its `suspects`. Blocking: reads the
    files and `.git`."""
    answered = triage_answered(triaged)
    answered[INVESTIGATE] = list(investigation.answered or [investigation.model])
    if structured.formatter:
        answered[STRUCTURE] = list(structured.answered or [structured.formatter])
    stages = {**triage_stage(triaged), **investigation.stages}
    if structured.formatter:
        stages[STRUCTURE] = record(structured.usage)
    usage = investigation.usage + structured.usage
    if triaged is not None:
        usage = triaged.usage + usage
    provenance = make_provenance(
        workspace, durations, answered=answered, tool_calls=investigation.tool_calls,
        usage=usage, stages=stages, priced=merge_costs(
            triaged.costs if triaged else {}, investigation.costs, structured.costs
        ),
    )  # fmt: skip
    found = ground(
        structured.draft, workspace, classification=kind, markdown=investigation.markdown,
        suspects=suspected,
    )  # fmt: skip
    return found.model_copy(update={"provenance": provenance})


def triage_answered(triaged: Triage | None) -> dict[str, list[str]]:
    """The triage step's model, when one answered."""
    return {TRIAGE: [triaged.model]} if triaged and triaged.model else {}


def triage_stage(triaged: Triage | None) -> dict[str, Usage]:
    """The triage call's usage as a part of the run, when a model was asked."""
    return {TRIAGE: record(triaged.usage)} if triaged and triaged.usage.requests else {}
