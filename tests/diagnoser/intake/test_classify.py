from __future__ import annotations

import random
import unicodedata

import pytest

from diagnoser.intake.classify import MAX_SCAN_CHARS, classify
from diagnoser.intake.report import FrameOrder, Kind, Trace, TraceFormat

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
