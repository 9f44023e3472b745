"""Migrations that rewrite stored data, on SQLite and PostgreSQL: a database made at the
revision before, with rows in the old shape, upgraded to head and read back through the
store (`api/migrations/versions/`)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

from api.database import MIGRATIONS, SCHEMA_REVISION, connect, migrate
from api.store import Store
from diagnoser.finding import Finding, Location, Status
from diagnoser.intake import Kind
from tests.api.databases import BACKENDS, fresh_database

AT = datetime(2026, 1, 1, tzinfo=UTC)
ROOT = Path(__file__).resolve().parents[2]
HANG_SECONDS = 60
"""A hang guard for a process that migrates a database."""
REPORTS = sa.table(
    "reports", sa.column("id", sa.String), sa.column("repo", sa.String),
    sa.column("source", sa.String), sa.column("content_type", sa.String),
    sa.column("headers", sa.Text), sa.column("raw", sa.LargeBinary),
    sa.column("received_at", sa.DateTime(timezone=True)),
)  # fmt: skip
JOBS = sa.table(
    "jobs", sa.column("id", sa.String), sa.column("repo", sa.String),
    sa.column("report_id", sa.String), sa.column("part", sa.Integer),
    sa.column("state", sa.String), sa.column("reason", sa.Text),
    sa.column("created_at", sa.DateTime(timezone=True)), sa.column("finding_id", sa.String),
    sa.column("occurrences", sa.Integer),
)  # fmt: skip
FINDINGS = sa.table(
    "findings", sa.column("id", sa.String), sa.column("job_id", sa.String),
    sa.column("repo", sa.String), sa.column("classification", sa.String),
    sa.column("status", sa.String), sa.column("title", sa.Text),
    sa.column("created_at", sa.DateTime(timezone=True)), sa.column("body", sa.Text),
)  # fmt: skip


def _migrate(engine: Engine, revision: str, *, down: bool = False) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        (command.downgrade if down else command.upgrade)(config, revision)


def _old_body(status: str) -> str:
    """A Finding as stored before issue 26: the old status name, none of the new fields,
    compact JSON with its UTF-8 kept (as `model_dump_json` wrote it)."""
    finding = Finding(
        classification=Kind.CRASH, title="Ünïcode — crash",
        files=[Location(path="a.py", start_line=1, end_line=2)],
    )  # fmt: skip
    data = finding.model_dump(mode="json")
    del data["reproduction"], data["provenance"]["localized_from"]
    data["status"] = status
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _store_old_findings(engine: Engine, statuses: dict[str, str]) -> None:
    with engine.begin() as connection:
        for number, (finding_id, status) in enumerate(statuses.items()):
            job_id, report_id = f"job-{number}", f"report-{number}"
            connection.execute(REPORTS.insert().values(
                id=report_id, repo="demo", source="diagnose", content_type="text/plain",
                headers="{}", raw=b"crash", received_at=AT,
            ))  # fmt: skip
            connection.execute(JOBS.insert().values(
                id=job_id, repo="demo", report_id=report_id, part=0, state="complete",
                reason="", created_at=AT, finding_id=finding_id, occurrences=1,
            ))  # fmt: skip
            connection.execute(FINDINGS.insert().values(
                id=finding_id, job_id=job_id, repo="demo", classification="crash",
                status=status, title="Ünïcode — crash", created_at=AT, body=_old_body(status),
            ))  # fmt: skip


def _stored(engine: Engine) -> dict[str, tuple[str, str]]:
    with engine.connect() as connection:
        rows = connection.execute(sa.select(FINDINGS.c.id, FINDINGS.c.status, FINDINGS.c.body))
        return {id_: (status, body) for id_, status, body in rows}


@pytest.mark.parametrize("backend", BACKENDS)
def test_0004_renames_the_grounding_statuses_of_stored_findings(
    backend: str, tmp_path: Path
) -> None:
    old = {"f-grounded": "verified", "f-partial": "partially_verified", "f-none": "unverified"}
    with fresh_database(backend, tmp_path) as url:
        engine = connect(url)
        try:
            _migrate(engine, "0003")
            _store_old_findings(engine, old)
            migrate(engine)  # to head, as the service does at start
            store = Store(engine)
            found = store.finding("f-grounded")
            assert found is not None
            summary, finding = found
            assert summary.status == "grounded" and finding.status is Status.GROUNDED
            assert finding.title == "Ünïcode — crash" and finding.files[0].path == "a.py"
            stored = _stored(engine)
            assert {id_: status for id_, (status, _) in stored.items()} == {
                "f-grounded": "grounded", "f-partial": "partially_grounded",
                "f-none": "ungrounded",
            }  # fmt: skip
            _, body = stored["f-partial"]
            assert body == _old_body("partially_verified").replace(
                '"status":"partially_verified"', '"status":"partially_grounded"'
            )  # only the status changed: as compact, UTF-8 as it was
            # The API's filter takes the old names too.
            assert [f.id for f in store.findings(status="verified").items] == ["f-grounded"]
            assert [f.id for f in store.findings(status="ungrounded").items] == ["f-none"]
            _migrate(engine, "0003", down=True)
            assert _stored(engine) == {id_: (name, _old_body(name)) for id_, name in old.items()}
        finally:
            engine.dispose()


def test_the_schema_revision_is_the_newest_migration() -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    assert ScriptDirectory.from_config(config).get_current_head() == SCHEMA_REVISION


MIGRATE = """
import sys
from api.database import connect, migrate
engine = connect(sys.argv[1])
migrate(engine)
print("alembic" in sys.modules)
"""


def _migrated_in_a_process(url: str) -> list[str]:
    """What a fresh process that migrates `url` prints: whether it loaded Alembic."""
    done = subprocess.run(
        [sys.executable, "-c", MIGRATE, url], cwd=ROOT, capture_output=True, text=True,
        check=True, timeout=HANG_SECONDS,
    )  # fmt: skip
    return done.stdout.split()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_database_at_the_newest_revision_is_not_migrated_and_alembic_not_loaded(
    backend: str, tmp_path: Path
) -> None:
    with fresh_database(backend, tmp_path) as url:
        runs = [_migrated_in_a_process(url), _migrated_in_a_process(url)]
        engine = connect(url)
        try:
            with engine.connect() as connection:
                tables = sa.inspect(connection).get_table_names()
                version = connection.execute(sa.text("SELECT version_num FROM alembic_version"))
                revision = version.scalar_one()
        finally:
            engine.dispose()
    assert runs == [["True"], ["False"]]  # a new database is migrated; then it is current
    assert revision == SCHEMA_REVISION and {"reports", "jobs", "findings"} <= set(tables)
