"""The classifier's phrase lists: written as the cues read them (`diagnoser.intake.phrases`)."""

from __future__ import annotations

import pytest

from diagnoser.intake import phrases
from diagnoser.intake.cues import normalized

LISTS = ("CRASH", "BUG", "PERFORMANCE", "REGRESSION", "REQUEST", "QUESTION",
         "DEVELOPER_FAILURE", "PRAISE", "NEGATED_FAILURE", "COMPLAINT", "NEGATORS")  # fmt: skip


@pytest.mark.parametrize("name", LISTS)
def test_every_phrase_is_lower_case_with_straight_apostrophes(name: str) -> None:
    """The text is lower-cased and its apostrophes straightened before any phrase is looked
    for: a phrase written otherwise would never match."""
    for phrase in getattr(phrases, name):
        if not phrase.startswith("re:"):
            read = normalized(phrase, None, developer=False).removeprefix("\n")
            assert read.replace("'", "") == phrase.replace("'", ""), phrase
