"""Load on the HTTP service from a second process on loopback (issue 10, §6).

    .venv/bin/python bench/service_bench.py [--database sqlite|postgresql] [--requests N]
        [--concurrency C] [--burst 1000] [--big-requests M] [--port P] [--phases …]
        [--client raw|httpx] [--profile timers|cpu|wall] [--workers W]

Starts the real server (`python -m api.cli serve`) on a fresh `DIAGNOSER_HOME` (SQLite)
or a fresh PostgreSQL database on 127.0.0.1:5432 (created here, dropped after), with the
offline model, the demo app as repo `demo`, the default job concurrency (2) and a rate
limit that never throttles; waits for `/readyz`, then drives it from this process over
keep-alive connections (a small HTTP/1.1 client on asyncio streams; `--client httpx` for
httpx, which costs ~3 ms of client CPU per request — taken from the server's two cores):

    healthz   GET /healthz, N at concurrency C: the floor (uvicorn, FastAPI, middleware)
    burst     `--burst` identical crash reports sent at once, one connection each: one
              job, every answer its id, occurrences == burst (checked via the API)
    finding   GET /findings/{id} of that job's Finding, N at concurrency C
    attach    N identical reports at C: each attaches to that job (no new job)
    distinct  N distinct crash reports at C: each a new job and a DBOS enqueue; the
              jobs run in the server meanwhile (queued, not inline)
    webhook   N signed GitHub `issues` deliveries (distinct ids and crashes) at C
    big       M deliveries of a 2 MiB body at C

Each phase prints requests/s, latency p50/p99 (as this client saw them, client queueing
included), the server's CPU per request (and its PostgreSQL backends'), and the peak RSS
of the server and its children (VmRSS from /proc, sampled every 0.1 s); the end prints
the server's VmHWM. `--profile` runs the server under `bench/service_profile.py`:
`timers` prints, per phase, CPU and wall ms per request of the request path's functions.
`--workers W` starts the server with W web worker processes (`diagnoser serve --workers`;
server CPU and memory are then the whole process tree's; `--profile` needs one process).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import os
import resource
import signal
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from service_load import (
    SAMPLE_SECONDS,
    Call,
    Connection,
    HttpxSender,
    Memory,
    Result,
    load,
    status_kb,
    tree,
)
from service_server import GITHUB_SECRET, database, postgres_cpu, server, wait_ready

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "sample_reports" / "reports"
CRASH = REPORTS / "android_logcat_open_shared.txt"
"""The identical crash of the burst and the attach phase."""
TRACEBACK = REPORTS / "issue_load_more_500.md"
TRACEBACK_EXCEPTION = "notes.store.PageOutOfRangeError"
"""Renamed per request (`…Error17`): a distinct exception type is a distinct fingerprint."""
GITHUB_ISSUE = REPORTS / "github_issue_opened_share_expiry.json"
GITHUB_EXCEPTION = "TypeError: can't compare"
JOB_SECONDS = 300.0
BIG_BODY_BYTES = 2 << 20
CLIENT_TIMEOUT_SECONDS = 120.0
CACHE = ROOT / "bench" / ".cache"
PHASES = frozenset({"healthz", "burst", "finding", "attach", "distinct", "webhook", "big"})


# ---- requests ---------------------------------------------------------------------------


JSON = {"Content-Type": "application/json"}


def report_call(text: str) -> Call:
    body = json.dumps({"report": {"text": text, "source": "crash_log"}}).encode()
    return Call("POST", "/diagnose", body, JSON)


def github_call(issue: dict[str, Any], number: int) -> Call:
    body = json.dumps(issue | {"issue": issue["issue"] | {"number": number}}).encode()
    digest = hmac.new(GITHUB_SECRET.encode(), body, hashlib.sha256).hexdigest()
    headers = JSON | {
        "X-Hub-Signature-256": f"sha256={digest}",
        "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-GitHub-Event": "issues",
    }
    return Call("POST", "/webhooks/github", body, headers)


def distinct_issue(base: dict[str, Any], n: int, tag: str, size: int = 0) -> dict[str, Any]:
    """The sample issue with its crash renamed (a new fingerprint) and, with `size`, a
    server log appended so the JSON body is about `size` bytes."""
    text = base["issue"]["body"].replace(GITHUB_EXCEPTION, f"TypeError{tag}{n}: can't compare")
    if size:
        line = "2024-05-06 10:21:44 INFO werkzeug 127.0.0.1 GET /api/notes?page=2 200 -\n"
        text += "\n```\n" + line * ((size - len(json.dumps(base))) // len(line)) + "```\n"
    return base | {"issue": base["issue"] | {"body": text}}


async def metrics_jobs(client: httpx.AsyncClient) -> dict[str, int]:
    """`diagnoser_jobs` by state, from /metrics."""
    text = (await client.get("/metrics")).text
    jobs: dict[str, int] = {}
    for line in text.splitlines():
        if line.startswith('diagnoser_jobs{state="'):
            state = line.split('"')[1]
            jobs[state] = int(float(line.rsplit(" ", 1)[1]))
    return jobs


async def wait_job(client: httpx.AsyncClient, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + JOB_SECONDS
    while time.monotonic() < deadline:
        job: dict[str, Any] = (await client.get(f"/jobs/{job_id}")).json()
        if job["state"] not in ("queued", "running"):
            return job
        await asyncio.sleep(0.1)
    raise SystemExit(f"job {job_id} did not end within {JOB_SECONDS:.0f} s")


def ended_jobs(jobs: dict[str, int]) -> int:
    return sum(n for state, n in jobs.items() if state not in ("queued", "running"))


Totals = dict[str, list[float]]
"""`module:function` → [calls, CPU s, wall s], as `bench/service_profile.py` writes them."""


def timer_rows(before: Totals, after: Totals, count: int) -> list[str]:
    """Markdown rows: each timed function's calls, CPU and wall ms per request."""
    rows = []
    for target, (calls, cpu, wall) in after.items():
        was = before.get(target, [0.0, 0.0, 0.0])
        if calls > was[0]:
            rows.append(
                f"| {target} | {(calls - was[0]) / count:.2f} | "
                f"{(cpu - was[1]) / count * 1000:.2f} | {(wall - was[2]) / count * 1000:.2f} |"
            )
    return rows


