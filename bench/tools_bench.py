"""How fast are the four read-only tools, and how much text do they return? Beside ripgrep.

    bash bench/setup.sh                      # Django 5.2.8 sdist + ripgrep
    .venv/bin/python bench/tools_bench.py [--root bench/.cache/django-5.2.8] [--repeat 15]

Builds a `Workspace` over the root (repo-map index cached in bench/.cache/tools-home),
warms it (index, file list, every call once, every rg search once) and then times a
realistic set of grep / find_symbol / read_range / list_dir calls in this process: wall
time of the call plus `render()`, p50 and p90 over --repeat runs. Every grep is paired
with the same search by `rg` (a subprocess over the same root, equivalent flags, its
default threads, no ignore files above the root), timed alternately with ours so machine
noise hits both alike; matching lines are compared (our `total` against the sum of
`rg --count`). Prints a markdown table, the characters returned per tool, the issue's
p50 targets, and, where the counts differ, which files only one of the two searches.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from diagnoser.tools import GrepResult, find_symbol, grep, list_dir, read_range
from diagnoser.workspace import Workspace

HERE = Path(__file__).parent
CACHE = HERE / ".cache"
HOME = CACHE / "tools-home"
RG = "rg"
RG_BASE = (RG, "--no-config", "--no-ignore-parent")
"""Like our walk, rg reads no config and no .gitignore above the root (the corpus sits
inside this project, whose .gitignore would otherwise hide e.g. *.egg-info from rg)."""
QUERY_FILE = "django/db/models/query.py"
DB_GLOB = "django/db/**"
MS = 1000.0
SHOWN_GROUPS = 4
"""Folders named when saying where the two file sets differ."""

Run = Callable[[Workspace], object]


@dataclass(frozen=True, slots=True)
class Search:
    """One grep's arguments; `rg_args` gives ripgrep's equivalent."""

    pattern: str
    fixed: bool = False
    path_glob: str | None = None
    context: int = 0

    def ours(self, ws: Workspace) -> GrepResult:
        return grep(
            ws, self.pattern, fixed=self.fixed, path_glob=self.path_glob, context=self.context
        )

    def rg_args(self, *, count: bool = False) -> list[str]:
        args = [*RG_BASE, "-i"]
        args += ["-c"] if count else ["-n"]
        if self.fixed:
            args.append("-F")
        if self.path_glob:
            args += ["-g", self.path_glob]
        if self.context and not count:
            args += ["-C", str(self.context)]
        return [*args, "-e", self.pattern, "."]


@dataclass(frozen=True, slots=True)
class Call:
    label: str
    target: str
    """Which of the issue's targets applies: grep literal | grep regex | find_symbol | ..."""
    run: Run
    search: Search | None = None


@dataclass(slots=True)
class Timing:
    call: Call
    ours: list[float] = field(default_factory=list)
    rg: list[float] = field(default_factory=list)
    chars: int = 0
    ours_matches: int | None = None
    rg_matches: int | None = None
    rg_counts: dict[str, int] = field(default_factory=dict)


TARGETS_MS: dict[str, float] = {
    "grep literal": 150.0,
    "grep regex": 150.0,
    "find_symbol": 5.0,
    "read_range": 5.0,
    "list_dir": 20.0,
}
"""p50 targets from the issue (every call of the kind must meet it)."""


def searched(label: str, search: Search) -> Call:
    kind = "grep literal" if search.fixed else "grep regex"
    return Call(label, kind, search.ours, search)


def symbol(name: str) -> Call:
    return Call(f"find_symbol {name}", "find_symbol", lambda ws: find_symbol(ws, name))


def window(start: int, end: int) -> Call:
    label = f"read_range query.py {start}-{end}"
    return Call(label, "read_range", lambda ws: read_range(ws, QUERY_FILE, start, end))


def listing(path: str, depth: int) -> Call:
    label = f"list_dir {path} depth {depth}"
    return Call(label, "list_dir", lambda ws: list_dir(ws, path, depth=depth))


