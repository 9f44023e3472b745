"""`Draft`: what an explorer's report states — the diagnosis before grounding.

The template parser (`template.parse_report`) and the formatter model
(`formatter.format_report`) both produce a Draft; only grounding (`grounding.ground`)
turns one into a `Finding`. So a Draft holds nothing we compute ourselves: no status,
checks, blast radius, provenance, suspects or classification — a model asked for a Draft
cannot claim them, because the schema it is shown has no such fields.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from diagnoser.finding import Level, Location, ProposedChange, RootCause


class Draft(BaseModel):
    """A report's diagnosis as written: title, root cause, locations, changes, and how
    hard and risky the change looks."""

    # Descriptions as `Field`s, not attribute docstrings: pydantic reads those from the
    # source at import, walking frames through `inspect.getmodule` — 24 ms of every start.
    model_config = ConfigDict(frozen=True)

    title: str = Field(min_length=1, description="One line: what fails, and where.")
    root_cause: RootCause
    files: list[Location] = Field(
        default_factory=list,
        description="Relevance order: the first is the most likely fault location.",
    )
    changes: list[ProposedChange] = Field(
        default_factory=list,
        description="Proposed changes, each to one file, with a unified diff when one is given.",
    )
    complexity: Level = Field(
        default=Level.MEDIUM,
        description="How hard the change is; medium when the report does not say.",
    )
    risk: Level = Field(
        default=Level.MEDIUM,
        description=(
            "How likely the change breaks something else; medium when the report does not say."
        ),
    )
    rationale: str = Field(default="", description="Why that complexity and risk.")
