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
language; phrase lists cover English plus es, de, fr, it, pt, ru, ja and zh. A failure
phrase after a negation ("never crashed", "not a single crash", "no problems") counts
for praise, not against it. Before any of that, a text that is mostly unreadable
(binary decoded with replacement characters) is noise, whatever its bytes spell.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from diagnoser.intake.report import Classification, Kind, Source, Trace

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
NEGATION_WORDS = 3
"""A negator this many words or fewer before a failure phrase cancels it ("never
crashed", "not a single crash", "without any problems"); further away it is usually
about something else ("not cheap, and it crashes")."""

REGRESSION_RATING = 3
"""In a review, "since the update" / "no longer" with no failure named is a defect only
at this rating or below; rated higher it is usually good news ("no longer need paper
lists", "after the update it is even faster")."""
MAX_NEGATED_MATCHES = 16
"""A phrase negated this many times in a row is taken as negated throughout: a 2 MB text
repeating "never crashed" otherwise checks every one of ~35,000 matches (0.7 s)."""

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
}
"""How sure each deciding rule is, in the order of how much it rests on: a trace, then
a named exception, a failure phrase, a request … down to the developer prior with no
cue at all. Set by judgement, below what our labelled set shows (`bench/classify_bench.py
--calibrate test`: 0.83–1.00 per rule on the held-out half), because that set is easier
than real reviews: the old classifier scored 0.69 four-class on it and 0.46 on ~300
human-labelled ones."""

