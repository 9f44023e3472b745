"""The HTTP service: FastAPI routes over `diagnoser`, durable jobs on DBOS, storage in
SQLite (default) or PostgreSQL.

    diagnoser serve                      # README: make run
    app = create_app(ServiceSettings())  # for tests and ASGI servers
"""

from __future__ import annotations

from api.app import build_service, create_app
from api.settings import ServiceSettings, load_service_settings

__all__ = ["ServiceSettings", "build_service", "create_app", "load_service_settings"]
