"""Usage records and prices: per funnel stage from the run's usage before each request,
and per model from genai-prices — `offline` free, an unknown model None, never a guess."""

from __future__ import annotations

from decimal import Decimal

import pytest
from genai_prices import calc_price
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.usage import RequestUsage, RunUsage

from diagnoser.constants import OFFLINE_MODEL
from diagnoser.finding import Usage
from diagnoser.usage import StageMeter, costs, describe, merge_costs, record, summed, total_cost


def answer(
    model: str, tokens_in: int = 1_000, tokens_out: int = 100, **usage: int
) -> ModelResponse:
    return ModelResponse(
        parts=[TextPart("x")], model_name=model, provider_name="openai",
        usage=RequestUsage(input_tokens=tokens_in, output_tokens=tokens_out),
    )  # fmt: skip


def test_a_known_model_is_priced_by_genai_prices_and_summed_per_model() -> None:
    priced = costs([answer("gpt-4o", 1_000, 100), answer("gpt-4o", 3_000, 50)])
    expected = calc_price(
        RequestUsage(input_tokens=4_000, output_tokens=150), "gpt-4o", provider_id="openai"
    ).total_price
    assert priced == {"gpt-4o": expected} and expected > 0
    assert total_cost(priced) == expected


def test_the_offline_model_costs_nothing_and_an_unknown_one_is_unknown() -> None:
    assert costs([answer(OFFLINE_MODEL)]) == {OFFLINE_MODEL: Decimal(0)}
    priced = costs([answer("gpt-4o"), answer("my-local-model"), answer("my-local-model")])
    assert priced["my-local-model"] is None and priced["gpt-4o"] is not None
    assert total_cost(priced) is None  # a sum with an unknown part is unknown
    assert total_cost({OFFLINE_MODEL: Decimal(0)}) == 0


def test_costs_of_two_steps_merge_per_model() -> None:
    merged = merge_costs({"a": Decimal("0.5")}, {"a": Decimal("0.25"), "b": None})
    assert merged == {"a": Decimal("0.75"), "b": None}


def test_the_meter_attributes_each_request_to_the_stage_it_was_made_in() -> None:
    meter = StageMeter()
    run = RunUsage()
    for stage, tokens in [("explore", 100), ("explore", 150), ("deep_dive", 200), ("report", 300)]:
        meter.observe(stage, run)  # before the request
        run.incr(RequestUsage(input_tokens=tokens, output_tokens=10, cache_read_tokens=tokens // 2))
        run.requests += 1
    split = meter.split(run)
    assert split == {
        "explore": Usage(requests=2, input_tokens=250, output_tokens=20, cache_read_tokens=125),
        "deep_dive": Usage(requests=1, input_tokens=200, output_tokens=10, cache_read_tokens=100),
        "report": Usage(requests=1, input_tokens=300, output_tokens=10, cache_read_tokens=150),
    }
    assert summed(split.values()) == record(run)


def test_a_stage_without_requests_is_left_out() -> None:
    meter = StageMeter()
    meter.observe("explore", RunUsage())
    assert meter.split(RunUsage()) == {}


@pytest.mark.parametrize(
    ("cost", "text"),
    [(Decimal("0.01234"), "$0.0123"), (None, "cost unknown")],
)
def test_an_events_usage_line_says_tokens_cache_and_cost(cost: Decimal | None, text: str) -> None:
    usage = Usage(requests=7, input_tokens=12_345, output_tokens=456, cache_read_tokens=3_000)
    line = describe(usage, cost)
    assert line.startswith("7 requests, 12,345 input tokens (3,000 cached), 456 output")
    assert line.endswith(text)