# A phrase is a literal (matched as whole words in alphabetic scripts, anywhere in CJK);
# `re:` phrases are regular expressions whose first literal run is looked for first.
CRASH = (
    "crash", "crashes", "crashed", "crashing", "crashs", "crashes", "keeps crashing",
    "force close", "force closes", "force-close", "force closed", "keeps closing",
    "closes itself", "closes by itself", "kicks me out", "shuts down", "traceback",
    "segfault", "segmentation fault", "panicked", "fatal error", "fatal exception",
    "uncaught", "core dumped", "kernel dies", "sigsegv",
    "se cierra", "se cae", "se crashea", "stürzt", "abgestürzt", "absturz", "stürzt ab",
    "plante", "planté", "plantage", "crashe", "crasha", "si chiude", "si blocca e si chiude",
    "fecha sozinho", "fica fechando", "fechando sozinho", "вылетает", "вылетело",
    "вылетало", "вылетел", "падает", "крашится", "クラッシュ", "落ちる", "落ちた",
    "落ちます", "強制終了", "崩溃", "闪退",
)  # fmt: skip
BUG = (
    "bug", "bugs", "broken", "is broken", "doesn't work", "does not work", "don't work",
    "didn't work", "not working", "isn't working", "stopped working", "won't work",
    "fails", "failed", "failing", "error", "errors", "wrong", "incorrect", "incorrectly",
    "lost my", "lost all", "disappeared", "disappears", "gone", "deleted", "wiped",
    "deprecated", "please fix", "fix this", "fix it", "freezes", "frozen", "hangs",
    "not responding", "does nothing", "do nothing", "nothing happens", "blank",
    "white screen", "black screen", "never arrive", "never arrives", "never comes",
    "never go off", "doesn't go off", "don't go off", "logs me out", "logging me out",
    "logged out", "charged twice", "charged me twice", "twice", "sideways",
    "without sound", "no sound", "greyed out", "grayed out", "stopped updating",
    "keeps saying", "keeps telling", "spinning", "doesn't find", "returns nothing",
    "shows nothing", "problem", "problems", "issue", "issues", "glitch", "glitchy",
    "ignored", "ignores", "overlaps", "mangled", "truncated", "stops working",
    "stop working",
    "re:\\b(?:can't|cannot|can not|couldn't|unable to|won't|wont|doesn't|does not|didn't)"
    "(?: even)? (?:log ?in|login|sign ?in|sign up|open|load|start|launch|save|sync|connect|"
    "access|pay|play|download|upload|send|receive|see|get|install|update|register|"
    "verify|use|add|edit|delete|let|show|work|respond|refresh|display)\\b",
    "no funciona", "no me deja", "no carga", "no se guardan", "no se guarda", "error al",
    "funktioniert nicht", "geht nicht", "fehler", "fehlermeldung", "kommen nicht",
    "ne marche pas", "ne fonctionne pas", "impossible de", "n'arrive jamais",
    "non funziona", "non riesco", "non si apre", "errore", "schermata nera",
    "não funciona", "não consigo", "não abre", "dá erro", "erro", "не работает",
    "не приходят", "не приходит", "не могу", "ошибка", "не открывается", "動かない",
    "できません", "できない", "来ない", "エラー", "不具合", "不能用", "无法", "不了",
    "错误", "打不开", "登录不了",
)  # fmt: skip
PERFORMANCE = (
    "slow", "slowly", "slower", "so slow", "laggy", "lag", "lags", "lagging", "takes forever",
    "takes ages", "battery drain", "eats battery", "eats my battery", "kills my battery",
    "battery hog", "drains", "drain", "too much data", "too much memory", "too much storage",
    "too much battery", "memory leak", "high cpu", "cpu usage",
    "loading forever", "sluggish", "quadratic", "crawling", "memory grows",
    "re:takes (?:like |about |over |more than )?\\d+ ?(?:s|sec|secs|seconds|minutes?)\\b",
    "re:\\d+x slower", "re:freezes for \\d+",
    "lento", "lenta", "lentísima", "consume mucha batería", "langsam", "akku", "lent",
    "lentissima", "ci mette", "travando", "demora", "медленно", "тормозит", "долго",
    "遅い", "重い", "卡顿", "很慢", "太卡", "慢",
)  # fmt: skip
REGRESSION = (
    "no longer", "not anymore", "anymore", "any more", "used to", "since the update",
    "since the last update", "after the update", "after the latest update",
    "after updating", "since updating", "after upgrading", "since upgrading",
    "since the upgrade", "after the upgrade", "regression", "was great until",
    "re:\\bsince (?:v|version |release )?\\d+(?:\\.\\d+)+",
    "re:\\b(?:upgrading|upgraded|updating|updated) to (?:v|version )?\\d",
    "re:\\bstarted (?:generating|giving|throwing|raising|showing|printing|failing|"
    "crashing|returning|to fail|to crash|to return|to show)\\b",
    "ya no", "desde la actualización", "desde la última actualización", "nicht mehr",
    "seit dem update", "seit dem letzten update", "re:\\bseit (?:version )?\\d",
    "depuis la mise à jour", "ne fonctionne plus", "ne marche plus", "ne respecte plus",
    "re:\\bdepuis la \\d", "non funziona più", "non stampa più", "più nulla",
    "dopo l'aggiornamento", "depois da atualização", "não funciona mais",
    "после обновления", "перестал", "перестала", "перестало", "перестали",
    "アップデート後", "更新后", "不再", "升级到",
)  # fmt: skip
REQUEST = (
    "would be nice", "would be great", "would be perfect", "would be even better",
    "would be better", "would be useful", "would be cool", "would help",
    "it would be nice", "it would be useful", "please add", "pls add", "plz add",
    "add pls", "feature request", "could you add", "can you add", "can you guys add",
    "please consider", "i wish", "only wish", "wish there was", "wish it had",
    "wish list", "i'd love", "i would love", "would love", "would like", "i'd like",
    "i want to be able", "want to be able", "if only", "if it had", "if it has",
    "if there was", "if there were", "if i could", "if you could", "needs a", "needs an",
    "really needs", "need a", "only thing missing", "missing a", "missing an",
    "add support", "support for", "option to", "ability to", "let us", "bring back",
    "please bring", "proposal", "enhancement", "rfe", "dark mode", "dark theme",
    "sería genial", "estaría bien", "me gustaría", "añadan", "por favor añadan",
    "wäre schön", "bitte fügt", "hinzufügen", "einbauen", "ce serait bien",
    "j'aimerais", "ajouter", "sarebbe bello", "vorrei", "seria ótimo", "seria bom",
    "gostaria", "добавьте", "хотелось бы", "欲しい", "ほしい", "追加して", "希望",
    "建议", "增加",
)  # fmt: skip
REQUEST_TITLE = re.compile(
    r"^\s*(?:\[(?:enhancement|feature|rfe|proposal)\]|feature request\b|proposal\b|rfe\b|"
    r"enhancement\b|add\b|support\b|allow\b|provide\b|expose\b|implement\b|make it possible)",
    re.IGNORECASE,
)
"""A developer report's title that asks for something ("Add a `--json` output")."""
QUESTION = (
    "how do i", "how can i", "how to", "how do you", "is there a way", "is it possible",
    "can i ", "where is", "where do i", "where can i", "what is", "what's the",
    "does anyone", "does this work", "does it work", "is there a", "difference between",
    "question:", "cómo", "wie kann", "wie ", "come faccio", "como faço",
    "re:\\bcomment (?:faire|fait|puis|peut|peux|pouvez|on|je|j'|est|ça|ca|se|avoir|"
    "changer|activer|désactiver|supprimer|mettre|utiliser|ajouter|trouver|récupérer)\\b",
    "como ", "как ", "どうすれば", "方法", "教えて", "如何", "怎么", "请问",
)  # fmt: skip
"""French "comment" (how) only before a verb or pronoun that asks: alone it is the English
noun ("copies an existing comment")."""
FAILURE_QUESTION = re.compile(r"\bwhy (?:does|do|is|are|did|would)\b")
"""In a developer tool, "Why does X …?" reports behaviour the writer thinks is wrong."""
DEVELOPER_FAILURE = (
    "ignored", "ignores", "always", "should", "shouldn't", "expected", "unexpected",
    "still", "silently", "twice", "wrong", "incorrect", "fails", "failed", "broken",
    "doesn't", "does not", "isn't", "is not", "not working", "raises", "raise", "raising",
    "error", "exception", "inconsistent", "different", "strange", "surprising",
    "returns", "bug", "crash", "crashes", "regression", "cannot",
)  # fmt: skip
"""Words that show a developer's request or question is about a failure after all."""
PRAISE = (
    "love", "loved", "love it", "great", "good", "nice", "best", "excellent", "perfect",
    "awesome", "amazing", "fantastic", "works great", "works well", "works perfectly",
    "flawlessly", "recommend", "highly recommend", "favorite", "favourite", "reliable",
    "helpful", "useful", "easy to use", "intuitive", "beautiful", "smooth", "thank you",
    "thanks", "worth", "impressed", "it really works", "actually works", "just works",
    "does the job", "does what", "saved my", "five stars", "5 stars", "solid", "fine",
    "me encanta", "excelente", "recomiendo", "perfecto", "genial", "toll", "super",
    "einwandfrei", "zuverlässig", "übersichtlich", "génial", "géniale", "parfait",
    "rien à redire", "ottima", "ottimo", "bellissima", "fantastica", "ótimo", "muito bom",
    "recomendo", "funciona muito bem", "отличное", "отлично", "рекомендую",
    "всё работает", "все работает", "удобно", "最高", "便利", "快適", "使いやすい",
    "好用", "很好", "推荐", "不错",
)  # fmt: skip
NEGATED_FAILURE = (
    "never failed", "never let me down", "never had a problem", "never had an issue",
    "no problems", "no problem", "no issues", "zero issues", "no bugs", "no crashes",
    "no lag", "not a single", "without any problems", "without problems",
    "nunca me ha fallado", "sin ningún problema", "sin problemas", "ohne probleme",
    "noch nie abgestürzt", "nie abgestürzt", "jamais eu", "aucun plantage", "aucun bug",
    "mai un problema", "nessun problema", "nunca travou", "nunca deu problema",
    "sem problemas", "ни разу не", "никогда не подводило", "без проблем",
    "一度も落ち", "落ちない", "落ちません", "不具合もなく", "不具合なし", "問題なく",
    "从来没有闪退", "没有闪退", "从不崩溃", "没有出现过问题", "没有问题", "不卡",
)  # fmt: skip
COMPLAINT = (
    "worst", "terrible", "useless", "garbage", "trash", "rubbish", "waste", "rip off",
    "rip-off", "ripoff", "don't bother", "don't download", "dont download", "horrible",
    "awful", "overpriced", "too expensive", "too many ads", "scam", "meh",
    "pésima", "malísima", "müll", "schrott", "nul", "ужас", "垃圾", "差评",
)  # fmt: skip
_NEGATORS = frozenset(
    (
        "never", "no", "not", "without", "zero", "hasn't", "haven't", "hasnt", "havent",
        "didn't", "nor", "fixed", "solved", "resolved", "nunca", "sin", "ningún", "ninguna",
        "nie", "kein", "keine", "keinen", "ohne", "jamais", "aucun", "aucune", "sans", "mai",
        "nessun", "senza", "nenhum", "nenhuma", "sem", "никогда", "ни", "без", "не",
    )
)  # fmt: skip
# `[ \t\r]*`, not `\s*`, at the ends: `\s*` runs across line breaks, so over a text of
# blank lines every start rescanned the rest (2,000 empty lines took 2.5 s, 2 MB hung).
_TEMPLATE_HEADING = re.compile(
    r"^[ \t\r]*(?:#{1,6}\s*[^\n]{0,60}|\*\*[^*\n]{1,60}\*\*:?|(?:describe the bug|to reproduce|"
    r"steps to reproduce|expected behaviou?r|actual behaviou?r|environment|"
    r"additional context|feature request|motivation|alternatives)[ \t\r]*:?)[ \t\r]*$",
    re.IGNORECASE | re.MULTILINE,
)
_POLITE_LINE = re.compile(
    r"^[ \t\r]*(?:thanks?(?: you)?(?: (?:a lot|so much|in advance|for [^\n]{0,60}))?|cheers|"
    r"regards|best regards|best|kind regards|thx|ty)[\s!.,:;)\w-]{0,20}$",
    re.IGNORECASE | re.MULTILINE,
)
_CONTRACTION = re.compile(
    r"\b(can|don|doesn|won|didn|isn|wasn|haven|hasn|couldn|wouldn|aren|shouldn)t\b"
)
_WORDS = re.compile(r"\w+", re.UNICODE)
_WORD_BEFORE = re.compile(r"([\w']+)[^\w'.,;!?:]*$")
_CLAUSE_END = re.compile(r"[.,;!?:\n]| but | aber | pero | mais | ma | mas | но ")
_UNREADABLE = re.compile(r"[\ufffd\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_EXCEPTION_NAME = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception)\b")


