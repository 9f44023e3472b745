"""What a file is for, by its path: tests, examples and docs, copies, shared utilities.
Pure.

Each ecosystem's conventions (`test_*.py`, `*_test.go`, `*.spec.ts`, `__tests__/`, Rust
`benches/`, `src/test/`, `FooTest.java`, `*_spec.rb`, `Foo.Tests/`, Swift `Tests/`…) and
copies of code whose implementation is elsewhere (`repomap.copies`). The candidate
ranking (`diagnoser.candidates`) puts tests, docs and copies after everything else and
indexes no test for BM25.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from repomap.copies import is_copy

_UTILITY = re.compile(r"(?:^|/)(?:utils?|helpers?|common|compat|_api)(?:/|\.[A-Za-z]+$)")
_TEST_NAME = re.compile(
    r"^test|^conftest\.py$|_tests?\.\w+$|[._-](?:test|spec)\.\w+$|_spec\.\w+$"
    r"|(?:Test|Tests|Spec|IT)\.(?:java|kt|scala|groovy|cs|swift)$"
    r"|^Tests?[A-Z]\w*\.(?:java|kt|scala|groovy|cs|swift)$"
)
"""A test file by its name in each ecosystem: Python `test_x.py`, `x_test.py`,
`tests.py`; Go `x_test.go`; JS/TS `x.test.ts`, `x.spec.js`, `x-spec.ts`; Ruby
`x_spec.rb`; JVM/.NET/Swift `CartTest.java`, `CartTests.cs`, `TestCart.java`. A lower-case
name starting with `test` is test support too: `testing.py` (`click.testing`,
`sklearn.utils.testing`), Go's `testing.go` and `testutil.go` hold fakes and helpers for
tests (measured: calling them product code put `click/testing.py` and
`sklearn/utils/testing.py` first in two cases). `test` inside a word is not a test:
`contest.go`, `latest.ts`, `Testimony.java`."""
_TEST_DIR = re.compile(
    r"(?:^|/)(?:tests?|Tests?|testing|__tests__|spec|__mocks__|testdata|benches|"
    r"unittests?|fixtures|__fixtures__|__snapshots__|androidTest|"
    r"[\w.]+\.(?:Unit|Integration)?Tests?)/"
    r"|(?:^|/)src/(?:it|integrationTest|integration-test|testFixtures|jmh)/"
)
"""A test folder in each ecosystem: `tests/`, `test/` (Java's `src/test/`, C/C++, PHP),
Swift's `Tests/`, Go's `testdata/`, JS `__tests__/`, `__mocks__/`, `__snapshots__/`, Rust
`tests/` and `benches/`, Android's `src/androidTest/`, C++ `unittest(s)/`, Ruby `spec/`,
fixtures, and .NET test projects (`Foo.Tests/`, `Foo.Test/`, `Foo.UnitTests/`)."""
_AUXILIARY = re.compile(
    r"^(?:[\w.]+[-_])?(?:examples?|samples?|docs?|benchmarks?|tutorials?|galleries|demos?|"
    r"scripts?)/"
    r"|(?:^|/)(?:setup|conftest)\.py$"
)
"""Top-level folders only, alone or as a module's suffix (Maven/Gradle `picocli-examples/`,
`log4j-samples/`): `com/demo/notes/` is a package, not a demo."""
_PRODUCT_TREE = re.compile(r"(?:^|/)src/main/")
"""Maven/Gradle's product sources: nothing under them is a test, whatever its name
(JUnit's own `TestIdentifier.java`, `TestPlan.java`)."""


def is_test(path: str) -> bool:
    """Test code by the common conventions: `test_*.py`, `*_test.go`, `*.spec.ts`,
    `FooTest.java`, `conftest.py`, and anything under `tests/`, `test/` (`src/test/`,
    Maven's `src/it/`), `testing/`, `__tests__/` or `spec/` — never under `src/main/`."""
    if _PRODUCT_TREE.search(path):
        return False
    name = path.rsplit("/", 1)[-1]
    return bool(_TEST_NAME.search(name) or _TEST_DIR.search(path))


def is_peripheral(path: str) -> bool:
    """Tests, examples, docs and build scripts: where fixes rarely land."""
    return is_test(path) or bool(_AUXILIARY.search(path))


def is_secondary(path: str, stems: Collection[str] = ()) -> bool:
    """Ranked after every other candidate, by its path: tests, examples, docs and build
    scripts (`is_peripheral`), and copies (`repomap.copies.is_copy`: vendored, generated,
    amalgamated, declarations, build output beside its `src/` twin). Still listed as
    context — and first when nothing else matches."""
    return is_peripheral(path) or is_copy(path, stems)


def is_utility(path: str) -> bool:
    return bool(_UTILITY.search(path))
