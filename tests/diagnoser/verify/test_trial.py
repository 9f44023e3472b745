"""A proposed change run: it must make the reproducer pass and keep every neighbouring
test that passed at base passing."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from diagnoser.finding import TestStatus
from diagnoser.intake import ReportIn, build_report
from diagnoser.settings import Settings
from diagnoser.verify import Logs, reproduce
from diagnoser.verify.trial import Trials
from diagnoser.workspace import Workspace
from tests.diagnoser.verify.conftest import CALC_FAILURE

REPORT = (
    "```python\nfrom shop.cart import Cart\ncart = Cart()\ncart.add('tea', 3)\n"
    "print(cart.total())\n```\nKeyError: 'price'"
)
RENAME = (
    "--- a/shop/cart.py\n+++ b/shop/cart.py\n@@ -8,3 +8,3 @@\n     def add(self, name, price):\n"
    '-        self.items.append({"name": name, "cost": price})\n'
    '+        self.items.append({"name": name, "price": price})\n'
    " \n"
)


@pytest.fixture
def trials(shop: Path, verifying: Settings, home: Path) -> Trials:
    workspace = Workspace(shop, verifying)
    report = build_report(ReportIn(text=REPORT), files=workspace.file_paths)
    attempt = reproduce(report, workspace, home=home)
    assert attempt.bench is not None, attempt.reproduction.reason
    return Trials(workspace, attempt.bench)


def test_a_fix_that_fixes_and_breaks_nothing_passes(trials: Trials, home: Path) -> None:
    tested = trials.test("shop/cart.py", RENAME)
    assert tested.status is TestStatus.PASSED, tested.detail
    assert "1 neighbouring tests pass as at base" in tested.detail  # test_total failed at base
    assert "tests/test_cart.py -rA" in tested.command
    log = Logs(home).load(tested.log or "")
    assert log is not None and "PASSED tests/test_cart.py::test_total" in log


def test_a_fix_that_breaks_a_neighbour_fails_naming_it(trials: Trials) -> None:
    lossy = """--- a/shop/cart.py
+++ b/shop/cart.py
@@ -11,2 +11,2 @@
     def total(self):
-        return sum(item["price"] for item in self.items)
+        return sum(item.get("price", 0) for item in self.items) or None
"""
    tested = trials.test("shop/cart.py", lossy)
    assert tested.status is TestStatus.FAILED
    assert "tests/test_cart.py::test_empty" in tested.detail and "passed at base" in tested.detail


def test_a_fix_that_does_not_fix_fails(trials: Trials) -> None:
    comment = RENAME.replace('"price": price})', '"cost": price})  # noted')
    tested = trials.test("shop/cart.py", comment)
    assert tested.status is TestStatus.FAILED and "reproducer still fails" in tested.detail


def test_a_diff_that_does_not_apply_is_not_run(trials: Trials, shop: Path) -> None:
    tested = trials.test("shop/cart.py", RENAME.replace("cost", "kost"))
    assert tested.status is TestStatus.NOT_RUN and "does not apply" in tested.detail
    assert '"cost"' in (shop / "shop" / "cart.py").read_text()  # the user's tree untouched


def test_no_trial_past_the_budget(trials: Trials) -> None:
    trials.bench = dataclasses.replace(trials.bench, deadline=0.0)
    tested = trials.test("shop/cart.py", RENAME)
    assert tested.status is TestStatus.NOT_RUN and "budget" in tested.detail


GUARD_JAVA = """--- a/src/main/java/com/acme/Calc.java
+++ b/src/main/java/com/acme/Calc.java
@@ -8,3 +8,3 @@
         }
-        return total / values.length;
+        return values.length == 0 ? 0 : total / values.length;
     }
"""


def test_a_java_fix_is_checked_by_its_named_junit_test(
    calc: Path, verifying: Settings, home: Path
) -> None:
    workspace = Workspace(calc, verifying)
    report = build_report(ReportIn(text=CALC_FAILURE), files=workspace.file_paths)
    attempt = reproduce(report, workspace, home=home)
    assert attempt.bench is not None, attempt.reproduction.reason
    trials = Trials(workspace, attempt.bench)
    tested = trials.test("src/main/java/com/acme/Calc.java", GUARD_JAVA)
    assert tested.status is TestStatus.PASSED, tested.detail
    assert "CalcTest#meanOfNothing" in tested.command
    unfixed = GUARD_JAVA.replace("values.length == 0 ? 0 : ", "values.length < 0 ? 0 : ")
    tested = trials.test("src/main/java/com/acme/Calc.java", unfixed)
    assert tested.status is TestStatus.FAILED and "still fails" in tested.detail
