"""One place maps every error to a status and `{"detail": …}`; an unexpected one is a 500
that says nothing of the code."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import BaseModel

from api.errors import MAX_DETAILS, STATUS, ApiError, describe, install, status_of
from diagnoser import ConfigError, DiagnoserError, PathRefused, ToolError
from diagnoser.errors import UnknownRepo
from diagnoser.intake import IntakeError, PayloadTooLarge

SECRET_TEXT = "password=hunter2 at /srv/app/internal.py"
"""What an unexpected exception says: never to be shown to a caller."""
INTERNAL = "internal error; try again or tell the operator"


class Body(BaseModel):
    count: int


def _raising(error: Exception) -> TestClient:
    """An app whose `/boom` raises `error`, with the service's handlers installed."""
    app = FastAPI()
    install(app)

    @app.get("/boom")
    async def boom() -> None:
        raise error

    @app.post("/items")
    async def items(body: Body) -> Body:
        return body

    return TestClient(app, raise_server_exceptions=False)


def _errors() -> list[tuple[DiagnoserError, int]]:
    made: dict[type[DiagnoserError], DiagnoserError] = {
        PayloadTooLarge: PayloadTooLarge("the body is larger than 10 bytes", limit=10),
        IntakeError: IntakeError("sentry event_alert: missing data.event", field="data.event"),
        UnknownRepo: UnknownRepo("no repository named 'x'; configured: demo"),
        PathRefused: PathRefused("path leaves the repository: ../etc/passwd"),
        ToolError: ToolError("no such file: a.py"),
        ConfigError: ConfigError("DIAGNOSER_MODEL: unknown model"),
    }
    assert set(made) == {kind for kind, _ in STATUS}, "a new mapped error needs a case here"
    return [(made[kind], status) for kind, status in STATUS]


@pytest.mark.parametrize(("error", "status"), _errors(), ids=lambda v: type(v).__name__)
def test_every_mapped_error_has_its_status_and_message(error: DiagnoserError, status: int) -> None:
    response = _raising(error).get("/boom")
    assert response.status_code == status == status_of(error)
    assert response.json() == {"detail": str(error)}


def test_the_most_specific_mapping_wins() -> None:
    assert status_of(PayloadTooLarge("big", limit=1)) == 413  # also an IntakeError (400)
    assert status_of(DiagnoserError("something else")) == 400
    response = _raising(DiagnoserError("the domain refused")).get("/boom")
    assert (response.status_code, response.json()) == (400, {"detail": "the domain refused"})


def test_an_api_error_keeps_its_status_and_headers() -> None:
    error = ApiError(429, "slow down", headers={"Retry-After": "7"})
    response = _raising(error).get("/boom")
    assert response.status_code == 429 and response.json() == {"detail": "slow down"}
    assert response.headers["retry-after"] == "7"


def test_framework_errors_have_the_same_shape() -> None:
    client = _raising(RuntimeError())
    missing = client.get("/nowhere")
    assert (missing.status_code, missing.json()) == (404, {"detail": "Not Found"})
    wrong_method = client.delete("/boom")
    assert (wrong_method.status_code, wrong_method.json()) == (
        405,
        {"detail": "Method Not Allowed"},
    )
    invalid = client.post("/items", json={"count": "many"})
    assert invalid.status_code == 422
    assert invalid.json()["detail"].startswith("body.count: ")


@pytest.mark.parametrize("error", [RuntimeError(SECRET_TEXT), KeyError(SECRET_TEXT)])
def test_an_unexpected_error_is_500_with_no_trace_or_text(
    error: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    response = _raising(error).get("/boom")
    assert response.status_code == 500
    assert response.json() == {"detail": INTERNAL}
    for leak in ("hunter2", "internal.py", "Traceback", type(error).__name__):
        assert leak not in response.text
    assert "hunter2" in caplog.text  # the operator's log has it


def test_an_unexpected_error_in_the_real_app_is_500(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = client.app.state.service  # type: ignore[attr-defined]

    def broken(**_: Any) -> None:
        raise RuntimeError(SECRET_TEXT)

    monkeypatch.setattr(service.store, "findings", broken)
    quiet = TestClient(client.app, raise_server_exceptions=False)  # the running app
    response = quiet.get("/findings")
    assert response.status_code == 500 and response.json() == {"detail": INTERNAL}
    assert "hunter2" not in response.text and "Traceback" not in response.text


# ---- describe -------------------------------------------------------------------------


def test_describe_names_each_field_and_its_problem() -> None:
    errors = [
        {"loc": ("body", "report", "text"), "msg": "Field required"},
        {"loc": ("query", "limit"), "msg": "Input should be a valid integer"},
    ]
    assert describe(errors) == (
        "body.report.text: Field required; query.limit: Input should be a valid integer"
    )


def test_describe_caps_the_list_and_says_how_many_more() -> None:
    errors = [{"loc": ("body", f"f{i}"), "msg": "bad"} for i in range(MAX_DETAILS + 2)]
    text = describe(errors)
    assert text.count("bad") == MAX_DETAILS and text.endswith(" (and 2 more)")


@pytest.mark.parametrize(
    ("errors", "text"),
    [
        ([{"loc": (), "msg": "Invalid JSON"}], "Invalid JSON"),
        ([{"loc": ("body",)}], "body: invalid"),
        ([], "the request is not valid"),
        ("not a list", "the request is not valid"),
    ],
)
def test_describe_copes_with_partial_errors(errors: object, text: str) -> None:
    assert describe(errors) == text
