"""The executor identity of a process that runs diagnosis jobs: the name DBOS tags each
workflow it runs with, which says in a job's record which worker ran each attempt, and
which tells the fleet whose unfinished jobs to take over when a worker dies.

`DIAGNOSER_EXECUTOR_ID`, else `<host>-<8 hex digits of the data directory's path>`:
the same across restarts of one worker (at start its unfinished jobs are its own again),
and distinct for two workers on one machine, since each has its own data directory
(nothing but the database is shared between the processes of a fleet).
"""

from __future__ import annotations

import hashlib
import re
import socket
from pathlib import Path

EXECUTOR_ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}"
"""A settable executor id: what a host name and a path digest are made of, at most 128."""
DIGEST_CHARS = 8
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_HOST_CHARS = 100


def default_executor_id(home: Path) -> str:
    """`<host>-<digest of home>`; the host name cut to what the pattern allows."""
    host = _UNSAFE.sub("-", socket.gethostname()).strip("-.")[:MAX_HOST_CHARS] or "host"
    digest = hashlib.sha256(str(home.expanduser().resolve()).encode()).hexdigest()
    return f"{host}-{digest[:DIGEST_CHARS]}"


def executor_id(configured: str | None, home: Path) -> str:
    """The configured id, else the default for the data directory `home`."""
    return configured or default_executor_id(home)
