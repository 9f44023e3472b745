"""Proof by execution on real bug reports that carry a reproducer (issue 26).

    .venv/bin/python bench/get_extra_sources.py --cases bench/verify_cases \
        --dest bench/.cache/verify
    .venv/bin/python bench/verify_bench.py [--cases DIR] [--only ID] [--json OUT] [--rrf-k K]

For every case of bench/verify_cases/*.jsonl (real reports from pure-Python projects,
prose paraphrased, code verbatim; bench/verify_cases/README.md) whose release is unpacked
under DEST/src/: a runtime — a virtualenv with the release installed from PyPI (its
dependencies) and pytest, made once under DEST/venvs/ — then, in the same run:

- the offline diagnosis without execution, and with `verify` on (the report's reproducer
  run in the sandbox on a throwaway copy of the release's tree, which shadows the
  installed package);
- the plain rankers over the release's non-test files: BM25, and mentions-then-BM25.

It prints the reproduction rate (by status), file Acc@1/5 of each ranking for all cases
and for the reproduced ones, the seconds and CPU seconds of a verification (the
sandboxed runs: reproduction and fix checks), and for repair templates how often one
passed and how often a passing one touches the lines the real fix changed (`gold_lines`).
No weight of ours is chosen on this set; it is in-sample only in the sense that the
templates and the gate were written while it was being collected.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import whatthepatch

from diagnoser import rank_fusion
from diagnoser.finding import Finding, Origin, ReproductionStatus, TestStatus
from diagnoser.intake import ReportIn, Source
from diagnoser.pipeline import diagnose
from diagnoser.settings import Settings
from diagnoser.workspace import Workspace

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import casesets  # noqa: E402
from baselines import rank_of  # noqa: E402
from localize_bench import mentions_ranking, open_release  # noqa: E402

KS = (1, 5)
RANKINGS = {
    "plain": "without execution", "verified": "with execution", "bm25": "BM25",
    "mentions": "mentions",
}  # fmt: skip
"""The rankings compared, by row key: ours twice, the plain rankers of the same run."""
DEFAULT_DEST = HERE / ".cache" / "verify"
RUNTIME_TOOLS = ("pytest",)
"""Installed beside each release: the neighbouring tests of a fix check run with pytest."""


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--cases", action="extend", nargs="+", help="cases files or folders")
    cli.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    cli.add_argument("--only", action="append", default=[], help="only this case id")
    cli.add_argument("--json", type=Path, help="write each case's row here")
    cli.add_argument(
        "--rrf-k", type=int, help=f"the fusion's constant (default {rank_fusion.RRF_K})"
    )
    args = cli.parse_args()
    if args.rrf_k is not None:
        rank_fusion.RRF_K = args.rrf_k
    cases = casesets.load(args.cases or [HERE / "verify_cases"])
    cases = [c for c in cases if not args.only or c["id"] in args.only]
    src, home = args.dest / "src", args.dest / "home"
    rows = []
    for case in cases:
        if not (src / case["root"]).is_dir():
            print(
                f"{case['id']}: no sources under {src} (run get_extra_sources.py)", file=sys.stderr
            )
            continue
        python = runtime(case, args.dest / "venvs")
        rows.append(run_case(case, src / case["root"], home, python))
    print(report(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=sorted) + "\n")


def runtime(case: dict[str, Any], venvs: Path) -> str:
    """A virtualenv with the case's release (and its dependencies) and pytest."""
    folder = venvs / case["root"]
    python = folder / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        wanted = [
            f"{case['package']}=={case['version']}",
            *case.get("requires", []),
            *RUNTIME_TOOLS,
        ]
        subprocess.run([str(python), "-m", "pip", "install", "-q", *wanted], check=True)
    return str(python)


