"""Which reproducers a report carries: named failing tests, then its Python code."""

from __future__ import annotations

from diagnoser.finding import ReproducerSource
from diagnoser.verify.reproducer import JAVA as JAVA_LANGUAGE
from diagnoser.verify.reproducer import (
    JAVASCRIPT,
    MAX_TESTS,
    find_reproducers,
    junit_tests,
    named_tests,
    node_tests,
    snippet,
    top_level_modules,
)

FILES = frozenset({"tests/test_cart.py", "src/shop/cart.py", "tests/unit/test_tax.py"})


def test_a_failing_test_the_report_names_comes_first() -> None:
    text = (
        "CI went red:\n"
        "FAILED tests/test_cart.py::test_total_of_empty_cart - KeyError: 'price'\n"
        "```python\nfrom shop.cart import Cart\nCart().total()\n```\n"
    )
    found = find_reproducers(text, FILES)
    assert [r.source for r in found] == [ReproducerSource.NAMED_TEST, ReproducerSource.SNIPPET]
    assert found[0].tests == ("tests/test_cart.py::test_total_of_empty_cart",)
    assert found[1].code == "from shop.cart import Cart\nCart().total()"


def test_node_ids_keep_classes_and_parameters_and_lose_a_foreign_prefix() -> None:
    text = (
        "/home/ci/build/proj/tests/unit/test_tax.py::TestRates::test_zero[de-0.19] failed\n"
        "and tests/test_cart.py::test_total passed before; docs/x.py::nope is not ours\n"
    )
    assert named_tests(text, FILES) == (
        "tests/unit/test_tax.py::TestRates::test_zero[de-0.19]",
        "tests/test_cart.py::test_total",
    )


def test_named_tests_are_bounded() -> None:
    text = "\n".join(f"tests/test_cart.py::test_{n}" for n in range(MAX_TESTS * 3))
    assert len(named_tests(text, FILES)) == MAX_TESTS


def test_a_console_session_becomes_its_code_without_the_output() -> None:
    text = (
        "Reproduce:\n\n"
        ">>> from shop.cart import Cart\n"
        ">>> cart = Cart()\n"
        ">>> for item in []:\n"
        "...     cart.add(item)\n"
        "...\n"
        ">>> cart.total()\n"
        "Traceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\n'
        "KeyError: 'price'\n"
    )
    assert snippet(text) == (
        "from shop.cart import Cart\ncart = Cart()\nfor item in []:\n    cart.add(item)\n\n"
        "cart.total()"
    )


def test_tracebacks_shell_blocks_and_prose_in_fences_are_not_run() -> None:
    text = (
        '```python\nTraceback (most recent call last):\n  File "x.py", line 1\nKeyError: 1\n```\n'
        "```bash\npip install shop && python -c 'import shop'\n```\n"
        "```\nit just breaks when I click\n```\n"
        "```py\nimport shop\nshop.run()\n```\n"
        "```\nimport shop.cart\nshop.cart.Cart().total()\n```\n"
    )
    assert snippet(text) == "import shop\nshop.run()\n\nimport shop.cart\nshop.cart.Cart().total()"


def test_a_report_without_code_or_tests_has_no_reproducer() -> None:
    text = "The total is wrong when the cart is empty. Expected 0, got an error."
    assert find_reproducers(text, FILES) == []
    assert snippet("```python\nx = 1\n```") == ""  # does nothing: not a reproducer


def test_javascript_fences_are_a_reproducer_only_where_javascript_lives() -> None:
    text = "```js\nconst qs = require('qs');\nqs.parse('a[]=1');\n```\n```json\n{\"a\": 1}\n```"
    with_js = find_reproducers(text, {"lib/parse.js", "package.json"})
    assert [(r.language, r.code) for r in with_js] == [
        ("javascript", "const qs = require('qs');\nqs.parse('a[]=1');")
    ]
    assert find_reproducers(text, FILES) == []


def test_ipython_sessions_and_output_fences() -> None:
    text = (
        "```python\nIn [1]: import arrow\n\n"
        "In [2]: arrow.get('1565358758', 'X')\n"
        "Out[2]: <Arrow [2019-08-09T13:52:38+00:00]>\n\n"
        "In [3]: for x in []:\n   ...:     pass\n```\n"
        "Expected:\n```python\ndatetime.datetime(2019, 8, 9, 13, 52, 38)\n```\n"
        "```python\narrow.get('x').shift(days=1)\n```\n"
    )
    assert snippet(text) == (
        "import arrow\narrow.get('1565358758', 'X')\nfor x in []:\n    pass\n\n"
        "arrow.get('x').shift(days=1)"
    )


