"""Redaction: a database or model URL as it may be shown — in a banner, an error line,
a log line or the doctor's report — never with its password.

`redact_url` hides the password by the URL's text alone, so it works on a URL no parser
accepts (`postgresql://u:pw@@host/db`, a port that is not a number, an unclosed `[`, an
unknown driver): whatever lies between `scheme://` and the last `@` is credentials.
`scrub` removes a URL's secrets from any other text (a driver's error message) that may
quote them, whole or in part.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

HIDDEN = "***"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SECRET_QUERY = re.compile(
    r"(?P<key>[?&;](?:[\w.-]*(?:pass|pwd|secret|token|key)[\w.-]*)=)(?P<value>[^&;#]*)",
    re.IGNORECASE,
)
"""A query parameter that carries a credential (`?password=…`, libpq's form)."""
_AUTHORITY_END = re.compile(r"[/?#]")
_USER = re.compile(r"[^:/]*[:/]")
"""A user name and the character that ends it."""
_MIN_SECRET = 3
"""Shorter pieces are not scrubbed from other text: `***` for every `a` or `:` in a
message would hide the message, and such a password says little anyway."""


def redact_url(url: str) -> str:
    """`url` with the password (and any credential query parameter) replaced by `***`;
    the scheme, user, host, port and path stay, so the line still says what to fix."""
    prefix, password, rest = _split(url)
    if password is not None:
        prefix += HIDDEN
    return prefix + _SECRET_QUERY.sub(rf"\g<key>{HIDDEN}", rest)


def secrets_of(url: str) -> list[str]:
    """The pieces of `url` that must not be shown: its password, as written and decoded,
    and the values of credential query parameters; longest first."""
    prefix, password, rest = _split(url)
    pieces: set[str] = set()
    if password is not None:
        pieces |= {password, unquote(password)}
        if prefix:  # a parser that splits at the first `@` reads `pw@@host` as `pw`
            pieces |= {part for part in password.split("@") if part}
    for match in _SECRET_QUERY.finditer(rest):
        pieces |= {match["value"], unquote(match["value"])}
    return sorted((p for p in pieces if len(p) >= _MIN_SECRET), key=len, reverse=True)


def _split(url: str) -> tuple[str, str | None, str]:
    """`url` as (what comes before the password, the password or None, what follows).

    The credentials run from `scheme://` to the LAST `@` (a password may hold `@` or
    `/`); the user name ends at the first `:` or `/` (`alice/pw@db` is a slip for
    `alice:pw@db`). SQLite URLs have credentials only before their first `/`. Without
    any `@`, a port that is not a number may be a password (`alice:pw/db`). Text with
    no `scheme://` cannot tell a host from a password: it is all hidden."""
    scheme = _SCHEME.match(url)
    if not scheme:
        return "", url or None, ""
    start = scheme.end()
    rest = url[start:]
    authority = _AUTHORITY_END.split(rest, maxsplit=1)[0]
    sqlite = scheme.group().lower().startswith("sqlite")
    if sqlite and "@" not in authority:
        return "", None, url  # a path may hold `@`: `sqlite:////srv/a@b/x.db`
    if "@" not in rest:
        host, colon, port = authority.partition(":")
        if not colon or port.isdigit() or host.startswith("["):
            return "", None, url
        return f"{url[:start]}{host}:", port, rest[len(authority) :]
    userinfo = (authority if sqlite else rest).rpartition("@")[0]
    user = _USER.match(userinfo)
    if user is None or user.end() == len(userinfo):
        return "", None, url
    return url[: start + user.end()], userinfo[user.end() :], rest[len(userinfo) :]


def scrub(text: str, *urls: str | None) -> str:
    """`text` with every URL of `urls` shown redacted and their secrets hidden wherever
    else the text quotes them (a driver's message, a parser's complaint)."""
    for url in urls:
        if not url:
            continue
        text = text.replace(url, redact_url(url))
        for secret in secrets_of(url):
            text = text.replace(secret, HIDDEN)
    return text
