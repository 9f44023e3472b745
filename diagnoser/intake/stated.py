"""What an issue's text states about where it happened: the commit or release a person
wrote down, so a repository served from git is diagnosed there (`diagnoser.mirror`).

Only what is written as a field counts — an issue form's `### Version` section, a
`Version: 4.2.1` or `Commit: 3f2a9c1` line, a link to a commit — never a version number
met in a sentence ("since 2.0 this…"), which as often names another package or the past.
A version must look like one (`4.2.1`, `v4.2`, `4.2.1-rc1`, `app@4.2.1`); a commit is 7 to
40 hex digits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VERSION = r"(?:[\w.-]+@)?v?\d+(?:\.\d+){1,3}(?:[-+][0-9A-Za-z.]+)?"
_NAMES = r"(?:app |package |release |build )?(?:version|release)"
"""The field's name: the project's own version (not "Python version", "OS version")."""
_SECTION = re.compile(
    rf"^#{{2,6}}\s*{_NAMES}\s*:?\s*\n+\s*`?({_VERSION})`?\s*$", re.IGNORECASE | re.MULTILINE
)
"""An issue form's section: a heading naming the version, the value on its own line."""
_FIELD_LINE = re.compile(
    rf"^\s*(?:[-*]\s*)?\**{_NAMES}\**\s*[:=]\s*\**`?({_VERSION})`?\**\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_COMMIT_LINE = re.compile(
    r"^\s*(?:[-*]\s*)?\**(?:git )?(?:commit|sha|revision)\**\s*[:=]\s*"
    r"\**`?([0-9a-f]{7,40})`?\**\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_COMMIT_LINK = re.compile(r"https?://[^\s/]+/[^\s/]+/[^\s/]+/(?:-/)?commit/([0-9a-f]{7,40})\b")


@dataclass(frozen=True, slots=True)
class Stated:
    commit: str | None = None
    release: str | None = None


def stated_revision(text: str) -> Stated:
    """The first commit and the first release the text states as a field (or None)."""
    commit = _first(text, _COMMIT_LINE, _COMMIT_LINK)
    release = _first(text, _SECTION, _FIELD_LINE)
    return Stated(commit.lower() if commit else None, release)


def _first(text: str, *patterns: re.Pattern[str]) -> str | None:
    found = [match for pattern in patterns if (match := pattern.search(text))]
    return min(found, key=lambda match: match.start()).group(1) if found else None
