"""What each localization signal is worth: `diagnoser.candidates` with one signal off.

    bash ../shared/bench/get_sources.sh bench/.cache/devbench
    .venv/bin/python bench/localize_ablation.py

Ranks the candidates (no model, no tools: the order the offline investigator reads them
in) for every developer-benchmark case, with all signals and with each switched off in
turn, and prints file Acc@1/3/5 for all cases, those with a traceback and those without.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from diagnoser import candidates, frames, relevance
from diagnoser.intake import ReportIn
from diagnoser.intake.intake import build_report
from diagnoser.workspace import Workspace
from repomap import terms

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import focus  # noqa: E402

KS = (1, 3, 5)
NEVER = re.compile(r"(?!)")
ABLATIONS: dict[str, dict[tuple[object, str], object]] = {
    "all signals": {},
    "no headline": {
        (relevance, "HEADLINE_WEIGHT"): 0.0,
        (frames, "FRAME_HEADLINE_WEIGHT"): 0.0,
    },
    "no guard-frame rule": {(frames, "GUARD_PENALTY"): 0.0},
    "old utility-folder rule": {(frames, "UTILITY_PENALTY"): 1.0},
    "no compound identifiers kept whole": {(terms, "_COMPOUND"): NEVER},
    "no named files or definitions": {
        (relevance, "NAMED_FILE_WEIGHT"): 0.0,
        (relevance, "NAMED_DEFINITION_WEIGHT"): 0.0,
    },
}


@contextmanager
def patched(changes: dict[tuple[object, str], object]) -> Iterator[None]:
    saved = {key: getattr(*key) for key in changes}
    for (module, name), value in changes.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for (module, name), value in saved.items():
            setattr(module, name, value)


def ranked_files(cases: list[dict[str, object]], src: Path, home: Path) -> list[list[str]]:
    found = []
    workspace: Workspace | None = None
    for case in cases:
        root = src / str(case["root"])
        if workspace is None or workspace.root != root.resolve():
            workspace = Workspace(root, home=home)  # a fresh term index per ablation
        index = workspace.repository.index
        text = str(case["problem_statement"])
        report = build_report(ReportIn(text=text), files=index.files, index=index)
        places = candidates.rank_candidates(report, workspace)
        found.append(list(dict.fromkeys(c.path for c in places)))
    return found


def accuracy(cases: list[dict[str, object]], files: list[list[str]]) -> str:
    groups = (
        ("all", [True] * len(cases)),
        ("traceback", [bool(c["has_traceback"]) for c in cases]),
        ("no traceback", [not c["has_traceback"] for c in cases]),
    )
    cells = []
    for _, chosen in groups:
        pairs = [(c, f) for c, f, keep in zip(cases, files, chosen, strict=True) if keep]
        hits = [
            sum(bool(set(f[:k]) & set(c["gold_files"])) for c, f in pairs)  # type: ignore[call-overload]
            for k in KS
        ]
        cells.append("/".join(f"{100 * h / max(len(pairs), 1):.0f}" for h in hits))
    return " | ".join(cells)


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--src", type=Path, default=HERE / ".cache" / "devbench" / "src")
    cli.add_argument("--cases", type=Path, default=Path(focus.CASES_PATH), help="a cases.jsonl")
    cli.add_argument("--sources", type=Path, help="a folder holding src/<root>/ (instead of --src)")
    cli.add_argument("--home", type=Path, default=HERE / ".cache" / "localize-home")
    args = cli.parse_args()
    if args.sources:
        args.src = args.sources / "src"
    cases = [c for c in focus.load_cases(str(args.cases)) if (args.src / c["root"]).is_dir()]
    print("| signals | all Acc@1/3/5 | traceback | no traceback |\n|---|---|---|---|")
    for label, changes in ABLATIONS.items():
        with patched(changes):
            files = ranked_files(cases, args.src, args.home)
        print(f"| {label} | {accuracy(cases, files)} |", flush=True)


if __name__ == "__main__":
    main()
