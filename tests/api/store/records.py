"""What the store's tests share: a report, a submission, a Finding, and how many reports
are kept."""

from __future__ import annotations

from sqlalchemy import text

from api.store import Store, Submitted
from diagnoser import Finding
from diagnoser.intake import Kind

WINDOW = 60.0


def report(store: Store) -> str:
    return store.add_report(repo="demo", source="diagnose", raw=b"{}")


def submit(store: Store, fingerprint: str, repo: str = "demo") -> Submitted:
    return store.submit(
        repo=repo, source="diagnose", raw=b"{}", fingerprint=fingerprint, window=WINDOW
    )


def finding(title: str = "t") -> Finding:
    return Finding(classification=Kind.CRASH, title=title)


def reports(store: Store) -> int:
    with store.engine.connect() as connection:
        return int(connection.execute(text("SELECT count(*) FROM reports")).scalar_one())
