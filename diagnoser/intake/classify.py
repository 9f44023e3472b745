"""Deterministic classification: crash | bug | performance | feature_request | question |
praise | noise, with a confidence and the signals that decided it.

Where a report came from sets the prior (`prior_for`):

- store reviews (`review`, `app_store`, `google_play`): most are praise, wishes and
  chatter, so only a *concrete failure* (a crash, something that does not work, a
  slowness, a regression) makes a defect; the star rating settles what is left (4–5★
  with nothing else is praise; 1–2★ with no failure named is a complaint with nothing
  to investigate, so `noise`).
- developer tools (`github`, `bug_report`, crash reporters, crash logs): people file
  defects there, so a report is investigated unless it is clearly a request or a
  question with no failure in it. Template headings (`### Feature request`,
  `**Describe the bug**`) are structure, not signals; politeness never makes praise; a
  regression ("since v3.3", "no longer", "used to", "started …") is a bug; a question
  that names a failure ("Why does X raise Y?") is a bug.
- anything else (`webhook`, `other`, none given): the phrases are scored and the
  highest total wins, as before sources were told apart.

A parsed stack trace is the strongest signal and does not depend on the report's
language; phrase lists (`diagnoser.intake.phrases`) cover English plus es, de, fr, it,
pt, ru, ja and zh, and what of them a text shows is read by `diagnoser.intake.cues`.
This module owns the verdicts: the prior, the rules that decide, their confidence.
Before any of that, a text that is mostly unreadable (binary decoded with replacement
characters) is noise, whatever its bytes spell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import StrEnum

from diagnoser.intake.cues import (
    DEVELOPER_FAILURE_CUES,
    FAILURE_CUES,
    NEGATED_CUES,
    PRAISE_CUES,
    QUESTION_CUES,
    REGRESSION_CUES,
    REQUEST_CUES,
    WORDS,
    Cue,
    Signals,
    fired,
    issue_template,
    normalized,
    signals_in,
)
from diagnoser.intake.report import Classification, Kind, Source, Trace

PHRASE_WEIGHT = 1.5
RATING_WEIGHT = 1.2
QUESTION_WEIGHT = 1.0
MIN_WORDS_FOR_SIGNAL = 3
"""Shorter texts with no other signal are noise ("ok", "👍", "test")."""
BINARY_FRACTION = 0.3
"""A text with more unreadable characters than this (U+FFFD, control characters but
tab and line breaks) is binary: random bytes decode to ~56% (over 48% for any 256 of
them), an ELF binary ~89%; a log with a few stray bytes stays under 1%."""
REGRESSION_RATING = 3
"""In a review, "since the update" / "no longer" with no failure named is a defect only
at this rating or below; rated higher it is usually good news ("no longer need paper
lists", "after the update it is even faster")."""
PRAISE_RATING = 4
"""A store review rated this or more, with no failure, request or question: praise."""
COMPLAINT_RATING = 2
"""A store review rated this or less with no failure named is a complaint we cannot act
on ("Waste of money"): `noise`, not a bug — investigating it would cost a model run and
find nothing to fix."""


class Prior(StrEnum):
    REVIEW = "review"
    DEVELOPER = "developer"
    NEUTRAL = "neutral"


REVIEW_SOURCES = frozenset({Source.REVIEW, Source.APP_STORE, Source.GOOGLE_PLAY})
DEVELOPER_SOURCES = frozenset(
    {
        Source.GITHUB, Source.BUG_REPORT, Source.SENTRY, Source.BUGSNAG, Source.ROLLBAR,
        Source.CRASHLYTICS, Source.CRASH_LOG,
    }
)  # fmt: skip
RATED_SOURCES = frozenset({Source.BUG_REPORT, Source.WEBHOOK, Source.OTHER})
"""Sources that, with a star rating, are store reviews (`bug_report` is the default)."""
CODE_MARK = re.compile(r"`|\(\)|::|\w\.\w+\(|\w/\w|\b\w+_\w+\b|\bv?\d+\.\d+")
"""Code, paths and versions: a developer report that has them is not mere praise."""
MAX_PRAISE_WORDS = 60
"""A developer-tool text this short, all praise and no failure or code, is praise
("Love this app, best notes app ever!"); longer ones are investigated."""
RULE_CONFIDENCE: dict[str, float] = {
    "trace": 0.95,
    "exception-name": 0.9,
    "failure": 0.85,
    "regression": 0.8,
    "request": 0.8,
    "question": 0.75,
    "praise": 0.8,
    "rating": 0.6,
    "complaint": 0.6,
    "short": 0.7,
    "no-signal": 0.4,
    "developer-prior": 0.6,
    "template": 0.75,
}
"""How sure each deciding rule is, in the order of how much it rests on: a trace, then
a named exception, a failure phrase, a request … down to the developer prior with no
cue at all. Set by judgement, below what our labelled set shows (`bench/classify_bench.py
--calibrate test`: 0.83–1.00 per rule on the held-out half), because that set is easier
than real reviews: the old classifier scored 0.69 four-class on it and 0.46 on ~300
human-labelled ones."""
REQUEST_TITLE = re.compile(
    r"^\s*(?:\[(?:enhancement|feature|rfe|proposal)\]|feature request\b|proposal\b|rfe\b|"
    r"enhancement\b|add\b|support\b|allow\b|provide\b|expose\b|implement\b|make it possible)",
    re.IGNORECASE,
)
"""A developer report's title that asks for something ("Add a `--json` output")."""
FAILURE_QUESTION = re.compile(r"\bwhy (?:does|do|is|are|did|would)\b")
"""In a developer tool, "Why does X …?" reports behaviour the writer thinks is wrong."""
_UNREADABLE = re.compile(r"[\ufffd\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_EXCEPTION_NAME = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception)\b")


def prior_for(source: Source | str | None, rating: int | None = None) -> Prior:
    """Store reviews, developer tools, or neither (no source given). A star rating makes
    a review of a `bug_report` (the default source), `webhook` or `other` report: issue
    trackers and crash reporters have no stars."""
    if source is None:
        return Prior.NEUTRAL
    try:
        known = Source(source)
    except ValueError:
        return Prior.NEUTRAL
    if known in REVIEW_SOURCES or (rating is not None and known in RATED_SOURCES):
        return Prior.REVIEW
    return Prior.DEVELOPER if known in DEVELOPER_SOURCES else Prior.NEUTRAL


def classify(
    text: str,
    *,
    title: str | None = None,
    rating: int | None = None,
    traces: Sequence[Trace] = (),
    source: Source | str | None = None,
) -> Classification:
    """The report's kind, how sure, and the signals that decided it."""
    prior = prior_for(source, rating)
    binary = _binary_signal(text)
    if binary is not None:
        return Classification(kind=Kind.NOISE, confidence=0.9, signals=[binary], prior=prior)
    if traces:
        formats = dict.fromkeys(t.format.value for t in traces)
        return _verdict(Kind.CRASH, "trace", prior, [f"trace:{f}" for f in formats])
    named = _EXCEPTION_NAME.search(f"{title or ''}\n{text}")  # one pattern: the whole text
    if named:
        return _verdict(Kind.CRASH, "exception-name", prior, [f"exception-name:{named[0]}"])
    if prior is Prior.NEUTRAL:
        return _scored(text, title=title, rating=rating)
    body = normalized(text, title, developer=prior is Prior.DEVELOPER)
    found = signals_in(body, developer=prior is Prior.DEVELOPER)
    if prior is Prior.REVIEW:
        return _review(found, rating)
    return _developer(found, text, body, title)


def _review(found: Signals, rating: int | None) -> Classification:
    """A store review is a defect only when it names a concrete failure."""
    prior = Prior.REVIEW
    stars = [f"rating:{rating}"] if rating is not None else []
    if not any(found.failure.values()) and rating is not None and rating > REGRESSION_RATING:
        found.regression = []  # "since the update it's even better"
    if found.failures:
        kind, names = _failure_kind(found)
        rule = "failure" if any(found.failure.values()) else "regression"
        return _verdict(kind, rule, prior, names + stars)
    if found.request:
        return _verdict(Kind.FEATURE_REQUEST, "request", prior, _named("request", found.request))
    if found.question or found.question_mark:
        names = _named("question", found.question) or ["ends-with-question-mark"]
        return _verdict(Kind.QUESTION, "question", prior, names)
    return _review_without_asks(found, rating, stars)


def _review_without_asks(found: Signals, rating: int | None, stars: list[str]) -> Classification:
    """No failure, request or question: praise, a complaint, or chatter."""
    prior = Prior.REVIEW
    praise = _named("negated", found.negated) + _named("praise", found.praise)
    if found.words < MIN_WORDS_FOR_SIGNAL and not praise:
        return _verdict(Kind.NOISE, "short", prior, [f"words:{found.words}", *stars])
    if found.complaint and (rating is None or rating <= COMPLAINT_RATING + 1):
        return _verdict(Kind.NOISE, "complaint", prior, _named("complaint", found.complaint))
    if praise and (rating is None or rating > COMPLAINT_RATING):
        return _verdict(Kind.PRAISE, "praise", prior, praise + stars)
    if rating is not None and rating >= PRAISE_RATING:
        return _verdict(Kind.PRAISE, "rating", prior, stars)
    if rating is not None and rating <= COMPLAINT_RATING:
        return _verdict(Kind.NOISE, "complaint", prior, [*stars, "no-failure-named"])
    return _verdict(Kind.NOISE, "no-signal", prior, [f"words:{found.words}", *stars])


def _developer(found: Signals, text: str, body: str, title: str | None) -> Classification:
    """A developer tool's report is investigated unless it clearly asks or only asks; the
    template it was written under (`text`, as sent) decides first."""
    prior = Prior.DEVELOPER
    template = issue_template(text)
    if template is Kind.FEATURE_REQUEST:  # its own headings speak of "a problem"
        return _verdict(Kind.FEATURE_REQUEST, "template", prior, ["template:feature_request"])
    failed = found.failures > 0 or bool(FAILURE_QUESTION.search(body))
    if not failed:
        failed = any(c.literal in body and c.pattern.search(body) for c in DEVELOPER_FAILURE_CUES)
    heading = title or next((line for line in body.splitlines() if line.strip()), "")
    asks_title = bool(REQUEST_TITLE.search(heading))
    if template is Kind.BUG and not found.failures:  # "Add …?" over steps and an outcome
        return _verdict(Kind.BUG, "template", prior, ["template:bug"])
    if (found.request or asks_title) and not failed:
        names = _named("request", found.request) or ["request-title"]
        return _verdict(Kind.FEATURE_REQUEST, "request", prior, names)
    if (found.question or found.question_mark) and not failed:
        names = _named("question", found.question) or ["ends-with-question-mark"]
        return _verdict(Kind.QUESTION, "question", prior, names)
    return _developer_defect(found, body, failed=failed)


def _developer_defect(found: Signals, body: str, *, failed: bool) -> Classification:
    """Not a request or a question: a defect, unless it is only praise or a word or two."""
    prior = Prior.DEVELOPER
    if found.failures:
        kind, names = _failure_kind(found)
        rule = "failure" if any(found.failure.values()) else "regression"
        return _verdict(kind, rule, prior, names)
    if failed:
        return _verdict(Kind.BUG, "developer-prior", prior, ["failure-words"])
    praise = _named("negated", found.negated) + _named("praise", found.praise)
    if praise and found.words <= MAX_PRAISE_WORDS and not CODE_MARK.search(body):
        return _verdict(Kind.PRAISE, "praise", prior, praise)
    if found.words < MIN_WORDS_FOR_SIGNAL and not CODE_MARK.search(body):
        return _verdict(Kind.NOISE, "short", prior, [f"words:{found.words}"])
    return _verdict(Kind.BUG, "developer-prior", prior, [f"words:{found.words}"])


def _failure_kind(found: Signals) -> tuple[Kind, list[str]]:
    """Crash over performance over bug when named; a regression alone is a bug."""
    counts = {kind: len(found.failure.get(kind, ())) for kind in FAILURE_CUES}
    counts[Kind.BUG] += len(found.regression)
    order = (Kind.CRASH, Kind.PERFORMANCE, Kind.BUG)
    kind = max(order, key=lambda k: (counts[k], -order.index(k)))
    if counts[Kind.CRASH]:
        kind = Kind.CRASH
    names = [f"failure:{n}" for k in order for n in found.failure.get(k, ())]
    return kind, names + _named("regression", found.regression)


def _named(prefix: str, names: Sequence[str]) -> list[str]:
    return [f"{prefix}:{name}" for name in names]


def _verdict(kind: Kind, rule: str, prior: Prior, signals: list[str]) -> Classification:
    return Classification(
        kind=kind,
        confidence=RULE_CONFIDENCE[rule],
        signals=[f"prior:{prior.value}", f"rule:{rule}", *signals],
        prior=prior,
    )


def _binary_signal(text: str) -> str | None:
    """`binary:56% unreadable` when most of `text` is not text at all, else None."""
    unreadable = _UNREADABLE.subn("", text)[1]
    if unreadable <= BINARY_FRACTION * len(text):
        return None
    return f"binary:{unreadable / len(text):.0%} unreadable"


_SCORED_PHRASES: dict[Kind, tuple[Cue, ...]] = {
    Kind.CRASH: FAILURE_CUES[Kind.CRASH],
    Kind.BUG: FAILURE_CUES[Kind.BUG] + REGRESSION_CUES,
    Kind.PERFORMANCE: FAILURE_CUES[Kind.PERFORMANCE],
    Kind.FEATURE_REQUEST: REQUEST_CUES,
    Kind.QUESTION: QUESTION_CUES,
    Kind.PRAISE: PRAISE_CUES + NEGATED_CUES,
}


def _scored(text: str, *, title: str | None, rating: int | None) -> Classification:
    """No source to lean on: every signal scores and the highest total wins; a text
    with words but no signal is a bug (an unknown sender is investigated)."""
    body = normalized(text, title, developer=False)
    scores: dict[Kind, float] = dict.fromkeys(Kind, 0.0)
    signals: list[str] = []
    for kind, cues in _SCORED_PHRASES.items():
        for name in fired(body, cues, negatable=kind is not Kind.PRAISE):
            scores[kind] += PHRASE_WEIGHT
            signals.append(f"phrase:{name}")
    if rating is not None:
        signals.append(f"rating:{rating}")
        if rating <= 2:
            scores[Kind.BUG] += RATING_WEIGHT * (3 - rating) / 2
        elif rating >= 4:
            scores[Kind.PRAISE] += RATING_WEIGHT * (rating - 3)
    if body.rstrip().endswith("?"):
        scores[Kind.QUESTION] += QUESTION_WEIGHT
        signals.append("ends-with-question-mark")
    words = len(WORDS.findall(body))
    complaint = scores[Kind.CRASH] + scores[Kind.BUG] + scores[Kind.PERFORMANCE]
    if complaint > 0:  # a complaint outweighs politeness ("love it but it crashes")
        scores[Kind.PRAISE] = min(scores[Kind.PRAISE], complaint / 2)
    best = max(scores, key=lambda kind: (scores[kind], -list(Kind).index(kind)))
    total = sum(scores.values())
    prior = Prior.NEUTRAL
    if total == 0:
        kind = Kind.NOISE if words < MIN_WORDS_FOR_SIGNAL else Kind.BUG
        confidence = 0.6 if kind is Kind.NOISE else 0.3
        return Classification(
            kind=kind, confidence=confidence, signals=[f"words:{words}"], prior=prior
        )
    confidence = round(min(0.99, scores[best] / total * min(1.0, scores[best] / 3)), 2)
    return Classification(kind=best, confidence=max(confidence, 0.2), signals=signals, prior=prior)
