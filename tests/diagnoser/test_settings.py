from __future__ import annotations

import pytest
from pydantic import ValidationError

from diagnoser.settings import Settings
from repomap import DEFAULT_DENY, DenyList


@pytest.mark.parametrize(
    ("value", "patterns"),
    [
        ("*.py", ("*.py",)),
        ("*.sql, local_settings.py", ("*.sql", "local_settings.py")),
        ('["*.sql", "a,b.txt"]', ("*.sql", "a,b.txt")),
        ("", ()),
    ],
)
def test_deny_extra_takes_a_comma_separated_or_json_list(
    monkeypatch: pytest.MonkeyPatch, value: str, patterns: tuple[str, ...]
) -> None:
    monkeypatch.setenv("DIAGNOSER_DENY_EXTRA", value)
    assert Settings().deny_extra == patterns


def test_deny_replaces_the_default_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSER_DENY", ".env, *.pem")
    settings = Settings()
    assert settings.deny == (".env", "*.pem")
    assert not settings.deny_list().denies("credentials.py")
    assert settings.deny_list().denies("server.pem")


@pytest.mark.parametrize("field", ["deny", "deny_extra"])
def test_a_bad_pattern_fails_at_start_up_naming_it(
    monkeypatch: pytest.MonkeyPatch, field: str
) -> None:
    monkeypatch.setenv(f"DIAGNOSER_{field.upper()}", "*.sql, !")
    with pytest.raises(ValidationError) as error:
        Settings()
    problem = error.value.errors()[0]
    assert problem["loc"] == (field,)
    assert "invalid deny pattern '!'" in problem["msg"]


def test_patterns_given_as_values_are_validated_too() -> None:
    with pytest.raises(ValidationError, match=r"invalid deny pattern '\\\\'"):
        Settings(deny_extra=("\\",))


def test_deny_list_is_the_default_then_the_extras() -> None:
    rule = Settings(deny_extra=("*.sql", "!.env")).deny_list()
    assert rule == DenyList((*DEFAULT_DENY, "*.sql", "!.env"))
    assert rule.denies("dump.sql") and not rule.denies(".env")
    assert Settings().deny_list() == DenyList.default()
