"""Every case's candidate ranking, one JSON line per case: to compare two commits.

    PYTHONPATH=$PWD .venv/bin/python bench/ranking_dump.py --home H [--cases C] [--src S] > OUT
    diff OUT_BEFORE OUT_AFTER    # identical files: every case ranks every place the same

The ranking only (`diagnoser.candidates.rank_candidates`, limit 10, no model), each
report built as `bench/localize_lopo.py` builds it; with `--map`, also the repo map's
PageRank for the report's focus (`Repository.rank(map_focus(report))`: the best 50 files
and 100 definitions, scores as `repr` so a changed bit shows); cases whose release is not under
SRC/src/ are skipped (said on stderr). Each line: the case id and its ranked places
(path, line, symbol, source, score). Run it from another commit's checkout with
PYTHONPATH pointing there to get the "before".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from diagnoser import candidates
from diagnoser.agent import map_focus
from diagnoser.intake import Report, ReportIn
from diagnoser.intake.intake import build_report
from diagnoser.workspace import Workspace

sys.path.insert(0, str(Path(__file__).parent))

import casesets

LIMIT = 10
MAP_FILES = 50
MAP_DEFINITIONS = 100


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument(
        "--cases",
        type=Path,
        default=Path(__file__).resolve().parents[2] / "shared" / "bench" / "cases.jsonl",
        help="a .jsonl file of cases or a folder of them",
    )
    cli.add_argument("--src", type=Path, default=Path("bench/.cache/devbench"))
    cli.add_argument("--home", type=Path, required=True)
    cli.add_argument("--map", action="store_true", help="dump the repo map's PageRank too")
    args = cli.parse_args()
    cases = casesets.load([args.cases])
    by_root: dict[str, list[dict[str, object]]] = {}
    for case in cases:
        by_root.setdefault(str(case["root"]), []).append(case)
    for root, group in by_root.items():
        path = args.src / "src" / root
        if not path.is_dir():
            print(f"skipped {root}: not under {args.src}/src ({len(group)} cases)", file=sys.stderr)
            continue
        workspace = Workspace(path, home=args.home)
        index = workspace.repository.index
        for case in group:
            report = build_report(
                ReportIn(text=str(case["problem_statement"])),
                files=index.files,
                index=index,
                packages=workspace.packages,
            )
            ranked = candidates.rank_candidates(report, workspace, limit=LIMIT)
            places = [[c.path, c.line, c.symbol, c.source.value, c.score] for c in ranked]
            line: dict[str, object] = {"id": case["id"], "places": places}
            if args.map:
                line["pagerank"] = _pagerank(workspace, report)
            print(json.dumps(line), flush=True)


def _pagerank(workspace: Workspace, report: Report) -> dict[str, object]:
    ranking = workspace.repository.rank(map_focus(report), limit=MAP_DEFINITIONS)
    return {
        "files": [[path, repr(score)] for path, score in ranking.files[:MAP_FILES]],
        "definitions": [
            [d.path, d.definition.line, d.definition.qualified, repr(d.score)]
            for d in ranking.definitions
        ],
    }


if __name__ == "__main__":
    main()
