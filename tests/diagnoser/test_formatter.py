"""The formatter: a scripted model in place of the cheap one (`formatter_agent.override`)
extracts a Draft — and only a Draft — from a report off the template, and says what it
cost."""

from __future__ import annotations

import asyncio

from diagnoser.draft import Draft
from diagnoser.finding import Level, Role
from diagnoser.formatter import FORMATTER_REQUESTS, format_report, formatter_agent
from tests.diagnoser.structured import answering

OFF_TEMPLATE = "The bug: Cart.total in src/app.py lines 8-9 sums None prices. Low risk."
COMPUTED = {"status", "checks", "provenance", "suspects", "classification", "blast_radius"}
"""What grounding and the pipeline decide; never a model's to fill in."""


DRAFT: dict[str, object] = {
    "title": "None prices in Cart.total",
    "root_cause": {"summary": "sums None prices", "confidence": 0.6},
    "files": [{"path": "src/app.py", "start_line": 8, "end_line": 9, "symbol": "Cart.total"}],
    "risk": "low",
}


def test_the_formatter_extracts_a_draft_and_says_what_it_cost() -> None:
    model, offered = answering(DRAFT)
    formatted = asyncio.run(format_report(OFF_TEMPLATE, model=model))
    assert formatted.draft == Draft.model_validate(DRAFT)
    assert formatted.draft.risk is Level.LOW and formatted.draft.complexity is Level.MEDIUM
    assert formatted.draft.files[0].role is Role.FAULT
    assert formatted.usage.requests == len(offered) == 1
    assert formatted.usage.input_tokens > 0 and formatted.usage.output_tokens > 0


def test_the_formatter_is_shown_a_schema_without_what_we_compute() -> None:
    model, offered = answering(DRAFT)
    asyncio.run(format_report(OFF_TEMPLATE, model=model))
    schema = offered[0].info.output_tools[0].parameters_json_schema
    assert set(schema["properties"]) == {
        "title", "root_cause", "files", "changes", "complexity", "risk", "rationale",
    }  # fmt: skip
    assert not COMPUTED & set(str(schema).replace("'", " ").split())
    assert schema["properties"]["title"]["description"].startswith("One line")


def test_what_a_model_claims_beyond_the_schema_is_dropped() -> None:
    model, _ = answering(
        {**DRAFT, "status": "grounded", "checks": [{"name": "ok", "passed": True}]}
    )
    formatted = asyncio.run(format_report(OFF_TEMPLATE, model=model))
    assert formatted.draft == Draft.model_validate(DRAFT)
    assert not COMPUTED & set(formatted.draft.model_dump())


def test_an_invalid_answer_is_retried_within_the_request_bound() -> None:
    model, offered = answering({"title": "no root cause"}, DRAFT)
    formatted = asyncio.run(format_report(OFF_TEMPLATE, model=model))
    assert formatted.draft.title == "None prices in Cart.total"
    assert formatted.usage.requests == len(offered) == 2 <= FORMATTER_REQUESTS


def test_tests_can_swap_the_formatters_model() -> None:
    model, offered = answering(DRAFT)
    unused, never = answering({})
    with formatter_agent.override(model=model):
        formatted = asyncio.run(format_report(OFF_TEMPLATE, model=unused))
    assert formatted.draft.title == "None prices in Cart.total"
    assert len(offered) == 1 and never == []