@dataclass(frozen=True, slots=True)
class _Cue:
    name: str
    """The phrase; empty for a regular expression, whose signal is the text it matched."""
    literal: str
    """Must occur in the text for `pattern` to match: checked first, ~100× cheaper."""
    pattern: re.Pattern[str]


def _cue(phrase: str) -> _Cue:
    """Whole words for alphabetic scripts ("lent" is not in "excellent"); CJK phrases have
    no word boundaries, so they match anywhere. With the literal the pattern matches: a
    substring test first is ~100× cheaper than the regex, whose leading lookbehind keeps
    it from skipping ahead to the literal (~85 µs a phrase on a 4 KB report)."""
    if phrase.startswith("re:"):
        regex = phrase[3:]
        literal = re.split(r"[\\(\[?*+{|.]", regex.removeprefix("\\b"), maxsplit=1)[0]
        return _Cue("", literal, re.compile(regex))
    if phrase.isascii() or any(c.isalpha() and ord(c) < 0x2E80 for c in phrase):
        literal = phrase.strip()
        return _Cue(literal, literal, re.compile(r"(?<!\w)" + re.escape(literal) + r"(?!\w)"))
    return _Cue(phrase, phrase, re.compile(re.escape(phrase)))


def _cues(phrases: Iterable[str]) -> tuple[_Cue, ...]:
    return tuple(_cue(phrase) for phrase in dict.fromkeys(phrases))


