"""What a text shows the classifier: its phrases found as whole words, negated ones
masked, template headings and thanks left out (`diagnoser.intake.cues`)."""

from __future__ import annotations

import pytest

from diagnoser.intake.cues import (
    COMPLAINT_CUES,
    DEVELOPER_FAILURE_CUES,
    FAILURE_CUES,
    MAX_SCAN_CHARS,
    NEGATED_CUES,
    PRAISE_CUES,
    QUESTION_CUES,
    REGRESSION_CUES,
    REQUEST_CUES,
    fired,
    normalized,
    signals_in,
)
from diagnoser.intake.phrases import BUG, CRASH, PERFORMANCE
from diagnoser.intake.report import Kind


def shown(text: str, *, developer: bool = False, title: str | None = None) -> dict[str, object]:
    found = signals_in(normalized(text, title, developer=developer), developer=developer)
    return {
        "failure": found.failure, "regression": found.regression, "request": found.request,
        "question": found.question, "praise": found.praise, "negated": found.negated,
        "complaint": found.complaint, "question_mark": found.question_mark,
    }  # fmt: skip


def test_a_phrase_matches_whole_words_in_alphabetic_scripts_and_anywhere_in_cjk() -> None:
    assert shown("Excellent, it flags nothing")["failure"] == {}  # not "lent", not "lag"
    assert shown("it is so slow")["failure"] == {Kind.PERFORMANCE: ["slow", "so slow"]}
    assert shown("这个应用总是闪退")["failure"] == {Kind.CRASH: ["闪退"]}


@pytest.mark.parametrize(("kind", "phrases"), [(Kind.CRASH, CRASH), (Kind.BUG, BUG),
                                               (Kind.PERFORMANCE, PERFORMANCE)])  # fmt: skip
def test_every_literal_phrase_is_found_as_written(kind: Kind, phrases: tuple[str, ...]) -> None:
    for phrase in phrases:
        if not phrase.startswith("re:"):
            found = fired(normalized(phrase, None, developer=False), FAILURE_CUES[kind],
                          negatable=False)  # fmt: skip
            assert phrase.strip() in found, phrase


def test_every_phrase_compiles_though_none_is_compiled_before_its_literal_is_seen() -> None:
    lists = (*FAILURE_CUES.values(), REGRESSION_CUES, REQUEST_CUES, QUESTION_CUES,
             PRAISE_CUES, NEGATED_CUES, COMPLAINT_CUES, DEVELOPER_FAILURE_CUES)  # fmt: skip
    for cue in (cue for cues in lists for cue in cues):
        pattern = cue.pattern  # a bad regular expression raises here
        assert cue.name == "" or pattern.search(cue.literal), cue  # a phrase finds itself


def test_a_regular_expression_phrase_is_named_by_the_text_it_matched() -> None:
    body = normalized("Broken since v3.3.1 on every run", None, developer=False)
    assert fired(body, REGRESSION_CUES, negatable=False) == ["since v3.3.1"]


def test_a_negated_failure_is_masked_and_noted() -> None:
    assert shown("Never had a problem, never crashed") == shown("") | {
        "negated": ["never had a problem"], "praise": [],
    }  # fmt: skip
    assert shown("Not a single crash in a year")["failure"] == {}
    assert shown("Not cheap, and it crashes")["failure"] == {Kind.CRASH: ["crashes"]}


def test_colloquial_contractions_are_spelled_out() -> None:
    assert normalized("Cant log in, DONT know why", None, developer=False) == (
        "\ncan't log in, don't know why"
    )


def test_template_headings_and_thanks_are_left_out_for_developer_tools() -> None:
    text = "### Feature request\n**Describe the bug**\nIt fails.\nThanks so much!"
    assert normalized(text, None, developer=True) == "\n\n\nit fails.\n"
    assert "feature request" in normalized(text, None, developer=False)


def test_only_the_first_characters_are_read() -> None:
    filler = "lorem " * (MAX_SCAN_CHARS // 6 + 1)
    assert shown(filler + "it crashes")["failure"] == {}
    assert shown("it crashes " + filler)["failure"] == {Kind.CRASH: ["crashes"]}


def test_twice_is_a_failure_only_to_a_developer_and_a_wish_is_none_in_a_review() -> None:
    assert shown("it runs twice")["failure"] == {}
    assert shown("it runs twice", developer=True)["failure"] == {Kind.BUG: ["twice"]}
    assert shown("Missing a search, a problem")["failure"] == {}
    assert shown("Missing a search, a problem", developer=True)["failure"] == {
        Kind.BUG: ["problem"]
    }
