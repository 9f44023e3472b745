"""How pytest-xdist shares the tests among its workers (`make test`: `pytest -n auto`).

Test by test, as xdist's default `load` does, except `tests/hostile/`: that suite goes
to one worker whole and runs there one test at a time, so the bounds it measures (a
server's memory growth, its file limit, how long a trickled request is held) have no
other hostile probe beside them, and each of its modules starts its servers once.
(`--dist loadgroup` with `xdist_group` marks would say the same, but pytest-xdist 3.8
cannot rename pytest 9's test ids, so its groups are silently ignored.)
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

SERIAL = ("tests/hostile/",)
"""Test id prefixes whose tests run on one worker, in order."""


class Scheduling(LoadScopeScheduling):
    """Each test is a unit of work of its own, but each of `SERIAL` is one unit. The
    largest units are handed out first, so the serial suite starts at once."""

    def _split_scope(self, nodeid: str) -> str:
        return next((prefix for prefix in SERIAL if nodeid.startswith(prefix)), nodeid)