_FAILURE_CUES = {
    Kind.CRASH: _cues(CRASH),
    Kind.BUG: _cues(BUG),
    Kind.PERFORMANCE: _cues(PERFORMANCE),
}
_REGRESSION = _cues(REGRESSION)
_REQUEST = _cues(REQUEST)
_QUESTION = _cues(QUESTION)
_PRAISE = _cues(PRAISE)
_NEGATED = _cues(NEGATED_FAILURE)
_COMPLAINT = _cues(COMPLAINT)
_DEVELOPER_FAILURE = _cues(DEVELOPER_FAILURE)


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


@dataclass(slots=True)
class _Signals:
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
    body = _normalized(text, title, developer=prior is Prior.DEVELOPER)
    found = _signals(body, developer=prior is Prior.DEVELOPER)
    if prior is Prior.REVIEW:
        return _review(found, rating)
    return _developer(found, body, title)


def _review(found: _Signals, rating: int | None) -> Classification:
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


def _review_without_asks(found: _Signals, rating: int | None, stars: list[str]) -> Classification:
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


def _developer(found: _Signals, body: str, title: str | None) -> Classification:
    """A developer tool's report is investigated unless it clearly asks or only asks."""
    prior = Prior.DEVELOPER
    failed = found.failures > 0 or bool(FAILURE_QUESTION.search(body))
    if not failed:
        failed = any(c.literal in body and c.pattern.search(body) for c in _DEVELOPER_FAILURE)
    heading = title or next((line for line in body.splitlines() if line.strip()), "")
    asks_title = bool(REQUEST_TITLE.search(heading))
    if (found.request or asks_title) and not failed:
        names = _named("request", found.request) or ["request-title"]
        return _verdict(Kind.FEATURE_REQUEST, "request", prior, names)
    if (found.question or found.question_mark) and not failed:
        names = _named("question", found.question) or ["ends-with-question-mark"]
        return _verdict(Kind.QUESTION, "question", prior, names)
    return _developer_defect(found, body, failed=failed)