def run_case(case: dict[str, Any], root: Path, home: Path, python: str) -> dict[str, Any]:
    text = case["problem_statement"]
    release = open_release(root, home)
    plain = _files(_diagnose(text, release.workspace))
    verifying = Workspace(root, Settings(verify=True, verify_python=python), home=home)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    finding = _diagnose(text, verifying)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    ranked = release.bm25.rank(text)
    durations = finding.provenance.durations if finding else {}
    tried = finding.reproduction if finding else None
    templates = [c for c in (finding.changes if finding else []) if c.origin is Origin.TEMPLATE]
    row = {
        "id": case["id"],
        "project": case["package"],
        "traceback": case["has_traceback"],
        "gold": sorted(case["gold_files"]),
        "status": tried.status.value if tried else "failed",
        "reason": tried.reason if tried else "",
        "plain": plain,
        "verified": _files(finding),
        "bm25": ranked,
        "mentions": mentions_ranking(release, text, ranked),
        "verify_seconds": durations.get("reproducing", 0.0) + durations.get("testing", 0.0),
        "cpu_seconds": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
        "run_seconds": seconds,
        "templates_passed": len(templates),
        "template_on_gold": any(
            _touches(c.diff or "", case.get("gold_lines", {})) for c in templates
        ),
        "model_changes_tested": sum(
            1
            for c in (finding.changes if finding else [])
            if c.tested.status is not TestStatus.NOT_RUN
        ),
    }
    print(
        f"{case['id']:40s} {row['status']:17s} plain={rank_of(plain, row['gold'])} "
        f"verified={rank_of(row['verified'], row['gold'])} bm25={rank_of(ranked, row['gold'])} "
        f"{row['verify_seconds']:.1f}s templates={len(templates)} — {row['reason'][:90]}",
        file=sys.stderr,
    )
    return row


def _diagnose(text: str, workspace: Workspace) -> Finding | None:
    return diagnose(ReportIn(text=text, source=Source.GITHUB), workspace).finding


def _files(finding: Finding | None) -> list[str]:
    """Distinct files of the Finding, then of its suspects (the benchmark's definition)."""
    if finding is None:
        return []
    return list(
        dict.fromkeys([*(f.path for f in finding.files), *(s.path for s in finding.suspects)])
    )


def _touches(diff: str, gold_lines: dict[str, list[int]]) -> bool:
    """Whether `diff` removes or edits a line the real fix changed."""
    for patch in whatthepatch.parse_patch(diff):
        path = (patch.header.new_path or "").removeprefix("b/") if patch.header else ""
        wanted = set(gold_lines.get(path, ()))
        if any(change.old in wanted for change in patch.changes or () if change.new is None):
            return True
    return False


def acc(rows: list[dict[str, Any]], key: str, k: int) -> str:
    hits = sum(bool(set(r[key][:k]) & set(r["gold"])) for r in rows)
    return f"{100 * hits / len(rows):.0f}" if rows else "–"


def report(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no cases with sources"
    reproduced = [r for r in rows if r["status"] == ReproductionStatus.REPRODUCED.value]
    statuses = {s.value: sum(r["status"] == s.value for r in rows) for s in ReproductionStatus}
    lines = [
        f"{len(rows)} cases, {len({r['project'] for r in rows})} projects; reproduced "
        f"{len(reproduced)} ({100 * len(reproduced) / len(rows):.0f}%): "
        + ", ".join(f"{k} {v}" for k, v in statuses.items() if v),
        "",
        f"| cases | n | {' | '.join(f'{name} Acc@1/5' for name in RANKINGS.values())} |",
        "|---|---|---|---|---|---|",
    ]
    untraced = [r for r in rows if not r["traceback"]]
    for name, subset in (("all", rows), ("reproduced", reproduced),
                         ("no traceback in the report", untraced)):  # fmt: skip
        cells = [" / ".join(acc(subset, key, k) for k in KS) for key in RANKINGS]
        lines.append(f"| {name} | {len(subset)} | " + " | ".join(cells) + " |")
    seconds = [r["verify_seconds"] for r in rows if r["verify_seconds"]]
    cpu = [r["cpu_seconds"] for r in rows]
    said = "verification: nothing ran"
    if seconds:
        said = (
            f"verification: median {statistics.median(seconds):.2f} s, max {max(seconds):.2f} s "
            f"wall; CPU (sandboxed processes) median {statistics.median(cpu):.2f} s, "
            f"total {sum(cpu):.1f} s"
        )
    lines += ["", said]
    passed = [r for r in reproduced if r["templates_passed"]]
    on_gold = sum(r["template_on_gold"] for r in passed)
    lines.append(
        f"repair templates: a passing one on {len(passed)} of {len(reproduced)} reproduced cases; "
        f"touching the real fix's lines on {on_gold} of those {len(passed)}"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
