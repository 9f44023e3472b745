"""schemathesis over the live OpenAPI spec: for every operation, generated requests
(valid and invalid) never get a 5xx, and every response matches the spec — its status
code is documented, its content type and body are the ones the spec declares.

The app is `create_app` on a fresh SQLite database, its lifespan running (schemathesis
starts an ASGI app's lifespan on the first request and ends it when the test ends), so
jobs really run on the queue. Bounded: a few dozen examples per operation, derandomized
so CI sees the same requests every run, and `?wait=` capped at half a second. What it
found is pinned by the tests at the end (and in tests/api/routes/).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from api import ServiceSettings, create_app
from tests.api.conftest import DEMO, SECRETS

MAX_EXAMPLES = 25
"""Examples per operation and generation phase: enough to hit every parameter's
boundaries, small enough that the whole file runs in well under a minute."""
API_KEY = "schemathesis-key"
AUTH = {"Authorization": f"Bearer {API_KEY}"}
"""Keys are configured, so the spec's security schemes hold: schemathesis checks that
a request without a valid key is refused (`ignored_auth`), and sends this one otherwise."""
MAX_WAIT_SECONDS = 0.5
"""Cap of `POST /diagnose?wait=` here, so a generated `wait=600` costs half a second."""


def _settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ServiceSettings:
    monkeypatch.setenv("DIAGNOSER_HOME", str(tmp_path / "home"))
    options: dict[str, Any] = {
        "database_url": f"sqlite:///{tmp_path / 'service' / 'diagnoser.sqlite'}",
        "repos": {"demo": DEMO},
        "max_wait_seconds": MAX_WAIT_SECONDS,
        # Every request should reach its route: the limiter would answer most of them
        # 429 after the first few hundred (429 itself is documented, see below).
        "rate_limit_per_minute": 10_000_000,
        # Likewise the throttles (schemathesis sends wrong keys and signatures on
        # purpose) and the queue limit (a 503 would read as a server error).
        "auth_failures_per_minute": 10_000_000,
        "webhook_rate_limit_per_minute": 10_000_000,
        "max_queued_jobs": 10_000_000,
        "api_keys": (API_KEY,),
        **SECRETS,
    }
    return ServiceSettings(**options)


@pytest.fixture
def api_schema(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> schemathesis.BaseSchema:
    # schemathesis 4.32 reads and renames `node._nodeid`, which pytest 9.2 no longer has.
    request.node._nodeid = request.node.nodeid
    app = create_app(_settings(tmp_path, monkeypatch))
    return schemathesis.openapi.from_asgi("/openapi.json", app)


schema = schemathesis.pytest.from_fixture("api_schema")


def excluded_checks(case: schemathesis.Case[Any]) -> list[schemathesis.CheckFunction]:
    """The checks that cannot hold for `case`, each for a reason the spec cannot express."""
    if case.operation.label == "GET /findings" and (case.query or {}).get("cursor"):
        # A cursor is opaque: only strings the API issued (`next_cursor`) are valid, and a
        # schema cannot list them; any other string is a 400 saying so, as documented.
        return [schemathesis.checks.positive_data_acceptance]
    return []


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    # Health checks judge the generated data (too slow, too filtered) for an API whose
    # requests start real jobs; the bound that matters here is `max_examples`.
    suppress_health_check=list(HealthCheck),
)
# Raised inside schemathesis' own strategies (4.32), not by anything here.
@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")
def test_every_operation_conforms_to_the_spec(case: schemathesis.Case[Any]) -> None:
    case.call_and_validate(headers=AUTH, excluded_checks=excluded_checks(case))


# ---- what schemathesis found, pinned --------------------------------------------------

GUARDED = ("/diagnose", "/jobs/{job_id}", "/jobs/{job_id}/events", "/findings",
           "/findings/{finding_id}", "/repos", "/repos/{name}/map")  # fmt: skip
"""Operations behind the API key and rate-limit check (`api.deps.Caller`)."""


@pytest.fixture
def spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    return create_app(_settings(tmp_path, monkeypatch)).openapi()


def _operations(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{method.upper()} {path}", operation)
        for path, item in spec["paths"].items()
        for method, operation in item.items()
    ]


def test_every_error_answer_is_documented_as_a_problem(spec: dict[str, Any]) -> None:
    """FastAPI documents a 422 as a list of errors; this service sends `{"detail": "…"}`."""
    errors = 0
    for label, operation in _operations(spec):
        for code, response in operation["responses"].items():
            if code.startswith(("4", "5")):
                errors += 1
                schema = response["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/Problem"}, (label, code)
    assert errors > len(spec["paths"])
    components = spec["components"]["schemas"]
    assert components["Problem"]["required"] == ["detail"]
    assert "HTTPValidationError" not in components


def test_what_a_route_may_answer_is_documented(spec: dict[str, Any]) -> None:
    for path in GUARDED:
        for method, operation in spec["paths"][path].items():
            assert {"401", "429"} <= set(operation["responses"]), (method, path)
            assert "Retry-After" in operation["responses"]["429"]["headers"]
            assert {"HTTPBearer", "APIKeyHeader"} <= {k for r in operation["security"] for k in r}
    diagnose = spec["paths"]["/diagnose"]["post"]
    assert {"400", "404", "413", "415", "422"} <= set(diagnose["responses"])
    for path, item in spec["paths"].items():
        if path.startswith("/webhooks/"):
            assert {"401", "403", "404", "413"} <= set(item["post"]["responses"]), path
    text = diagnose["requestBody"]["content"]["text/plain"]["schema"]
    assert re.search(text["pattern"], "x") and not re.search(text["pattern"], " \n\t")