CALLS: tuple[Call, ...] = (
    searched("grep -F REPR_OUTPUT_SIZE", Search("REPR_OUTPUT_SIZE", fixed=True)),
    searched("grep -F select_related", Search("select_related", fixed=True)),
    searched("grep -F no_such_name_xyz (miss)", Search("no_such_name_xyz", fixed=True)),
    searched(
        "grep -F -C2 _result_cache = None", Search("_result_cache = None", fixed=True, context=2)
    ),
    searched(r"grep def _fetch_all\(", Search(r"def _fetch_all\(")),
    searched(r"grep class \w+QuerySet", Search(r"class \w+QuerySet")),
    searched(r"grep raise \w+Error\(", Search(r"raise \w+Error\(")),
    searched(rf"grep def as_sql\( -g {DB_GLOB}", Search(r"def as_sql\(", path_glob=DB_GLOB)),
    symbol("QuerySet"),
    symbol("QuerySet.filter"),
    symbol("_fetch_all"),
    symbol("Field.deconstruct"),
    symbol("QuerySett"),
    window(1940, 1979),
    window(279, 428),
    listing(".", 1),
    listing("django/db", 1),
    listing("django", 2),
)


def run_rg(args: list[str], root: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        args, cwd=root, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False
    )
    if done.returncode > 1:  # 1 = no match
        raise SystemExit(f"failed: {' '.join(args)}\n{done.stderr[-2000:]}")
    return done


def rg_counts(search: Search, root: Path) -> dict[str, int]:
    """Matching lines per file, as ripgrep counts them (`rg -c`)."""
    counts: dict[str, int] = {}
    for line in run_rg(search.rg_args(count=True), root).stdout.splitlines():
        path, _, number = line.rpartition(":")
        counts[path.removeprefix("./")] = int(number)
    return counts


def rg_files(root: Path) -> set[str]:
    listed = run_rg([*RG_BASE, "--files", "."], root).stdout.splitlines()
    return {path.removeprefix("./") for path in listed}


def time_ours(call: Call, ws: Workspace) -> tuple[float, str]:
    started = time.perf_counter()
    text = str(call.run(ws))
    return time.perf_counter() - started, text


def time_rg(search: Search, root: Path) -> float:
    started = time.perf_counter()
    run_rg(search.rg_args(), root)
    return time.perf_counter() - started


def warm_up(ws: Workspace, root: Path) -> None:
    ws.repository.index.find("QuerySet")
    _ = ws.files
    for call in CALLS:
        call.run(ws)
        if call.search:
            run_rg(call.search.rg_args(), root)


def measure(call: Call, ws: Workspace, root: Path, repeat: int) -> Timing:
    timing = Timing(call)
    for _ in range(repeat):
        seconds, text = time_ours(call, ws)
        timing.ours.append(seconds)
        timing.chars = len(text)
        if call.search:
            timing.rg.append(time_rg(call.search, root))
    if call.search:
        timing.ours_matches = call.search.ours(ws).total
        timing.rg_counts = rg_counts(call.search, root)
        timing.rg_matches = sum(timing.rg_counts.values())
    return timing


def p50(samples: list[float]) -> float:
    return statistics.median(samples) * MS


def p90(samples: list[float]) -> float:
    if len(samples) < 2:
        return samples[0] * MS
    return statistics.quantiles(samples, n=10, method="inclusive")[-1] * MS


