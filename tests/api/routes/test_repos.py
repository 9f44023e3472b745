"""`GET /repos` and `GET /repos/{name}/map`: the configured repositories and their
ranked, budgeted maps."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api import ServiceSettings, create_app
from api.routes.repos import MAX_MAP_TOKENS
from api.service import Service
from tests.api.conftest import DEMO

FOCUSED = "web/src/editor.js"


def _warm(client: TestClient) -> None:
    service: Service = client.app.state.service  # type: ignore[attr-defined]
    service.workspaces.warm("demo")


def _files_in_order(map_text: str) -> list[str]:
    """The file headers of a map, in the order shown (`path:` lines, not indented)."""
    return [line[:-1] for line in map_text.splitlines() if line.endswith(":") and line[0] != " "
            and not line[0].isdigit()]  # fmt: skip


def test_repos_lists_demo_cold_before_its_index_is_built(
    service_settings: ServiceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Service, "warm", lambda _service: None)  # no background warm-up
    with TestClient(create_app(service_settings)) as client:
        listed = client.get("/repos").json()
        assert listed == [{"name": "demo", "files": None, "commit": None, "warm": False}]
        _warm(client)
        assert client.get("/repos").json()[0]["warm"] is True


def test_repos_lists_demo_with_its_file_count_once_warm(client: TestClient) -> None:
    _warm(client)
    response = client.get("/repos")
    assert response.status_code == 200
    files = sum(1 for path in DEMO.rglob("*") if path.is_file())
    assert response.json() == [{"name": "demo", "files": files, "commit": None, "warm": True}]


def test_the_map_shows_the_repo_files_ranked(client: TestClient) -> None:
    _warm(client)
    response = client.get("/repos/demo/map")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    shown = _files_in_order(response.text)
    assert "backend/notes/service.py" in shown
    assert "android/app/src/main/java/com/demo/notes/data/NoteRepository.kt" in shown
    assert "class NoteService:" in response.text


def test_focus_ranks_the_focused_file_first(client: TestClient) -> None:
    _warm(client)
    plain = _files_in_order(client.get("/repos/demo/map").text)
    focused = _files_in_order(client.get("/repos/demo/map", params={"focus": FOCUSED}).text)
    assert plain[0] != FOCUSED and plain.index(FOCUSED) > 0
    assert focused[0] == FOCUSED
    by_symbol = _files_in_order(client.get("/repos/demo/map?focus=SyncWorker").text)
    assert by_symbol[0].endswith("SyncWorker.kt")


def test_tokens_bound_the_map(client: TestClient) -> None:
    _warm(client)
    small = client.get("/repos/demo/map?tokens=64")
    assert small.status_code == 200
    assert 0 < len(small.text) < len(client.get("/repos/demo/map").text)
    for tokens in (63, 0, MAX_MAP_TOKENS + 1):
        refused = client.get(f"/repos/demo/map?tokens={tokens}")
        assert refused.status_code == 422, tokens
        assert refused.json()["detail"].startswith("query.tokens: ")
    assert client.get(f"/repos/demo/map?tokens={MAX_MAP_TOKENS}").status_code == 200


def test_an_unknown_repo_is_404_naming_the_configured_ones(client: TestClient) -> None:
    response = client.get("/repos/nope/map")
    assert response.status_code == 404
    assert "nope" in response.json()["detail"] and "demo" in response.json()["detail"]
