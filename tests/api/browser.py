"""Real-browser test helpers: a live server on loopback and a headless Debian chromium.

Not a test module: tests import it.

    with serve_in_thread(app) as base_url, browser_page() as page:
        page.goto(f"{base_url}/docs")
        shown = try_it_out(page, "post", "/echo")
        assert shown.status == 200
        save_screenshot(page, "docs_echo")

`browser_page` drives `/usr/bin/chromium` (`make browser` installs it: Playwright's own
browser download is unreachable here), lets the page reach only loopback hosts and fails
the test at exit if it tried any other. A missing chromium fails the test, never skips it.
"""

from __future__ import annotations

import ipaddress
import os
import re
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import uvicorn
from playwright.sync_api import Page, Route, sync_playwright
from starlette.types import ASGIApp

__all__ = [
    "CHROMIUM",
    "ShownResponse",
    "artifacts_dir",
    "browser_page",
    "outside_requests",
    "save_screenshot",
    "serve_in_thread",
    "try_it_out",
]

CHROMIUM = Path("/usr/bin/chromium")
LOOPBACK = "127.0.0.1"

# Flags from shared/NOTES.md "Browser tests": without the background-networking ones
# chromium keeps trying to reach Google's servers. Playwright adds --headless, a fresh
# --user-data-dir and --no-sandbox (needed as root) itself.
CHROMIUM_FLAGS = (
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)

# Hang guards only, far above what a passing run takes (a server starts in ~0.1 s, the
# Swagger UI page renders in ~1 s).
SERVER_START_TIMEOUT_S = 30.0
SERVER_STOP_TIMEOUT_S = 30.0
BROWSER_TIMEOUT_MS = 60_000

ARTIFACTS_ENV = "TEST_ARTIFACTS"
DEFAULT_ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"

_LOOPBACK_NAMES = frozenset({"localhost"})
_outside: weakref.WeakKeyDictionary[Page, list[str]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class ShownResponse:
    """The live response Swagger UI shows after "Execute"."""

    status: int
    """The HTTP status code in the response table."""
    body: str
    """The response body as the page prints it (pretty-printed JSON for JSON)."""


@contextmanager
def serve_in_thread(app: ASGIApp, *, host: str = LOOPBACK) -> Iterator[str]:
    """Run `app` under uvicorn in a background thread; yield its base URL, then stop it.

    The port is a free one the OS picks. `host` must be a loopback address.
    """
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, name="uvicorn-under-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError(f"uvicorn exited before it started serving on {host}")
        if time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"uvicorn did not start within {SERVER_START_TIMEOUT_S} s")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(SERVER_STOP_TIMEOUT_S)
        if thread.is_alive():
            raise RuntimeError(f"uvicorn did not stop within {SERVER_STOP_TIMEOUT_S} s")


@contextmanager
def browser_page(*, allow_outside: bool = False) -> Iterator[Page]:
    """Open a page in headless Debian chromium that can reach loopback hosts only.

    Every request to another host is aborted and recorded (see `outside_requests`); unless
    `allow_outside`, the test fails at exit if there was any.
    """
    if not CHROMIUM.is_file():
        pytest.fail(
            f"{CHROMIUM} is missing: run `make browser` (installs Debian's chromium)",
            pytrace=False,
        )
    blocked: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=list(CHROMIUM_FLAGS)
        )
        try:
            page = browser.new_page()
            page.set_default_timeout(BROWSER_TIMEOUT_MS)
            _outside[page] = blocked

            def only_loopback(route: Route) -> None:
                if is_loopback_url(route.request.url):
                    route.continue_()
                else:
                    blocked.append(route.request.url)
                    route.abort("blockedbyclient")

            page.context.route("**/*", only_loopback)
            yield page
        finally:
            browser.close()
    if blocked and not allow_outside:
        pytest.fail(f"the page tried to reach outside hosts: {blocked}", pytrace=False)


def outside_requests(page: Page) -> list[str]:
    """The URLs this `browser_page` page sent to non-loopback hosts (all aborted), in order.

    A request the page's Content-Security-Policy refused never leaves chromium and is not
    listed.
    """
    return list(_outside[page])


def is_loopback_url(url: str) -> bool:
    """True for `data:`/`blob:` URLs and for http(s) URLs whose host is a loopback one."""
    parts = urlsplit(url)
    if parts.scheme in {"data", "blob", "about"}:
        return True
    host = parts.hostname or ""
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def try_it_out(page: Page, method: str, path: str, *, example: str | None = None) -> ShownResponse:
    """On a loaded Swagger UI page: open `method path`, "Try it out", "Execute", read the result.

    The request is sent as Swagger UI pre-fills it: the body from the schema's example, or
    with several examples (a select box), the one shown first unless `example` names
    another by its key or summary. Calling it again on the same operation sends a new
    request (the operation stays open, the previous response is cleared first).
    """
    operation = page.locator(f".opblock.opblock-{method.lower()}").filter(
        has=page.locator(f'.opblock-summary-path[data-path="{path}"]')
    )
    if "is-open" not in (operation.get_attribute("class") or "").split():
        operation.locator(".opblock-summary").first.click()
    toggle = operation.locator(".try-out__btn")  # "Try it out", then "Cancel"
    toggle.wait_for()
    if "cancel" not in (toggle.get_attribute("class") or "").split():
        toggle.click()
    if example is not None:
        examples = operation.locator(".opblock-section-request-body select.examples-select-element")
        examples.select_option(example)  # by value (the key) or label (the summary)
    clear = operation.locator(".btn-clear")
    if clear.count():
        clear.click()
        operation.locator(".live-responses-table").wait_for(state="detached")
    operation.get_by_role("button", name="Execute").click()
    response = operation.locator(".live-responses-table .response").first
    response.wait_for()
    status = response.locator(".response-col_status").inner_text().strip()
    match = re.match(r"\d{3}", status)
    if match is None:
        raise AssertionError(f"Swagger UI shows no status code for {method} {path}: {status!r}")
    body = response.locator(".response-col_description pre").first.inner_text()
    return ShownResponse(status=int(match.group()), body=body)


def artifacts_dir() -> Path:
    """Where tests leave files for people to look at: `$TEST_ARTIFACTS` or tests/artifacts/."""
    folder = Path(os.environ.get(ARTIFACTS_ENV) or DEFAULT_ARTIFACTS)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def save_screenshot(page: Page, name: str) -> Path:
    """Save a full-page screenshot as `<artifacts>/<name>.png` and return its path."""
    path = artifacts_dir() / f"{name}.png"
    page.screenshot(path=path, full_page=True)
    return path
