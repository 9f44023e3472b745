"""The neighbouring tests of a changed file: what must still pass after a fix.

By convention (`tests/test_<module>.py`, `test_<module>.py`, `<module>_test.py` anywhere),
then the test files that import the module (`import pkg.mod`, `from pkg.mod import …`,
`from pkg import mod`). Pure but for `read`, which returns a file's text. Bounded:
`MAX_TEST_FILES` files, conventions first.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Collection, Sequence

MAX_TEST_FILES = 5
MAX_SCANNED_TESTS = 400
"""Test files read to find importers (a huge suite is sampled by name first)."""


def is_test_file(path: str) -> bool:
    name = posixpath.basename(path)
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def neighbour_tests(
    changed: Sequence[str], files: Collection[str], read: Callable[[str], str]
) -> tuple[str, ...]:
    """Test files of the repository's `files` that exercise the `changed` Python files."""
    found: dict[str, None] = {}
    tests = sorted(f for f in files if is_test_file(f))
    for path in changed:
        if not path.endswith(".py"):
            continue
        module = posixpath.basename(path)[: -len(".py")]
        conventional = {f"test_{module}.py", f"{module}_test.py"}
        found.update(
            (t, None) for t in tests if posixpath.basename(t) in conventional and t != path
        )
    importers = _import_pattern(changed)
    if importers is not None:
        for test in tests[:MAX_SCANNED_TESTS]:
            if len(found) >= MAX_TEST_FILES:
                break
            if test not in found and test not in changed and importers.search(read(test)):
                found[test] = None
    return tuple(found)[:MAX_TEST_FILES]


def _import_pattern(changed: Sequence[str]) -> re.Pattern[str] | None:
    """Lines importing any of the changed modules, by any dotted name it may have
    (`src/shop/cart.py`: `shop.cart`, `cart`, with `src` or not)."""
    alternatives = []
    for path in changed:
        if not path.endswith(".py"):
            continue
        parts = path[: -len(".py")].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        for start in range(len(parts)):
            dotted = parts[start:]
            alternatives.append(re.escape(".".join(dotted)))
            if len(dotted) > 1:  # from shop import cart
                package, name = ".".join(dotted[:-1]), dotted[-1]
                alternatives.append(rf"{re.escape(package)}\s+import\s+(?:\(?[\w\s,]*\b)?{name}\b")
    if not alternatives:
        return None
    names = "|".join(alternatives)
    return re.compile(rf"^\s*(?:from|import)\s+(?:{names})\b", re.M)