def test_a_session_keeps_an_open_string_and_gets_the_import_it_ran_before() -> None:
    text = (
        "```python\n>>> from tomlish import parse\n"
        '>>> content = """[table]\na[t]=1\n"""\n>>> doc = parse(content)\n'
        'Traceback (most recent call last):\n  File "<stdin>", line 1\nKeyError\n```\n'
        "```\nIn [9]: tomlish.loads('x')\n```"
    )
    modules = top_level_modules({"src/tomlish/__init__.py", "src/tomlish/sub/__init__.py",
                                 "tomlish_cli.py", "setup.py", "tests/test_a.py"})  # fmt: skip
    assert modules == {"tomlish", "tomlish_cli"}
    script = snippet(text, modules)
    assert script.startswith("import tomlish\n")
    assert 'content = """[table]\na[t]=1\n"""\ndoc = parse(content)' in script


JAVA = frozenset({
    "pom.xml", "src/main/java/com/acme/Calc.java", "src/test/java/com/acme/CalcTest.java",
    "src/test/java/org/other/CalcTest.java",
})  # fmt: skip


def test_junit_tests_are_read_as_maven_gradle_junit_and_frames_write_them() -> None:
    said = [
        "[ERROR]   CalcTest.meanOfNothing:9 » Arithmetic / by zero",
        "meanOfNothing(com.acme.CalcTest)  Time elapsed: 0.01 s  <<< ERROR!",
        "CalcTest > meanOfNothing() FAILED",
        "mvn test -Dtest=com.acme.CalcTest#meanOfNothing",
        "\tat com.acme.CalcTest.meanOfNothing(CalcTest.java:9)",
    ]
    for text in said:  # unqualified: the shortest path of that name
        assert junit_tests(text, JAVA) == ("src/test/java/com/acme/CalcTest.java::meanOfNothing",)
    qualified = junit_tests("at org.other.CalcTest.mean(CalcTest.java:3)", JAVA)
    assert qualified == ("src/test/java/org/other/CalcTest.java::mean",)


def test_junit_names_outside_the_repositorys_tests_are_not_tests() -> None:
    assert junit_tests("at com.acme.Calc.mean(Calc.java:9)", JAVA) == ()  # not a test class
    assert junit_tests("see CalcTest.java and CalcTest.class", JAVA) == ()  # not methods
    assert junit_tests("at net.elsewhere.CalcTest.run(CalcTest.java:1)", JAVA) == ()
    assert junit_tests("CartTest.total fails", JAVA) == ()  # no such file


def test_a_junit_test_is_a_java_reproducer_only_in_a_repository_with_java() -> None:
    text = "[ERROR]   CalcTest.meanOfNothing:9 » Arithmetic / by zero"
    found = find_reproducers(text, JAVA)
    assert [(r.source, r.language) for r in found] == [(ReproducerSource.NAMED_TEST, JAVA_LANGUAGE)]
    assert find_reproducers(text, FILES) == []


NODE = frozenset({"package.json", "lib/parse.js", "test/parse.test.js", "scripts/build.js"})


def test_node_tests_name_their_file_and_the_failing_tests_it_lists() -> None:
    spec = (
        "$ node --test test/parse.test.js\n✔ parses a pair (2.5ms)\n"
        "✖ a line without a value (0.44ms)\n  TypeError [Error]: Cannot read properties\n"
        "✖ failing tests:\n\ntest at test/parse.test.js:9:1\n✖ a line without a value (0.44ms)\n"
    )
    assert node_tests(spec, NODE) == ("test/parse.test.js::a line without a value",)
    tap = "/home/me/kv/test/parse.test.js\nnot ok 2 - a line without a value\n"
    assert node_tests(tap, NODE) == ("test/parse.test.js::a line without a value",)
    assert node_tests("it fails in test/parse.test.js", NODE) == ("test/parse.test.js",)
    assert node_tests("scripts/build.js and lib/parse.js fail", NODE) == ()  # not tests
    found = find_reproducers("see test/parse.test.js", NODE)
    assert [(r.source, r.language) for r in found] == [(ReproducerSource.NAMED_TEST, JAVASCRIPT)]
