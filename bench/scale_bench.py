"""Does the repo map stay fast past 10k files? A synthetic repository, measured.

    .venv/bin/python bench/scale_bench.py [--files 12000]

Writes N Python modules (each a class with methods that call functions of a few other
modules, seeded, deterministic) under bench/.cache/synthetic-N/, then times a cold
build, a warm open + map, and ranking alone (focused and unfocused), in this process.
"""

from __future__ import annotations

import argparse
import random
import shutil
import time
from pathlib import Path

from repomap import Repository

HERE = Path(__file__).parent
SEED = 20261129
CALLS_PER_MODULE = 6


def write_repo(root: Path, files: int) -> None:
    rng = random.Random(SEED)
    for i in range(files):
        package = root / f"pkg{i // 100}"
        package.mkdir(parents=True, exist_ok=True)
        targets = rng.sample(range(files), CALLS_PER_MODULE)
        calls = "\n".join(f"        helper_{t}(value)" for t in targets)
        (package / f"mod{i}.py").write_text(
            f"def helper_{i}(value):\n    return value\n\n\n"
            f"class Service{i}:\n    def run_{i}(self, value):\n{calls}\n        return value\n"
        )


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--files", type=int, default=12_000)
    args = cli.parse_args()
    root = HERE / ".cache" / f"synthetic-{args.files}"
    home = HERE / ".cache" / f"synthetic-{args.files}-home"
    if not root.exists():
        write_repo(root, args.files)
    shutil.rmtree(home, ignore_errors=True)

    started = time.perf_counter()
    Repository.open(root, home=home).map(tokens=2048)
    cold = time.perf_counter() - started
    started = time.perf_counter()
    repo = Repository.open(root, home=home)
    repo.map(tokens=2048)
    warm = time.perf_counter() - started
    started = time.perf_counter()
    repo.rank(limit=2048)
    unfocused = time.perf_counter() - started
    started = time.perf_counter()
    repo.rank(["pkg3/mod345.py", "helper_77"], limit=2048)
    focused = time.perf_counter() - started
    graph = repo.graph
    print(
        f"{repo.stats.files} files, {graph.edges} edges from {graph.uses} uses and "
        f"{len(graph.link_file)} links: "
        f"cold {cold:.2f} s, warm open+map {warm:.3f} s, "
        f"rank {unfocused * 1000:.0f} ms unfocused / {focused * 1000:.0f} ms focused"
    )


if __name__ == "__main__":
    main()
