from __future__ import annotations

import json
import random
import unicodedata
from pathlib import Path

import pytest

from diagnoser.intake.classify import Prior, classify, prior_for
from diagnoser.intake.cues import MAX_SCAN_CHARS
from diagnoser.intake.report import Classification, FrameOrder, Kind, Source, Trace, TraceFormat
from diagnoser.intake.traces import find_traces

TRACE = Trace(format=TraceFormat.PYTHON, source_order=FrameOrder.OLDEST_FIRST)


@pytest.mark.parametrize(
    ("text", "rating", "kind"),
    [
        ("The app freezes when I save a note. Useless!", 1, Kind.BUG),
        ("It crashes every time I open the camera", 2, Kind.CRASH),
        ("So slow, takes forever to load my notes", 2, Kind.PERFORMANCE),
        ("It would be nice to have a dark mode", 4, Kind.FEATURE_REQUEST),
        ("How do I export my notes to PDF?", None, Kind.QUESTION),
        ("Love it, best app ever, thank you!", 5, Kind.PRAISE),
        ("ok", None, Kind.NOISE),
        ("La aplicación se cierra cada vez que guardo", 1, Kind.CRASH),
        ("Die App stürzt ab beim Speichern", 1, Kind.CRASH),
        ("Приложение не работает после обновления", 1, Kind.BUG),
        ("Ça plante tout le temps", 1, Kind.CRASH),
        ("Love the design but it crashes on startup", 3, Kind.CRASH),
    ],
)
def test_kinds(text: str, rating: int | None, kind: Kind) -> None:
    assert classify(text, rating=rating).kind is kind


def test_a_trace_makes_a_crash_whatever_the_language() -> None:
    verdict = classify("エラーが出ました", traces=[TRACE])
    assert verdict.kind is Kind.CRASH and verdict.confidence >= 0.9
    assert "trace:python" in verdict.signals


def test_rating_alone_still_classifies_an_unknown_language() -> None:
    verdict = classify("Hiki programu haifanyi kazi vizuri kabisa", rating=1)
    assert verdict.kind is Kind.BUG and "rating:1" in verdict.signals
    assert classify("Programu nzuri sana, asante", rating=5).kind is Kind.PRAISE


def test_signals_explain_and_actionable_is_derived() -> None:
    verdict = classify("It would be nice to have tags", rating=4)
    assert "phrase:would be nice" in verdict.signals and not verdict.actionable
    assert classify("crash on save").actionable


def test_an_exception_name_without_a_trace_is_a_crash() -> None:
    text = 'Fix "string index out of range" when null.\nIndexError: string index out of range'
    verdict = classify(text + "\nI can attach the fix here, or open a pull request?")
    assert verdict.kind is Kind.CRASH and "exception-name:IndexError" in verdict.signals
    assert "exception-name:IndexError" not in classify(text, traces=[TRACE]).signals


def test_deprecated_usage_is_a_bug_not_a_feature_request() -> None:
    text = 'The MySQL backend uses deprecated "db" kwargs; support for them will be removed.'
    assert classify(text).kind is Kind.BUG


def test_phrases_match_whole_words_only() -> None:
    verdict = classify("Excellent notes app, it flags nothing wrongly", rating=5)
    assert "phrase:lent" not in verdict.signals and "phrase:lag" not in verdict.signals
    assert verdict.kind is Kind.PRAISE


def test_random_bytes_are_noise_whatever_they_spell() -> None:
    junk = random.Random(7).randbytes(4_096).decode("utf-8", errors="replace")
    text = junk + "\nTraceback crash exception\n" + junk
    verdict = classify(text, traces=[TRACE])
    assert verdict.kind is Kind.NOISE
    assert verdict.signals == [f"binary:{_unreadable(text):.0%} unreadable"]


def test_a_log_with_a_few_stray_bytes_stays_a_log() -> None:
    log = "ERROR app crashed: NullPointerException in checkout\n" * 40
    raw = bytearray(log.encode())
    for at in range(0, len(raw), 100):  # 1% stray bytes
        raw[at] = 0xFF
    verdict = classify(raw.decode("utf-8", errors="replace"))
    assert verdict.kind is Kind.CRASH
    assert not any(s.startswith("binary:") for s in verdict.signals)


