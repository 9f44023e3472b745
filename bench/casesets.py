"""Benchmark case files: one or several `.jsonl` files, folders of them, or globs.

    cases = load(["bench/cases_extra.jsonl", "bench/data/multilang"])

Each case is one JSON object per line (fields: bench/cases_extra.md, bench/cases_multilang.md).
Pure standard library, like focus.py.
"""

from __future__ import annotations

import glob
import json
from collections import Counter
from pathlib import Path
from typing import Any

DEFAULT_LANGUAGE = "python"
"""The language of a case without a `language` field (the developer benchmark's)."""


def case_files(specs: list[str | Path]) -> list[Path]:
    """The `.jsonl` files the specs name, in order, each once: a file as it is, a folder's
    `*.jsonl` sorted by name, a glob's matches sorted."""
    found: list[Path] = []
    for spec in specs:
        path = Path(spec)
        if path.is_dir():
            found.extend(sorted(path.glob("*.jsonl")))
        elif path.is_file():
            found.append(path)
        else:
            matches = sorted(Path(p) for p in glob.glob(str(spec)))
            if not matches:
                raise SystemExit(f"no cases at {spec}")
            found.extend(m for m in matches if m.is_file())
    return list(dict.fromkeys(found))


def parse(text: str, origin: str = "") -> list[dict[str, Any]]:
    """The cases of one file's text (blank lines skipped)."""
    cases = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                cases.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise SystemExit(f"{origin}:{number}: not JSON ({error})") from error
    return cases


def load(specs: list[str | Path]) -> list[dict[str, Any]]:
    """Every case of every file the specs name; an id seen twice is an error."""
    cases: list[dict[str, Any]] = []
    for path in case_files(specs):
        cases.extend(parse(path.read_text(encoding="utf-8"), str(path)))
    counts = Counter(str(case.get("id")) for case in cases)
    repeated = sorted(i for i, n in counts.items() if n > 1)
    if repeated:
        raise SystemExit(f"case ids used twice: {', '.join(repeated)}")
    return cases


def language(case: dict[str, Any]) -> str:
    return str(case.get("language") or DEFAULT_LANGUAGE)
