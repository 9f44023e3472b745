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

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    title: str = Field(min_length=1)
    """One line: what fails, and where."""
    root_cause: RootCause
    files: list[Location] = Field(default_factory=list)
    """Relevance order: the first is the most likely fault location."""
    changes: list[ProposedChange] = Field(default_factory=list)
    """Proposed changes, each to one file, with a unified diff when one is given."""
    complexity: Level = Level.MEDIUM
    """How hard the change is; medium when the report does not say."""
    risk: Level = Level.MEDIUM
    """How likely the change breaks something else; medium when the report does not say."""
    rationale: str = ""
    """Why that complexity and risk."""
