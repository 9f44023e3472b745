"""Webhook signature checks over the raw request body (WEBHOOKS.md §1, §6, §7).

Each `verify_*` returns `None` when the delivery is authentic and raises otherwise; call
it on the exact bytes received (`await request.body()`), before any JSON parsing, since
re-serialising changes the bytes. Every comparison is constant-time
(`hmac.compare_digest`, on raw digests or on hashes of the two tokens).

    SignatureError          the delivery is not authentic: a header missing, malformed
    │                       or wrong, or a stale timestamp (HTTP 401)
    └── SecretNotConfigured our own secret or token is empty or unusable (HTTP 503).
                            A subclass, so a handler that only knows `SignatureError`
                            still rejects the request: the checks fail closed.

Messages are fit to show the sender; they never contain the secret or the expected
signature.

    verify_github(body, request.headers, settings.github_secret)

Headers are any `Mapping[str, str]`: starlette's `Headers` (case-insensitive) or a
plain dict in whatever case; `get_header` looks names up case-insensitively in both.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import time
from collections.abc import Mapping

SENTRY_SIGNATURE_HEADER = "Sentry-Hook-Signature"
"""Lowercase hex HMAC-SHA256 of the body, keyed with the integration's client secret."""
GITHUB_SIGNATURE_HEADER = "X-Hub-Signature-256"
"""`sha256=<lowercase hex HMAC-SHA256 of the body>`, keyed with the webhook secret."""
GITHUB_SIGNATURE_PREFIX = "sha256="
STANDARD_ID_HEADER = "webhook-id"
STANDARD_TIMESTAMP_HEADER = "webhook-timestamp"
STANDARD_SIGNATURE_HEADER = "webhook-signature"
"""Space-separated `v1,<base64 HMAC-SHA256>` entries (several during key rotation)."""
STANDARD_SIGNATURE_VERSION = "v1"
"""The only scheme we check; `v1a` (ed25519) entries are skipped, as the spec allows."""
STANDARD_SECRET_PREFIX = "whsec_"
"""A Standard Webhooks secret is `whsec_<base64 key>`; without the prefix we take the
secret's UTF-8 bytes as the key."""
TIMESTAMP_TOLERANCE_SECONDS = 300
"""How far `webhook-timestamp` may be from our clock, either way (the spec's ±5 min)."""

_HEX_SHA256 = re.compile(r"[0-9a-fA-F]{64}")
_UNIX_SECONDS = re.compile(r"[0-9]{1,12}")
"""Twelve digits reach the year 33658; more is garbage, and `int()` of thousands of
digits raises."""


class SignatureError(Exception):
    """The delivery is not authentic; the message says which header and why."""


class SecretNotConfigured(SignatureError):
    """Our secret or token for this provider is empty or unusable: a setup mistake."""


def get_header(headers: Mapping[str, str], name: str) -> str | None:
    """The value of header `name` (any case), stripped; `None` when absent or blank."""
    value = headers.get(name)
    if value is None:
        wanted = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == wanted), None)
    if value is None or not value.strip():
        return None
    return value.strip()


def verify_sentry(body: bytes, headers: Mapping[str, str], secret: str) -> None:
    """Check `Sentry-Hook-Signature`: hex HMAC-SHA256 of `body` keyed with `secret`.

    Sentry's timestamp header is not covered by the signature, so checking its age would
    stop nobody; replays are stopped by deduplicating `Request-ID` instead.
    """
    key = _utf8_secret(secret, "Sentry client secret")
    given = _required(headers, SENTRY_SIGNATURE_HEADER)
    if not _HEX_SHA256.fullmatch(given):
        raise SignatureError(f"malformed {SENTRY_SIGNATURE_HEADER} header (expected 64 hex digits)")
    if not hmac.compare_digest(bytes.fromhex(given), _hmac(key, body)):
        raise SignatureError(f"invalid {SENTRY_SIGNATURE_HEADER}: the body does not match it")


def verify_github(body: bytes, headers: Mapping[str, str], secret: str) -> None:
    """Check `X-Hub-Signature-256: sha256=<hex>`, the HMAC-SHA256 of `body` with `secret`.

    GitHub sends no timestamp, so there is no replay window; deduplicate
    `X-GitHub-Delivery` instead.
    """
    key = _utf8_secret(secret, "GitHub webhook secret")
    given = _required(headers, GITHUB_SIGNATURE_HEADER)
    digest = given.removeprefix(GITHUB_SIGNATURE_PREFIX)
    if digest == given or not _HEX_SHA256.fullmatch(digest):
        raise SignatureError(
            f"malformed {GITHUB_SIGNATURE_HEADER} header "
            f"(expected {GITHUB_SIGNATURE_PREFIX}<64 hex digits>)"
        )
    if not hmac.compare_digest(bytes.fromhex(digest), _hmac(key, body)):
        raise SignatureError(f"invalid {GITHUB_SIGNATURE_HEADER}: the body does not match it")


