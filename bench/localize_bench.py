"""Localization on the developer benchmark: the offline investigator against plain BM25.

    bash ../shared/bench/get_sources.sh bench/.cache/devbench
    .venv/bin/python bench/localize_bench.py [--limit N] [--cold]

For every case in ../shared/bench/cases.jsonl whose release is under
bench/.cache/devbench/src/: the full pipeline (`diagnose`, offline model) on the problem
statement as a GitHub-issue-like report, and a BM25 ranking of the release's non-test
files (identifier-split tokens of content and path) — in the same run. Scores (see the
bench README), for all cases and the traceback subset:

- file Acc@1/3/5/10: any gold file among the first k distinct files of the Finding —
  `files[].path` in order, then `suspects` (the README's definition); the strict variant
  needs every gold file there; "files only" is the older scoring, without the suspects;
- function Acc@5: a gold `path::Class.method` among the first 5 distinct `path::symbol`
  of `files`, then `suspects` (last name component), and files only;
- tool calls, characters returned by tools, wall time.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import cast

from diagnoser.intake import ReportIn, Source
from diagnoser.pipeline import Event, diagnose
from diagnoser.workspace import Workspace

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import focus  # noqa: E402

KS = (1, 3, 5, 10)
BM25_KS = (1, 3, 5)
FUNCTION_K = 5
BM25_K1 = 1.2
BM25_B = 0.75
_TOKEN = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])")
_CHARS = re.compile(r"→ (\d+) chars")


def tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text) if len(t) > 2]


def bm25_files(workspace: Workspace, query: str) -> list[str]:
    docs = {}
    for entry in workspace.files:
        if (
            entry.language != "python"
            or "/tests/" in f"/{entry.path}"
            or "test" in entry.path.rsplit("/", 1)[-1]
        ):
            continue
        data = workspace.read_listed(entry)
        if data is not None:
            docs[entry.path] = Counter(
                tokens(data.decode("utf-8", "replace")) + tokens(entry.path) * 3
            )
    if not docs:
        return []
    average = sum(sum(d.values()) for d in docs.values()) / len(docs)
    frequency = Counter(t for d in docs.values() for t in d)
    terms = set(tokens(query))
    scores = {}
    for path, doc in docs.items():
        length = sum(doc.values())
        score = 0.0
        for term in terms & doc.keys():
            idf = math.log(1 + (len(docs) - frequency[term] + 0.5) / (frequency[term] + 0.5))
            tf = doc[term]
            score += (
                idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * length / average))
            )
        scores[path] = score
    return sorted(scores, key=lambda p: (-scores[p], p))[:10]


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--src", type=Path, default=HERE / ".cache" / "devbench" / "src")
    cli.add_argument("--cases", type=Path, default=Path(focus.CASES_PATH), help="a cases.jsonl")
    cli.add_argument("--sources", type=Path, help="a folder holding src/<root>/ (instead of --src)")
    cli.add_argument("--home", type=Path, default=HERE / ".cache" / "localize-home")
    cli.add_argument("--limit", type=int)
    cli.add_argument(
        "--cold", action="store_true", help="also time each release's first case from scratch"
    )
    args = cli.parse_args()
    if args.sources:
        args.src = args.sources / "src"
    found = focus.load_cases(str(args.cases))
    cases = [c for c in found if (args.src / c["root"]).is_dir()][: args.limit]
    rows = []
    workspaces: dict[str, Workspace] = {}
    cold: list[float] = []
    for case in cases:
        if case["root"] not in workspaces:
            workspaces.clear()
            if args.cold:  # the release's first case, from an empty data directory
                cold.append(cold_seconds(case, args.src))
            workspaces[case["root"]] = Workspace(args.src / case["root"], home=args.home)
            workspaces[case["root"]].repository  # noqa: B018  (index built outside the timing)
        workspace = workspaces[case["root"]]
        events: list[Event] = []
        started = time.perf_counter()
        outcome = diagnose(
            ReportIn(text=case["problem_statement"], source=Source.GITHUB),
            workspace,
            sink=events.append,
        )
        seconds = time.perf_counter() - started
        finding = outcome.finding
        located = [(f.path, f.symbol) for f in finding.files] if finding else []
        suspected = [(s.path, s.symbol) for s in finding.suspects] if finding else []
        files = list(dict.fromkeys(path for path, _ in located))
        rows.append({
            "id": case["id"],
            "traceback": case["has_traceback"],
            "ours": files,
            "suspects": list(dict.fromkeys(path for path, _ in located + suspected)),
            "places": _places(located),
            "suspect_places": _places(located + suspected),
            "bm25": bm25_files(workspace, case["problem_statement"]),
            "gold": set(case["gold_files"]),
            "gold_functions": case["gold_functions"],
            "state": outcome.state.value,
            "calls": sum(finding.provenance.tool_calls.values()) if finding else 0,
            "chars": sum(int(m.group(1)) for e in events for m in [_CHARS.search(e.detail)] if m),
            "seconds": seconds,
        })  # fmt: skip
        print(
            f"{case['id']:40s} {outcome.state.value:15s} top={files[:1]} gold={case['gold_files']}",
            file=sys.stderr,
        )
    print(report(rows))
    if cold:
        print(
            f"cold (empty data directory: walk, parse, index, diagnose) on the first case of "
            f"each of {len(cold)} releases: median {statistics.median(cold):.2f} s, "
            f"max {max(cold):.2f} s"
        )


def cold_seconds(case: dict[str, object], src: Path) -> float:
    with tempfile.TemporaryDirectory() as home:
        started = time.perf_counter()
        workspace = Workspace(src / str(case["root"]), home=Path(home))
        diagnose(ReportIn(text=str(case["problem_statement"]), source=Source.GITHUB), workspace)
        return time.perf_counter() - started


def _places(located: list[tuple[str, str | None]]) -> list[str]:
    """Distinct `path::symbol`, in order, of the places that name a symbol."""
    return list(dict.fromkeys(f"{path}::{symbol}" for path, symbol in located if symbol))


def acc(rows: list[dict[str, object]], key: str, k: int, *, strict: bool = False) -> str:
    def hit(row: dict[str, object]) -> bool:
        top, gold = set(row[key][:k]), row["gold"]  # type: ignore[index]
        return bool(gold <= top if strict else gold & top)  # type: ignore[operator]

    hits = sum(hit(r) for r in rows)
    return f"{100 * hits / max(len(rows), 1):.0f}"


def function_acc(rows: list[dict[str, object]], k: int, key: str = "places") -> str:
    scored = [r for r in rows if r["gold_functions"]]
    hits = 0
    for r in scored:
        gold = cast(list[str], r["gold_functions"])
        wanted = {(g.split("::")[0], g.split("::")[1].rsplit(".", 1)[-1]) for g in gold}
        got = {(p.split("::")[0], p.split("::")[1].rsplit(".", 1)[-1]) for p in r[key][:k]}  # type: ignore[index]
        hits += bool(wanted & got)
    return f"{100 * hits / max(len(scored), 1):.0f} (of {len(scored)})"


def report(rows: list[dict[str, object]]) -> str:
    at = "/".join(map(str, KS))
    lines = [
        f"| cases | files+suspects Acc@{at} | strict | files only Acc@{at} | strict "
        f"| BM25 Acc@1/3/5 | function Acc@{FUNCTION_K} files+suspects | files only |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, subset in (("all", rows), ("with traceback", [r for r in rows if r["traceback"]])):
        cells = [
            "/".join(acc(subset, key, k, strict=strict) for k in KS)
            for key in ("suspects", "ours")
            for strict in (False, True)
        ]
        bm25 = "/".join(acc(subset, "bm25", k) for k in BM25_KS)
        functions = [function_acc(subset, FUNCTION_K, key) for key in ("suspect_places", "places")]
        lines.append(f"| {label} ({len(subset)}) | {' | '.join(cells)} | {bm25} "
                     f"| {' | '.join(functions)} |")  # fmt: skip
    calls = [int(r["calls"]) for r in rows]  # type: ignore[call-overload]
    chars = [int(r["chars"]) for r in rows]  # type: ignore[call-overload]
    seconds = [float(r["seconds"]) for r in rows]  # type: ignore[arg-type]
    states = Counter(str(r["state"]) for r in rows)
    lines.append(
        f"\ntool calls: max {max(calls)}, median {statistics.median(calls):g}; characters returned "
        f"by tools: median {statistics.median(chars):g}; wall time per case (warm index): median "
        f"{statistics.median(seconds):.2f} s, max {max(seconds):.2f} s; end states: {dict(states)}"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
