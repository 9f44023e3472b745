"""The database: an engine for the configured URL, migrated to the latest schema.

SQLite by default (a file in the data directory, WAL journal, so readers never wait for
the writer); PostgreSQL by `DIAGNOSER_DATABASE_URL`. The schema is Alembic's
(`api/migrations/`), upgraded at start when it is behind; `create_all` is never used.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import InvalidatePoolError, NoSuchModuleError, SQLAlchemyError

from diagnoser import ConfigError
from diagnoser.redact import redact_url, scrub

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
SQLITE_BUSY_MS = 10_000
"""How long an SQLite writer waits for the lock before failing."""
SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    # NORMAL in WAL mode survives a killed process (every commit is in the log); only a
    # power cut can lose the last commits. FULL costs an fsync per commit: ~10x fewer
    # accepted reports per second.
    "PRAGMA synchronous=NORMAL",
    f"PRAGMA busy_timeout={SQLITE_BUSY_MS}",
    "PRAGMA foreign_keys=ON",
)
POOL_SIZE = 10
PING_IDLE_SECONDS = 5.0
"""A pooled connection that sat unused longer than this is pinged (`SELECT 1`) before it
is handed out, and the pool is renewed if the ping fails (PostgreSQL was restarted
meanwhile); one used more recently is not. SQLAlchemy's `pool_pre_ping` pinged at every
checkout: one statement in eight of each accepted report. A connection found broken
while in use still renews the whole pool (SQLAlchemy's disconnect handling), so after a
restart under load the requests in flight fail and the next ones get new connections."""
_IDLE_SINCE = "diagnoser_idle_since"
"""Key in a pooled connection's `info`: when it went back to the pool (monotonic s)."""
SCHEMA_REVISION = "0005"
"""The newest migration's revision (`api/migrations/versions/`). A database already at it
is not migrated, and Alembic is not imported: its modules (and Mako's), 9 MB, stayed
loaded for as long as the service ran (docs/benchmarks/memory.md)."""
MIGRATION_LOCK = 0x64696167
"""PostgreSQL advisory lock key the migrating process holds ("diag")."""
SQLITE = "sqlite"
"""The SQLite dialect's name (`engine.dialect.name`)."""
SQLITE_BEGIN = "sqlite_begin"
"""Execution option: the statement that opens a transaction on SQLite (default `BEGIN`)."""
SQLITE_WRITE = {SQLITE_BEGIN: "BEGIN IMMEDIATE"}
"""Execution options of sessions that write (ignored on PostgreSQL): the write lock is
taken at BEGIN, so a transaction that reads, then writes, waits for it (busy_timeout)
instead of failing at once with "database is locked" when another writer committed in
between."""


def normalise_url(url: str) -> str:
    """`postgresql://` and `postgres://` → the psycopg 3 driver; anything else as given."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == SQLITE


def connect(url: str, *, ping_idle_seconds: float = PING_IDLE_SECONDS) -> Engine:
    """An engine for `url` (SQLite tuned as above), or ConfigError naming the setting.
    Its connections are pinged before use after `ping_idle_seconds` unused."""
    url = normalise_url(url)
    try:
        parsed = make_url(url)
    except Exception:
        shown = redact_url(url)
        raise ConfigError(f"DIAGNOSER_DATABASE_URL is not a database URL: {shown!r}") from None
    backend = parsed.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise ConfigError(
            f"DIAGNOSER_DATABASE_URL: {backend!r} is not supported (sqlite:/// or postgresql://)"
        )
    options: dict[str, Any] = {}
    if backend == "sqlite":
        if parsed.database:
            folder = Path(parsed.database).expanduser().parent
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ConfigError(
                    f"DIAGNOSER_DATABASE_URL: cannot make the folder {folder}: {exc.strerror}"
                ) from None
        options["connect_args"] = {"check_same_thread": False, "timeout": SQLITE_BUSY_MS / 1000}
    else:
        options.update(pool_size=POOL_SIZE, max_overflow=POOL_SIZE)
    try:
        engine = create_engine(parsed, **options)
    except NoSuchModuleError:  # `postgresql+nodriver://`
        raise ConfigError(
            f"DIAGNOSER_DATABASE_URL: no driver {parsed.drivername!r} installed; "
            f"use sqlite:/// or postgresql://"
        ) from None
    except (SQLAlchemyError, ValueError, TypeError) as exc:  # e.g. a bad query parameter
        raise ConfigError(f"DIAGNOSER_DATABASE_URL: {scrub(_first_line(exc), url)}") from None
    _ping_when_idle(engine, ping_idle_seconds)
    if backend == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
    return engine


def _ping_when_idle(engine: Engine, idle_seconds: float) -> None:
    dialect = engine.dialect

    def checkin(_connection: Any, record: Any) -> None:
        if record is not None:
            record.info[_IDLE_SINCE] = time.monotonic()

    def checkout(connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get(_IDLE_SINCE)  # None: connected just now
        if since is None or time.monotonic() - since < idle_seconds:
            return
        try:
            dialect.do_ping(connection)
        except dialect.loaded_dbapi.Error as exc:
            # The pool replaces this connection and every one older (it retries once).
            raise InvalidatePoolError(f"ping failed: {exc}") from exc

    event.listen(engine, "checkin", checkin)
    event.listen(engine, "checkout", checkout)


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    for pragma in SQLITE_PRAGMAS:
        cursor.execute(pragma)
    cursor.close()
    # The sqlite3 module opens a transaction only before INSERT/UPDATE/DELETE, so a
    # SAVEPOINT began one of its own and its RELEASE committed it: a fingerprint's claim
    # was committed before its job existed. `_sqlite_begin` opens every transaction
    # instead (SQLAlchemy's recipe for pysqlite: "Serializable isolation / Savepoints").
    connection.isolation_level = None


def _sqlite_begin(connection: Connection) -> None:
    connection.exec_driver_sql(connection.get_execution_options().get(SQLITE_BEGIN, "BEGIN"))


def migrate(engine: Engine) -> None:
    """Upgrade the schema to the newest migration (a no-op when it is there); ConfigError
    when the database cannot be reached. On PostgreSQL, processes starting at once take
    turns (an advisory lock held by the migrating transaction)."""
    if _revision(engine) == SCHEMA_REVISION:
        return
    from alembic import command  # noqa: PLC0415 (only a process that migrates needs it)
    from alembic.config import Config  # noqa: PLC0415

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    try:
        with engine.begin() as connection:
            if engine.dialect.name != SQLITE:
                connection.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK}
                )
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
    except (SQLAlchemyError, ValueError) as exc:
        raise _unusable(exc, engine) from None


def _revision(engine: Engine) -> str | None:
    """The revision the database's schema is at; None when it has none yet, or when it
    cannot be read (Alembic then migrates, or says why it cannot)."""
    try:
        with engine.connect() as connection:
            found = connection.execute(text("SELECT version_num FROM alembic_version"))
            return found.scalar_one_or_none()
    except SQLAlchemyError:
        return None


def reach(engine: Engine) -> None:
    """Open and close one connection: ConfigError, as `migrate` says it, when the database
    cannot be reached (a start says so before it loads the rest of the service)."""
    try:
        with engine.connect():
            pass
    except (SQLAlchemyError, ValueError) as exc:
        raise _unusable(exc, engine) from None


def _unusable(exc: Exception, engine: Engine) -> ConfigError:
    """The error a start stops with; the driver's text may quote the URL: scrubbed."""
    reason = scrub(_first_line(getattr(exc, "orig", None) or exc), _plain(engine))
    return ConfigError(f"DIAGNOSER_DATABASE_URL: cannot use the database: {reason}")


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _plain(engine: Engine) -> str:
    """The engine's URL with its password, for `scrub` to know what to hide."""
    return engine.url.render_as_string(hide_password=False)
