"""Does our repo map, focused on a bug report, show the file the real fix changed?

    bash ../shared/bench/get_sources.sh bench/.cache/devbench    # sources of the cases
    .venv/bin/python bench/map_quality.py [--budgets 1024 2048 4096] [--limit N]

The twin of bench/aider_quality.py: the same cases, the same focus (bench/focus.py:
mentioned repo files and identifiers), the same budgets; a hit is a gold file among the
files the map lists. One JSON line per case on stdout, then a summary line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from repomap import Repository

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import focus  # noqa: E402


def map_files(text: str) -> list[str]:
    """File paths a rendered map lists (its `path:` header lines)."""
    return [
        line[:-1]
        for line in text.splitlines()
        if line.endswith(":") and line[:1] not in " 0123456789-" and not line.startswith("warn")
    ]


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--src", type=Path, default=HERE / ".cache" / "devbench" / "src")
    cli.add_argument("--budgets", type=int, nargs="+", default=[1024, 2048, 4096])
    cli.add_argument("--limit", type=int, default=None)
    cli.add_argument("--home", type=Path, default=HERE / ".cache" / "quality-home")
    args = cli.parse_args()
    cases = [c for c in focus.load_cases() if (args.src / c["root"]).is_dir()][: args.limit]
    rows = []
    repo: Repository | None = None
    for case in cases:
        root = args.src / case["root"]
        if repo is None or repo.root != root.resolve():
            repo = Repository.open(root, home=args.home)
        files, idents = focus.extract_focus(
            case["problem_statement"], focus.list_py_files(str(root))
        )
        gold = set(case["gold_files"])
        row: dict[str, object] = {
            "id": case["id"],
            "package": case["package"],
            "has_traceback": bool(case["has_traceback"]),
            "focus_has_gold": bool(gold & set(files)),
            "hits": {},
            "seconds": {},
        }
        for tokens in args.budgets:
            started = time.perf_counter()
            text = repo.map(focus=[*files, *idents], tokens=tokens)
            row["seconds"][str(tokens)] = round(time.perf_counter() - started, 3)  # type: ignore[index]
            row["hits"][str(tokens)] = bool(gold & set(map_files(text)))  # type: ignore[index]
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(json.dumps({"summary": summarize(rows, args.budgets)}))


def summarize(rows: list[dict[str, object]], budgets: list[int]) -> dict[str, object]:
    def block(subset: list[dict[str, object]]) -> dict[str, int]:
        counts = {"cases": len(subset)}
        for tokens in budgets:
            counts[f"hit@{tokens}"] = sum(bool(r["hits"][str(tokens)]) for r in subset)  # type: ignore[index]
        counts["focus_has_gold"] = sum(bool(r["focus_has_gold"]) for r in subset)
        return counts

    return {
        "all": block(rows),
        "has_traceback": block([r for r in rows if r["has_traceback"]]),
        "no_traceback": block([r for r in rows if not r["has_traceback"]]),
    }


if __name__ == "__main__":
    main()
