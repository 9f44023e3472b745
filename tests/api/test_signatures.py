"""Webhook signature checks: the documented test vectors, then every way a delivery fails."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time

import pytest

from api.signatures import (
    GITHUB_SIGNATURE_HEADER,
    SENTRY_SIGNATURE_HEADER,
    TIMESTAMP_TOLERANCE_SECONDS,
    SecretNotConfigured,
    SignatureError,
    get_header,
    standard_key,
    verify_github,
    verify_sentry,
    verify_standard,
    verify_token,
)

# GitHub's documented vector (WEBHOOKS.md §6).
GITHUB_SECRET = "It's a Secret to Everybody"
GITHUB_BODY = b"Hello, World!"
GITHUB_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"

# The Standard Webhooks spec's vector (WEBHOOKS.md §7).
STANDARD_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
STANDARD_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
STANDARD_TS = 1614265330
STANDARD_BODY = b'{"test": 2432232314}'
STANDARD_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

SENTRY_SECRET = "sentry-client-secret-0123456789abcdef"
SENTRY_BODY = b'{"action": "created", "data": {"issue": {"id": "1170820242"}}}'


def sentry_signature(body: bytes, secret: str) -> str:
    """What Sentry's `SentryApp.build_signature` sends."""
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def standard_headers(
    signature: str = STANDARD_SIGNATURE,
    *,
    msg_id: str = STANDARD_ID,
    ts: int | str = STANDARD_TS,
) -> dict[str, str]:
    return {"webhook-id": msg_id, "webhook-timestamp": str(ts), "webhook-signature": signature}


