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
