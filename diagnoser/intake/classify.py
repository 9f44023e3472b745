"""Deterministic classification: crash | bug | performance | feature_request | question |
praise | noise, with a confidence and the signals it rests on.

Signals are scored and the highest total wins. A parsed stack trace is the strongest
signal and does not depend on the report's language; star ratings are the next
language-free one; phrase lists cover English plus the most common store languages.
Before any of that, a text that is mostly unreadable (binary decoded with replacement
characters) is noise, whatever phrases or traces its bytes happen to spell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from diagnoser.intake.report import Classification, Kind, Trace

TRACE_WEIGHT = 5.0
"""A parsed stack trace all but settles it: crash."""
PHRASE_WEIGHT = 1.5
RATING_WEIGHT = 1.2
QUESTION_WEIGHT = 1.0
EXCEPTION_WEIGHT = 3.0
"""An exception's name in the text (`IndexError: …` without a whole trace): a crash."""
MIN_WORDS_FOR_SIGNAL = 3
"""Shorter texts with no other signal are noise ("ok", "👍", "test")."""
MAX_SCAN_CHARS = 200_000
"""Phrases are looked for in the first this-many characters only: ~140 patterns over a
2 MB text took 7 s, over this ~0.7 s (a person writes far less; a long log has traces
and exception names, which are looked for in the whole text)."""
BINARY_FRACTION = 0.3
"""A text with more unreadable characters than this (U+FFFD, control characters but
tab and line breaks) is binary: random bytes decode to ~56% (over 48% for any 256 of
them), an ELF binary ~89%; a log with a few stray bytes stays under 1%."""

PHRASES: dict[Kind, tuple[str, ...]] = {
    Kind.CRASH: (
        "crash", "crashes", "crashed", "force close", "force-close", "stopped working",
        "keeps closing", "closes itself", "traceback", "exception", "segfault",
        "segmentation fault", "panicked", "fatal error", "uncaught",
        "se cierra", "se cae", "stürzt ab", "absturz", "plante", "crashe", "si chiude",
        "fecha sozinho", "vylet", "вылетает", "падает", "クラッシュ", "落ちる", "崩溃", "闪退",
    ),
    Kind.BUG: (
        "bug", "broken", "doesn't work", "does not work", "not working", "won't", "can't",
        "cannot", "fails", "failed", "error", "wrong", "incorrect", "lost my", "disappeared",
        "missing", "deprecated", "fix", "freezes", "freeze", "frozen", "hangs", "stuck",
        "not responding",
        "no funciona", "funktioniert nicht", "ne marche pas", "ne fonctionne pas",
        "non funziona", "não funciona", "не работает", "動かない", "不能用", "无法",
    ),
    Kind.PERFORMANCE: (
        "slow", "slowly", "laggy", "lag", "takes forever", "takes ages", "battery",
        "drains", "memory leak", "high cpu", "loading forever", "sluggish",
        "lento", "langsam", "lent", "медленно", "遅い", "卡顿", "很慢",
    ),
    Kind.FEATURE_REQUEST: (
        "would be nice", "would be great", "it would be", "please add", "feature request",
        "could you add", "can you add", "i wish", "wish list", "i'd love", "would love",
        "support for", "dark mode", "option to",
        "sería genial", "por favor añadan", "wäre schön", "bitte fügt", "ce serait bien",
        "sarebbe bello", "seria ótimo", "добавьте", "欲しい", "希望",
    ),
    Kind.QUESTION: ("how do i", "how can i", "how to", "is there a way", "is it possible",
                    "can i ", "where is", "what is", "why does", "does anyone"),
    Kind.PRAISE: (
        "love", "great app", "awesome", "excellent", "amazing", "best app", "thank you",
        "thanks", "perfect", "works great", "five stars", "5 stars",
        "me encanta", "genial", "super app", "génial", "ottima", "ótimo", "отлично", "最高",
        "很好",
    ),
}  # fmt: skip

