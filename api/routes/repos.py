"""`GET /repos` and `GET /repos/{name}/map`: the configured repositories and their maps."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from fastapi.responses import PlainTextResponse
from starlette.concurrency import run_in_threadpool

from api.deps import CALLER_RESPONSES, Caller, ServiceDep
from api.schemas import RepoOut
from api.service import Service
from repomap.constants import DEFAULT_MAP_TOKENS

router = APIRouter(prefix="/repos", tags=["repos"], responses=CALLER_RESPONSES)
MAX_FOCUS = 50
MAX_MAP_TOKENS = 50_000


@router.get("", response_model=list[RepoOut])
async def list_repos(service: ServiceDep, _caller: Caller) -> list[RepoOut]:
    """The repositories this service diagnoses."""
    return await run_in_threadpool(_repos, service)


def _repos(service: Service) -> list[RepoOut]:
    out = []
    for name in service.workspaces.names():
        warm = service.workspaces.is_warm(name)
        files = len(service.workspaces.current(name).file_paths) if warm else None
        out.append(RepoOut(name=name, warm=warm, files=files,
                           commit=service.workspaces.state(name).commit))  # fmt: skip
    return out


@router.get(
    "/{name}/map",
    response_class=PlainTextResponse,
    responses={
        200: {"content": {"text/plain": {"schema": {"type": "string"}}}},
        404: {"description": "no such repo"},
    },
)
async def repo_map(
    name: Annotated[str, Path(max_length=64)],
    service: ServiceDep,
    _caller: Caller,
    focus: Annotated[
        list[str] | None,
        Query(max_length=MAX_FOCUS, description="files or identifiers to rank first"),
    ] = None,
    tokens: Annotated[int, Query(ge=64, le=MAX_MAP_TOKENS)] = DEFAULT_MAP_TOKENS,
) -> PlainTextResponse:
    """The ranked, token-budgeted repo map, focused on `focus` when given."""
    repo = service.repo(name)

    def render() -> str:
        return service.workspaces.current(repo).repository.map(focus=focus or (), tokens=tokens)

    return PlainTextResponse(await run_in_threadpool(render))
