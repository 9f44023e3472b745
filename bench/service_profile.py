"""`diagnoser serve`, profiled, for `bench/service_bench.py --profile MODE` (bench only:
nothing in the service changes; service_bench starts this file instead of `api.cli`).

    python bench/service_profile.py MODE OUT [serve options]

timers    the request path's functions (`TIMED`) wrapped in timers: calls, the calling
          thread's CPU time (the server is one process, so Python work is bounded by one
          core: CPU time is the cost) and wall time. On SIGUSR1 the totals so far are
          written to OUT as JSON, so the bench can take each phase's difference.
cpu|wall  cProfile in every thread (the event loop, the request thread pool, DBOS's
          workers), timed by each thread's CPU time or by the wall clock; a pstats file
          at exit. Its overhead is large for code making many small calls (SQLAlchemy),
          so its shares are skewed; use it for what calls what, `timers` for how much.
"""

from __future__ import annotations

import cProfile
import functools
import importlib
import json
import os
import pstats
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

TIMED = (
    "api.service:Service.submit",
    "api.service:report_fingerprint",
    "diagnoser.intake.intake:find_traces",
    "api.store:Store.submit",
    "api.store:Store.finding",
    "api.service:Service.deliver",
    "api.signatures:verify_github",
    "api.deliveries:inspect",
    "api.store:Store.deliver",
    "api.jobs:Jobs.enqueue",
)
"""`module:attribute` of each timed function (synchronous ones: they run in one thread)."""

Totals = dict[str, list[float]]


def install_timers(totals: Totals) -> None:
    lock = threading.Lock()
    for target in TIMED:
        module_name, _, path = target.partition(":")
        owner: Any = importlib.import_module(module_name)
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        setattr(owner, name, _timed(target, getattr(owner, name), totals, lock))


def _timed(
    target: str, function: Callable[..., Any], totals: Totals, lock: threading.Lock
) -> Callable[..., Any]:
    total = totals.setdefault(target, [0.0, 0.0, 0.0])  # calls, CPU s, wall s

    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        cpu, wall = time.thread_time(), time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
            with lock:
                total[0] += 1
                total[1] += cpu
                total[2] += wall

    return timed


def serve_with_timers(out: Path, argv: list[str]) -> int:
    totals: Totals = {}
    install_timers(totals)

    def dump(_signum: int, _frame: FrameType | None) -> None:
        partial = out.with_suffix(".partial")
        partial.write_text(json.dumps(totals))
        os.replace(partial, out)

    signal.signal(signal.SIGUSR1, dump)
    from api.cli import main  # noqa: PLC0415

    return main(["serve", *argv])


def serve_with_cprofile(out: Path, clock: str, argv: list[str]) -> int:
    from api.cli import main  # noqa: PLC0415

    profiles: list[cProfile.Profile] = []

    def new() -> cProfile.Profile:
        return cProfile.Profile(time.thread_time) if clock == "cpu" else cProfile.Profile()

    def start(*_: object) -> None:  # a new thread's first event: profile it from here
        profile = new()
        profiles.append(profile)
        profile.enable()

    main_thread = new()
    threading.setprofile(start)
    main_thread.enable()
    try:
        return main(["serve", *argv])
    finally:
        main_thread.disable()
        stats = pstats.Stats(main_thread)
        for profile in profiles:
            stats.add(profile)
        stats.dump_stats(out)


if __name__ == "__main__":
    mode, output, *serve_args = sys.argv[1:]
    if mode == "timers":
        raise SystemExit(serve_with_timers(Path(output), serve_args))
    raise SystemExit(serve_with_cprofile(Path(output), mode, serve_args))
