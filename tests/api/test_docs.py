"""The docs pages load everything from the service itself, and Swagger UI works in chromium."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import BaseModel, ConfigDict

from api.docs import (
    CONTENT_SECURITY_POLICY,
    DOCS_PATH,
    OAUTH2_REDIRECT_PATH,
    REDOC_PATH,
    STATIC_PATH,
    mount_docs,
)
from tests.api.browser import browser_page, save_screenshot, serve_in_thread, try_it_out

TITLE = "Echo service"
PAGES = (DOCS_PATH, REDOC_PATH)
# What the HTML pages load: <link href>, <script src>, and Swagger UI's `url: '...'`.
_REFERENCE = re.compile(r"""(?:href|src)="([^"]*)"|\burl: '([^']*)'""")
_CONTENT_TYPES = {
    ".js": {"text/javascript", "application/javascript"},
    ".css": {"text/css"},
    ".png": {"image/png"},
    ".json": {"application/json"},
}


class Message(BaseModel):
    """What `/echo` takes and gives back."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"text": "hello from the docs"}]})

    text: str


def make_app() -> FastAPI:
    app = FastAPI(title="echo", docs_url=None, redoc_url=None)
    mount_docs(app, title=TITLE)

    @app.post("/echo")
    async def echo(message: Message) -> Message:
        return message

    return app


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(make_app()) as client:
        yield client


def references(html: str) -> list[str]:
    return [href or url for href, url in _REFERENCE.findall(html)]


@pytest.mark.parametrize("page", PAGES)
def test_page_references_only_this_service(client: TestClient, page: str) -> None:
    response = client.get(page)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert re.findall(r"https?://", response.text) == []
    refs = references(response.text)
    assert refs, "found no asset references: the pattern no longer matches the page"
    assert all(ref.startswith("/") and not ref.startswith("//") for ref in refs), refs


@pytest.mark.parametrize("page", PAGES)
def test_every_asset_a_page_loads_is_served(client: TestClient, page: str) -> None:
    for ref in references(client.get(page).text):
        response = client.get(ref)
        assert response.status_code == 200, ref
        suffix = ref[ref.rindex(".") :]
        content_type = response.headers["content-type"].split(";")[0]
        assert content_type in _CONTENT_TYPES[suffix], (ref, content_type)
        assert response.content, ref


def test_swagger_ui_loads_its_script_and_stylesheet_from_static(client: TestClient) -> None:
    refs = references(client.get(DOCS_PATH).text)
    assert f"{STATIC_PATH}/swagger-ui-bundle.js" in refs
    assert f"{STATIC_PATH}/swagger-ui.css" in refs
    assert "/openapi.json" in refs


def test_swagger_ui_has_no_validator_badge(client: TestClient) -> None:
    # The badge would send the schema's URL to validator.swagger.io.
    assert '"validatorUrl": null' in client.get(DOCS_PATH).text


@pytest.mark.parametrize("page", PAGES)
def test_pages_forbid_loading_from_other_origins(client: TestClient, page: str) -> None:
    response = client.get(page)
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "default-src 'self'" in CONTENT_SECURITY_POLICY


def test_pages_have_the_title(client: TestClient) -> None:
    assert f"<title>{TITLE} - Swagger UI</title>" in client.get(DOCS_PATH).text
    assert f"<title>{TITLE} - ReDoc</title>" in client.get(REDOC_PATH).text


def test_oauth2_redirect_page_is_served_and_named_by_swagger_ui(client: TestClient) -> None:
    response = client.get(OAUTH2_REDIRECT_PATH)
    assert response.status_code == 200
    assert "oauth2" in response.text
    assert f"oauth2RedirectUrl: window.location.origin + '{OAUTH2_REDIRECT_PATH}'" in (
        client.get(DOCS_PATH).text
    )


def test_docs_routes_are_not_in_the_schema(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert set(paths) == {"/echo"}


def test_pages_follow_the_proxy_prefix() -> None:
    with TestClient(make_app(), root_path="/diag") as client:
        refs = references(client.get(DOCS_PATH).text)
    assert refs
    assert all(ref.startswith("/diag/") for ref in refs), refs


def test_refuses_an_app_whose_own_docs_use_a_cdn() -> None:
    with pytest.raises(ValueError, match="docs_url=None"):
        mount_docs(FastAPI(), title=TITLE)


def test_refuses_an_app_without_a_schema() -> None:
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    with pytest.raises(ValueError, match="openapi_url"):
        mount_docs(app, title=TITLE)


def test_swagger_ui_try_it_out_in_chromium() -> None:
    with serve_in_thread(make_app()) as base_url, browser_page() as page:
        page.goto(f"{base_url}{DOCS_PATH}")
        page.locator(".opblock-summary-path[data-path='/echo']").wait_for()
        shown = try_it_out(page, "POST", "/echo")
        save_screenshot(page, "docs_swagger_ui_echo")
    assert shown.status == 200
    assert '"hello from the docs"' in shown.body
    # browser_page fails the test on leaving if the page tried to reach another host.


def test_redoc_renders_in_chromium_without_its_logo_from_the_cdn() -> None:
    with serve_in_thread(make_app()) as base_url, browser_page() as page:
        page.goto(f"{base_url}{REDOC_PATH}")
        page.get_by_text("API docs by Redocly").wait_for()
        page.get_by_text("/echo", exact=True).first.wait_for()
        # The sidebar logo's request would go out now: let it happen before the check.
        page.wait_for_load_state("networkidle")
        save_screenshot(page, "docs_redoc")
