"""Our repo map beside aider's RepoMap on the same files, in one run.

    bash bench/setup.sh                      # Django 5.2.8 sdist + aider-chat 0.86.2 venv
    .venv/bin/python bench/repomap_bench.py [--budgets 1024 2048] [--repeat 3]

Every measurement is a fresh process (bench/repomap_once.py for us, bench/aider_map.py
for aider), alternating between the two tools so machine noise hits both alike. Modes:
cold (caches cleared), warm (nothing changed), touch (one file's mtime bumped), edit
(one line appended to one file). Prints a markdown table of medians and ratios; raw
lines go to bench/.cache/results/repomap_bench.jsonl.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from repomap.files import walk_files

HERE = Path(__file__).parent
CACHE = HERE / ".cache"
AIDER_PYTHON = CACHE / "aider-venv" / "bin" / "python"
MODES = ("cold", "warm", "touch", "edit")
TOUCH_FILE = "django/db/models/query.py"


def run_json(command: list[str]) -> dict[str, object]:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{done.stderr[-2000:]}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def ours(root: Path, home: Path, tokens: int, mode: str) -> dict[str, object]:
    return run_json(
        [
            sys.executable,
            str(HERE / "repomap_once.py"),
            "--root",
            str(root),
            "--home",
            str(home),
            "--tokens",
            str(tokens),
            "--mode",
            mode,
            "--touch-file",
            TOUCH_FILE,
        ]
    )


def aider(root: Path, files: Path, tokens: int, mode: str) -> dict[str, object]:
    command = [
        str(AIDER_PYTHON),
        str(HERE / "aider_map.py"),
        "--root",
        str(root),
        "--files",
        str(files),
        "--tokens",
        str(tokens),
        "--mode",
        "touch" if mode == "edit" else mode,
    ]
    if mode in ("touch", "edit"):
        command += ["--touch-file", TOUCH_FILE]
    if mode == "edit":
        command.append("--append-comment")
    result = run_json(command)
    result["tool"], result["mode"] = "aider", mode
    return result


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--root", type=Path, default=CACHE / "django-5.2.8")
    cli.add_argument("--budgets", type=int, nargs="+", default=[1024, 2048])
    cli.add_argument("--repeat", type=int, default=3)
    cli.add_argument("--out", type=Path, default=CACHE / "results" / "repomap_bench.jsonl")
    args = cli.parse_args()
    root = args.root.resolve()
    files = CACHE / "results" / "repomap_bench.files.txt"
    files.parent.mkdir(parents=True, exist_ok=True)
    mapped = [f.path for f in walk_files(root).files if f.language]
    files.write_text("\n".join(mapped) + "\n")
    home = CACHE / "repomap-home"
    rows: list[dict[str, object]] = []
    with args.out.open("w") as out:
        for tokens in args.budgets:
            for _ in range(args.repeat):
                for mode in MODES:
                    for row in (ours(root, home, tokens, mode), aider(root, files, tokens, mode)):
                        rows.append(row)
                        out.write(json.dumps(row) + "\n")
                        out.flush()
                        print(json.dumps(row), file=sys.stderr)
    print(f"{len(mapped)} files (the same list for both tools), {args.repeat} runs each, medians\n")
    print(table(rows, args.budgets))


def table(rows: list[dict[str, object]], budgets: list[int]) -> str:
    def median(tool: str, mode: str, tokens: int, key: str) -> float:
        values = [
            float(r[key])
            for r in rows  # type: ignore[arg-type]
            if (r["tool"], r["mode"], r["tokens_budget"]) == (tool, mode, tokens)
        ]
        return statistics.median(values)

    lines = [
        "| budget | mode | ours s | aider s | aider/ours | ours process s | aider process s "
        "| ours RSS MB (tree) | aider RSS MB | map tokens ours / aider |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for tokens in budgets:
        for mode in MODES:
            a, o = median("aider", mode, tokens, "seconds"), median("ours", mode, tokens, "seconds")
            lines.append(
                f"| {tokens} | {mode} | {o:.3f} | {a:.2f} | {a / o:.0f}× "
                f"| {median('ours', mode, tokens, 'process_seconds'):.2f} "
                f"| {median('aider', mode, tokens, 'process_seconds'):.2f} "
                f"| {median('ours', mode, tokens, 'peak_rss_mb'):.0f} "
                f"({median('ours', mode, tokens, 'tree_peak_rss_mb'):.0f}) "
                f"| {median('aider', mode, tokens, 'peak_rss_mb'):.0f} "
                f"| {median('ours', mode, tokens, 'map_tokens'):.0f} / "
                f"{median('aider', mode, tokens, 'map_tokens'):.0f} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
