"""`Store`: every read and write of the service's database, one short transaction each.

Synchronous (SQLAlchemy sessions); routes call it from worker threads, never on the event
loop. One object, one part per noun, each in its module over one way to the database
(`transactions`):

- `inputs`: reports as they arrived (refused ones in part, with why) and webhook
  deliveries, each taken once by its delivery id;
- `claims`: identical reports folded into one job, atomically, on any database and any
  number of processes (a `claims` row per repo and fingerprint);
- `jobs`: a job's life along `TRANSITIONS`, its events, its end with its Finding;
- `findings`: one by id, and pages of them newest first;
- `executors`: the processes that run jobs, with their heartbeats (`api.fleet`).

    store = Store(engine)            # clock=… for tests
    store.submit(repo=…, source=…, raw=…, fingerprint=…, window=…)
"""

from __future__ import annotations

from api.store.claims import ClaimRecords, Submitted
from api.store.executors import Executor, ExecutorRecords
from api.store.findings import FindingRecords
from api.store.inputs import InputRecords
from api.store.jobs import JobInput, JobRecords, Queue


class Store(ClaimRecords, InputRecords, JobRecords, FindingRecords, ExecutorRecords):
    """The service's database: inputs, fingerprint claims, jobs, findings, executors."""


__all__ = ["Executor", "JobInput", "Queue", "Store", "Submitted"]
