"""A step of the pipeline: its name, as provenance keys it, and how it ends a run.

A step that ends the run `failed` raises `StepFailed`; a model's failure is put in
words once (`reason`), the same for the explorer and the formatter.
"""

from __future__ import annotations

from pydantic_ai.exceptions import AgentRunError, UnexpectedModelBehavior

__all__ = ["INVESTIGATE", "REVISE", "STRUCTURE", "TRIAGE", "StepFailed", "reason"]

TRIAGE = "triage"
INVESTIGATE = "investigate"
STRUCTURE = "structure"
REVISE = "revise"
"""The steps a model answers in: the keys of `Provenance.answered` (`revise`: a change
that failed its run, back to the explorer's model, `diagnoser.verify.revision`)."""


class StepFailed(Exception):
    """A step ended the run `failed`: `detail` for the event, `reason` for the outcome."""

    def __init__(self, detail: str, reason: str) -> None:
        super().__init__(reason)
        self.detail, self.reason = detail, reason


def reason(exc: Exception) -> str:
    """A model failure in words: pydantic-ai's own errors speak for themselves; anything
    else (a provider library's connection error) is named by its type too."""
    if isinstance(exc, AgentRunError | UnexpectedModelBehavior):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
