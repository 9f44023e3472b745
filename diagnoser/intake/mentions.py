"""Paths, dotted modules and identifiers a report mentions. Pure and deterministic.

Identifiers, in order: names in backticks, names called (`fetch_all()`), then — in code
the reporter ran (fenced blocks, `>>>` / `...` and `In [3]:` REPL lines) — methods called on
a value (`Pager().page(…)`, `.doit()`) and names imported (`from sympy import Poly`), then
names in each language's spelling of a member (`Type::method`, `Class#method`,
`obj->field`, Go's `pkg.Func`: the member, and `Owner.member` with the owner), command-line
flags (`--dry-run` → `dry_run`, `dryRun`, `DryRun`), then CamelCase / snake_case /
UPPER_CASE words of the prose.
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
_SCOPED = re.compile(r"(?<![\w:])((?:[A-Za-z_]\w*::)+)(~?[A-Za-z_]\w*)")
"""`Type::method`, `std::vec::Vec`, `crate::de::from_str` (C++, Rust, Ruby, PHP)."""
_HASH_MEMBER = re.compile(r"(?<![\w#])([A-Z]\w*)#([A-Za-z_]\w*[?!]?)")
"""`Class#method` (Ruby and JavaScript docs)."""
_ARROW = re.compile(r"(?<![\w>])[A-Za-z_]\w*(?:->[A-Za-z_]\w*)+")
"""`obj->field`, `conn->ssl->ctx` (C, C++, PHP)."""
_EXPORTED = re.compile(r"(?<![\w./\\-])([a-z][a-z0-9_]*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?(?![\w])")
"""Go's `pkg.Func` / `pkg.Type.Method`: a lower-case package, an exported name."""
_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)(?![\w-])")
"""A long command-line flag: `--dry-run`, `--verbose`."""
MIN_FLAG = 4
"""Shorter flags (`--no`, `--v`) say nothing about where they are handled."""
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
    identifiers.extend(_member_names(blanked))
    identifiers.extend(_flag_names(blanked))
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


def _member_names(text: str) -> list[str]:
    """Members in each language's spelling, each as `Owner.member` (the form the symbol
    index qualifies names in) and as the bare member: `Type::method`, `Class#method`,
    `obj->field` (the field only: `obj` is a variable), Go's `pkg.Func`."""
    names: list[str] = []
    for found in _SCOPED.finditer(text):
        owner = found.group(1).rstrip(":").rsplit("::", 1)[-1]
        member = found.group(2).lstrip("~")
        names.extend((f"{owner}.{member}", member))
    for found in _HASH_MEMBER.finditer(text):
        names.extend((f"{found.group(1)}.{found.group(2)}", found.group(2)))
    for found in _ARROW.finditer(text):
        names.extend(found.group(0).split("->")[1:])
    for found in _EXPORTED.finditer(text):
        package, name, member = found.groups()
        owner, member = (package, name) if member is None else (name, member)
        names.extend((f"{owner}.{member}", member))
    return [n for n in names if len(n.rsplit(".", 1)[-1]) >= MIN_CODE_NAME]


def _flag_names(text: str) -> list[str]:
    """A flag's spellings as a name in code: `--dry-run` → `dry_run`, `dryRun`, `DryRun`."""
    names: list[str] = []
    for found in _FLAG.finditer(text):
        words = found.group(1).split("-")
        if len(found.group(1)) < MIN_FLAG:
            continue
        camel = words[0] + "".join(w.capitalize() for w in words[1:])
        names.extend(("_".join(words), camel, camel[0].upper() + camel[1:]))
    return names


def _looks_like_module(dotted: str) -> bool:
    parts = dotted.split(".")
    return all(p.islower() or "_" in p for p in parts[:-1]) and not dotted.endswith((".", "e.g"))


def _looks_like_code(word: str) -> bool:
    if len(word) < MIN_WORD or word in _STOP:
        return False
    if "_" in word.strip("_"):
        return any(c.isalpha() for c in word)  # snake_case and UPPER_CASE
    return any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)


def _ordered(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
