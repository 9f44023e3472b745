from __future__ import annotations

import pickle
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from repomap.words import Words, count_terms, terms, words

CODE_ALPHABET = st.sampled_from([*"aAzZ_09 .:-\n", "select_related", "HTTPError", "ß"])


def test_words_split_identifiers_and_compounds_stay_whole() -> None:
    assert words("QuerySet.select_related() of 2 ids") == [
        "query", "set", "select", "related", "ids",
    ]  # fmt: skip
    assert terms("QuerySet.select_related()") == [
        "query", "set", "select", "related", "queryset", "select_related",
    ]  # fmt: skip
    assert terms("plain words only") == ["plain", "words", "only"]


@given(st.lists(CODE_ALPHABET, max_size=60).map("".join))
def test_counting_terms_is_counting_what_terms_finds(text: str) -> None:
    assert count_terms(text) == Counter(terms(text))


@given(st.dictionaries(st.sampled_from(["date", "parse_date", "x1", "ß"]), st.integers(1, 99)))
def test_packed_words_answer_as_the_counts_they_pack(found: dict[str, int]) -> None:
    words = Words.from_counts(found)
    assert dict(words.counts()) == found and dict(words) == found and len(words) == len(found)
    assert pickle.loads(pickle.dumps(words)) == words
