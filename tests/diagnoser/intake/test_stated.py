"""Where an issue says it happened, when it says so as a field (`intake.stated`)."""

from __future__ import annotations

import pytest

from diagnoser.intake.stated import Stated, stated_revision


@pytest.mark.parametrize(
    ("text", "stated"),
    [
        ("### Version\n\n4.2.1\n\n### What happened?\nboom", Stated(None, "4.2.1")),
        ("### App version\n\n`v2.10.0-rc1`\n", Stated(None, "v2.10.0-rc1")),
        ("**Version**: shop@1.4.0\nit crashed", Stated(None, "shop@1.4.0")),
        ("- Release: 3.1\n- OS: macOS 14.2", Stated(None, "3.1")),
        ("Commit: 3F2A9C1D\n", Stated("3f2a9c1d", None)),
        ("broken since https://github.com/o/r/commit/0123456789abcdef0123456789abcdef01234567",
         Stated("0123456789abcdef0123456789abcdef01234567", None)),
        ("Version: 1.2.3\nsha = abcdef1", Stated("abcdef1", "1.2.3")),
    ],
)  # fmt: skip
def test_a_stated_commit_or_release_is_found(text: str, stated: Stated) -> None:
    assert stated_revision(text) == stated


@pytest.mark.parametrize(
    "text",
    [
        "Since 2.0 the save button does nothing.",  # a version in a sentence
        "I upgraded to version 4.2.1 of requests and now it fails",
        "### Version\n\nlatest\n",  # not a version
        "Version: 2\n",  # a bare number
        "### Python version\n\n3.11.7\n",  # another program's version
        "- OS version: 14.2.1\n",
        "Commit: not-hex\n",
        "",
    ],
)
def test_a_version_met_in_prose_is_not_a_stated_release(text: str) -> None:
    assert stated_revision(text) == Stated()
