"""The store's way to its database: a write transaction commits whole or not at all, and
text it stores loses what PostgreSQL cannot hold (`api.store.transactions`)."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from api.store import Store
from api.store.transactions import NUL, without_nul


def _reports(store: Store) -> int:
    with store.engine.connect() as connection:
        return int(connection.execute(text("SELECT count(*) FROM reports")).scalar_one())


def test_a_write_commits_at_its_end_and_not_at_all_when_it_fails(store: Store) -> None:
    store.add_report(repo="demo", source="diagnose", raw=b"{}")
    with pytest.raises(RuntimeError), store.writing() as connection:
        connection.execute(text("DELETE FROM reports"))
        raise RuntimeError("lost before the end")
    assert _reports(store) == 1
    with store.writing() as connection:
        connection.execute(text("DELETE FROM reports"))
    assert _reports(store) == 0


def test_stored_text_loses_its_nul_characters(store: Store) -> None:
    assert without_nul(f"a{NUL}b{NUL}") == "ab"
    report_id = store.add_report(repo="demo", source="diagnose", raw=b"{}")
    store.reject_report(report_id, f"bad{NUL} signature")
    with store.engine.connect() as connection:
        rejected = connection.execute(
            text("SELECT rejected FROM reports WHERE id = :id"), {"id": report_id}
        ).scalar_one()
    assert rejected == "bad signature"
