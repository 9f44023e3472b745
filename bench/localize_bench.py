"""Localization on the developer benchmark: the offline investigator against plain BM25.

    bash ../shared/bench/get_sources.sh bench/.cache/devbench
    .venv/bin/python bench/localize_bench.py [--limit N] [--cold] [--json OUT]
    .venv/bin/python bench/localize_bench.py --cases bench/data/multilang \
        --sources bench/.cache/multilang          # any cases: files, folders, globs

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

The cases may be of any language (`language`, default python; bench/cases_multilang.md):
`--cases` takes files, folders of `*.jsonl` or globs. A second table gives, per language,
file Acc@1/3/5 (files+suspects) beside two plain rankers measured in the same run over
every indexed, non-test (`diagnoser.file_roles.is_test`) file of any language
(bench/baselines.py): BM25, and "files and names the report mentions, then BM25"
(`find_mentions`, the repo map's symbol index). A third gives each repository's indexed
file count (0 is flagged). The first table's BM25 column is the issue-5 ranker (Python
files, tests by file name), kept so its numbers stay comparable with earlier runs.
`--json OUT` writes each case's rank of its first gold file under each ranker.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from diagnoser.file_roles import is_test
from diagnoser.intake import ReportIn, Source
from diagnoser.intake.mentions import find_mentions
from diagnoser.pipeline import Event, diagnose
from diagnoser.workspace import Workspace
from repomap import MatchKind

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import casesets  # noqa: E402
import focus  # noqa: E402
from baselines import Bm25, mentions_order, rank_of  # noqa: E402

KS = (1, 3, 5, 10)
BM25_KS = (1, 3, 5)
LANGUAGE_KS = (1, 3, 5)
BASELINE_KS = (1, 5)
FUNCTION_K = 5
PYTHON_BM25_DEPTH = 10
"""The issue-5 ranker kept its first ten files."""
_CHARS = re.compile(r"→ (\d+) chars")
RANKERS = {"ours": "suspects", "bm25": "bm25_all", "mentions": "mentions"}
"""The rankers of the per-language table and the JSON rows → the row key of their files
(ours: `files`, then `suspects`)."""
_DEFINED = (MatchKind.EXACT, MatchKind.QUALIFIED)
"""How a mentioned name must match a definition for the mentions ranker (not by case)."""


@dataclass(frozen=True, slots=True)
class Release:
    """One release's workspace and its plain rankers, built once for all its cases."""

    workspace: Workspace
    bm25: Bm25
    """Every indexed non-test file, any language."""
    python_bm25: Bm25
    """The issue-5 ranker: Python files, tests by name."""
    indexed: int
    """Files in the repo map's index (tests included)."""


def open_release(root: Path, home: Path) -> Release:
    workspace = Workspace(root, home=home)
    indexed = workspace.repository.tags
    texts, python = {}, {}
    for entry in workspace.files:
        if entry.path not in indexed and entry.language != "python":
            continue
        data = workspace.read_listed(entry)
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        if entry.path in indexed and not is_test(entry.path):
            texts[entry.path] = text
        if entry.language == "python" and not _python_test(entry.path):
            python[entry.path] = text
    return Release(workspace, Bm25.build(texts), Bm25.build(python), len(indexed))


def _python_test(path: str) -> bool:
    """The issue-5 ranker's test rule, kept for its numbers."""
    return "/tests/" in f"/{path}" or "test" in path.rsplit("/", 1)[-1]


def mentions_ranking(release: Release, text: str, ranked: list[str]) -> list[str]:
    """Files the report names, then files defining the names it mentions, then BM25."""
    mentioned = find_mentions(text)
    index = release.workspace.repository.index
    definers = []
    for name in [*mentioned.identifiers, *mentioned.modules]:
        found = index.find(name)
        if found.how in _DEFINED:
            definers.append({symbol.path for symbol in found.matches})
    return mentions_order(ranked, files=mentioned.files, definers=definers)


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--src", type=Path, default=HERE / ".cache" / "devbench" / "src")
    cli.add_argument(
        "--cases", action="extend", nargs="+", help="cases .jsonl files, folders of them or globs"
    )
    cli.add_argument("--sources", type=Path, help="a folder holding src/<root>/ (instead of --src)")
    cli.add_argument("--home", type=Path, default=HERE / ".cache" / "localize-home")
    cli.add_argument("--limit", type=int)
    cli.add_argument(
        "--cold", action="store_true", help="also time each release's first case from scratch"
    )
    cli.add_argument("--json", type=Path, help="write each case's ranks here (JSON)")
    args = cli.parse_args()
    if args.sources:
        args.src = args.sources / "src"
    found = casesets.load(args.cases or [focus.CASES_PATH])
    cases = [c for c in found if (args.src / c["root"]).is_dir()][: args.limit]
    rows = []
    releases: dict[str, Release] = {}
    indexed: dict[str, tuple[int, int]] = {}
    cold: list[float] = []
    for case in cases:
        if case["root"] not in releases:
            releases.clear()
            if args.cold:  # the release's first case, from an empty data directory
                cold.append(cold_seconds(case, args.src))
            release = releases[case["root"]] = open_release(args.src / case["root"], args.home)
            indexed[case["root"]] = (release.indexed, len(release.bm25.docs))
        rows.append(run_case(case, releases[case["root"]]))
    print(report(rows))
    if cold:
        print(
            f"cold (empty data directory: walk, parse, index, diagnose) on the first case of "
            f"each of {len(cold)} releases: median {statistics.median(cold):.2f} s, "
            f"max {max(cold):.2f} s"
        )
    print()
    print(language_report(rows))
    print()
    print(repository_report(rows, indexed))
    if args.json:
        write_json(args.json, rows, indexed, [str(c) for c in args.cases or [focus.CASES_PATH]])


