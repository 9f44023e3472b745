"""Peak memory of a diagnosis on a 10,000- and a 20,000-file repository (issue 23).

    bash ../shared/bench/get_sources.sh bench/.cache/devbench Django   # once, ~2 min
    .venv/bin/python bench/memory_bench.py [--files 10000 20000] [--report FILE]

The repository is real code, not generated: by default the Django releases under
`bench/.cache/devbench/src/` side by side in one folder (`bench/.cache/memory/tree-N/
<release>/…`, hard links), their mapped files in release and path order until N —
each release is ~2,600 mapped files, so 20,000 takes eight. Eight copies of one project
define every name up to eight times, which multiplies the reference graph's edges; for
a tree without that, `--sources` takes other folders in order, e.g. the ansible 9.0.1
sdist (15,437 mapped files, 258 MB of Python) then two Django releases:

    .venv/bin/python bench/memory_bench.py --sources bench/.cache/ansible/ansible-9.0.1 \
        bench/.cache/devbench/src/Django-4.2a1 bench/.cache/devbench/src/Django-4.1

Every run is a fresh process, measured four ways:

- **CLI cold / warm**: `python -m diagnoser diagnose --repo TREE REPORT` with an empty
  `DIAGNOSER_HOME` (the index is built: parsed in a process pool, cached), then again
  (the cache is read). Peak RSS of that process from `wait4` (its parse workers are
  children of the fork server and not counted: each holds one chunk of files);
- **service cold / warm**: a real `diagnoser serve` (one process, SQLite, offline) sent the
  report by `POST /diagnose` (then polled until its Finding is there), with an empty
  data directory (its first report builds the index) and again on the same one; the
  resident set it holds once it has answered (VmRSS: what stays) and its peak (VmHWM).
  Parse workers are not counted; each run has a fresh database, so the second is not
  answered as a duplicate of the first.

The report (default: the first Django case with a traceback in the developer benchmark,
django__django-10554) runs offline (no model configured). Prints one table row per
(N, mode) and the cost per 10,000 files between the two sizes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from repomap.files import walk_files

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache"
SOURCES = CACHE / "devbench" / "src"
TREES = CACHE / "memory"
CASES = Path(__file__).resolve().parents[2] / "shared" / "bench" / "cases.jsonl"
CASE = "django__django-10554"
MB = 1 << 20
SERVICE_WAIT_S = 600
"""How long the service may take to start, and to answer a report (cold: it indexes)."""


def make_tree(files: int, sources: list[Path]) -> Path:
    """A folder of `files` mapped files: the `sources` (default: the Django releases)
    side by side, hard links, in order until there are enough."""
    releases = sources or sorted(p for p in SOURCES.glob("Django-*") if p.is_dir())
    label = "" if not sources else "-" + "-".join(p.name for p in sources)
    tree = TREES / f"tree-{files}{label}"
    if tree.exists():
        return tree
    TREES.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=TREES, prefix=".partial-"))
    left = files
    for release in releases:
        for entry in walk_files(release, mapped_only=True).files[:left]:
            target = scratch / release.name / entry.path
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(release / entry.path, target)
            left -= 1
        if not left:
            break
    if left:
        shutil.rmtree(scratch)
        raise SystemExit(f"only {files - left} files under {SOURCES}: fetch more releases")
    scratch.rename(tree)
    return tree


def report_file(given: str | None) -> Path:
    if given:
        return Path(given)
    path = TREES / f"{CASE}.txt"
    if not path.exists():
        for line in CASES.read_text().splitlines():
            case = json.loads(line)
            if case["id"] == CASE:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(case["problem_statement"])
    return path


def _environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIAGNOSER_")}
    return {**env, "DIAGNOSER_HOME": str(home), "PYTHONPATH": str(ROOT)}


def cli_peak(tree: Path, report: Path, home: Path) -> float:
    """Peak RSS (MB) of one `diagnoser diagnose` process."""
    command = [sys.executable, "-m", "diagnoser", "diagnose", "--quiet", "--repo", str(tree)]
    process = subprocess.Popen(
        [*command, str(report)], env=_environment(home), stdout=subprocess.DEVNULL, cwd=ROOT
    )
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise SystemExit(f"diagnose exited {process.returncode}")
    return usage.ru_maxrss / 1024  # Linux: kB


def service_memory(tree: Path, report: Path, home: Path) -> tuple[float, float]:
    """(held, peak) RSS in MB of a real `diagnoser serve` (one process: it answers and runs
    the jobs) that is sent `report` by `POST /diagnose` and has made its Finding:
    VmRSS once it has answered (what it keeps), VmHWM (its peak). Its database lives in
    `home` with the index cache, so a second run on the same `home` starts warm."""
    port = _free_port()
    database = tempfile.mkdtemp(dir=home)  # a fresh one: no earlier job answers as a duplicate
    settings = {
        "DIAGNOSER_REPOS": f"big={tree}",
        "DIAGNOSER_DATABASE_URL": f"sqlite:///{database}/service.db",
    }
    with (home / "serve.log").open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "api.cli", "serve", "--port", str(port)],
            env={**_environment(home), **settings}, cwd=ROOT, stdout=log, stderr=log,
        )  # fmt: skip
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=SERVICE_WAIT_S) as client:
            _wait_listening(client, process)
            answer = client.post(
                "/diagnose", params={"repo": "big"}, content=report.read_bytes(),
                headers={"content-type": "text/plain"},
            )  # fmt: skip
            if answer.status_code != 202:
                raise SystemExit(f"the service answered {answer.status_code}: {answer.text}")
            _wait_done(client, answer.json()["status_url"])
        status = Path(f"/proc/{process.pid}/status").read_text().splitlines()
        fields = dict(line.split(":", 1) for line in status)
        return _kb(fields["VmRSS"]) / 1024, _kb(fields["VmHWM"]) / 1024
    finally:
        process.terminate()
        process.wait(timeout=60)


def _wait_done(client: httpx.Client, status_url: str) -> None:
    """Until the job is over (a cold 20,000-file index takes minutes: past any `?wait=`)."""
    deadline = time.monotonic() + SERVICE_WAIT_S
    while time.monotonic() < deadline:
        state = client.get(status_url).json()["state"]
        if state == "complete":
            return
        if state not in ("queued", "running"):
            raise SystemExit(f"the job ended {state}")
        time.sleep(0.5)
    raise SystemExit("the job did not end")


def _kb(field: str) -> int:
    return int(field.split(maxsplit=1)[0])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_listening(client: httpx.Client, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + SERVICE_WAIT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the service exited {process.returncode}")
        try:
            client.get("/healthz")
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise SystemExit("the service did not start")


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--files", type=int, nargs="+", default=[10_000, 20_000])
    cli.add_argument("--report", help="report file (default: a Django case with a trace)")
    cli.add_argument(
        "--sources", type=Path, nargs="+", default=[],
        help="source trees to take files from, in order (default: the Django releases)",
    )  # fmt: skip
    args = cli.parse_args()
    report = report_file(args.report)
    rows: dict[int, dict[str, float]] = {}
    print("files   CLI cold  CLI warm  service cold held/peak  service warm held/peak  (MB)")
    for files in args.files:
        tree = make_tree(files, args.sources)
        with tempfile.TemporaryDirectory() as cli_home, tempfile.TemporaryDirectory() as home:
            row = {"cli_cold": cli_peak(tree, report, Path(cli_home))}
            row["cli_warm"] = cli_peak(tree, report, Path(cli_home))
            row["svc_cold"], row["svc_cold_peak"] = service_memory(tree, report, Path(home))
            row["svc_warm"], row["svc_warm_peak"] = service_memory(tree, report, Path(home))
        rows[files] = row
        print(
            f"{files:>6}  {row['cli_cold']:8.0f}  {row['cli_warm']:8.0f}  "
            f"{row['svc_cold']:10.0f} / {row['svc_cold_peak']:<10.0f}  "
            f"{row['svc_warm']:10.0f} / {row['svc_warm_peak']:<10.0f}",
            flush=True,
        )
    if len(rows) >= 2:
        small, large = min(rows), max(rows)
        per = 10_000 / (large - small)
        costs = {k: (rows[large][k] - rows[small][k]) * per for k in rows[small]}
        print("per 10,000 files: " + ", ".join(f"{k} {v:+.0f} MB" for k, v in costs.items()))


if __name__ == "__main__":
    main()
