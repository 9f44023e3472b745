"""The HTTP service: FastAPI routes over `diagnoser`, durable jobs on DBOS, storage in
SQLite (default) or PostgreSQL.

    diagnoser serve                      # README: make run
    app = create_app(ServiceSettings())  # for tests and ASGI servers

Importing the package loads none of its modules (`repomap.lazy`): `diagnoser serve
--help` or a bad setting answers before FastAPI, DBOS and SQLAlchemy load.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from repomap import lazy

if TYPE_CHECKING:  # what the names are, for type checkers; loaded on first use at run time
    from api.app import build_service, create_app
    from api.settings import ServiceSettings, load_service_settings

__all__ = ["ServiceSettings", "build_service", "create_app", "load_service_settings"]

__getattr__, __dir__ = lazy.exports(
    __name__,
    {
        "ServiceSettings": "api.settings",
        "build_service": "api.app",
        "create_app": "api.app",
        "load_service_settings": "api.settings",
    },
)