def standard_signature(key: bytes, msg_id: str, ts: int, body: bytes) -> str:
    digest = hmac.new(key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def message(excinfo: pytest.ExceptionInfo[SignatureError]) -> str:
    return str(excinfo.value)


# --- headers ---------------------------------------------------------------------------


def test_get_header_is_case_insensitive_on_a_plain_dict() -> None:
    headers = {"x-hub-signature-256": " sha256=ab ", "Other": "1"}
    assert get_header(headers, "X-Hub-Signature-256") == "sha256=ab"
    assert get_header(headers, "OTHER") == "1"
    assert get_header(headers, "missing") is None
    assert get_header({"Blank": "  "}, "blank") is None


def test_get_header_on_starlette_headers() -> None:
    datastructures = pytest.importorskip("starlette.datastructures")
    headers = datastructures.Headers(raw=[(b"x-hub-signature-256", GITHUB_SIGNATURE.encode())])
    verify_github(GITHUB_BODY, headers, GITHUB_SECRET)
    assert get_header(headers, "X-HUB-SIGNATURE-256") == GITHUB_SIGNATURE


# --- GitHub ----------------------------------------------------------------------------


def test_github_documented_vector() -> None:
    verify_github(GITHUB_BODY, {GITHUB_SIGNATURE_HEADER: GITHUB_SIGNATURE}, GITHUB_SECRET)
    upper = "sha256=" + GITHUB_SIGNATURE.removeprefix("sha256=").upper()
    verify_github(GITHUB_BODY, {"x-hub-signature-256": upper}, GITHUB_SECRET)


def test_github_wrong_secret_and_tampered_body() -> None:
    headers = {GITHUB_SIGNATURE_HEADER: GITHUB_SIGNATURE}
    with pytest.raises(SignatureError, match="invalid X-Hub-Signature-256") as wrong:
        verify_github(GITHUB_BODY, headers, "It's a secret to everybody")
    with pytest.raises(SignatureError, match="invalid X-Hub-Signature-256"):
        verify_github(b"Hello, World?", headers, GITHUB_SECRET)
    assert GITHUB_SECRET not in message(wrong)
    expected = hmac.new(b"It's a secret to everybody", GITHUB_BODY, hashlib.sha256).hexdigest()
    assert expected not in message(wrong)


def test_github_missing_header() -> None:
    with pytest.raises(SignatureError, match=r"^missing X-Hub-Signature-256 header$"):
        verify_github(GITHUB_BODY, {"X-Hub-Signature": "sha1=abc"}, GITHUB_SECRET)


@pytest.mark.parametrize(
    "value",
    [
        "sha256=zz",
        GITHUB_SIGNATURE.removeprefix("sha256="),  # no prefix
        "sha1=" + GITHUB_SIGNATURE.removeprefix("sha256="),
        GITHUB_SIGNATURE[:-1],  # 63 digits
        GITHUB_SIGNATURE + "0",
        "sha256=" + "é" * 64,
    ],
)
def test_github_malformed_header(value: str) -> None:
    with pytest.raises(SignatureError, match="malformed X-Hub-Signature-256"):
        verify_github(GITHUB_BODY, {GITHUB_SIGNATURE_HEADER: value}, GITHUB_SECRET)


def test_github_empty_secret_is_a_setup_error_and_fails_closed() -> None:
    with pytest.raises(SecretNotConfigured, match="not configured"):
        verify_github(GITHUB_BODY, {GITHUB_SIGNATURE_HEADER: GITHUB_SIGNATURE}, "")
    assert issubclass(SecretNotConfigured, SignatureError)


# --- Sentry ----------------------------------------------------------------------------


def test_sentry_valid() -> None:
    signature = sentry_signature(SENTRY_BODY, SENTRY_SECRET)
    verify_sentry(SENTRY_BODY, {SENTRY_SIGNATURE_HEADER: signature}, SENTRY_SECRET)
    verify_sentry(SENTRY_BODY, {"sentry-hook-signature": signature}, SENTRY_SECRET)


def test_sentry_wrong_secret_and_tampered_body() -> None:
    headers = {SENTRY_SIGNATURE_HEADER: sentry_signature(SENTRY_BODY, SENTRY_SECRET)}
    with pytest.raises(SignatureError, match="invalid Sentry-Hook-Signature") as wrong:
        verify_sentry(SENTRY_BODY, headers, SENTRY_SECRET + "x")
    with pytest.raises(SignatureError, match="invalid Sentry-Hook-Signature"):
        verify_sentry(SENTRY_BODY.replace(b"created", b"resolved"), headers, SENTRY_SECRET)
    assert SENTRY_SECRET not in message(wrong)
    assert sentry_signature(SENTRY_BODY, SENTRY_SECRET + "x") not in message(wrong)


def test_sentry_reserialised_body_fails() -> None:
    """The check is over the raw bytes: the same JSON spaced differently does not pass."""
    headers = {SENTRY_SIGNATURE_HEADER: sentry_signature(SENTRY_BODY, SENTRY_SECRET)}
    with pytest.raises(SignatureError):
        verify_sentry(SENTRY_BODY.replace(b": ", b":"), headers, SENTRY_SECRET)


def test_sentry_missing_and_malformed_header() -> None:
    with pytest.raises(SignatureError, match=r"^missing Sentry-Hook-Signature header$"):
        verify_sentry(SENTRY_BODY, {}, SENTRY_SECRET)
    for value in ("zz", "sha256=" + sentry_signature(SENTRY_BODY, SENTRY_SECRET), "0" * 63):
        with pytest.raises(SignatureError, match="malformed Sentry-Hook-Signature"):
            verify_sentry(SENTRY_BODY, {SENTRY_SIGNATURE_HEADER: value}, SENTRY_SECRET)


def test_sentry_empty_secret() -> None:
    signature = sentry_signature(SENTRY_BODY, "")
    with pytest.raises(SecretNotConfigured):
        verify_sentry(SENTRY_BODY, {SENTRY_SIGNATURE_HEADER: signature}, "")


# --- Standard Webhooks -----------------------------------------------------------------


def test_standard_documented_vector() -> None:
    verify_standard(STANDARD_BODY, standard_headers(), STANDARD_SECRET, now=STANDARD_TS)


def test_standard_raw_secret_is_its_utf8_bytes() -> None:
    secret = "my-relay-secret-é"
    signature = standard_signature(secret.encode(), STANDARD_ID, STANDARD_TS, STANDARD_BODY)
    verify_standard(STANDARD_BODY, standard_headers(signature), secret, now=STANDARD_TS)
    assert standard_key(secret) == secret.encode()
    assert standard_key(STANDARD_SECRET) == base64.b64decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")


def test_standard_uses_the_clock_by_default() -> None:
    ts = int(time.time())
    key = standard_key(STANDARD_SECRET)
    signature = standard_signature(key, STANDARD_ID, ts, STANDARD_BODY)
    verify_standard(STANDARD_BODY, standard_headers(signature, ts=ts), STANDARD_SECRET)
    with pytest.raises(SignatureError, match="too old"):
        verify_standard(STANDARD_BODY, standard_headers(), STANDARD_SECRET)


def test_standard_wrong_secret_tampered_body_and_tampered_id() -> None:
    other = "whsec_" + base64.b64encode(b"another key entirely").decode()
    with pytest.raises(SignatureError, match="invalid webhook-signature") as wrong:
        verify_standard(STANDARD_BODY, standard_headers(), other, now=STANDARD_TS)
    with pytest.raises(SignatureError, match="invalid webhook-signature"):
        verify_standard(
            b'{"test": 2432232315}', standard_headers(), STANDARD_SECRET, now=STANDARD_TS
        )
    with pytest.raises(SignatureError, match="invalid webhook-signature"):
        verify_standard(
            STANDARD_BODY, standard_headers(msg_id="msg_other"), STANDARD_SECRET, now=STANDARD_TS
        )
    assert other not in message(wrong)
    assert STANDARD_SIGNATURE.removeprefix("v1,") not in message(wrong)


@pytest.mark.parametrize("name", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_standard_missing_header(name: str) -> None:
    headers = standard_headers()
    del headers[name]
    with pytest.raises(SignatureError, match=f"^missing {name} header$"):
        verify_standard(STANDARD_BODY, headers, STANDARD_SECRET, now=STANDARD_TS)


@pytest.mark.parametrize("ts", ["soon", "1614265330.5", "-1614265330", "1" * 5000, "١٢٣"])
def test_standard_malformed_timestamp(ts: str) -> None:
    with pytest.raises(SignatureError, match="malformed webhook-timestamp"):
        verify_standard(STANDARD_BODY, standard_headers(ts=ts), STANDARD_SECRET, now=STANDARD_TS)


@pytest.mark.parametrize(
    "signature",
    [
        "v1" + STANDARD_SIGNATURE.removeprefix("v1,"),  # no comma
        "v1,",  # no signature
        ",abc=",  # no version
        "v1,!!not-base64!!",
        "v1,é",
    ],
)
def test_standard_malformed_signature(signature: str) -> None:
    with pytest.raises(SignatureError, match="malformed webhook-signature"):
        verify_standard(
            STANDARD_BODY, standard_headers(signature), STANDARD_SECRET, now=STANDARD_TS
        )


def test_standard_timestamp_window_is_five_minutes_either_way() -> None:
    headers = standard_headers()
    assert TIMESTAMP_TOLERANCE_SECONDS == 300
    for now in (STANDARD_TS - 300, STANDARD_TS + 300):  # the edges are inside
        verify_standard(STANDARD_BODY, headers, STANDARD_SECRET, now=now)
    with pytest.raises(SignatureError, match="too old"):
        verify_standard(STANDARD_BODY, headers, STANDARD_SECRET, now=STANDARD_TS + 301)
    with pytest.raises(SignatureError, match="in the future"):
        verify_standard(STANDARD_BODY, headers, STANDARD_SECRET, now=STANDARD_TS - 301)


def test_standard_key_rotation_one_valid_entry_is_enough() -> None:
    old = standard_signature(b"old key", STANDARD_ID, STANDARD_TS, STANDARD_BODY)
    for signature in (f"{old} {STANDARD_SIGNATURE}", f"{STANDARD_SIGNATURE}  {old}"):
        verify_standard(
            STANDARD_BODY, standard_headers(signature), STANDARD_SECRET, now=STANDARD_TS
        )
    with pytest.raises(SignatureError, match="invalid webhook-signature"):
        verify_standard(
            STANDARD_BODY, standard_headers(f"{old} {old}"), STANDARD_SECRET, now=STANDARD_TS
        )


def test_standard_other_versions_and_stray_entries_are_skipped() -> None:
    ed25519 = "v1a," + base64.b64encode(b"x" * 64).decode()
    signature = f"{ed25519} garbage {STANDARD_SIGNATURE}"
    verify_standard(STANDARD_BODY, standard_headers(signature), STANDARD_SECRET, now=STANDARD_TS)
    with pytest.raises(SignatureError, match="invalid webhook-signature"):
        verify_standard(STANDARD_BODY, standard_headers(ed25519), STANDARD_SECRET, now=STANDARD_TS)


def test_standard_unusable_secret() -> None:
    for secret in ("", "whsec_", "whsec_not base64!", "whsec_é"):
        with pytest.raises(SecretNotConfigured):
            verify_standard(STANDARD_BODY, standard_headers(), secret, now=STANDARD_TS)


# --- URL tokens ------------------------------------------------------------------------


def test_token_valid_and_wrong() -> None:
    verify_token("s3cr3t-token", "s3cr3t-token")
    for given in ("s3cr3t-tokeN", "s3cr3t", "s3cr3t-token-and-more", "ß3cr3t-token"):
        with pytest.raises(SignatureError, match=r"^invalid webhook token$"):
            verify_token(given, "s3cr3t-token")


def test_token_missing_and_unconfigured() -> None:
    with pytest.raises(SignatureError, match=r"^missing webhook token$"):
        verify_token("", "s3cr3t-token")
    with pytest.raises(SecretNotConfigured):
        verify_token("", "")
    with pytest.raises(SecretNotConfigured):
        verify_token("anything", "")
