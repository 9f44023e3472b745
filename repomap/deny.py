"""`DenyList`: the one rule that keeps secret files out of the index and of every reader.

Patterns use gitignore syntax (pathspec, git's own semantics); the default list is
`constants.DEFAULT_DENY` (`.env*`, keys, credentials, `.aws/`, `.ssh/`, `.git/`, …).
A path is denied when it, or any folder above it, matches — so `.aws/` denies
`.aws/credentials`, and a `!negation` cannot bring back a file under a denied folder
(git's rule too). A path that is not valid UTF-8 is denied: it cannot be matched safely.

Every way into a repository applies the same object:

- the walk (`files.walk_files`) never enters a denied folder, drops denied files, drops a
  symlink whose own path *or* resolved target is denied, and drops a regular file that is
  a hard link to a denied file inside the tree (`links`). The repo map, the symbol
  index, the terms index and `Workspace.files` are all built from the walk;
- `build` / `Repository.open` take it (the default list unless told otherwise), so
  `python -m repomap` is safe by default;
- the diagnoser's `Workspace.resolve` checks every tool's requested path and its resolved
  target against it, and refuses a hard-linked file the walk did not list.

What a name-based deny-list cannot catch (keep such secrets out of the tree it reads):

- hard links to files outside the walked tree (`innocent.py` sharing an inode with
  `~/.aws/credentials`): a hard link has no target to resolve, and the other name is
  not in the tree to be found;
- secrets pasted into ordinary source files (an API key in `settings.py`): contents are
  never inspected;
- bind mounts (a secret folder mounted at an innocent path inside the repository).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass, field

import pathspec

from repomap.constants import DEFAULT_DENY, DENY_MEMO_ENTRIES


@dataclass(frozen=True, slots=True)
class DenyList:
    """Compiled deny patterns. Raises ValueError naming the first pattern that is invalid."""

    patterns: tuple[str, ...]
    """Gitignore syntax, in order (a later `!pattern` re-allows what an earlier one denied)."""
    _spec: pathspec.GitIgnoreSpec = field(init=False, repr=False, compare=False)
    _memo: dict[str, bool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        patterns = tuple(self.patterns)
        object.__setattr__(self, "patterns", patterns)
        object.__setattr__(self, "_spec", _compile(patterns))
        object.__setattr__(self, "_memo", {})

    @classmethod
    def default(cls) -> DenyList:
        """The default list (`constants.DEFAULT_DENY`)."""
        return _default()

    def extended(self, patterns: Iterable[str]) -> DenyList:
        """This list plus `patterns` (which win over it, being later)."""
        more = tuple(patterns)
        return DenyList((*self.patterns, *more)) if more else self

    def denies(self, rel: str, *, is_dir: bool = False) -> bool:
        """Whether the repo-relative `rel` (`/`-separated), or a folder above it, is denied."""
        if not rel:
            return False  # the root itself
        key = rel + "/" if is_dir else rel
        known = self._memo.get(key)
        if known is None:
            if len(self._memo) >= DENY_MEMO_ENTRIES:
                self._memo.clear()
            known = self._memo[key] = self._denies(rel, is_dir)
        return known

    def matches(self, rel: str, *, is_dir: bool = False) -> bool:
        """Whether `rel` itself matches, its folders taken as allowed: for the walk, which
        checked each folder on its way down. `rel` must be valid UTF-8."""
        return self._spec.match_file(rel + "/" if is_dir else rel)

    def _denies(self, rel: str, is_dir: bool) -> bool:
        if not is_utf8(rel):
            return True
        parts = rel.split("/")
        return any(
            self._spec.match_file("/".join(parts[:i]) + "/") for i in range(1, len(parts))
        ) or self.matches(rel, is_dir=is_dir)


def parse_patterns(text: str) -> tuple[str, ...]:
    """Patterns from a setting's text: a JSON list (`["*.sql", "a,b.txt"]`) or a
    comma-separated list (`*.sql, local/`). Raises ValueError for a JSON list of non-strings."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError:
            value = None  # a pattern such as `[Tt]est.py`, not JSON
        if value is not None:
            if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
                raise ValueError("a JSON deny-list must be a list of strings")
            return tuple(value)
    return tuple(p.strip() for p in stripped.split(",") if p.strip())


def _compile(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    for pattern in patterns:
        if not isinstance(pattern, str) or not is_utf8(pattern):
            raise ValueError(f"invalid deny pattern {pattern!r}: not a UTF-8 string")
    try:
        return pathspec.GitIgnoreSpec.from_lines(patterns)
    except ValueError:  # find the culprit, so the message names it
        for pattern in patterns:
            try:
                pathspec.GitIgnoreSpec.from_lines([pattern])
            except ValueError as exc:
                raise ValueError(f"invalid deny pattern {pattern!r}: {exc}") from None
        raise


def is_utf8(text: str) -> bool:
    """Whether `text` encodes to UTF-8 (a name from the file system may not)."""
    # os.scandir and os.readlink hand out undecodable bytes as lone surrogates.
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@functools.cache
def _default() -> DenyList:
    return DenyList(DEFAULT_DENY)
