"""Paths, dotted modules and identifiers a report mentions. Pure and deterministic.

Identifiers, in order: names in backticks, names called (`fetch_all()`), then — in code
the reporter ran (fenced blocks, `>>>` / `...` and `In [3]:` REPL lines) — methods called on
a value (`Pager().page(…)`, `.doit()`) and names imported (`from sympy import Poly`), then
CamelCase / snake_case words of the prose.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from diagnoser.intake.report import Mentioned
from repomap.languages import EXTENSIONS

MAX_FILES = 20
MAX_MODULES = 20
MAX_IDENTIFIERS = 30
MIN_WORD = 4
"""CamelCase / snake_case words shorter than this are ignored."""
MAX_SCAN_CHARS = 200_000
"""Only the first this-many characters are scanned (a report is rarely longer)."""

_EXT = "|".join(sorted((e.lstrip(".") for e in EXTENSIONS), key=len, reverse=True))
_PATH = re.compile(
    r"(?<![\w/\\.-])((?:[A-Za-z]:)?[\w.~/\\-]{0,400}?\w\.(?:" + re.escape(_EXT).replace(r"\|", "|")
    + r"))(?![\w])"
)  # fmt: skip
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+")
_DOTTED = re.compile(r"(?<![\w./\\-])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*){1,12})(?![\w(])")
_BACKTICK = re.compile(r"`([^`\n]{1,200})`")
_WORD = re.compile(r"(?<![\w.])[A-Za-z_][A-Za-z0-9_]*(?![\w])")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CALL = re.compile(r"(?<![\w.])([A-Za-z_][A-Za-z0-9_.]*)\(")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_PROMPT = re.compile(r"^\s*(?:>>>|\.\.\.|In \[\d*\]:)\s?(.*)$")
_METHOD_CALL = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_IMPORTED = re.compile(r"^\s*from\s+[\w.]+\s+import\s+\(?([\w\s,]+)")
MIN_CODE_NAME = 3
"""Shorter names called in code (`f()`, `ax`) say nothing about where the fault is."""
CODE_NAMES = True
"""Whether code the reporter ran contributes its method calls and imports (for the
leave-one-project-out benchmark's ablation)."""
_STOP = frozenset(
    {"None", "True", "False", "self", "cls", "this", "null", "undefined", "http", "https"}
)


def find_mentions(text: str) -> Mentioned:
    """What the text names: files (as written), dotted modules, identifiers."""
    text = _URL.sub(" ", text[:MAX_SCAN_CHARS])
    files = _ordered(m.group(1) for m in _PATH.finditer(text))
    blanked = _PATH.sub(" ", text)
    modules = _ordered(
        m.group(1)
        for m in _DOTTED.finditer(blanked)
        if m.group(1).count(".") >= 1
        and not m.group(1)[0].isupper()
        and _looks_like_module(m.group(1))
    )
    identifiers: list[str] = []
    for found in _BACKTICK.finditer(blanked):
        identifiers.extend(w for w in _NAME.findall(found.group(1)) if len(w) >= 3)
    identifiers.extend(m.group(1).rsplit(".", 1)[-1] for m in _CALL.finditer(blanked))
    if CODE_NAMES:
        identifiers.extend(_code_names(blanked))
    identifiers.extend(w for w in _WORD.findall(blanked) if _looks_like_code(w))
    return Mentioned(
        files=files[:MAX_FILES],
        modules=modules[:MAX_MODULES],
        identifiers=[i for i in _ordered(identifiers) if i not in _STOP][:MAX_IDENTIFIERS],
    )


def code_lines(text: str) -> list[str]:
    """Lines of code the report quotes: inside ``` / ~~~ fences, and REPL input lines
    (`>>> x*Poly(x)`, `... `, `In [3]: expr.doit()`) wherever they are."""
    found = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        prompt = _PROMPT.match(line)
        if prompt:
            found.append(prompt.group(1))
        elif fenced:
            found.append(line)
    return found


def _code_names(text: str) -> list[str]:
    """Methods called and names imported in the code the report quotes."""
    names: list[str] = []
    for line in code_lines(text):
        names.extend(m.group(1) for m in _METHOD_CALL.finditer(line))
        imported = _IMPORTED.match(line)
        if imported:
            names.extend(n.split()[0] for n in imported.group(1).split(",") if n.strip())
    return [n for n in names if len(n) >= MIN_CODE_NAME and not n.startswith("__")]


def _looks_like_module(dotted: str) -> bool:
    parts = dotted.split(".")
    return all(p.islower() or "_" in p for p in parts[:-1]) and not dotted.endswith((".", "e.g"))


def _looks_like_code(word: str) -> bool:
    if len(word) < MIN_WORD or word in _STOP:
        return False
    if "_" in word.strip("_"):
        return any(c.isalpha() for c in word)
    return any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)


def _ordered(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
