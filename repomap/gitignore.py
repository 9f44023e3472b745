"""gitignore patterns, matched the way git matches them.

A pattern is matched against one path at a time — a file's, or a folder's as the walk
reaches it — never against the paths below it: a folder git excludes is not entered
(`files.walk_files` prunes it), so nothing inside it can come back, exactly as in git.
The last matching pattern of a file decides; `ignore_verdict` asks the deepest file
first. pathspec (and dulwich) answer for whole subtrees instead ("`src/` matches
`src/Makefile`"), which gives other answers than git where patterns re-include: a root
`.gitignore` of `*`, `!*.*`, `!*/` hides every folder from pathspec, while git lists the
files with an extension in all of them. tests/repomap/test_gitignore.py compares this
with `git ls-files --others --exclude-standard` on generated trees.

Rules (gitignore(5)): blank lines and `#…` are skipped, `\\#` and `\\!` escape; trailing
spaces are dropped unless escaped; `!` re-includes; a trailing `/` matches folders only;
a pattern with another `/` is anchored to its file's folder, one without matches a name
at any depth; `*` and `?` stop at `/`, `[…]` is a class (`!` or `^` negates it),
`**/`, `/**` and `/**/` span folders.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rule:
    regex: re.Pattern[str]
    negated: bool
    folders_only: bool


@dataclass(frozen=True, slots=True)
class Rules:
    """One ignore file's patterns, for paths relative to its folder."""

    rules: tuple[Rule, ...]

    @classmethod
    def parse(cls, lines: Iterable[str]) -> Rules:
        return cls(tuple(rule for line in lines if (rule := compile_pattern(line)) is not None))

    @property
    def negates(self) -> bool:
        return any(rule.negated for rule in self.rules)

    def verdict(self, path: str, *, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included (`!…`); None: no pattern matches `path`."""
        for rule in reversed(self.rules):
            if (is_dir or not rule.folders_only) and rule.regex.fullmatch(path):
                return not rule.negated
        return None


def ignore_verdict(path: str, *, is_dir: bool, stack: Sequence[tuple[str, Rules]]) -> bool:
    """Whether git ignores `path` (repo-relative) given the ignore files on its way,
    `(folder, rules)` from the lowest precedence (`.git/info/exclude`, the root) to the
    highest (the deepest `.gitignore`)."""
    for base, rules in reversed(stack):
        if base:
            if not path.startswith(base + "/"):
                continue
            relative = path[len(base) + 1 :]
        else:
            relative = path
        verdict = rules.verdict(relative, is_dir=is_dir)
        if verdict is not None:
            return verdict
    return False


def compile_pattern(line: str) -> Rule | None:
    """One gitignore line as a Rule; None for a blank line or a comment."""
    text = _strip_trailing_spaces(line.rstrip("\r\n"))
    if not text or text.startswith("#"):
        return None
    negated = text.startswith("!")
    if negated or text.startswith(("\\!", "\\#")):  # `\!` and `\#` are literal
        text = text[1:]
    folders_only = text.endswith("/") and not text.endswith("\\/")
    text = text.rstrip("/") if folders_only else text
    if not text:
        return None
    anchored = "/" in text
    text = text.removeprefix("/")
    body = _glob_to_regex(text)
    prefix = "" if anchored else "(?:.*/)?"
    return Rule(re.compile(prefix + body, re.DOTALL), negated, folders_only)


def _strip_trailing_spaces(text: str) -> str:
    while text.endswith(" ") and not text.endswith("\\ "):
        text = text[:-1]
    return text


def _glob_to_regex(glob: str) -> str:
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            stars = 1
            while i + stars < n and glob[i + stars] == "*":
                stars += 1
            at_start = i == 0 or glob[i - 1] == "/"
            at_end = i + stars == n or glob[i + stars] == "/"
            if stars >= 2 and at_start and at_end:
                if i + stars == n:  # `…/**` or `**`: everything below
                    out.append(".*")
                else:  # `**/`: zero or more folders
                    out.append("(?:.*/)?")
                    stars += 1  # the slash is part of it
            else:
                out.append("[^/]*")
            i += stars
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end, regex = _bracket(glob, i)
            out.append(regex)
            i = end
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _bracket(glob: str, start: int) -> tuple[int, str]:
    """`[…]` from `start`: (index after it, a regex class); an unclosed `[` is literal."""
    i = start + 1
    negate = i < len(glob) and glob[i] in "!^"
    if negate:
        i += 1
    members: list[str] = []
    first = True
    while i < len(glob) and (glob[i] != "]" or first):
        c = glob[i]
        if c == "\\" and i + 1 < len(glob):
            members.append(re.escape(glob[i + 1]))
            i += 2
        elif c == "-" and members and i + 1 < len(glob) and glob[i + 1] != "]":
            members.append("-")
            i += 1
        else:
            members.append("\\-" if c == "-" else re.escape(c))
            i += 1
        first = False
    if i >= len(glob):
        return start + 1, re.escape("[")
    body = "".join(members)
    return i + 1, f"[^/{body}]" if negate else f"[{body}]"
