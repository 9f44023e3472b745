"""Start time and memory of `diagnoser serve --workers 2`, two checkouts side by side.

    git worktree add /tmp/before REV
    .venv/bin/python bench/web_workers_bench.py --before /tmp/before [--runs 3]

Each run starts the service on a fresh `DIAGNOSER_HOME` (SQLite, offline model, the demo
app), waits until `/readyz` answers 200, reads the resident memory (VmRSS) of the
supervisor, which runs the jobs, and of each web worker, which only takes requests, then
stops it. The checkouts alternate run by run (a shared, noisy machine).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
WORKERS = 2
READY_DEADLINE_SECONDS = 120.0
"""A hang guard: a start takes a few seconds."""
MIN_WORKER_MB = 50
"""Children of the supervisor smaller than this are helpers (multiprocessing's), not web
workers."""


def rss_mb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return 0


def children(pid: int) -> list[int]:
    found = subprocess.run(
        ["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False
    ).stdout
    return [int(child) for child in found.split()]


def start(checkout: Path, port: int) -> tuple[float, int, list[int]]:
    """Seconds until ready, the supervisor's MB, the web workers' MB."""
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DIAGNOSER_")}
        env |= {"PYTHONPATH": str(checkout), "DIAGNOSER_HOME": home}
        began = time.perf_counter()
        server = subprocess.Popen(
            [sys.executable, "-m", "api.cli", "serve", "--workers", str(WORKERS),
             "--port", str(port)],
            cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
                while time.perf_counter() - began < READY_DEADLINE_SECONDS:
                    try:
                        if client.get("/readyz").status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    time.sleep(0.05)
                else:
                    raise SystemExit(f"{checkout}: not ready in {READY_DEADLINE_SECONDS} s")
            ready = time.perf_counter() - began
            workers = sorted(m for m in map(rss_mb, children(server.pid)) if m > MIN_WORKER_MB)
            return ready, rss_mb(server.pid), workers
        finally:
            server.terminate()
            server.wait(timeout=READY_DEADLINE_SECONDS)


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--before", type=Path, required=True, help="another checkout")
    cli.add_argument("--runs", type=int, default=3)
    cli.add_argument("--port", type=int, default=8800)
    args = cli.parse_args()
    checkouts = {"before": args.before.resolve(), "after": ROOT}
    rows: dict[str, list[tuple[float, int, list[int]]]] = {name: [] for name in checkouts}
    port = args.port
    for _ in range(args.runs):
        for name, checkout in checkouts.items():
            rows[name].append(start(checkout, port))
            port += 1
    for name, runs in rows.items():
        ready = ", ".join(f"{r[0]:.2f}" for r in runs)
        supervisor = ", ".join(str(r[1]) for r in runs)
        workers = ", ".join("/".join(map(str, r[2])) for r in runs)
        print(f"{name}: ready s {ready}; supervisor MB {supervisor}; web workers MB {workers}")


if __name__ == "__main__":
    main()
