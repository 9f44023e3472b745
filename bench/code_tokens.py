"""The code-like tokens of a report, to check a paraphrase against its original.

A benchmark report may be reworded, but only its prose: identifiers, paths, option names,
error messages, numbers, version strings and code stay exactly as the reporter wrote them
(issue 27 §1). `code_tokens` lists what must survive a paraphrase — every token inside a
code fence or backticks, and outside them every token that looks like code (has a digit,
an underscore, a dot, slash or `::` inside, a case change, a call's `()`, a `--option`,
or is ALL CAPS) — and `compare` says which the paraphrase lost or added.

    .venv/bin/python bench/code_tokens.py ORIGINAL.md PARAPHRASE.md
    # missing (in the original, not in the paraphrase): …
    # added (in the paraphrase, not in the original): …

Pure standard library: text in, tokens out.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

_FENCE = re.compile(r"^\s*(```|~~~)", re.MULTILINE)
_INLINE = re.compile(r"`([^`\n]+)`")
_TOKEN = re.compile(r"[A-Za-z0-9_$@#%.:/\\\-+=<>~]+(?:\(\))?")
_CODE_LIKE = re.compile(
    r"\d|[A-Za-z0-9]_|_[A-Za-z0-9]|[A-Za-z0-9][./\\][A-Za-z0-9_]|::|[a-z][A-Z]|\(\)$|^--?[a-z]|^[A-Z]{2,}$"
)
_EDGE = ".,:;!?'\"()[]{}<>"
MIN_CHARS = 2
"""Shorter tokens (`a`, `1`) are not checked: numbering and punctuation change freely."""


def _spans(text: str) -> tuple[list[str], list[str]]:
    """(code: fenced blocks and inline backticks, prose: everything else)."""
    code: list[str] = []
    prose: list[str] = []
    inside = False
    for block in _FENCE.split(text):
        if block in ("```", "~~~"):
            inside = not inside
            continue
        if inside:
            code.append(block.split("\n", 1)[1] if "\n" in block else "")
        else:
            code.extend(_INLINE.findall(block))
            prose.append(_INLINE.sub(" ", block))
    return code, prose


def _clean(token: str) -> str:
    stripped = token.strip(_EDGE)
    return stripped + "()" if token.endswith("()") and not stripped.endswith("()") else stripped


def code_tokens(text: str) -> Counter[str]:
    """Every token that must stay verbatim, with how often it occurs."""
    code, prose = _spans(text)
    found: Counter[str] = Counter()
    for span in code:
        found.update(t for t in map(_clean, _TOKEN.findall(span)) if len(t) >= MIN_CHARS)
    for span in prose:
        for token in map(_clean, _TOKEN.findall(span)):
            if len(token) >= MIN_CHARS and _CODE_LIKE.search(token):
                found[token] += 1
    return found


def compare(original: str, paraphrase: str) -> tuple[list[str], list[str]]:
    """(missing: the original's code tokens the paraphrase lacks, added: the reverse)."""
    before, after = set(code_tokens(original)), set(code_tokens(paraphrase))
    return sorted(before - after), sorted(after - before)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    original, paraphrase = (Path(a).read_text(encoding="utf-8") for a in argv)
    missing, added = compare(original, paraphrase)
    print(f"original tokens: {len(code_tokens(original))}")
    print("missing (in the original, not in the paraphrase):", " ".join(missing) or "none")
    print("added (in the paraphrase, not in the original):", " ".join(added) or "none")
    return 1 if missing or added else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