def test_the_binary_threshold_counts_control_characters_but_not_line_breaks() -> None:
    assert classify("a\tb\r\nc " * 500).kind is not Kind.NOISE
    assert classify("it crashes \x00\x01\x02\x03\x04\x05" * 100).kind is Kind.NOISE


def test_phrases_past_the_scan_limit_are_not_looked_for() -> None:
    filler = "lorem ipsum dolor sit amet " * (MAX_SCAN_CHARS // 27 + 1)
    assert classify(filler + "it crashes").kind is Kind.BUG  # words, no signal
    assert classify("it crashes " + filler).kind is Kind.CRASH
    late_exception = classify(filler + "java.lang.OutOfMemoryError")  # one cheap pattern
    assert "exception-name:OutOfMemoryError" in late_exception.signals
    assert not any(s.startswith(("phrase:", "failure:")) for s in late_exception.signals)


def _unreadable(text: str) -> float:
    bad = sum(
        1 for c in text if c == "\ufffd" or (unicodedata.category(c) == "Cc" and c not in "\t\n\r")
    )
    return bad / len(text)


# Classification by source: the report's origin sets the prior.

DEFECTS = {Kind.CRASH, Kind.BUG, Kind.PERFORMANCE}
LABELLED = Path(__file__).resolve().parents[3] / "bench" / "data" / "classify"


def review(text: str, rating: int | None = None) -> Classification:
    return classify(text, rating=rating, source=Source.GOOGLE_PLAY)


def issue(text: str, title: str | None = None) -> Classification:
    return classify(text, title=title, source=Source.GITHUB)


def test_the_source_sets_the_prior() -> None:
    chatter = "I downloaded this for my mom last week"
    assert review(chatter).kind is Kind.NOISE and review(chatter).prior == "review"
    assert issue(chatter).kind is Kind.BUG and issue(chatter).prior == "developer"
    assert classify(chatter).prior == "neutral"
    assert "rule:developer-prior" in issue(chatter).signals


def test_prior_for_sources_and_a_rating_on_the_default_source() -> None:
    assert prior_for(Source.APP_STORE) is Prior.REVIEW
    assert prior_for(Source.CRASH_LOG) is Prior.DEVELOPER
    assert prior_for(Source.WEBHOOK) is Prior.NEUTRAL and prior_for(None) is Prior.NEUTRAL
    assert prior_for(Source.BUG_REPORT, rating=5) is Prior.REVIEW  # stars: a store review
    assert prior_for(Source.GITHUB, rating=5) is Prior.DEVELOPER


@pytest.mark.parametrize(
    ("text", "rating", "kind"),
    [
        ("My favorite app. It really works!", 5, Kind.PRAISE),
        ("Used it on my trip to Spain with the kids", 5, Kind.PRAISE),
        ("Worst app ever. Waste of money.", 1, Kind.NOISE),
        ("Not what I expected from the screenshots.", 2, Kind.NOISE),
        ("Not what I expected from the screenshots.", 4, Kind.PRAISE),
    ],
)
def test_the_star_rating_decides_a_review_without_a_failure(
    text: str, rating: int, kind: Kind
) -> None:
    assert review(text, rating).kind is kind


@pytest.mark.parametrize(
    "text",
    [
        "Never failed me once, my go-to app",
        "no problems at all, syncs perfectly",
        "Not a single crash in two years",
        "Hasn't crashed once since I installed it",
        "Noch nie abgestürzt, sehr zuverlässig",
        "Nunca me ha fallado",
        "Отличное приложение, ни разу не вылетало",
        "非常好用，从来没有闪退过",
        "一度も落ちたことがありません",
    ],
)
def test_a_negated_failure_is_praise(text: str) -> None:
    verdict = review(text, 5)
    assert verdict.kind is Kind.PRAISE, verdict.signals
    assert not any(signal.startswith("failure:") for signal in verdict.signals)


def test_a_negation_in_another_clause_does_not_cancel_the_failure() -> None:
    assert review("Not cheap, and it crashes on every launch", 2).kind is Kind.CRASH


@pytest.mark.parametrize(
    "text",
    ["cant log in since yesterday", "Doesnt work on my phone", "wont open at all", "dont work"],
)
def test_colloquial_spelling_is_read(text: str) -> None:
    assert review(text, 1).kind is Kind.BUG


@pytest.mark.parametrize(
    "text",
    [
        "Love it! My only wish is that I could edit them.",
        "Would like to see a calendar view",
        "please add dark mode",
        "Needs a way to export to CSV",
        "Missing a search function, which makes it useless",
    ],
)
def test_wishes_and_requests_are_feature_requests(text: str) -> None:
    assert review(text, 4).kind is Kind.FEATURE_REQUEST


def test_praise_with_a_concrete_failure_is_a_defect() -> None:
    verdict = review("Love the design, best app ever, but it crashes when I upload a photo", 5)
    assert verdict.kind is Kind.CRASH and "failure:crashes" in verdict.signals
    assert review("Great app but the timer doesn't go off when locked", 4).kind is Kind.BUG


def test_a_regression_in_a_review_counts_only_when_the_rating_is_not_high() -> None:
    assert review("Since the update the widget shows yesterday's weather", 2).kind is Kind.BUG
    assert review("Since the update it feels even better, love it", 5).kind is Kind.PRAISE


@pytest.mark.parametrize(
    ("title", "text"),
    [
        ("Pagination no longer seems to work correctly", "Page 2 returns page 1."),
        ("to_csv date_format kwarg ignored", "Dates are written in full."),
        ("Client is ALWAYS sending the header", "Even after auth = None."),
        ("Tests started generating warnings", "Every import warns now."),
        ("Regression since v3.3", "Timezones are lost on a round trip."),
        ("resize", "`resize()` used to keep the aspect ratio."),
        ("After upgrading to 5.1 the pattern matches nothing", "See title."),
    ],
)
def test_developer_regressions_and_failures_are_defects(title: str, text: str) -> None:
    assert issue(text, title).kind in DEFECTS


def test_template_headings_and_politeness_are_not_signals() -> None:
    bug = "### Feature request\n\nThe `--quiet` flag doesn't suppress the progress bar.\n\nThanks!"
    assert issue(bug).kind is Kind.BUG
    ask = (
        "### Feature request\n\nAllow `--output` to accept a directory.\n\n### Motivation\nShorter."
    )
    assert issue(ask).kind is Kind.FEATURE_REQUEST
    thanked = "The total on the invoice page omits the shipping fee.\n\nThanks so much!"
    assert issue(thanked).kind is Kind.BUG
    assert "praise:thanks" not in issue(thanked).signals


def test_a_developer_question_is_a_defect_when_it_names_a_failure() -> None:
    assert issue("Why does `parse_date('2021-02-30')` return March 2?").kind is Kind.BUG
    assert issue("Why does load() raise KeyError on an empty file?").kind is Kind.CRASH
    assert issue("How do I configure a custom CA bundle?").kind is Kind.QUESTION
    assert issue("Is there a way to stream responses instead of buffering?").kind is Kind.QUESTION
    assert issue("Add support for Python 3.13").kind is Kind.FEATURE_REQUEST


def test_a_developer_question_ending_a_report_of_what_cannot_be_done_is_a_defect() -> None:
    text = "On 3.12 the frame's `f_back` is empty.\nHow is introspection supposed to work?"
    assert issue(text, "Python 3.12: cannot walk the stack").kind is Kind.BUG
    assert issue("I can't tell when to use `flush()` or `sync()`?").kind is Kind.QUESTION


def test_the_english_noun_comment_is_not_the_french_question_word() -> None:
    copied = "`uv add` leaves the comment in `dependencies` duplicated after the new entry."
    assert issue(copied).kind is Kind.BUG
    assert issue("Comment faire pour exporter en CSV ?").kind is Kind.QUESTION


def test_a_short_all_praise_text_on_the_default_source_is_praise() -> None:
    text = "Love this app, best notes app ever! 5 stars"
    assert classify(text, source=Source.BUG_REPORT).kind is Kind.PRAISE
    library = "Love the library! `slugify('Ærø')` returns an empty string though."
    assert classify(library, source=Source.BUG_REPORT).kind is Kind.BUG


def test_confidence_says_how_much_the_verdict_rests_on() -> None:
    traced = classify("boom", traces=[TRACE], source=Source.GITHUB)
    named = issue("It crashes when the window closes twice")
    prior_only = issue("The sidebar in the settings view")
    assert traced.confidence > named.confidence > prior_only.confidence
    assert traced.signals[:3] == ["prior:developer", "rule:trace", "trace:python"]


def test_the_binary_rule_holds_for_every_source() -> None:
    junk = random.Random(3).randbytes(2_048).decode("utf-8", errors="replace")
    for source in (Source.GITHUB, Source.GOOGLE_PLAY, None):
        assert classify(junk + " it crashes", source=source).kind is Kind.NOISE


def _labelled(split: str) -> list[dict[str, object]]:
    with (LABELLED / f"{split}.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


@pytest.mark.parametrize("split", ["dev", "test"])
def test_the_labelled_set_loads_with_valid_rows(split: str) -> None:
    rows = _labelled(split)
    assert len(rows) >= 150
    kinds = {kind.value for kind in Kind}
    for row in rows:
        assert row["label"] in kinds and Source(str(row["source"])) and row["lang"]
        assert isinstance(row["text"], str) and row["text"]


def test_the_classifier_meets_its_floor_on_the_held_out_split() -> None:
    """Floors under what the rules score on bench/data/classify/test.jsonl (0.96 / 0.93 /
    0.94 and 1.9%), so a rule that breaks shows here."""
    reviews: list[tuple[bool, bool, bool]] = []
    skipped = defects = 0
    for row in _labelled("test"):
        text = str(row["text"])
        rating = row.get("rating")
        verdict = classify(
            text,
            title=row.get("title"),  # type: ignore[arg-type]
            rating=rating if isinstance(rating, int) else None,
            traces=find_traces(text).traces,
            source=str(row["source"]),
        )
        truth = Kind(str(row["label"]))
        if (
            prior_for(str(row["source"]), rating if isinstance(rating, int) else None)
            is Prior.REVIEW
        ):
            same = _four(verdict.kind) == _four(truth)
            reviews.append((truth in DEFECTS, verdict.kind in DEFECTS, same))
        elif truth in DEFECTS:
            defects += 1
            skipped += verdict.kind not in DEFECTS
    true_bugs = sum(t and s for t, s, _ in reviews)
    assert true_bugs / sum(t for t, _, _ in reviews) >= 0.9  # recall
    assert true_bugs / sum(s for _, s, _ in reviews) >= 0.85  # precision
    assert sum(same for _, _, same in reviews) / len(reviews) >= 0.85  # four-class
    assert skipped / defects <= 0.05


def _four(kind: Kind) -> str:
    if kind in DEFECTS:
        return "bug"
    return kind.value if kind in {Kind.FEATURE_REQUEST, Kind.PRAISE} else "other"


BUG_TEMPLATE = """**Describe the bug**
Exporting a note writes the date without its timezone.

**To Reproduce**
1. Open a note
2. Click Export

**Expected behavior**
2024-01-02T10:00+01:00, as in 2.2

**Version**: 2.3.1
"""
FEATURE_TEMPLATE = """**Is your feature request related to a problem? Please describe.**
The app is too bright at night, a problem for my eyes.

**Describe the solution you'd like**
A dark theme.
"""


@pytest.mark.parametrize(
    "title", ["Add timezone to export?", "Support offsets in export", "Export?"]
)
def test_a_bug_template_is_a_bug_whatever_its_title_asks(title: str) -> None:
    verdict = classify(BUG_TEMPLATE, title=title, source=Source.GITHUB)
    assert verdict.kind is Kind.BUG and "template:bug" in verdict.signals
    heading = BUG_TEMPLATE.split("**To Reproduce**", maxsplit=1)[0]
    one = classify(heading, title=title, source=Source.GITHUB)
    assert "template:bug" not in one.signals  # one heading is no template


def test_a_feature_template_is_a_request_though_its_headings_speak_of_a_problem() -> None:
    verdict = classify(FEATURE_TEMPLATE, title="Dark mode", source=Source.GITHUB)
    assert verdict.kind is Kind.FEATURE_REQUEST and "template:feature_request" in verdict.signals
