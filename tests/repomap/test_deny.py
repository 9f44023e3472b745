from __future__ import annotations

import pytest

from repomap import deny as deny_module
from repomap.deny import DenyList, parse_patterns

DEFAULT = DenyList.default()


@pytest.mark.parametrize(
    "path",
    [
        ".env",
        "sub/.env",
        ".env.local",
        ".env.py",
        "prod.env",
        "credentials",
        "credentials.py",
        "config/secrets.yml",
        "deploy/id_rsa",
        "keys/server.pem",
        "infra/terraform.tfstate",
        ".npmrc",
        ".aws/credentials",
        "home/.ssh/keys.py",
        ".git/config",
        "sub/.docker/config.json",
        "sub/.kube/config",
    ],
)
def test_default_list_denies_secret_files(path: str) -> None:
    assert DEFAULT.denies(path)


@pytest.mark.parametrize(
    "path",
    ["src/app.py", "secrets.py", "app/secrets.py", "envelope.py", "settings.py", "credits.py"],
)
def test_default_list_allows_ordinary_code(path: str) -> None:
    assert not DEFAULT.denies(path)


def test_a_folder_above_denies_everything_under_it_and_negation_cannot_undo_it() -> None:
    # `!secrets.py` re-allows the file name, but not inside a folder named `secrets`
    # (git's rule: nothing under an excluded folder comes back).
    assert DEFAULT.denies("secrets/secrets.py")
    assert not DEFAULT.matches("secrets/secrets.py")  # the walk never enters `secrets/`
    assert DEFAULT.denies(".git", is_dir=True) and not DEFAULT.denies(".git")
    assert DEFAULT.denies("credentials/util.py")


def test_the_root_is_never_denied_and_non_utf8_paths_always_are() -> None:
    assert not DEFAULT.denies("")
    assert DenyList(()).denies("bad\udcffname.py")


def test_extended_adds_patterns_and_later_negations_win() -> None:
    strict = DEFAULT.extended(["*.sql", "local/"])
    assert strict.denies("db/dump.sql") and strict.denies("local/x.py")
    assert not DEFAULT.denies("db/dump.sql")
    assert not DEFAULT.extended(["!.env"]).denies(".env")
    assert not DenyList(()).denies(".env")
    assert DEFAULT.extended([]) is DEFAULT


def test_equal_by_patterns() -> None:
    assert DenyList(("a", "b")) == DenyList(("a", "b"))
    assert hash(DenyList(("a",))) == hash(DenyList(("a",)))
    assert DenyList(("a",)) != DenyList(("b",))


@pytest.mark.parametrize("bad", ["!", "\\", "ok\udcff"])
def test_an_invalid_pattern_is_a_value_error_naming_it(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid deny pattern") as error:
        DenyList(("*.sql", bad))
    assert repr(bad) in str(error.value)


@pytest.mark.parametrize(
    ("text", "patterns"),
    [
        ("*.sql", ("*.sql",)),
        (" *.sql , local/ ,, ", ("*.sql", "local/")),
        ('["*.sql", "a,b.txt"]', ("*.sql", "a,b.txt")),
        ("[Tt]est.py, x", ("[Tt]est.py", "x")),
        ("", ()),
        ("[]", ()),
    ],
)
def test_parse_patterns_takes_commas_or_json(text: str, patterns: tuple[str, ...]) -> None:
    assert parse_patterns(text) == patterns


def test_parse_patterns_refuses_json_that_is_not_a_list_of_strings() -> None:
    with pytest.raises(ValueError, match="list of strings"):
        parse_patterns("[1, 2]")


def test_remembered_answers_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deny_module, "DENY_MEMO_ENTRIES", 3)
    rule = DenyList((".env",))
    answers = [rule.denies(f"pkg{i}/.env") for i in range(10)]
    assert all(answers) and len(rule._memo) <= 3
    assert not rule.denies("pkg0/app.py")
