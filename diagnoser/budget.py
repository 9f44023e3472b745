"""A run's hard usage limits (PydanticAI `UsageLimits`, from `Settings`), when the funnel
must go to its report so one is still written, and why a run that hit a limit failed.

    limits = RunLimits.of(settings)
    agent.run(..., usage_limits=limits.usage_limits())       # hard: the run ends `failed`
    limits.report_due(usage, last_input_tokens)              # soft: the funnel moves on
    limits.exceeded(error)                                   # "the run used … over DIAGNOSER_…"

The soft check runs before every model request (`Budget.before_request`, from the
funnel's `PrepareTools` hook): when what is left would not pay for one more tool step
and the report with its retries, the funnel goes to report at once. The hard limits
then only stop a run that overran anyway (a huge response, many tool calls at once).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.usage import RunUsage, UsageLimits

from diagnoser.funnel import Funnel, Stage
from diagnoser.settings import Settings
from diagnoser.usage import StageMeter

__all__ = ["REPORT_REQUESTS", "Budget", "RunLimits"]

REPORT_REQUESTS = 3
"""Requests the report may take: the report and its output retries (`agent.OUTPUT_RETRIES`)."""
REPORT_OUTPUT_TOKENS = 2_000
"""Output tokens of one report (the template report is ~1k), reserved per attempt."""
_NAMED = re.compile(r"\b(request|tool_calls|input_tokens|output_tokens|total_tokens)_limit\b")
_COUNT = re.compile(r"\b(?:tool_calls|input_tokens|output_tokens|total_tokens)=(\d+)")


@dataclass(frozen=True, slots=True)
class RunLimits:
    """The most one investigation may use; each bound is a `Settings` field."""

    requests: int
    tool_calls: int
    input_tokens: int
    output_tokens: int
    total_tokens: int

    @classmethod
    def of(cls, settings: Settings) -> RunLimits:
        return cls(
            settings.request_limit, settings.max_tool_calls, settings.max_input_tokens,
            settings.max_output_tokens, settings.max_total_tokens,
        )  # fmt: skip

    def usage_limits(self, spent: RunUsage | None = None) -> UsageLimits:
        """PydanticAI's hard limits; with `spent`, what is left of the tokens after it
        (for the formatter, after the explorer)."""
        spent = spent or RunUsage()
        return UsageLimits(
            request_limit=self.requests, tool_calls_limit=self.tool_calls,
            input_tokens_limit=self.input_tokens - spent.input_tokens,
            output_tokens_limit=self.output_tokens - spent.output_tokens,
            total_tokens_limit=self.total_tokens - spent.total_tokens,
        )  # fmt: skip

    def report_due(self, usage: RunUsage, last_input: int) -> str | None:
        """Why the funnel must write its report now, or None: after one more tool step
        (`last_input` tokens, the latest request's, or more), the report and its retries
        would no longer fit in what is left."""
        steps = 1 + REPORT_REQUESTS
        if self.requests - usage.requests <= REPORT_REQUESTS:
            return f"request budget: {usage.requests} of {self.requests} used"
        if usage.tool_calls >= self.tool_calls:
            return f"tool-call budget: {usage.tool_calls} of {self.tool_calls} used"
        if usage.input_tokens + steps * last_input > self.input_tokens:
            return f"input-token budget: {usage.input_tokens:,} of {self.input_tokens:,} used"
        output = usage.output_tokens + steps * REPORT_OUTPUT_TOKENS
        if output > self.output_tokens:
            return f"output-token budget: {usage.output_tokens:,} of {self.output_tokens:,} used"
        if usage.total_tokens + steps * (last_input + REPORT_OUTPUT_TOKENS) > self.total_tokens:
            return f"token budget: {usage.total_tokens:,} of {self.total_tokens:,} used"
        return None

    def exceeded(
        self, error: UsageLimitExceeded, usage: RunUsage | None = None, *,
        spent: RunUsage | None = None,
    ) -> str:  # fmt: skip
        """The limit `error` names, in words, with the setting that sets it; `usage` is the
        failed run's, `spent` what the run's earlier steps used (the formatter's limits are
        what the explorer left)."""
        text = str(error)
        named = _NAMED.search(text)
        count = _COUNT.search(text)
        kind = named.group(1) if named else ""
        used = int(count.group(1)) if count else None
        if used is not None and spent is not None and kind.endswith("tokens"):
            used += getattr(spent, kind)
        if kind == "request":
            made = usage.requests if usage else self.requests
            return (
                f"the run made {made} model requests, the most "
                f"DIAGNOSER_REQUEST_LIMIT={self.requests} allows"
            )
        if kind == "tool_calls":
            return (
                f"the model asked for {used or '?'} tool calls, over "
                f"DIAGNOSER_MAX_TOOL_CALLS={self.tool_calls}"
            )
        if kind in ("input_tokens", "output_tokens", "total_tokens"):
            limit = getattr(self, kind)
            words = kind.replace("_", " ").replace("total ", "")
            shown = f"{used:,}" if used is not None else "more"
            return f"the run used {shown} {words}, over DIAGNOSER_MAX_{kind.upper()}={limit:,}"
        return text


@dataclass
class Budget:
    """One run's limits and its usage per stage, told of every model request."""

    limits: RunLimits | None = None
    """None: no soft limits (the hard ones, if any, are the caller's)."""
    meter: StageMeter = field(default_factory=StageMeter)
    _seen: RunUsage = field(default_factory=RunUsage)

    def before_request(self, funnel: Funnel, usage: RunUsage) -> None:
        """Move the funnel to report when the budget calls for it, then note the stage
        this request is made in."""
        last_input = usage.input_tokens - self._seen.input_tokens
        self._seen = RunUsage(input_tokens=usage.input_tokens)
        if self.limits is not None and funnel.stage is not Stage.REPORT:
            why = self.limits.report_due(usage, last_input)
            if why:
                funnel.stop(why)
        self.meter.observe(funnel.stage.value, usage)
