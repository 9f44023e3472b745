"""Peak memory and time of the `diagnoser` command on hostile input (issue 9, part 3).

    .venv/bin/python bench/hostile_bench.py [--baseline COMMIT]

Each case is one fresh `python -m diagnoser diagnose …` process against the demo app,
its peak RSS read from `wait4` (the process itself; nothing here starts parse workers).
With `--baseline`, the same cases run on that commit's code too (a `git worktree` in the
ignored `bench/.cache/`), alternating, so both see the same machine. Every process runs
under a 4 GiB address-space limit, so the old code's unbounded reads fail fast
instead of taking the machine's memory. Inputs are generated into `bench/.cache/hostile/`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache"
INPUTS = CACHE / "hostile"
ADDRESS_SPACE_LIMIT = 4 << 30
"""Bytes of address space each process may map (the old code reads /dev/zero until it dies)."""
MB = 1 << 20


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]


def make_inputs() -> list[Case]:
    """The hostile inputs of the issue, generated once."""
    INPUTS.mkdir(parents=True, exist_ok=True)
    sparse = INPUTS / "one_gigabyte.log"
    if not sparse.exists():  # a sparse file: 1 GB to read, nothing on disk
        with sparse.open("wb") as out:
            out.truncate(1 << 30)
    frames_text = INPUTS / "frames_2mb.log"
    if not frames_text.exists():
        line = '  File "backend/notes/store.py", line 42, in page\n'
        body = "Traceback (most recent call last):\n" + line * (1_990_000 // len(line))
        frames_text.write_text(body + "IndexError: list index out of range\n")
    bugsnag = INPUTS / "bugsnag_96mb.json"
    if not bugsnag.exists():
        frame = {"file": "backend/notes/store.py", "lineNumber": 42, "method": "page"}
        frames = [dict(frame, lineNumber=i) for i in range(1_150_000)]
        error = {"exceptionClass": "IndexError", "message": "x", "stackTrace": frames}
        bugsnag.write_text(json.dumps({"error": error}))
    sentry = INPUTS / "sentry_40mb.json"
    if not sentry.exists():
        values = [{"type": "ValueError", "value": "v" * 64} for _ in range(400_000)]
        sentry.write_text(json.dumps({"exception": {"values": values}, "event_id": "e"}))
    near_limit = {  # just under the 5 MB JSON limit: accepted, so fully processed
        "bugsnag_near_limit.json": lambda: {
            "error": {
                "exceptionClass": "IndexError",
                "stackTrace": [{"file": f"f{i}.py", "lineNumber": i} for i in range(95_000)],
            }
        },
        "sentry_near_limit.json": lambda: {
            "event_id": "e",
            "exception": {"values": [{"type": "E", "value": "v" * 20} for _ in range(95_000)]},
        },
        "strings_near_limit.json": lambda: {
            "exception": {"values": [{"type": "E", "value": "x"}]},
            "tags": ["ab"] * 800_000,
        },
    }
    for name, build in near_limit.items():
        if not (INPUTS / name).exists():
            (INPUTS / name).write_text(json.dumps(build()))
    deep = INPUTS / "deep_10000.json"
    if not deep.exists():
        deep.write_text("[" * 10_000 + "]" * 10_000)
    sample = ROOT / "sample_reports" / "reports" / "issue_load_more_500.md"
    return [
        Case("sample crash report (reference)", (str(sample),)),
        Case("1 GB report file", (str(sparse),)),
        Case("/dev/zero as the report", ("/dev/zero",)),
        Case("2 MB of Python frame lines", (str(frames_text),)),
        Case("96 MB of Bugsnag frames", (str(bugsnag), "--provider", "bugsnag")),
        Case("40 MB of Sentry exception values", (str(sentry), "--provider", "sentry")),
        Case("JSON nested 10,000 deep", (str(deep), "--provider", "sentry")),
        Case(
            "~4.5 MB of Bugsnag frames",
            (str(INPUTS / "bugsnag_near_limit.json"), "--provider", "bugsnag"),
        ),
        Case(
            "~4.5 MB of Sentry exception values",
            (str(INPUTS / "sentry_near_limit.json"), "--provider", "sentry"),
        ),
        Case(
            "~4.5 MB of short strings in Sentry tags",
            (str(INPUTS / "strings_near_limit.json"), "--provider", "sentry"),
        ),
    ]


@dataclass(frozen=True)
class Measured:
    code: int
    peak_mb: float
    seconds: float
    said: str


def run(source: Path, case: Case, home: Path) -> Measured:
    env = {**os.environ, "DIAGNOSER_HOME": str(home), "PYTHONPATH": str(source)}
    command = [sys.executable, "-m", "diagnoser", "diagnose", "--quiet", *case.args]
    started = time.perf_counter()
    with open(os.devnull, "wb") as sink, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            command,
            cwd=source,
            env=env,
            stdout=sink,
            stderr=err,
            preexec_fn=_limit,  # noqa: PLW1509 (this script runs no threads)
        )
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").strip().splitlines()
    return Measured(process.returncode, usage.ru_maxrss / 1024, seconds, lines[-1] if lines else "")


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))


def baseline_source(commit: str) -> Path:
    target = CACHE / f"baseline-{commit[:12]}"
    if not target.exists():
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(target), commit], cwd=ROOT, check=True
        )
    return target


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--baseline", help="also run this commit's code, side by side")
    args = cli.parse_args()
    sources = {"now": ROOT}
    if args.baseline:
        sources["before"] = baseline_source(args.baseline)
    cases = make_inputs()
    print(f"run at {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    header = " | ".join(f"{label} exit | {label} peak MB | {label} s" for label in sources)
    print(f"| input | {header} | now says |")
    print("|---|" + "---|---|---|" * len(sources) + "---|")
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        for source in sources.values():  # warm the index cache: measure intake, not parsing
            run(source, cases[0], home)
        for case in cases:
            results = {label: run(source, case, home) for label, source in sources.items()}
            cells = " | ".join(
                f"{r.code} | {r.peak_mb:.0f} | {r.seconds:.2f}" for r in results.values()
            )
            said = results["now"].said.replace("|", "\\|")[:90]
            print(f"| {case.name} | {cells} | {said} |", flush=True)


if __name__ == "__main__":
    main()
