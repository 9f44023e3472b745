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
    _prefix, password, rest = _split(url)
    pieces: set[str] = set()
    if password is not None:
        pieces |= {password, unquote(password)}
        # a parser that splits at the first `@` takes `pw@@host` as password `pw`
        pieces |= {part for part in password.split("@") if part}
    for match in _SECRET_QUERY.finditer(rest):
        pieces |= {match["value"], unquote(match["value"])}
    return sorted((p for p in pieces if len(p) >= _MIN_SECRET), key=len, reverse=True)


def _split(url: str) -> tuple[str, str | None, str]:
    """`url` as (what comes before the password, the password or None, what follows it).
    The credentials run from `scheme://` to the LAST `@`: a password may hold `@` or
    `/`, a user name (as SQLAlchemy reads it) neither `:` nor `/`. Without a scheme,
    all that precedes the last `@` counts as the password."""
    scheme = _SCHEME.match(url)
    start = scheme.end() if scheme else 0
    if "@" not in url[start:]:
        return "", None, url
    userinfo, _, location = url[start:].rpartition("@")
    if not scheme:
        return "", userinfo, "@" + location
    user, colon, password = userinfo.partition(":")
    if not colon or "/" in user:  # no password, or an `@` in a path (`sqlite:///a@b`)
        return "", None, url
    return f"{url[:start]}{user}:", password, "@" + location


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
