"""Indexing a new commit's snapshot against re-indexing its changed files (issue 25 §2).

    PYTHONPATH=$PWD .venv/bin/python bench/snapshot_bench.py --source DJANGO_TREE
        [--changed 20] [--rounds 3]

`DJANGO_TREE` is an unpacked source release (e.g. bench/.cache/snap/Django-4.2, from
`pip download --no-deps --no-binary :all: django==4.2`). The bench makes a git repository
of it (commit A) in a temporary folder, then per round a commit changing `--changed`
Python files (a function appended to each), and measures, side by side:

- **seeded**: the new commit's snapshot (`diagnoser.mirror`) indexed with the previous
  snapshot as its seed — what the service does for a report naming a new release;
- **incremental**: the same edits made in place in a working copy whose index is warm,
  then indexed again — re-indexing just those files, the goal's yardstick;
- **cold**: the first snapshot, indexed from nothing (once).

Goal: seeded ≤ 2× incremental. Also shown: making the snapshot (`git archive` → a
read-only tree), which the seeded build follows.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT)]

from diagnoser.mirror import Mirror  # noqa: E402
from repomap.build import build  # noqa: E402

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.invalid", "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.invalid", "PATH": "/usr/bin:/bin",
}  # fmt: skip


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=root, env=GIT_ENV, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def edit(tree: Path, files: list[str], round_: int) -> None:
    for n, rel in enumerate(files):
        with (tree / rel).open("a") as out:
            out.write(f"\n\ndef _snapshot_bench_{round_}_{n}(value):\n    return value + {n}\n")


def timed(work: object) -> tuple[float, object]:
    started = time.perf_counter()
    result = work()  # type: ignore[operator]
    return time.perf_counter() - started, result


def main(argv: list[str] | None = None) -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--source", type=Path, required=True)
    cli.add_argument("--changed", type=int, default=20)
    cli.add_argument("--rounds", type=int, default=3)
    args = cli.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="snapshot-bench-") as tmp_name:
        tmp = Path(tmp_name)
        origin, working, home = tmp / "origin", tmp / "working", tmp / "home"
        shutil.copytree(args.source, origin)
        git(origin, "init", "-q", "-b", "main")
        git(origin, "add", "-A")
        git(origin, "commit", "-q", "-m", "A")
        python = sorted(p for p in git(origin, "ls-files", "*.py").splitlines() if "/" in p)
        step = max(1, len(python) // args.changed)
        files = python[::step][: args.changed]
        mirror = Mirror("django", f"file://{origin}", home / "git", budget_bytes=1 << 40)
        previous = mirror.snapshot(mirror.resolve(None).commit)
        cold_seconds, cold = timed(lambda: build(previous, home=home))
        shutil.copytree(origin, working, ignore=shutil.ignore_patterns(".git"))
        build(working, home=home)  # warm: the incremental yardstick starts from here
        rows = []
        for round_ in range(args.rounds):
            edit(origin, files, round_)
            git(origin, "commit", "-q", "-am", f"round {round_}")
            commit = mirror.resolve(git(origin, "rev-parse", "HEAD")).commit  # fetched
            snap_seconds, snapshot = timed(lambda c=commit: mirror.snapshot(c))  # type: ignore[misc]
            seeded_seconds, seeded = timed(
                lambda s=snapshot, p=previous: build(s, home=home, seed=p)  # type: ignore[misc]
            )
            edit(working, files, round_)
            incremental_seconds, incremental = timed(lambda: build(working, home=home))
            rows.append((snap_seconds, seeded_seconds, incremental_seconds, seeded, incremental))
            print(
                f"round {round_}: snapshot {snap_seconds:.2f} s; seeded {seeded_seconds:.2f} s "
                f"(parsed {seeded.stats.parsed}, reused {seeded.stats.reused}); incremental "  # type: ignore[attr-defined]
                f"{incremental_seconds:.2f} s (parsed {incremental.stats.parsed})",  # type: ignore[attr-defined]
                flush=True,
            )
            previous = snapshot
    seeded_median = statistics.median(r[1] for r in rows)
    incremental_median = statistics.median(r[2] for r in rows)
    print()
    print(f"files: {cold.stats.files} mapped; changed per commit: {len(files)}")  # type: ignore[attr-defined]
    print("| build | seconds (median of rounds) |")
    print("|---|---|")
    print(f"| cold, first snapshot | {cold_seconds:.2f} (once) |")
    print(f"| snapshot of a new commit (git archive → read-only tree) | "
          f"{statistics.median(r[0] for r in rows):.2f} |")  # fmt: skip
    print(
        f"| **seeded**: the new snapshot's index, the previous one as seed | {seeded_median:.2f} |"
    )
    print(f"| **incremental**: the same edits in place, warm index | {incremental_median:.2f} |")
    print(f"\nseeded / incremental: {seeded_median / incremental_median:.2f}× (goal ≤ 2×)")


if __name__ == "__main__":
    main()
