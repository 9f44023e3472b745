"""A small repository with a real bug, and the settings that let it run."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnoser.settings import Settings
from tests.conftest import MakeRepo

CART = '''"""A cart."""


class Cart:
    def __init__(self):
        self.items = []

    def add(self, name, price):
        self.items.append({"name": name, "cost": price})

    def total(self):
        return sum(item["price"] for item in self.items)
'''
TESTS = """from shop.cart import Cart


def test_empty():
    assert Cart().total() == 0


def test_total():
    cart = Cart()
    cart.add("tea", 3)
    assert cart.total() == 3
"""
SECRET = "TOPSECRET-verify-1c2d"


@pytest.fixture
def shop(make_repo: MakeRepo) -> Path:
    return make_repo({
        "shop/__init__.py": "", "shop/cart.py": CART, "tests/test_cart.py": TESTS,
        ".env": f"API_KEY={SECRET}\n",
    })  # fmt: skip


@pytest.fixture
def verifying(home: Path, lean_python: str) -> Settings:
    """Verification on, with an interpreter that has pytest."""
    return Settings(verify=True, verify_python=lean_python, verify_run_seconds=30)


PAGER = """def page_count(total, per_page):
    return max(1, total // per_page)


def page(items, number, per_page):
    if not 1 <= number <= page_count(len(items), per_page):
        raise LookupError(f"page {number} of {page_count(len(items), per_page)}")
    start = (number - 1) * per_page
    return items[start : start + per_page]
"""
PAGER_TESTS = """from pager import page, page_count


def test_one_page_when_empty():
    assert page_count(0, 20) == 1


def test_first_page():
    assert page(list(range(30)), 1, 20) == list(range(20))
"""


@pytest.fixture
def pager(make_repo: MakeRepo) -> Path:
    return make_repo({"pager.py": PAGER, "tests/test_pager.py": PAGER_TESTS})


CALC_JAVA = """package com.acme;

public final class Calc {
    public static int mean(int[] values) {
        int total = 0;
        for (int v : values) {
            total += v;
        }
        return total / values.length;
    }
}
"""
CALC_TEST_JAVA = """package com.acme;

import static org.junit.Assert.assertEquals;
import org.junit.Before;
import org.junit.Test;

public class CalcTest {
    @Before
    public void setUp() {
    }

    @Test
    public void meanOfNothing() {
        assertEquals(0, Calc.mean(new int[0]));
    }

    @Test
    public void meanOfTwo() {
        assertEquals(2, Calc.mean(new int[] {1, 3}));
    }
}
"""
CALC_FAILURE = "[ERROR]   CalcTest.meanOfNothing:14 » Arithmetic / by zero"


@pytest.fixture
def calc(make_repo: MakeRepo) -> Path:
    """A Maven-laid Java project whose JUnit 4 test fails (a division by an empty length)."""
    return make_repo({
        "pom.xml": "<project/>\n", "src/main/java/com/acme/Calc.java": CALC_JAVA,
        "src/test/java/com/acme/CalcTest.java": CALC_TEST_JAVA,
    })  # fmt: skip