def table(timings: list[Timing]) -> str:
    lines = [
        "| call | ours p50 ms | ours p90 ms | rg p50 ms | ours/rg | chars returned "
        "| matches ours/rg |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in timings:
        rg_ms = f"{p50(t.rg):.1f}" if t.rg else "—"
        ratio = f"{p50(t.ours) / p50(t.rg):.2f}×" if t.rg else "—"
        matches = "—"
        if t.rg_matches is not None:
            flag = "" if t.ours_matches == t.rg_matches else " ≠"
            matches = f"{t.ours_matches}/{t.rg_matches}{flag}"
        lines.append(
            f"| `{t.call.label}` | {p50(t.ours):.2f} | {p90(t.ours):.2f} | {rg_ms} | {ratio} "
            f"| {t.chars} | {matches} |"
        )
    return "\n".join(lines)


def tool_of(call: Call) -> str:
    return call.target.split()[0]


def chars_per_tool(timings: list[Timing]) -> str:
    by_tool: dict[str, list[int]] = {}
    for t in timings:
        by_tool.setdefault(tool_of(t.call), []).append(t.chars)
    parts = [
        f"{tool} {statistics.mean(chars):.0f} ({len(chars)} calls)"
        for tool, chars in by_tool.items()
    ]
    return "Average characters returned per call: " + ", ".join(parts)


def targets(timings: list[Timing]) -> str:
    lines = ["| target | p50 ≤ ms | worst p50 ms (call) | met |", "|---|---|---|---|"]
    for kind, limit in TARGETS_MS.items():
        chosen = [t for t in timings if t.call.target == kind]
        worst = max(chosen, key=lambda t: p50(t.ours))
        met = all(p50(t.ours) <= limit for t in chosen)
        lines.append(
            f"| {kind} | {limit:.0f} | {p50(worst.ours):.2f} (`{worst.call.label}`) "
            f"| {'yes' if met else 'NO'} |"
        )
    return "\n".join(lines)


def group(paths: set[str]) -> str:
    """`n files: top folders (count)`, folders at most two levels deep."""
    folders = Counter("/".join(p.split("/")[:-1][:2]) or "." for p in paths)
    shown = ", ".join(f"{name} ({n})" for name, n in folders.most_common(SHOWN_GROUPS))
    more = f", +{len(folders) - SHOWN_GROUPS} more folders" if len(folders) > SHOWN_GROUPS else ""
    return f"{len(paths)} files: {shown}{more}" if paths else "0 files"


def differences(timings: list[Timing], ws: Workspace, root: Path) -> str:
    ours = set(ws.file_paths)
    theirs = rg_files(root)
    lines = [
        f"File sets: we walk {len(ours)} files, rg searches {len(theirs)}.",
        f"- only ours (hidden files rg skips): {group(ours - theirs)}",
        f"- only rg (.egg-info, vendor/build dirs, minified files we skip): {group(theirs - ours)}",
    ]
    for t in timings:
        if t.rg_matches is None or t.ours_matches == t.rg_matches:
            continue
        outside = {p: n for p, n in t.rg_counts.items() if p not in ours}
        shared = t.rg_matches - sum(outside.values())
        where = ", ".join(f"{p} ({n})" for p, n in sorted(outside.items())[:SHOWN_GROUPS])
        lines.append(
            f"- `{t.call.label}`: ours {t.ours_matches}, rg {t.rg_matches}; "
            f"rg in files we also walk {shared} (difference {(t.ours_matches or 0) - shared:+d})"
            + (f"; rg-only files: {where}" if outside else "")
        )
    return "\n".join(lines)


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--root", type=Path, default=CACHE / "django-5.2.8")
    cli.add_argument("--repeat", type=int, default=15)
    args = cli.parse_args()
    root = args.root.resolve()
    ws = Workspace(root, home=HOME)
    warm_up(ws, root)
    timings = [measure(call, ws, root, args.repeat) for call in CALLS]
    rg_version = run_rg([RG, "--version"], root).stdout.splitlines()[0]
    print(
        f"{root.name}: {len(ws.files)} files walked, warm index, {args.repeat} runs per call "
        f"(call + render, in process); {rg_version} as a subprocess, {os.cpu_count()} cores\n"
    )
    print(table(timings))
    print()
    print(chars_per_tool(timings))
    print()
    print(targets(timings))
    print()
    print(differences(timings, ws, root))


if __name__ == "__main__":
    main()
