"""API docs pages (Swagger UI, ReDoc) whose scripts the service serves itself.

FastAPI's default `/docs` and `/redoc` pages load their scripts from a CDN, so they stay
blank on an air-gapped network. The app is created with `docs_url=None, redoc_url=None`
and `mount_docs` adds, none of them in the OpenAPI schema:

    GET /docs                   Swagger UI, with "Try it out" against this service
    GET /docs/oauth2-redirect   Swagger UI's OAuth2 redirect page
    GET /docs/static/{file}     the scripts, stylesheet and icon the two pages load
    GET /redoc                  ReDoc, a read-only rendering of the same schema

The assets come from the `fastapi-offline` package (Swagger UI 5, ReDoc 2, no dependency
but FastAPI). Not from `swagger-ui-bundle`: its newest release (1.1.0) ships Swagger UI
4.15.5, which refuses FastAPI's OpenAPI 3.1 schema ("Unable to render this definition").
We use only the package's asset folder, not its `FastAPIOffline` app factory.

Both pages carry a Content-Security-Policy that lets them load scripts, styles, images
and fonts from this origin only: ReDoc 2.5 always loads its sidebar logo from
cdn.redoc.ly, and the policy stops that request (and any a later asset update adds).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

__all__ = [
    "ASSETS_DIR",
    "DOCS_PATH",
    "OAUTH2_REDIRECT_PATH",
    "REDOC_PATH",
    "STATIC_PATH",
    "mount_docs",
]

DOCS_PATH = "/docs"
OAUTH2_REDIRECT_PATH = f"{DOCS_PATH}/oauth2-redirect"
STATIC_PATH = f"{DOCS_PATH}/static"
REDOC_PATH = "/redoc"

ASSETS_DIR = Path(fastapi_offline.__file__).parent / "static"
"""Where `fastapi-offline` keeps the files below (a folder inside the installed package)."""

SWAGGER_JS = "swagger-ui-bundle.js"
SWAGGER_CSS = "swagger-ui.css"
REDOC_JS = "redoc.standalone.js"
FAVICON = "favicon.png"
_ASSETS = (SWAGGER_JS, SWAGGER_CSS, REDOC_JS, FAVICON)

SWAGGER_UI_PARAMETERS: dict[str, Any] = {
    # Swagger UI's default validator badge sends the schema's URL to validator.swagger.io
    # whenever the page is not on localhost: a request to the outside, off by default here.
    "validatorUrl": None,
}
"""Added to FastAPI's defaults; the app's own `swagger_ui_parameters` win over these."""

CONTENT_SECURITY_POLICY = (
    # Only this origin (inline code and data:/blob: URLs included: both pages use them).
    "default-src 'self' 'unsafe-inline' data: blob:; "
    # Requests the user asks for may go elsewhere: "Try it out" against another entry of
    # the schema's `servers`, an OAuth2 token endpoint.
    "connect-src *"
)
"""Sent with the two pages: what they load by themselves comes from this origin only."""


def mount_docs(app: FastAPI, *, title: str) -> None:
    """Serve Swagger UI at `/docs` and ReDoc at `/redoc`, with every asset from this app.

    Args:
        app: created with `docs_url=None, redoc_url=None` and an `openapi_url`.
        title: the product name; the pages are titled "<title> - Swagger UI" and so on.

    Raises:
        ValueError: the app serves no OpenAPI schema, or its own docs are still on.
        RuntimeError: the installed `fastapi-offline` lacks a file these pages load.
    """
    openapi_url = app.openapi_url
    if openapi_url is None:
        raise ValueError("mount_docs needs the app's OpenAPI schema, but openapi_url is None")
    if app.docs_url is not None or app.redoc_url is not None:
        raise ValueError("create the app with docs_url=None, redoc_url=None: their pages use a CDN")
    missing = [name for name in _ASSETS if not (ASSETS_DIR / name).is_file()]
    if missing:
        raise RuntimeError(f"fastapi-offline at {ASSETS_DIR} lacks {', '.join(missing)}")
    parameters = {**SWAGGER_UI_PARAMETERS, **(app.swagger_ui_parameters or {})}

    async def swagger_ui(request: Request) -> HTMLResponse:
        root = _root_path(request)
        page = get_swagger_ui_html(
            openapi_url=root + openapi_url,
            title=f"{title} - Swagger UI",
            swagger_js_url=f"{root}{STATIC_PATH}/{SWAGGER_JS}",
            swagger_css_url=f"{root}{STATIC_PATH}/{SWAGGER_CSS}",
            swagger_favicon_url=f"{root}{STATIC_PATH}/{FAVICON}",
            oauth2_redirect_url=root + OAUTH2_REDIRECT_PATH,
            init_oauth=app.swagger_ui_init_oauth,
            swagger_ui_parameters=parameters,
        )
        return _same_origin_only(page)

    async def oauth2_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    async def redoc(request: Request) -> HTMLResponse:
        root = _root_path(request)
        page = get_redoc_html(
            openapi_url=root + openapi_url,
            title=f"{title} - ReDoc",
            redoc_js_url=f"{root}{STATIC_PATH}/{REDOC_JS}",
            redoc_favicon_url=f"{root}{STATIC_PATH}/{FAVICON}",
            # The fonts would come from Google's servers; ReDoc falls back to system fonts.
            with_google_fonts=False,
        )
        return _same_origin_only(page)

    app.mount(STATIC_PATH, StaticFiles(directory=ASSETS_DIR), name="docs-static")
    app.add_api_route(DOCS_PATH, swagger_ui, methods=["GET"], include_in_schema=False)
    app.add_api_route(
        OAUTH2_REDIRECT_PATH, oauth2_redirect, methods=["GET"], include_in_schema=False
    )
    app.add_api_route(REDOC_PATH, redoc, methods=["GET"], include_in_schema=False)


def _root_path(request: Request) -> str:
    """The prefix a proxy serves the app under (`root_path`), without a trailing slash."""
    root: str = request.scope.get("root_path", "")
    return root.rstrip("/")


def _same_origin_only(page: HTMLResponse) -> HTMLResponse:
    page.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    return page