# ---- the phases ---------------------------------------------------------------------------


@dataclass
class Bench:
    port: int
    requests: int
    concurrency: int
    burst: int
    big_requests: int
    memory: Memory
    phases: frozenset[str] = PHASES
    client_kind: str = "raw"
    timers: Path | None = None
    """Where the server writes its timers on SIGUSR1 (`--profile timers`)."""
    postgres: str | None = None
    """The PostgreSQL database's name: its backends' CPU is counted too."""
    results: list[Result] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def client(self, connections: int = 4) -> httpx.AsyncClient:
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        return httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{self.port}", limits=limits,
            timeout=CLIENT_TIMEOUT_SECONDS,
        )  # fmt: skip

    async def load(
        self, name: str, calls: list[Call], concurrency: int, *, keep: bool = False
    ) -> Result:
        if self.client_kind == "raw":
            return await load(
                lambda: Connection(self.port), name, calls, concurrency, self.memory.pids,
                keep=keep,
            )  # fmt: skip
        async with self.client(concurrency) as client:
            sender = HttpxSender(client)
            return await load(lambda: sender, name, calls, concurrency, self.memory.pids, keep=keep)

    async def phase(
        self, control: httpx.AsyncClient, name: str, calls: list[Call],
        concurrency: int | None = None, *, keep: bool = False,
    ) -> Result:  # fmt: skip
        self.memory.phase = name
        depth = (await metrics_jobs(control)).get("queued", 0)
        timers, backends = await self.read_timers(), postgres_cpu(self.postgres)
        result = await self.load(name, calls, concurrency or self.concurrency, keep=keep)
        result.postgres_cpu = sum(
            cpu - backends.get(pid, 0.0) for pid, cpu in postgres_cpu(self.postgres).items()
        )
        result.timers = timer_rows(timers, await self.read_timers(), result.count)
        await asyncio.sleep(2 * SAMPLE_SECONDS)
        result.rss_kb = self.memory.peaks.get(name, 0)
        self.results.append(result)
        print(f"{name}: {result.rate:.0f}/s, {result.codes()}, queued before {depth}", flush=True)
        answers = zip(result.answers, result.statuses, strict=True)
        errors = {str(answer)[:300] for answer, code in answers if code >= 400}
        for error in sorted(errors)[:5]:
            print(f"  error answer: {error}", flush=True)
        return result

    async def read_timers(self) -> Totals:
        """The server's timer totals so far (it writes them on SIGUSR1)."""
        if self.timers is None:
            return {}
        self.timers.unlink(missing_ok=True)
        os.kill(self.memory.pid, signal.SIGUSR1)
        for _ in range(100):
            if self.timers.exists():
                totals: Totals = json.loads(self.timers.read_text())
                return totals
            await asyncio.sleep(0.05)
        raise SystemExit("the server did not write its timers")

    async def run(self) -> None:
        async with self.client() as client:
            warm = report_call(TRACEBACK.read_text())
            await self.load("warm-up", [warm] * 20, 4)
            answer = (await client.post("/diagnose", content=warm.body, headers=JSON)).json()
            await wait_job(client, answer["job_id"])
            if "healthz" in self.phases:  # the floor: uvicorn, FastAPI, middleware, client
                await self.phase(client, "GET /healthz", [Call("GET", "/healthz")] * self.requests)
            if self.phases & {"burst", "finding", "attach"}:  # the others need its job
                finding_id = await self.burst_phase(client)
            if "finding" in self.phases:
                get = Call("GET", f"/findings/{finding_id}")
                await self.phase(client, "GET /findings/{id}", [get] * self.requests)
            if "attach" in self.phases:
                same = [report_call(CRASH.read_text())] * self.requests
                await self.phase(client, "POST /diagnose identical (attach)", same)
            if "distinct" in self.phases:
                await self.distinct_phase(client)
            if "webhook" in self.phases:
                await self.webhook_phase(client)
            if "big" in self.phases:
                await self.webhook_phase(client, BIG_BODY_BYTES, self.big_requests)

    async def distinct_phase(self, client: httpx.AsyncClient) -> None:
        text = TRACEBACK.read_text()
        distinct = [
            report_call(text.replace(TRACEBACK_EXCEPTION, f"{TRACEBACK_EXCEPTION}{i}"))
            for i in range(self.requests)
        ]
        before = await metrics_jobs(client)
        await self.phase(client, "POST /diagnose distinct", distinct)
        after = await metrics_jobs(client)
        made = sum(after.values()) - sum(before.values())
        ended = ended_jobs(after) - ended_jobs(before)
        self.notes.append(
            f"distinct reports: {made} new jobs for {self.requests} requests; "
            f"{ended} jobs ended while they arrived"
        )

    async def burst_phase(self, client: httpx.AsyncClient) -> str:
        """`burst` identical crash reports at once → one job; its Finding's id."""
        before = sum((await metrics_jobs(client)).values())
        since = datetime.now(UTC).isoformat()
        calls = [report_call(CRASH.read_text())] * self.burst
        name = f"burst of {self.burst} identical"
        result = await self.phase(client, name, calls, self.burst, keep=True)
        accepted = [a for a in result.answers if isinstance(a, dict) and "job_id" in a]
        job_ids = {answer["job_id"] for answer in accepted}
        new = sum(1 for answer in accepted if not answer["attached"])
        made = sum((await metrics_jobs(client)).values()) - before
        job = await wait_job(client, next(iter(job_ids)))
        page = (await client.get("/findings", params={"since": since, "limit": 100})).json()
        ok = (
            len(job_ids) == 1 and new == 1 and made == 1 and job["occurrences"] == self.burst
            and len(page["items"]) == 1 and page["items"][0]["job_id"] == job["id"]
        )  # fmt: skip
        self.notes.append(
            f"burst: {self.burst} answers ({result.codes()}) carry {len(job_ids)} job id(s), "
            f"{new} not attached; jobs made (diagnoser_jobs): {made}; that job: "
            f"{job['state']}, occurrences {job['occurrences']}; findings since the burst: "
            f"{len(page['items'])} → {'OK' if ok else 'NOT OK'}: one investigation, "
            f"{job['occurrences'] - 1} occurrences attached"
        )
        print(self.notes[-1], flush=True)
        return str(job["finding_id"])

    async def webhook_phase(
        self, client: httpx.AsyncClient, size: int = 0, count: int | None = None
    ) -> None:
        """Signed GitHub `issues` deliveries, each a new id and a new crash."""
        issue = json.loads(GITHUB_ISSUE.read_text())
        tag = f"s{size}x"
        calls = [
            github_call(distinct_issue(issue, i, tag, size), i)
            for i in range(count or self.requests)
        ]
        label = f" {len(calls[0].body or b'') / (1 << 20):.1f} MiB" if size else ""
        await self.phase(client, f"POST /webhooks/github{label}", calls)


