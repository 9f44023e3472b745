"""The structure step: the explorer's markdown → a `Draft`, by the template parser for
free, or by the formatter model when the report drifted from the template
(`Structured`: the draft, and which formatter made it at what cost)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage

from diagnoser.budget import RunLimits
from diagnoser.draft import Draft
from diagnoser.formatter import format_report
from diagnoser.pipeline.step import StepFailed, reason
from diagnoser.template import TemplateError, parse_report
from diagnoser.usage import Costs

__all__ = ["Structured", "structure"]


@dataclass(frozen=True, slots=True)
class Structured:
    draft: Draft
    """What the report states: not yet grounded."""
    formatter: str | None = None
    """The formatter model that structured it; None when the template parser did."""
    answered: tuple[str, ...] = ()
    """The formatter's models that answered, in order (a fallback chain's may be more
    than one); empty: `formatter` did, or the parser."""
    usage: RunUsage = field(default_factory=RunUsage)
    """The formatter's requests and tokens (none for the parser)."""
    costs: Costs = field(default_factory=dict)
    """What the formatter cost, per model."""


async def structure(
    markdown: str,
    formatter: Model | None,
    *,
    on_note: Callable[[str], None] | None = None,
    limits: RunLimits | None = None,
    spent: RunUsage | None = None,
) -> Structured:
    """Template → Draft for free; the formatter model when the report drifted (told to
    `on_note`), within what the run's `limits` leave after `spent` (the explorer's).
    Raises StepFailed when neither can structure it."""
    try:
        return Structured(parse_report(markdown))
    except TemplateError as exc:
        if formatter is None:
            raise StepFailed(f"the report is not in the template: {exc}", str(exc)) from None
        if on_note:
            on_note(f"off template ({exc}); formatter model takes over: {formatter.model_name}")
    try:
        left = limits.usage_limits(spent) if limits else None
        formatted = await format_report(markdown, model=formatter, limits=left)
    except UsageLimitExceeded as failure:
        assert limits is not None  # no limits, nothing to exceed
        why = limits.exceeded(failure, spent=spent)
        detail = f"the formatter could not structure the report: {why}"
        raise StepFailed(detail, why) from None
    except Exception as failure:  # as for the explorer: the run fails, saying why
        why = reason(failure)
        detail = f"the formatter could not structure the report: {why}"
        raise StepFailed(detail, why) from None
    return Structured(
        formatted.draft, formatter.model_name, formatted.answered, formatted.usage,
        formatted.costs,
    )  # fmt: skip
