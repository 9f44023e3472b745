"""`diagnoser.redact`: a URL's password is hidden by its text alone, whatever parses it."""

from __future__ import annotations

import pytest

from diagnoser.redact import HIDDEN, redact_url, scrub, secrets_of

SECRET = "hunter2pw"
SHOWN = {
    "postgresql://u:hunter2pw@host/db": "postgresql://u:***@host/db",
    "postgresql://u:hunter2pw@@host/db": "postgresql://u:***@host/db",
    "postgresql://u:hunter2pw@host:notaport/db": "postgresql://u:***@host:notaport/db",
    "postgres://u:hunter2pw@[::1/db": "postgres://u:***@[::1/db",
    "postgresql+nodriver://u:hunter2pw@host/db": "postgresql+nodriver://u:***@host/db",
    "postgresql://u:hun@ter2pw@host/db": "postgresql://u:***@host/db",
    "postgresql://u:hunter2pw/db": "postgresql://u:***/db",
    "postgresql://u/hunter2pw@db": "postgresql://u/***@db",
    "postgresql://host/db?sslmode=require&password=hunter2pw": (
        "postgresql://host/db?sslmode=require&password=***"
    ),
    "https://key:hunter2pw@llm.example/v1": "https://key:***@llm.example/v1",
    "sqlite+pysqlcipher://:hunter2pw@/x.db": "sqlite+pysqlcipher://:***@/x.db",
    "u:hunter2pw@host": HIDDEN,
    "hunter2pw": HIDDEN,
}
"""Each URL → how it is shown: user, host, port and path kept, the password not."""
UNCHANGED = [
    "sqlite:////srv/data/a@b/diagnoser.sqlite",
    "sqlite:///:memory:",
    "postgresql://u@127.0.0.1:5432/db",
    "postgresql://[::1]:5432/db",
    "http://localhost:4000/v1",
    "",
]


@pytest.mark.parametrize("url", SHOWN)
def test_the_password_is_hidden_even_when_no_parser_accepts_the_url(url: str) -> None:
    assert redact_url(url) == SHOWN[url]
    assert SECRET in "".join(secrets_of(url)).replace("@", "")


@pytest.mark.parametrize("url", UNCHANGED)
def test_a_url_without_a_password_is_shown_as_it_is(url: str) -> None:
    assert redact_url(url) == url


def test_scrub_hides_the_url_and_its_password_wherever_a_message_quotes_them() -> None:
    url = "postgresql+psycopg://u:hunter2pw@@db/x"
    message = f"bad url {url}; password 'hunter2pw@' for user u; near 'hunter2pw'"
    assert scrub(message, url) == (
        "bad url postgresql+psycopg://u:***@db/x; password '***' for user u; near '***'"
    )
    assert scrub("nothing secret here", None, "") == "nothing secret here"
