"""A Finding's provenance: where and how it was made — the repository and commit, the
models that answered each step, tool calls per funnel stage, time per state, and what the
models used and cost (`diagnoser.usage`)."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from pydantic_ai.usage import RunUsage

from diagnoser.commit import head_commit
from diagnoser.finding import Provenance, Usage
from diagnoser.usage import Costs, total_cost
from diagnoser.workspace import Workspace

__all__ = ["make_provenance"]


def make_provenance(
    workspace: Workspace,
    durations: Mapping[str, float],
    *,
    answered: Mapping[str, list[str]] | None = None,
    tool_calls: Mapping[str, int] | None = None,
    usage: RunUsage | None = None,
    stages: Mapping[str, Usage] | None = None,
    priced: Costs | None = None,
) -> Provenance:
    """`answered` are the models that answered each step, `usage` every model's, summed,
    `stages` per part of the run, `priced` the cost per model (`cost_usd` their sum, None
    when one is unknown or no model was asked). Blocking: reads `.git`."""
    answered = dict(answered or {})
    usage = usage or RunUsage()
    priced = priced or {}
    total = total_cost(priced)
    return Provenance(
        repo=str(workspace.root),
        commit=workspace.commit or head_commit(workspace.root),
        revision_note=workspace.note,
        tool_calls=dict(tool_calls or {}),
        models=list(dict.fromkeys(name for names in answered.values() for name in names)),
        answered=answered,
        durations=dict(durations),
        requests=usage.requests,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        usage=dict(stages or {}),
        costs={name: _usd(price) for name, price in priced.items()},
        cost_usd=_usd(total) if priced else None,
    )


def _usd(price: Decimal | None) -> float | None:
    return float(price) if price is not None else None
