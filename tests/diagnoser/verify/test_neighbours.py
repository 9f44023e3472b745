"""Which tests must still pass after a change to a file."""

from __future__ import annotations

from diagnoser.verify.neighbours import MAX_TEST_FILES, is_test_file, neighbour_tests

FILES = {
    "src/shop/cart.py": "", "src/shop/tax.py": "",
    "tests/test_cart.py": "def test(): pass\n",
    "tests/unit/cart_test.py": "",
    "tests/test_checkout.py": "from shop.cart import Cart\n",
    "tests/test_orders.py": "from shop import (\n    tax,\n    cart,\n)\n",
    "tests/test_tax.py": "import shop.tax\n",
    "tests/test_other.py": "import shopping_cart\n",
}  # fmt: skip


def test_conventions_first_then_importers() -> None:
    found = neighbour_tests(["src/shop/cart.py"], FILES, FILES.__getitem__)
    assert found[:2] == ("tests/test_cart.py", "tests/unit/cart_test.py")
    assert set(found[2:]) == {"tests/test_checkout.py", "tests/test_orders.py"}


def test_bounded_and_only_test_files() -> None:
    many = {f"tests/test_{n}.py": "import shop.cart\n" for n in range(20)} | FILES
    assert len(neighbour_tests(["src/shop/cart.py"], many, many.__getitem__)) == MAX_TEST_FILES
    assert neighbour_tests(["README.md"], FILES, FILES.__getitem__) == ()
    assert is_test_file("a/test_x.py") and is_test_file("x_test.py") and not is_test_file("x.py")
