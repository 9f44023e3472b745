"""Whether a repository's map covers its source: a warning when it indexes suspiciously
few of the source files on disk.

The walk (`files`) obeys ignore rules, the secrets deny-list and size limits; a root
`.gitignore` that ignores nearly everything (`*`, or `/*/`) leaves a map of nothing, and
every ranking built on it silently answers from what is left. The walk counts the source
files a rule left out and lists the folders a rule pruned; only those folders are
counted here (the default ignored folders such as `node_modules/` and dot-folders
skipped, as the walk skips them), and only until there are enough to warn, or
MAX_COUNTED_ENTRIES entries: a repository whose rules prune nothing costs nothing.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

from repomap.constants import MAX_FILE_BYTES, MINIFIED_SUFFIXES
from repomap.files import WalkResult, is_default_ignored_dir
from repomap.languages import language_for

FEW_FILES_RATIO = 0.1
"""Warn when the map indexes fewer than this share of the source files on disk…"""
MIN_MISSING_FILES = 20
"""…and at least this many of them are missing (a tiny repository with a generated
folder ignored is fine)."""
MAX_COUNTED_ENTRIES = 20_000
"""Directory entries the count of pruned folders looks at, at most (a large ignored
`data/` or build folder costs a bounded walk on every build, ~0.1 s): enough to see a
repository ignored nearly whole; a large one missing a few thousand files goes unsaid."""
IGNORE_FILES = (".gitignore", ".git/info/exclude")


def coverage_warning(
    indexed: int, on_disk: int, *, ignore_files: tuple[str, ...] = (), at_least: bool = False
) -> str | None:
    """The warning for a map of `indexed` files where `on_disk` source files exist (`at
    least` that many, when the count stopped early), or None when that is not suspicious.
    `ignore_files`: the root's ignore files that exist, named as the likely cause."""
    missing = on_disk - indexed
    if on_disk == 0 or missing < 1 or (indexed and missing < MIN_MISSING_FILES):
        return None
    if indexed and indexed >= FEW_FILES_RATIO * on_disk:
        return None
    rules = " and ".join(f"`{name}`" for name in ignore_files) or "`.gitignore` files"
    counted = f"at least {on_disk}" if at_least else str(on_disk)
    return (
        f"only {indexed} of {counted} source files on disk are indexed: likely the ignore"
        f" rules in {rules} (a pattern such as `*` or `/*/` ignores nearly everything), else"
        f" the secrets deny-list or the size limits (files over {MAX_FILE_BYTES // 1000} kB,"
        " minified or generated files are skipped)"
    )


def check_coverage(root: Path, indexed: int, walked: WalkResult) -> str | None:
    """`coverage_warning` for the repository at `root`, whose walk (`walked`) listed the
    files of which `indexed` have tags: what the walk left out by rule (`walked.excluded`,
    and the source files in the folders it pruned, counted up to enough to warn) is
    what is on disk but not in the map."""
    listed = len(walked.files) + walked.excluded
    enough = max(math.ceil(indexed / FEW_FILES_RATIO), indexed + MIN_MISSING_FILES)
    pruned, complete = count_source_files(root, walked.pruned, stop_at=max(enough - listed, 0))
    present = tuple(name for name in IGNORE_FILES if os.path.isfile(os.path.join(root, name)))
    return coverage_warning(indexed, listed + pruned, ignore_files=present, at_least=not complete)


def count_source_files(root: Path, folders: Sequence[str], *, stop_at: int) -> tuple[int, bool]:
    """How many files in a language the map parses `folders` (under `root`) hold, ignore
    rules not applied, and whether that is all of them: the count stops at `stop_at`
    files or MAX_COUNTED_ENTRIES entries."""
    count = entries = 0
    for folder in folders:
        for _directory, subfolders, names in os.walk(os.path.join(root, folder)):
            subfolders[:] = [f for f in subfolders if not is_default_ignored_dir(f)]
            entries += len(subfolders) + len(names)
            count += sum(
                1
                for n in names
                if language_for(n) is not None and not n.endswith(MINIFIED_SUFFIXES)
            )
            if count >= stop_at or entries >= MAX_COUNTED_ENTRIES:
                return count, False
    return count, True