def table(bench: Bench, workers: int) -> str:
    postgres = bench.postgres is not None
    split = workers > 1  # the supervisor (jobs) apart from the web workers
    rows = [
        "| phase | requests | concurrency | req/s | p50 ms | p99 ms | statuses | server CPU "
        "ms/req |" + (" of which jobs (supervisor) |" if split else "")
        + (" PostgreSQL CPU ms/req |" if postgres else "")
        + " client CPU ms/req | server RSS peak MB |",
        "|---|---|---|---|---|---|---|---|---|---|" + ("---|" if split else "")
        + ("---|" if postgres else ""),
    ]  # fmt: skip
    for r in bench.results:
        rows.append(
            f"| {r.name} | {r.count} | {r.concurrency} "
            f"| {r.rate:.0f} | {r.percentile(50) * 1000:.1f} | {r.percentile(99) * 1000:.1f} "
            f"| {r.codes()} | {r.server_cpu / r.count * 1000:.2f} "
            + (f"| {r.root_cpu / r.count * 1000:.2f} " if split else "")
            + (f"| {r.postgres_cpu / r.count * 1000:.2f} " if postgres else "")
            + f"| {r.client_cpu / r.count * 1000:.2f} | {r.rss_kb / 1024:.0f} |"
        )  # fmt: skip
    for r in bench.results:
        if r.timers:
            rows += ["", f"{r.name}, server timers:", "", TIMER_HEADER, "|---|---|---|---|"]
            rows += r.timers
    return "\n".join(rows)


