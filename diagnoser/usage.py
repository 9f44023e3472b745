"""What a run's models used and what it cost: `Usage` records from PydanticAI's
`RunUsage`, per funnel stage (`StageMeter`), and prices per model from genai-prices
(`ModelResponse.cost()`), for the Finding's provenance and the run's events.

A price is never guessed: the embedded `offline` investigator costs 0; a model
genai-prices does not know (a local model, a gateway's own name) costs None, and so does
any sum it is part of.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.usage import RunUsage

from diagnoser.constants import OFFLINE_MODEL
from diagnoser.finding import Finding, Usage

__all__ = [
    "Costs",
    "StageMeter",
    "answered_by",
    "costs",
    "describe",
    "merge_costs",
    "record",
    "summed",
    "total_cost",
]

Costs = dict[str, Decimal | None]
"""USD per model name; None: no price known."""


def record(usage: RunUsage) -> Usage:
    """The provenance record of a PydanticAI usage."""
    return Usage(
        requests=usage.requests, input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens, cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
    )  # fmt: skip


def answered_by(messages: Sequence[ModelMessage]) -> list[str]:
    """The models that answered, in order, each once (a `FallbackModel`'s responses name
    the model of the chain that produced them)."""
    names = (m.model_name for m in messages if isinstance(m, ModelResponse) and m.model_name)
    return list(dict.fromkeys(names))


def costs(messages: Sequence[ModelMessage]) -> Costs:
    """What each model that answered in `messages` cost, in USD; None for a model with a
    response genai-prices cannot price."""
    priced: Costs = {}
    for response in (m for m in messages if isinstance(m, ModelResponse)):
        name = response.model_name or ""
        if name in priced and priced[name] is None:
            continue
        price = _price(response)
        known = priced.get(name, Decimal(0))
        priced[name] = None if price is None or known is None else known + price
    return priced


def _price(response: ModelResponse) -> Decimal | None:
    if response.model_name == OFFLINE_MODEL:
        return Decimal(0)  # the embedded investigator: no provider, nothing billed
    if not response.model_name:
        return None
    try:
        return response.cost().total_price
    except (LookupError, ValueError):  # unknown model or provider; usage not reported
        return None


def merge_costs(*parts: Mapping[str, Decimal | None]) -> Costs:
    """Costs of several runs, per model (unknown stays unknown)."""
    merged: Costs = {}
    for part in parts:
        for name, price in part.items():
            known = merged.get(name, Decimal(0))
            merged[name] = None if price is None or known is None else known + price
    return merged


def total_cost(priced: Mapping[str, Decimal | None]) -> Decimal | None:
    """The sum, or None when any price is unknown."""
    if any(price is None for price in priced.values()):
        return None
    return sum((price for price in priced.values() if price is not None), Decimal(0))


def describe(usage: Usage, cost: Decimal | None = None, *, priced: bool = True) -> str:
    """One line for an event: `7 requests, 12,345 input tokens (3,000 cached), 456
    output, $0.0123`."""
    cached = f" ({usage.cache_read_tokens:,} cached)" if usage.cache_read_tokens else ""
    text = (
        f"{usage.requests} requests, {usage.input_tokens:,} input tokens{cached}, "
        f"{usage.output_tokens:,} output"
    )
    if priced:
        text += f", ${cost:.4f}" if cost is not None else ", cost unknown"
    return text


@dataclass
class StageMeter:
    """The usage of each funnel stage: told the stage and the run's usage before every
    model request (the funnel's `PrepareTools` hook), it attributes each request — with
    its response — to the stage it was made in."""

    marks: list[tuple[str, RunUsage]] = field(default_factory=list)
    """(stage, the run's usage when its first request was about to go), in order."""

    def observe(self, stage: str, usage: RunUsage) -> None:
        if not self.marks or self.marks[-1][0] != stage:
            self.marks.append((stage, copy.copy(usage)))

    def split(self, total: RunUsage) -> dict[str, Usage]:
        """`total` (the run's usage at its end) per stage, in stage order; a stage seen
        twice is summed."""
        ends = [usage for _, usage in self.marks[1:]] + [total]
        parts: dict[str, RunUsage] = {}
        for (stage, start), end in zip(self.marks, ends, strict=True):
            parts[stage] = parts.get(stage, RunUsage()) + _minus(end, start)
        return {stage: record(usage) for stage, usage in parts.items() if usage.requests}


def _minus(end: RunUsage, start: RunUsage) -> RunUsage:
    """`end - start` on the counts we record (RunUsage's own `-` also touches cost)."""
    return RunUsage(
        requests=end.requests - start.requests,
        input_tokens=end.input_tokens - start.input_tokens,
        output_tokens=end.output_tokens - start.output_tokens,
        cache_read_tokens=end.cache_read_tokens - start.cache_read_tokens,
        cache_write_tokens=end.cache_write_tokens - start.cache_write_tokens,
    )


def summed(records: Iterable[Usage]) -> Usage:
    """Several records as one."""
    total = RunUsage()
    for one in records:
        total += RunUsage(**one.model_dump())
    return record(total)


def with_usage(finding: Finding, step: str, spent: Usage, priced: Costs) -> Finding:
    """`finding` with one more step's model usage and cost in its provenance (a step run
    after the provenance was made: the revision of failed changes)."""
    if not spent.requests:
        return finding
    old = finding.provenance
    before = {name: None if usd is None else Decimal(str(usd)) for name, usd in old.costs.items()}
    costs_now = merge_costs(before, priced)
    total = total_cost(costs_now)
    provenance = old.model_copy(update={
        "requests": old.requests + spent.requests,
        "input_tokens": old.input_tokens + spent.input_tokens,
        "output_tokens": old.output_tokens + spent.output_tokens,
        "cache_read_tokens": old.cache_read_tokens + spent.cache_read_tokens,
        "cache_write_tokens": old.cache_write_tokens + spent.cache_write_tokens,
        "usage": {**old.usage, step: spent},
        "costs": {k: None if v is None else float(v) for k, v in costs_now.items()},
        "cost_usd": None if total is None else float(total),
    })  # fmt: skip
    return finding.model_copy(update={"provenance": provenance})