def _developer_defect(found: _Signals, body: str, *, failed: bool) -> Classification:
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


def _failure_kind(found: _Signals) -> tuple[Kind, list[str]]:
    """Crash over performance over bug when named; a regression alone is a bug."""
    counts = {kind: len(found.failure.get(kind, ())) for kind in _FAILURE_CUES}
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


def _normalized(text: str, title: str | None, *, developer: bool) -> str:
    """Lower case, straight apostrophes, colloquial contractions spelled out ("cant" →
    "can't"); for developer tools without template headings and thank-you lines."""
    body = f"{title or ''}\n{text[:MAX_SCAN_CHARS]}"
    if developer:
        body = _POLITE_LINE.sub("", _TEMPLATE_HEADING.sub("", body))
    body = body.lower().replace("\u2019", "'").replace("\uff1f", "?")
    return _CONTRACTION.sub(r"\1't", body)


def _signals(body: str, *, developer: bool) -> _Signals:
    found = _Signals(words=len(_WORDS.findall(body)))
    masked = body
    for cue in _NEGATED:
        if cue.literal in masked:
            masked = cue.pattern.sub(lambda match: _mask(match, found.negated), masked)
    for kind, cues in _FAILURE_CUES.items():
        names = [n for n in _fired(masked, cues, negatable=True) if developer or n != "twice"]
        if names:
            found.failure[kind] = names
    found.regression = _fired(masked, _REGRESSION, negatable=False)
    found.request = _fired(masked, _REQUEST, negatable=False)
    found.question = _fired(masked, _QUESTION, negatable=False)
    found.praise = _fired(masked, _PRAISE, negatable=True)
    found.complaint = _fired(masked, _COMPLAINT, negatable=True)
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


def _fired(body: str, cues: Sequence[_Cue], *, negatable: bool) -> list[str]:
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
    return any(word in _NEGATORS for word in words)


def _drop_wished_failures(found: _Signals) -> None:
    """In a review, a request's own words are not a failure: "missing a search" asks for
    one; "needs a dark theme" is not a broken theme."""
    if found.request and not found.failure.get(Kind.CRASH) and not found.regression:
        bugs = found.failure.get(Kind.BUG, [])
        weak = {"problem", "problems", "issue", "issues", "blank"}
        if bugs and all(name in weak for name in bugs):
            del found.failure[Kind.BUG]


def _binary_signal(text: str) -> str | None:
    """`binary:56% unreadable` when most of `text` is not text at all, else None."""
    unreadable = _UNREADABLE.subn("", text)[1]
    if unreadable <= BINARY_FRACTION * len(text):
        return None
    return f"binary:{unreadable / len(text):.0%} unreadable"


_SCORED_PHRASES: dict[Kind, tuple[_Cue, ...]] = {
    Kind.CRASH: _FAILURE_CUES[Kind.CRASH],
    Kind.BUG: _FAILURE_CUES[Kind.BUG] + _REGRESSION,
    Kind.PERFORMANCE: _FAILURE_CUES[Kind.PERFORMANCE],
    Kind.FEATURE_REQUEST: _REQUEST,
    Kind.QUESTION: _QUESTION,
    Kind.PRAISE: _PRAISE + _NEGATED,
}


def _scored(text: str, *, title: str | None, rating: int | None) -> Classification:
    """No source to lean on: every signal scores and the highest total wins; a text
    with words but no signal is a bug (an unknown sender is investigated)."""
    body = _normalized(text, title, developer=False)
    scores: dict[Kind, float] = dict.fromkeys(Kind, 0.0)
    signals: list[str] = []
    for kind, cues in _SCORED_PHRASES.items():
        for name in _fired(body, cues, negatable=kind is not Kind.PRAISE):
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
    words = len(_WORDS.findall(body))
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