TIMER_HEADER = "| function | calls/req | CPU ms/req | wall ms/req |"


# ---- main ---------------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    cli.add_argument("--requests", type=int, default=2000, help="N per phase (2000)")
    cli.add_argument("--concurrency", type=int, default=32, help="C requests in flight (32)")
    cli.add_argument("--burst", type=int, default=1000, help="identical reports at once (1000)")
    cli.add_argument("--big-requests", type=int, default=100, help="2 MiB webhooks (100)")
    cli.add_argument("--port", type=int, default=8790)
    cli.add_argument(
        "--workers", type=int, default=1,
        help="web worker processes of the server (diagnoser serve --workers; 1)",
    )  # fmt: skip
    cli.add_argument(
        "--client", choices=["raw", "httpx"], default="raw",
        help="the load's HTTP client: keep-alive connections on asyncio streams, or httpx",
    )  # fmt: skip
    cli.add_argument(
        "--phases", default=",".join(sorted(PHASES)),
        help="comma-separated subset of: " + ", ".join(sorted(PHASES)) + " (all)",
    )  # fmt: skip
    cli.add_argument(
        "--profile", choices=["timers", "cpu", "wall"],
        help="run the server under bench/service_profile.py: timers on the request path "
        "(printed per phase), or cProfile by CPU or wall time (--profile-out)",
    )  # fmt: skip
    cli.add_argument(
        "--profile-out", type=Path, default=CACHE / "service_profile.out",
        help="where the server writes its profile (%(default)s)",
    )  # fmt: skip
    return cli


def main() -> int:
    cli = parser()
    args = cli.parse_args()
    if unknown := set(args.phases.split(",")) - PHASES:
        cli.error(f"unknown phase(s): {', '.join(sorted(unknown))}")
    if args.profile and args.workers > 1:
        cli.error("--profile runs one server process: use it with --workers 1")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)  # the burst's connections
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8 * args.burst)), hard))
    started = datetime.now(UTC)
    profile = (args.profile, args.profile_out) if args.profile else None
    args.profile_out.parent.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="diagnoser-bench-") as tmp,
        database(args.database) as url,
        server(args.port, url, Path(tmp), profile, args.workers) as process,
    ):
        base = f"http://127.0.0.1:{args.port}"
        ready = wait_ready(base, process)
        with Memory(process.pid) as memory:
            bench = Bench(
                args.port, args.requests, args.concurrency, args.burst, args.big_requests, memory,
                phases=frozenset(args.phases.split(",")), client_kind=args.client,
                timers=args.profile_out if args.profile == "timers" else None,
                postgres=url.rsplit("/", 1)[1] if url else None,
            )  # fmt: skip
            asyncio.run(bench.run())
            pids = tree(process.pid)
            hwm = sum(status_kb(pid, "VmHWM") for pid in pids)
    load_average = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\n{started:%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, database {args.database}, "
          f"{args.workers} web worker(s), ready after {ready:.1f} s, "
          f"load average at the end {load_average}")  # fmt: skip
    print(table(bench, args.workers))
    for note in bench.notes:
        print(f"- {note}")
    print(f"- server VmHWM at the end: {hwm / 1024:.0f} MB over {len(pids)} process(es)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
