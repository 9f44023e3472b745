"""Time our repo map once, in this process (the twin of bench/aider_map.py).

    .venv/bin/python bench/repomap_once.py --root DIR --tokens N --mode cold|warm|touch|edit \
        --home DATA_DIR [--touch-file REL] [--focus ITEM ...] [--print-map]

cold: empty the data dir first; warm: reuse it; touch: bump one file's mtime (content
unchanged); edit: append a comment line to one file (restored afterwards, mtime too).
Prints one JSON line: seconds (Repository.open + map), process_seconds (from interpreter
start, imports included), peak RSS of this process and of its worker processes, tokens.
"""

from __future__ import annotations

import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
from pathlib import Path  # noqa: E402

from repomap import Repository  # noqa: E402
from repomap.render import estimate_tokens  # noqa: E402

EDIT_LINE = b"\n# bench edit\n"
SAMPLE_SECONDS = 0.02
PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20


class TreeRss:
    """Peak resident memory of this process plus all its descendants (the parse workers),
    sampled from /proc: getrusage cannot see the forkserver's grandchildren."""

    def __init__(self) -> None:
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            self.peak_mb = max(self.peak_mb, _tree_rss_mb(os.getpid()))


def _tree_rss_mb(root: int) -> float:
    parents: dict[int, int] = {}
    rss: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            statm = Path(f"/proc/{entry}/statm").read_text().split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        rss[int(entry)] = int(statm[1]) * PAGE_MB
    total = 0.0
    for pid, resident in rss.items():
        walk = pid
        while walk not in (0, 1, root) and walk in parents:
            walk = parents[walk]
        if walk == root:
            total += resident
    return total


def main() -> None:
    cli = argparse.ArgumentParser()
    cli.add_argument("--root", required=True, type=Path)
    cli.add_argument("--tokens", type=int, default=1024)
    cli.add_argument("--mode", choices=["cold", "warm", "touch", "edit"], required=True)
    cli.add_argument("--home", required=True, type=Path)
    cli.add_argument("--touch-file", default="django/db/models/query.py")
    cli.add_argument("--focus", nargs="*", default=[])
    cli.add_argument("--print-map", action="store_true")
    args = cli.parse_args()
    if args.mode == "cold":
        shutil.rmtree(args.home, ignore_errors=True)
    target = args.root / args.touch_file
    before = target.stat()
    original = target.read_bytes()
    if args.mode == "touch":
        os.utime(target, ns=(before.st_atime_ns, time.time_ns()))
    if args.mode == "edit":
        target.write_bytes(original + EDIT_LINE)
    try:
        with TreeRss() as tree:
            started = time.perf_counter()
            repo = Repository.open(args.root, home=args.home)
            text = repo.map(focus=args.focus, tokens=args.tokens)
            seconds = time.perf_counter() - started
    finally:
        if args.mode == "edit":
            target.write_bytes(original)
            os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    if args.print_map:
        sys.stderr.write(text)
    files_in_map = sum(
        1 for line in text.splitlines() if line.endswith(":") and line[:1] not in " 0123456789"
    )
    print(
        json.dumps(
            {
                "tool": "ours",
                "mode": args.mode,
                "tokens_budget": args.tokens,
                "seconds": round(seconds, 4),
                "process_seconds": round(time.perf_counter() - T0, 4),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                "tree_peak_rss_mb": round(tree.peak_mb, 1),
                "map_tokens": estimate_tokens(text),
                "map_chars": len(text),
                "files_in_map": files_in_map,
                "n_files": repo.stats.files,
                "parsed": repo.stats.parsed,
            }
        )
    )


if __name__ == "__main__":
    main()