def run_case(case: dict[str, Any], release: Release) -> dict[str, Any]:
    """Diagnose one case and rank it with the plain rankers; one row of the report."""
    events: list[Event] = []
    text = case["problem_statement"]
    started = time.perf_counter()
    outcome = diagnose(
        ReportIn(text=text, source=Source.GITHUB), release.workspace, sink=events.append
    )
    seconds = time.perf_counter() - started
    finding = outcome.finding
    located = [(f.path, f.symbol) for f in finding.files] if finding else []
    suspected = [(s.path, s.symbol) for s in finding.suspects] if finding else []
    files = list(dict.fromkeys(path for path, _ in located))
    ranked = release.bm25.rank(text)
    row = {
        "id": case["id"],
        "language": casesets.language(case),
        "root": case["root"],
        "traceback": case["has_traceback"],
        "ours": files,
        "suspects": list(dict.fromkeys(path for path, _ in located + suspected)),
        "places": _places(located),
        "suspect_places": _places(located + suspected),
        "bm25": release.python_bm25.rank(text)[:PYTHON_BM25_DEPTH],
        "bm25_all": ranked,
        "mentions": mentions_ranking(release, text, ranked),
        "gold": set(case["gold_files"]),
        "gold_functions": case["gold_functions"],
        "state": outcome.state.value,
        "reason": outcome.reason,
        "calls": sum(finding.provenance.tool_calls.values()) if finding else 0,
        "chars": sum(int(m.group(1)) for e in events for m in [_CHARS.search(e.detail)] if m),
        "seconds": seconds,
    }
    ranks = " ".join(f"{n}={rank_of(row[k], row['gold'])}" for n, k in RANKERS.items())
    why = f" ({outcome.reason})" if outcome.reason else ""
    print(
        f"{case['id']:40s} {outcome.state.value:15s} {ranks} top={files[:1]} "
        f"gold={case['gold_files']}{why}",
        file=sys.stderr,
    )
    return row


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
        f"| Python BM25 Acc@1/3/5 | function Acc@{FUNCTION_K} files+suspects | files only |",
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


def language_report(rows: list[dict[str, Any]]) -> str:
    """Per language and overall: ours beside BM25 and mentions (all files, any language)."""
    ours = "/".join(map(str, LANGUAGE_KS))
    plain = "/".join(map(str, BASELINE_KS))
    lines = [
        f"| language | cases | ours Acc@{ours} | BM25 Acc@{plain} | mentions Acc@{plain} "
        "| not investigated |",
        "|---|---|---|---|---|---|",
    ]
    languages = sorted({str(r["language"]) for r in rows})
    for label, subset in [
        *((lang, [r for r in rows if r["language"] == lang]) for lang in languages),
        ("all", rows),
    ]:
        cells = [
            "/".join(acc(subset, RANKERS[name], k) for k in ks)
            for name, ks in (
                ("ours", LANGUAGE_KS),
                ("bm25", BASELINE_KS),
                ("mentions", BASELINE_KS),
            )
        ]
        idle = sum(r["state"] != "complete" for r in subset)
        lines.append(f"| {label} | {len(subset)} | {' | '.join(cells)} | {idle} |")
    return "\n".join(lines)


def repository_report(rows: list[dict[str, Any]], indexed: dict[str, tuple[int, int]]) -> str:
    """Files indexed per repository; a repository with none is flagged."""
    lines = [
        "| repository | language | cases | files indexed | ranked (non-test) |",
        "|---|---|---|---|---|",
    ]
    empty = []
    for root, (count, ranked) in indexed.items():
        mine = [r for r in rows if r["root"] == root]
        languages = ", ".join(sorted({str(r["language"]) for r in mine}))
        flag = " **NOTHING INDEXED**" if count == 0 else ""
        if count == 0:
            empty.append(root)
        lines.append(f"| {root} | {languages} | {len(mine)} | {count}{flag} | {ranked} |")
    lines.append(
        f"\nrepositories with 0 files indexed: {', '.join(empty) if empty else 'none'} "
        f"(of {len(indexed)})"
    )
    return "\n".join(lines)


def json_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per case: the 1-based rank of its first gold file under each ranker (null: not
    ranked), so two runs can be compared case by case."""
    return [
        {
            "id": r["id"],
            "language": r["language"],
            "root": r["root"],
            "gold_files": sorted(r["gold"]),
            "state": r["state"],
            "reason": r.get("reason", ""),
            "ranks": {name: rank_of(r[key], r["gold"]) for name, key in RANKERS.items()},
        }
        for r in rows
    ]


def write_json(
    path: Path, rows: list[dict[str, Any]], indexed: dict[str, tuple[int, int]], specs: list[str]
) -> None:
    commit = _git(["rev-parse", "HEAD"])
    run = {
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": commit,
        "dirty": bool(_git(["status", "--porcelain", "--untracked-files=no"])),
        "cases": specs,
    }
    repositories = [
        {"root": root, "files_indexed": count, "ranked": ranked}
        for root, (count, ranked) in indexed.items()
    ]
    document = {"run": run, "cases": json_rows(rows), "repositories": repositories}
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"per-case ranks written to {path}", file=sys.stderr)


def _git(arguments: list[str]) -> str:
    done = subprocess.run(
        ["git", "-C", str(HERE), *arguments], capture_output=True, text=True, check=False
    )
    return done.stdout.strip()


if __name__ == "__main__":
    main()
