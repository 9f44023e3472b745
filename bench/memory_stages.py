"""Where a diagnosis's memory goes: RSS after each stage of one offline CLI diagnosis.

    .venv/bin/python bench/memory_stages.py --repo TREE [--report FILE] [--home DIR]

Runs in this process what `diagnoser diagnose` runs, stage by stage — imports, the
walk, the tags and the symbol tables (`Workspace.warm`), the reference graph, the two
BM25 indexes, then the diagnosis itself — and prints the resident set after each and
what each added (freed pages handed back first, as the CLI does) and the highest it
rose while that stage ran (the peak is reset between stages), then the peak. Run
it twice with the same `--home`: the first run builds the caches (cold), the second
reads them (warm). The tree and report of `bench/memory_bench.py` are the usual input.
"""

from __future__ import annotations

import argparse
import gc
import os
import tempfile
import time
from pathlib import Path

DEFAULT_REPORT = Path("bench/.cache/memory/django__django-10554.txt")
"""What `bench/memory_bench.py` writes for its default case."""


def rss_mb(field: str = "VmRSS") -> float:
    """This process's resident set (VmRSS) or its peak (VmHWM), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


def reset_peak() -> None:
    """Start VmHWM again from the current resident set (Linux: `clear_refs` 5)."""
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--report", type=Path, default=DEFAULT_REPORT)
    parser.add_argument("--home", type=Path, default=None)
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="memory-stages-"))
    os.environ["DIAGNOSER_HOME"] = str(home)  # before any import reads it
    from repomap import allocator  # noqa: PLC0415

    allocator.configure()  # as the CLI does
    last, highest = rss_mb(), 0.0
    started = time.perf_counter()

    def stage(name: str) -> None:
        nonlocal last, highest
        peak = rss_mb("VmHWM")
        highest = max(highest, peak)
        gc.collect()
        allocator.release()  # hand freed pages back, as the CLI does
        now, seconds = rss_mb(), time.perf_counter() - started
        print(
            f"{name:<34} {now:8.1f} MB  {now - last:+8.1f}  peak {peak:8.1f}  ({seconds:6.1f} s)",
            flush=True,
        )
        last = now
        reset_peak()

    stage("interpreter")
    # Imported here, after the first reading: what the imports hold is the next stage.
    from diagnoser.commands import _intake  # noqa: PLC0415
    from diagnoser.models import resolve_models  # noqa: PLC0415
    from diagnoser.pipeline import diagnose  # noqa: PLC0415
    from diagnoser.settings import Settings  # noqa: PLC0415
    from diagnoser.term_indexes import term_index, text_index  # noqa: PLC0415
    from diagnoser.workspace import Workspace  # noqa: PLC0415

    stage("imports")
    settings = Settings()
    workspace = Workspace(args.repo, settings)
    workspace.warm()
    stage("walk, tags, symbol tables (warm)")
    repository = workspace.repository
    _ = repository.index
    graph = repository.graph
    stage(f"graph ({graph.uses:,} uses, {graph.edges:,} edges)")
    term_index(repository)
    stage("term index")
    text_index(repository)
    stage("text index")
    intake = _intake(args.report.read_bytes(), None)
    outcome = diagnose(
        intake.report, workspace, models=resolve_models(settings), traces=intake.traces,
        truncated=intake.truncated,
    )  # fmt: skip
    stage(f"diagnosis ({outcome.state.value})")
    print(f"peak {highest:.1f} MB; caches in {home}")


if __name__ == "__main__":
    main()