def verify_standard(
    body: bytes, headers: Mapping[str, str], secret: str, *, now: float | None = None
) -> None:
    """Check a Standard Webhooks delivery: the timestamp is within
    `TIMESTAMP_TOLERANCE_SECONDS` of `now` (default: the clock) and one `v1` entry of
    `webhook-signature` is the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`.

    `secret` is `whsec_<base64>` (the key is the decoded bytes) or a raw secret (its
    UTF-8 bytes). Entries of other versions are skipped; any one valid entry is enough.
    """
    key = standard_key(secret)
    msg_id = _required(headers, STANDARD_ID_HEADER)
    timestamp = _timestamp(_required(headers, STANDARD_TIMESTAMP_HEADER))
    entries = _required(headers, STANDARD_SIGNATURE_HEADER).split()
    _check_age(timestamp, time.time() if now is None else now)
    expected = _hmac(key, f"{msg_id}.{timestamp}.".encode() + body)
    candidates = [_signature_entry(entry) for entry in entries]
    if any(c is not None and hmac.compare_digest(c, expected) for c in candidates):
        return
    if any(c is None for c in candidates):
        raise SignatureError(
            f"malformed {STANDARD_SIGNATURE_HEADER} header "
            f"(expected space-separated {STANDARD_SIGNATURE_VERSION},<base64> entries)"
        )
    raise SignatureError(f"invalid {STANDARD_SIGNATURE_HEADER}: no entry matches the body")


def standard_key(secret: str) -> bytes:
    """The HMAC key of a Standard Webhooks `secret` (`whsec_<base64>` or raw)."""
    if not secret.startswith(STANDARD_SECRET_PREFIX):
        return _utf8_secret(secret, "Standard Webhooks secret")
    try:
        key = base64.b64decode(secret.removeprefix(STANDARD_SECRET_PREFIX), validate=True)
    except (binascii.Error, ValueError):  # ValueError: non-ASCII characters
        raise SecretNotConfigured(
            f"the Standard Webhooks secret is not valid base64 after {STANDARD_SECRET_PREFIX}"
        ) from None
    if not key:
        raise SecretNotConfigured("the Standard Webhooks secret is empty")
    return key


def verify_token(given: str, expected: str) -> None:
    """Check a URL token (Bugsnag, Rollbar, reviews) in constant time.

    Both sides are hashed first, so the comparison takes the same time whatever the
    given token's length (`compare_digest` may leak a length mismatch).
    """
    key = _utf8_secret(expected, "webhook URL token")
    if not given:
        raise SignatureError("missing webhook token")
    if not hmac.compare_digest(_sha256(given.encode()), _sha256(key)):
        raise SignatureError("invalid webhook token")


def _required(headers: Mapping[str, str], name: str) -> str:
    value = get_header(headers, name)
    if value is None:
        raise SignatureError(f"missing {name} header")
    return value


def _utf8_secret(secret: str, what: str) -> bytes:
    if not secret:
        raise SecretNotConfigured(f"the {what} is not configured")
    return secret.encode()


def _timestamp(value: str) -> int:
    if not _UNIX_SECONDS.fullmatch(value):
        raise SignatureError(
            f"malformed {STANDARD_TIMESTAMP_HEADER} header (expected unix seconds)"
        )
    return int(value)


def _check_age(timestamp: int, now: float) -> None:
    if now - timestamp > TIMESTAMP_TOLERANCE_SECONDS:
        raise SignatureError(
            f"{STANDARD_TIMESTAMP_HEADER} is too old "
            f"(more than {TIMESTAMP_TOLERANCE_SECONDS} s before our clock)"
        )
    if timestamp - now > TIMESTAMP_TOLERANCE_SECONDS:
        raise SignatureError(
            f"{STANDARD_TIMESTAMP_HEADER} is in the future "
            f"(more than {TIMESTAMP_TOLERANCE_SECONDS} s after our clock)"
        )


def _signature_entry(entry: str) -> bytes | None:
    """The digest of a `v1,<base64>` entry; empty bytes (never equal to a digest) for
    another version; `None` when the entry is malformed."""
    version, comma, encoded = entry.partition(",")
    if not comma or not version or not encoded:
        return None
    if version != STANDARD_SIGNATURE_VERSION:
        return b""
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):  # ValueError: non-ASCII characters
        return None


def _hmac(key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, hashlib.sha256).digest()


def _sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()
