"""Intake: trace-parse throughput, and how often a gold file is among a report's mapped frames.

    .venv/bin/python bench/intake_bench.py [--megabytes 8]

1. Throughput: the trace fixtures (tests/fixtures/traces/) and the developer benchmark's
   100 problem statements, repeated to about --megabytes of text, through `parse_traces`
   (MB/s, in process, best of 3).
2. Mapping: for the developer-benchmark cases with a traceback whose sources are in
   bench/.cache/devbench/src/ (../shared/bench/get_sources.sh), `build_report` maps the
   report's frames onto the release's files; a hit is a gold file among the in-app frames.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from diagnoser.intake.intake import build_report
from diagnoser.intake.report import ReportIn
from diagnoser.intake.traces import parse_traces
from repomap.files import walk_files

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import focus  # noqa: E402

FIXTURES = HERE.parent / "tests" / "fixtures" / "traces"
RUNS = 3


def throughput(megabytes: float) -> tuple[float, int]:
    samples = [p.read_text(errors="replace") for p in sorted(FIXTURES.glob("*")) if p.is_file()]
    samples += [case["problem_statement"] for case in focus.load_cases()]
    block = "\n\n".join(samples)
    text = block * max(1, int(megabytes * 1_000_000 / max(len(block), 1)))
    best = float("inf")
    found = 0
    for _ in range(RUNS):
        started = time.perf_counter()
        found = len(parse_traces(text))
        best = min(best, time.perf_counter() - started)
    return len(text) / 1_000_000 / best, found


def mapping(src: Path) -> tuple[int, int, int]:
    """(cases with a traceback and sources, cases with a gold file in the mapped frames,
    cases where any frame mapped in-app)."""
    cases = [c for c in focus.load_cases() if c["has_traceback"] and (src / c["root"]).is_dir()]
    files_of: dict[str, list[str]] = {}
    hits = mapped_any = 0
    for case in cases:
        if case["root"] not in files_of:
            files_of[case["root"]] = [f.path for f in walk_files(src / case["root"]).files]
        report = build_report(
            ReportIn(text=case["problem_statement"]), files=files_of[case["root"]]
        )
        paths = {f.repo_path for f in report.frames if f.in_app}
        hits += bool(paths & set(case["gold_files"]))
        mapped_any += bool(paths)
    return len(cases), hits, mapped_any


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--megabytes", type=float, default=8.0)
    cli.add_argument("--src", type=Path, default=HERE / ".cache" / "devbench" / "src")
    args = cli.parse_args()
    rate, found = throughput(args.megabytes)
    print(f"parse_traces: {rate:.1f} MB/s over ~{args.megabytes:g} MB ({found} traces found)")
    cases, hits, mapped_any = mapping(args.src)
    print(
        f"developer benchmark, {cases} cases with a traceback: gold file among mapped in-app "
        f"frames in {hits}; any frame mapped in {mapped_any}"
    )


if __name__ == "__main__":
    main()
