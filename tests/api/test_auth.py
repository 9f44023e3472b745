"""API keys and rate limits: `RateLimiter` and `Guard` as values, then over HTTP — which
endpoints need a key, how webhooks are authenticated instead, and the 429."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api import ServiceSettings, create_app
from api.auth import Guard, RateLimiter
from api.errors import ApiError
from tests.api.conftest import SAMPLES, SECRETS

KEY = "k-0123456789abcdef"
OTHER_KEY = "k-fedcba9876543210"
ADDRESS = "192.0.2.1"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _guard(*keys: str, per_minute: int = 600) -> Guard:
    settings = ServiceSettings(api_keys=keys)
    return Guard(settings.key_hashes(), RateLimiter(per_minute))


def _refused(
    guard: Guard, *, authorization: str | None = None, api_key: str | None = None
) -> ApiError:
    with pytest.raises(ApiError) as caught:
        guard.check(authorization=authorization, api_key=api_key, address=ADDRESS)
    return caught.value


# ---- RateLimiter ----------------------------------------------------------------------


def test_a_burst_of_the_whole_minute_is_allowed_then_refused_with_the_wait() -> None:
    clock = Clock()
    limiter = RateLimiter(3, clock=clock)
    assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("a") == pytest.approx(20.0)  # one token every 60/3 s
    clock.now += 5
    assert limiter.take("a") == pytest.approx(15.0)  # a refusal costs nothing


def test_the_bucket_refills_with_time_up_to_the_burst() -> None:
    clock = Clock()
    limiter = RateLimiter(3, clock=clock)
    for _ in range(3):
        limiter.take("a")
    clock.now += 20
    assert limiter.take("a") == 0.0
    assert limiter.take("a") > 0
    clock.now += 3600  # a long pause refills to the burst, not beyond
    assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("a") > 0


def test_each_caller_has_its_own_bucket() -> None:
    limiter = RateLimiter(1, clock=Clock())
    assert limiter.take("a") == 0.0
    assert limiter.take("a") > 0
    assert limiter.take("b") == 0.0


# ---- Guard --------------------------------------------------------------------------


def test_with_no_keys_everyone_is_let_in_by_address() -> None:
    guard = _guard()
    assert guard.open
    assert guard.check(authorization=None, api_key=None, address=ADDRESS) == f"addr:{ADDRESS}"


@pytest.mark.parametrize(
    ("authorization", "api_key", "says"),
    [
        (None, None, "API key is required"),
        ("Basic " + KEY, None, "API key is required"),
        ("Bearer ", None, "API key is required"),
        ("Bearer wrong", None, "not valid"),
        (None, "wrong", "not valid"),
    ],
)
def test_with_keys_a_missing_or_wrong_key_is_401(
    authorization: str | None, api_key: str | None, says: str
) -> None:
    error = _refused(_guard(KEY), authorization=authorization, api_key=api_key)
    assert error.status == 401 and says in error.detail
    assert error.headers == {"WWW-Authenticate": "Bearer"}


def test_bearer_and_x_api_key_are_both_accepted() -> None:
    guard = _guard(KEY)
    assert not guard.open
    by_bearer = guard.check(authorization=f"Bearer {KEY}", api_key=None, address=ADDRESS)
    by_scheme_case = guard.check(authorization=f"bearer {KEY}", api_key=None, address=ADDRESS)
    by_header = guard.check(authorization=None, api_key=KEY, address=ADDRESS)
    assert by_bearer == by_scheme_case == by_header
    assert by_bearer.startswith("key:") and KEY not in by_bearer


def test_a_configured_sha256_digest_accepts_the_plain_key() -> None:
    digest = hashlib.sha256(KEY.encode()).hexdigest()
    guard = _guard(f"sha256:{digest.upper()}")
    assert guard.check(authorization=f"Bearer {KEY}", api_key=None, address=ADDRESS)
    assert _refused(guard, api_key=f"sha256:{digest}").status == 401  # the digest is no key


def test_only_digests_of_the_keys_are_kept() -> None:
    hashes = ServiceSettings(api_keys=(KEY, OTHER_KEY)).key_hashes()
    assert hashes == {hashlib.sha256(k.encode()).hexdigest() for k in (KEY, OTHER_KEY)}
    guard = _guard(KEY, OTHER_KEY)
    assert KEY not in repr(guard) and OTHER_KEY not in repr(guard)


def test_the_rate_limit_is_per_key() -> None:
    guard = _guard(KEY, OTHER_KEY, per_minute=1)
    guard.check(authorization=None, api_key=KEY, address=ADDRESS)
    error = _refused(guard, api_key=KEY)
    assert error.status == 429 and error.headers == {"Retry-After": "60"}
    assert guard.check(authorization=None, api_key=OTHER_KEY, address=ADDRESS)


# ---- over HTTP ------------------------------------------------------------------------

PROTECTED = (
    ("GET", "/jobs/nope"),
    ("GET", "/jobs/nope/events"),
    ("GET", "/findings"),
    ("GET", "/findings/nope"),
    ("GET", "/findings/nope/logs/0123456789abcdef"),
    ("GET", "/repos"),
    ("GET", "/repos/demo/map"),
    ("GET", "/metrics"),  # DIAGNOSER_METRICS_PUBLIC is off by default
)
OPEN = ("/healthz", "/readyz", "/docs", "/redoc", "/openapi.json")
CRASH = (SAMPLES / "android_logcat_open_shared.txt").read_text()


def _client(settings: ServiceSettings, **changes: object) -> Iterator[TestClient]:
    with TestClient(create_app(settings.model_copy(update=changes))) as client:
        yield client


@pytest.fixture
def keyed(service_settings: ServiceSettings) -> Iterator[TestClient]:
    yield from _client(service_settings, api_keys=(KEY,))


def test_the_api_needs_a_key_and_the_probes_and_docs_do_not(keyed: TestClient) -> None:
    bearer = {"Authorization": f"Bearer {KEY}"}
    for method, path in PROTECTED:
        refused = keyed.request(method, path)
        assert refused.status_code == 401, path
        assert refused.headers["www-authenticate"] == "Bearer"
        assert "API key" in refused.json()["detail"]
        wrong = keyed.request(method, path, headers={"X-API-Key": "wrong"})
        assert wrong.status_code == 401, path
        assert keyed.request(method, path, headers=bearer).status_code in (200, 404), path
    for path in OPEN:
        assert keyed.get(path).status_code in (200, 503), path  # /readyz: 503 while warming


def test_diagnose_needs_a_key(keyed: TestClient) -> None:
    report = {"report": {"text": CRASH, "source": "crash_log"}}
    assert keyed.post("/diagnose", json=report).status_code == 401
    accepted = keyed.post("/diagnose", json=report, headers={"X-API-Key": KEY})
    assert accepted.status_code == 202, accepted.text


def test_webhooks_are_authenticated_by_their_signature_not_the_key(keyed: TestClient) -> None:
    issue = {"number": 1, "title": "Crash", "body": CRASH}
    body = json.dumps({"action": "opened", "issue": issue, "repository": {"full_name": "a/b"}})
    digest = hmac.new(SECRETS["github_secret"].encode(), body.encode(), hashlib.sha256).hexdigest()
    headers = {"X-GitHub-Event": "issues", "X-GitHub-Delivery": "d-auth",
               "Content-Type": "application/json"}  # fmt: skip
    signature = {"X-Hub-Signature-256": f"sha256={digest}"}
    signed = keyed.post("/webhooks/github", content=body, headers={**headers, **signature})
    assert signed.status_code == 202, signed.text  # no API key needed
    unsigned = keyed.post("/webhooks/github", content=body, headers={**headers, "X-API-Key": KEY})
    assert unsigned.status_code == 401  # the key does not stand in for the signature
    assert "X-Hub-Signature-256" in unsigned.json()["detail"]
    token = SECRETS["webhook_token"]
    assert keyed.post(f"/webhooks/rollbar/{token}", content=b"{}").status_code == 202


@pytest.fixture
def limited(service_settings: ServiceSettings) -> Iterator[TestClient]:
    yield from _client(service_settings, api_keys=(KEY, OTHER_KEY), rate_limit_per_minute=2)


def test_the_third_request_in_a_minute_is_429_with_retry_after(limited: TestClient) -> None:
    key = {"X-API-Key": KEY}
    assert [limited.get("/findings", headers=key).status_code for _ in range(2)] == [200, 200]
    refused = limited.get("/repos", headers=key)
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["retry-after"]) <= 30  # one request every 30 s
    assert "rate limit of 2 requests a minute" in refused.json()["detail"]
    assert limited.get("/findings", headers={"X-API-Key": OTHER_KEY}).status_code == 200
    assert limited.get("/healthz").status_code == 200  # probes are not limited
