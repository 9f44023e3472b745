"""Paths, dotted modules and identifiers a report mentions. Pure and deterministic."""

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
    identifiers.extend(w for w in _WORD.findall(blanked) if _looks_like_code(w))
    return Mentioned(
        files=files[:MAX_FILES],
        modules=modules[:MAX_MODULES],
        identifiers=[i for i in _ordered(identifiers) if i not in _STOP][:MAX_IDENTIFIERS],
    )


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
