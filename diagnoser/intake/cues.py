"""The classifier's cues: its phrases compiled, and what of them a text shows (`Signals`).

A phrase matches as whole words in alphabetic scripts, anywhere in CJK, and only after
its literal is found in the text (~100× cheaper than the pattern). The text is read
normalized (`normalized`: lower case, straight apostrophes, "cant" → "can't"; for
developer tools without template headings and thank-you lines), and only its first
MAX_SCAN_CHARS. A failure phrase after a negation ("never crashed", "not a single
crash", "no problems") counts for praise, not against it. `diagnoser.intake.classify`
decides from the signals.

    found = signals_in(normalized(text, title, developer=False), developer=False)
    found.failure, found.request, found.praise, found.words
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from diagnoser.intake.phrases import (
    BUG,
    COMPLAINT,
    CRASH,
    DEVELOPER_FAILURE,
    NEGATED_FAILURE,
    NEGATORS,
    PERFORMANCE,
    PRAISE,
    QUESTION,
    REGRESSION,
    REQUEST,
)
from diagnoser.intake.report import Kind

MAX_SCAN_CHARS = 200_000
"""Phrases are looked for in the first this-many characters only: ~140 patterns over a
2 MB text took 7 s, over this ~0.7 s (a person writes far less; a long log has traces
and exception names, which are looked for in the whole text)."""
NEGATION_WORDS = 3
"""A negator this many words or fewer before a failure phrase cancels it ("never
crashed", "not a single crash", "without any problems"); further away it is usually
about something else ("not cheap, and it crashes")."""
MAX_NEGATED_MATCHES = 16
"""A phrase negated this many times in a row is taken as negated throughout: a 2 MB text
repeating "never crashed" otherwise checks every one of ~35,000 matches (0.7 s)."""
# `[ \t\r]*`, not `\s*`, at the ends: `\s*` runs across line breaks, so over a text of
# blank lines every start rescanned the rest (2,000 empty lines took 2.5 s, 2 MB hung).
_TEMPLATE_HEADING = re.compile(
    r"^[ \t\r]*(?:#{1,6}\s*[^\n]{0,60}|\*\*[^*\n]{1,60}\*\*:?|(?:describe the bug|to reproduce|"
    r"steps to reproduce|expected behaviou?r|actual behaviou?r|environment|"
    r"additional context|feature request|motivation|alternatives)[ \t\r]*:?)[ \t\r]*$",
    re.IGNORECASE | re.MULTILINE,
)
_BUG_TEMPLATE = re.compile(
    r"^[ \t\r#*>-]*(?P<heading>describe the bug|bug description|to reproduce|"
    r"steps to reproduce|reproduction steps|expected (?:behaviou?r|results?)|"
    r"(?:actual|current|observed) (?:behaviou?r|results?))\b",
    re.IGNORECASE | re.MULTILINE,
)
"""A heading of a bug template (GitHub's and most projects' own)."""
_FEATURE_TEMPLATE = re.compile(
    r"^[ \t\r#*>-]*(?:is your feature request related to a problem|"
    r"describe the solution you'?d like|describe alternatives you'?ve considered)\b",
    re.IGNORECASE | re.MULTILINE,
)
"""A heading only a feature-request template has."""
MIN_BUG_HEADINGS = 2
"""Distinct bug-template headings that make a report a bug report whatever its title."""
_POLITE_LINE = re.compile(
    r"^[ \t\r]*(?:thanks?(?: you)?(?: (?:a lot|so much|in advance|for [^\n]{0,60}))?|cheers|"
    r"regards|best regards|best|kind regards|thx|ty)[\s!.,:;)\w-]{0,20}$",
    re.IGNORECASE | re.MULTILINE,
)
_CONTRACTION = re.compile(
    r"\b(can|don|doesn|won|didn|isn|wasn|haven|hasn|couldn|wouldn|aren|shouldn)t\b"
)
WORDS = re.compile(r"\w+", re.UNICODE)
"""A text's words, as counted for MIN_WORDS_FOR_SIGNAL (`diagnoser.intake.classify`)."""
_CLAUSE_END = re.compile(r"[.,;!?:\n]| but | aber | pero | mais | ma | mas | но ")


@dataclass(frozen=True, slots=True)
class Cue:
    """One phrase, compiled when first needed: its literal is looked for first, and most
    reports hold few of ~600 (compiling them all was ~20 ms of every process's start)."""

    name: str
    """The phrase; empty for a regular expression, whose signal is the text it matched."""
    literal: str
    """Must occur in the text for `pattern` to match: checked first, ~100× cheaper."""
    regex: str

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compiled(self.regex)


@functools.cache
def _compiled(regex: str) -> re.Pattern[str]:
    return re.compile(regex)


def _cue(phrase: str) -> Cue:
    """Whole words for alphabetic scripts ("lent" is not in "excellent"); CJK phrases have
    no word boundaries, so they match anywhere. With the literal the pattern matches: a
    substring test first is ~100× cheaper than the regex, whose leading lookbehind keeps
    it from skipping ahead to the literal (~85 µs a phrase on a 4 KB report)."""
    if phrase.startswith("re:"):
        regex = phrase[3:]
        literal = re.split(r"[\\(\[?*+{|.]", regex.removeprefix("\\b"), maxsplit=1)[0]
        return Cue("", literal, regex)
    if phrase.isascii() or any(c.isalpha() and ord(c) < 0x2E80 for c in phrase):
        literal = phrase.strip()
        return Cue(literal, literal, r"(?<!\w)" + re.escape(literal) + r"(?!\w)")
    return Cue(phrase, phrase, re.escape(phrase))


def _cues(phrases: Iterable[str]) -> tuple[Cue, ...]:
    return tuple(_cue(phrase) for phrase in dict.fromkeys(phrases))


FAILURE_CUES = {
    Kind.CRASH: _cues(CRASH),
    Kind.BUG: _cues(BUG),
    Kind.PERFORMANCE: _cues(PERFORMANCE),
}
REGRESSION_CUES = _cues(REGRESSION)
REQUEST_CUES = _cues(REQUEST)
QUESTION_CUES = _cues(QUESTION)
PRAISE_CUES = _cues(PRAISE)
NEGATED_CUES = _cues(NEGATED_FAILURE)
COMPLAINT_CUES = _cues(COMPLAINT)
DEVELOPER_FAILURE_CUES = _cues(DEVELOPER_FAILURE)


@dataclass(slots=True)
class Signals:
    """What the text shows, each list the names of the cues that fired."""

    failure: dict[Kind, list[str]] = field(default_factory=dict)
    regression: list[str] = field(default_factory=list)
    request: list[str] = field(default_factory=list)
    question: list[str] = field(default_factory=list)
    praise: list[str] = field(default_factory=list)
    negated: list[str] = field(default_factory=list)
    complaint: list[str] = field(default_factory=list)
    question_mark: bool = False
    words: int = 0

    @property
    def failures(self) -> int:
        return sum(len(v) for v in self.failure.values()) + len(self.regression)


def issue_template(text: str) -> Kind | None:
    """The template a report was written under: `FEATURE_REQUEST` for a feature-request
    template, `BUG` for a bug template (at least `MIN_BUG_HEADINGS` of its headings —
    "Describe the bug", "Steps to reproduce", "Expected behavior"…), else None."""
    head = text[:MAX_SCAN_CHARS]
    if _FEATURE_TEMPLATE.search(head):
        return Kind.FEATURE_REQUEST
    headings = {m["heading"].lower() for m in _BUG_TEMPLATE.finditer(head)}
    return Kind.BUG if len(headings) >= MIN_BUG_HEADINGS else None


def normalized(text: str, title: str | None, *, developer: bool) -> str:
    """Lower case, straight apostrophes, colloquial contractions spelled out ("cant" →
    "can't"); for developer tools without template headings and thank-you lines."""
    body = f"{title or ''}\n{text[:MAX_SCAN_CHARS]}"
    if developer:
        body = _POLITE_LINE.sub("", _TEMPLATE_HEADING.sub("", body))
    body = body.lower().replace("\u2019", "'").replace("\uff1f", "?")
    return _CONTRACTION.sub(r"\1't", body)


def signals_in(body: str, *, developer: bool) -> Signals:
    """What the `normalized` text shows: the cues that fired, negated failures masked
    first ("never crashed" is praise); "twice" is a failure only to a developer tool, and
    in a review a request's own words are none."""
    found = Signals(words=len(WORDS.findall(body)))
    masked = body
    for cue in NEGATED_CUES:
        if cue.literal in masked:
            masked = cue.pattern.sub(lambda match: _mask(match, found.negated), masked)
    for kind, cues in FAILURE_CUES.items():
        names = [n for n in fired(masked, cues, negatable=True) if developer or n != "twice"]
        if names:
            found.failure[kind] = names
    found.regression = fired(masked, REGRESSION_CUES, negatable=False)
    found.request = fired(masked, REQUEST_CUES, negatable=False)
    found.question = fired(masked, QUESTION_CUES, negatable=False)
    found.praise = fired(masked, PRAISE_CUES, negatable=True)
    found.complaint = fired(masked, COMPLAINT_CUES, negatable=True)
    found.question_mark = "?" in body.rstrip()[-3:] if body.strip() else False
    if not developer:
        _drop_wished_failures(found)
    return found


def _mask(match: re.Match[str], negated: list[str]) -> str:
    """A negated failure ("never failed") noted and kept as a bare negator, so "not a
    single | crash" still cancels the crash that follows."""
    if match[0] not in negated:
        negated.append(match[0])
    return "no".ljust(len(match[0]))


def fired(body: str, cues: Sequence[Cue], *, negatable: bool) -> list[str]:
    """The names of the cues found in `body` — for a `negatable` one, at a match with no
    negator just before it (looked at up to MAX_NEGATED_MATCHES matches)."""
    names: list[str] = []
    for cue in cues:
        if cue.literal not in body:
            continue
        for seen, match in enumerate(cue.pattern.finditer(body)):
            if seen >= MAX_NEGATED_MATCHES:
                break
            if not (negatable and _negated(body, match.start())):
                names.append(cue.name or match[0])
                break
    return names


def _negated(body: str, start: int) -> bool:
    """A negator within `NEGATION_WORDS` words before `start`, in the same clause."""
    window = body[max(0, start - 40) : start]
    clause = _CLAUSE_END.split(window)[-1]
    words = re.findall(r"[\w']+", clause)[-NEGATION_WORDS:]
    return any(word in NEGATORS for word in words)


def _drop_wished_failures(found: Signals) -> None:
    """In a review, a request's own words are not a failure: "missing a search" asks for
    one; "needs a dark theme" is not a broken theme."""
    if found.request and not found.failure.get(Kind.CRASH) and not found.regression:
        bugs = found.failure.get(Kind.BUG, [])
        weak = {"problem", "problems", "issue", "issues", "blank"}
        if bugs and all(name in weak for name in bugs):
            del found.failure[Kind.BUG]