_WORDS = re.compile(r"\w+", re.UNICODE)
_UNREADABLE = re.compile(r"[\ufffd\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_EXCEPTION_NAME = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception)\b")


def _phrase_pattern(phrase: str) -> tuple[str, re.Pattern[str]]:
    """Whole words for alphabetic scripts ("lent" is not in "excellent"); CJK phrases have
    no word boundaries, so they match anywhere. With the literal the pattern matches: a
    substring test first is ~100× cheaper than the regex, whose leading lookbehind keeps
    it from skipping ahead to the literal (~85 µs a phrase on a 4 KB report)."""
    if phrase.isascii() or any(c.isalpha() and ord(c) < 0x2E80 for c in phrase):
        literal = phrase.strip()
        return literal, re.compile(r"(?<!\w)" + re.escape(literal) + r"(?!\w)")
    return phrase, re.compile(re.escape(phrase))


_PATTERNS = {
    kind: [(phrase, *_phrase_pattern(phrase)) for phrase in phrases]
    for kind, phrases in PHRASES.items()
}


def classify(
    text: str, *, title: str | None = None, rating: int | None = None, traces: Sequence[Trace] = ()
) -> Classification:
    """The report's kind and why."""
    binary = _binary_signal(text)
    if binary is not None:
        return Classification(kind=Kind.NOISE, confidence=0.9, signals=[binary])
    body = f"{title or ''}\n{text[:MAX_SCAN_CHARS]}".lower()
    scores: dict[Kind, float] = dict.fromkeys(Kind, 0.0)
    signals: list[str] = []
    if traces:
        scores[Kind.CRASH] += TRACE_WEIGHT
        signals.extend(f"trace:{f}" for f in dict.fromkeys(t.format.value for t in traces))
    named = _EXCEPTION_NAME.search(f"{title or ''}\n{text}")  # one pattern: the whole text
    if named and not traces:
        scores[Kind.CRASH] += EXCEPTION_WEIGHT
        signals.append(f"exception-name:{named.group(0)}")
    for kind, patterns in _PATTERNS.items():
        for phrase, literal, pattern in patterns:
            if literal in body and pattern.search(body):
                scores[kind] += PHRASE_WEIGHT
                signals.append(f"phrase:{phrase.strip()}")
    if rating is not None:
        signals.append(f"rating:{rating}")
        if rating <= 2:
            scores[Kind.BUG] += RATING_WEIGHT * (3 - rating) / 2
        elif rating >= 4:
            scores[Kind.PRAISE] += RATING_WEIGHT * (rating - 3)
    if body.rstrip().endswith("?"):
        scores[Kind.QUESTION] += QUESTION_WEIGHT
        signals.append("ends-with-question-mark")
    return _verdict(scores, signals, words=len(_WORDS.findall(body)))


def _binary_signal(text: str) -> str | None:
    """`binary:56% unreadable` when most of `text` is not text at all, else None."""
    unreadable = _UNREADABLE.subn("", text)[1]
    if unreadable <= BINARY_FRACTION * len(text):
        return None
    return f"binary:{unreadable / len(text):.0%} unreadable"


def _verdict(scores: dict[Kind, float], signals: list[str], *, words: int) -> Classification:
    complaint = scores[Kind.CRASH] + scores[Kind.BUG] + scores[Kind.PERFORMANCE]
    if complaint > 0:  # a complaint outweighs politeness ("love it but it crashes")
        scores[Kind.PRAISE] = min(scores[Kind.PRAISE], complaint / 2)
    best = max(scores, key=lambda kind: (scores[kind], -list(Kind).index(kind)))
    total = sum(scores.values())
    if total == 0:
        kind = Kind.NOISE if words < MIN_WORDS_FOR_SIGNAL else Kind.BUG
        confidence = 0.6 if kind is Kind.NOISE else 0.3
        return Classification(kind=kind, confidence=confidence, signals=[f"words:{words}"])
    confidence = round(min(0.99, scores[best] / total * min(1.0, scores[best] / 3)), 2)
    return Classification(kind=best, confidence=max(confidence, 0.2), signals=signals)
