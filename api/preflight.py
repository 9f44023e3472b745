"""The checks a start makes before anything else, in the order a user would fix them: the
models (a typo should not wait for the database), their endpoints, the data directory,
the database URL and whether the database answers. Each fails with one `ConfigError`
line naming its setting.

Importing this loads neither FastAPI, DBOS nor Alembic: `diagnoser serve` and `diagnoser
worker` run it before the rest of the service loads, so a bad setting answers at once;
`api.app.build_service` runs it when it was not given its result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from api.database import connect, normalise_url, reach
from api.settings import ServiceSettings
from diagnoser.settings import check_data_home, default_database_url

if TYPE_CHECKING:
    from diagnoser.models import RoleModels


@dataclass(frozen=True)
class Preflight:
    """What passed: the resolved models and an engine on the database that answered."""

    models: RoleModels | None
    """The explorer's chain and the formatter; None for a process that runs no jobs,
    which then never loads PydanticAI (a web worker, `serve --no-jobs`)."""
    url: str
    """The database URL, normalised (`api.database.normalise_url`)."""
    engine: Engine


def preflight(
    settings: ServiceSettings, *, runner: bool = True, probe_endpoints: bool = True
) -> Preflight:
    """Check `settings` for a process that runs jobs (`runner`) or only takes requests.
    `probe_endpoints`: a model's explicit base URL must accept a TCP connection."""
    models = None
    if runner:
        from diagnoser.models import check_endpoints, resolve_models  # noqa: PLC0415

        models = resolve_models(settings)
        if probe_endpoints:
            check_endpoints(models)
    check_data_home()  # the default database, DBOS and the repo maps' caches live there
    url = normalise_url(settings.database_url or default_database_url())
    engine = connect(url)
    try:
        reach(engine)
    except BaseException:
        engine.dispose()
        raise
    return Preflight(models, url, engine)
