"""The base gate end to end: real sandboxed runs on a small repository."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from diagnoser.finding import VERIFY_OFF_REASON, ReproducerSource, ReproductionStatus, RunFrame
from diagnoser.intake import ReportIn, build_report
from diagnoser.settings import Settings
from diagnoser.verify import Logs, reproduce
from diagnoser.verify.reproduce import NO_REPRODUCER
from diagnoser.workspace import Workspace
from tests.conftest import MakeRepo
from tests.diagnoser.verify.conftest import CALC_FAILURE, CALC_JAVA, SECRET

ADD_AND_TOTAL = "from shop.cart import Cart\ncart = Cart()\ncart.add('tea', 3)\nprint(cart.total())"


def _attempt(shop: Path, settings: Settings, text: str, home: Path):
    workspace = Workspace(shop, settings)
    report = build_report(ReportIn(text=text, source="bug_report"), files=workspace.file_paths)
    return reproduce(report, workspace, home=home)


def test_a_snippet_that_fails_as_reported_is_reproduced_with_its_frames(
    shop: Path, verifying: Settings, home: Path
) -> None:
    text = (
        f"Adding an item breaks the total:\n\n```python\n{ADD_AND_TOTAL}\n```\n\nKeyError: 'price'"
    )
    attempt = _attempt(shop, verifying, text, home)
    tried = attempt.reproduction
    assert tried.status is ReproductionStatus.REPRODUCED, tried.reason
    assert tried.source is ReproducerSource.SNIPPET
    assert tried.exception == "KeyError: 'price'"
    assert RunFrame(path="shop/cart.py", line=12, function="<genexpr>") in tried.frames
    assert tried.command.endswith("_diagnoser_reproducer.py") and tried.seconds > 0
    log = Logs(home).load(tried.log or "")
    assert log is not None and "KeyError: 'price'" in log and tried.command in log
    assert attempt.traces and attempt.traceback.startswith("Traceback (most recent call last):")
    assert attempt.traceback[attempt.traces[-1].start :].startswith("Traceback")
    assert 'File "shop/cart.py", line 12' in attempt.traceback


def test_a_named_failing_test_is_run_with_pytest(
    shop: Path, verifying: Settings, home: Path
) -> None:
    text = "Since 2.0:\nFAILED tests/test_cart.py::test_total - KeyError: 'price'\n"
    tried = _attempt(shop, verifying, text, home).reproduction
    assert tried.status is ReproductionStatus.REPRODUCED, tried.reason
    assert tried.source is ReproducerSource.NAMED_TEST
    assert "-m pytest" in tried.command and "tests/test_cart.py::test_total" in tried.command
    assert {f.path for f in tried.frames} == {"tests/test_cart.py", "shop/cart.py"}


def test_another_exception_is_a_different_failure(
    shop: Path, verifying: Settings, home: Path
) -> None:
    text = f"```python\n{ADD_AND_TOTAL}\n```\nThis raises a TypeError."
    attempt = _attempt(shop, verifying, text, home)
    assert attempt.reproduction.status is ReproductionStatus.DIFFERENT_FAILURE
    assert "KeyError" in attempt.reproduction.reason and "TypeError" in attempt.reproduction.reason
    assert attempt.traces == ()  # no credit: nothing to rank from


def test_a_snippet_that_runs_clean_is_not_reproduced(
    shop: Path, verifying: Settings, home: Path
) -> None:
    text = "```python\nfrom shop.cart import Cart\nprint(Cart().total())\n```\nKeyError!"
    tried = _attempt(shop, verifying, text, home).reproduction
    assert tried.status is ReproductionStatus.NOT_REPRODUCED and tried.log


def test_a_runtime_without_the_dependency_is_an_error(
    shop: Path, verifying: Settings, home: Path
) -> None:
    text = "```python\nimport requests_that_is_not_installed\n```\nKeyError"
    tried = _attempt(shop, verifying, text, home).reproduction
    assert tried.status is ReproductionStatus.ERROR and "DIAGNOSER_VERIFY_PYTHON" in tried.reason


def test_secrets_are_not_in_the_copy(shop: Path, verifying: Settings, home: Path) -> None:
    text = "```python\nprint(open('.env').read())\n```\nFileNotFoundError"
    tried = _attempt(shop, verifying, text, home).reproduction
    log = Logs(home).load(tried.log or "") or ""
    assert SECRET not in log and "FileNotFoundError" in log


def test_off_by_default_nothing_runs(shop: Path, home: Path) -> None:
    tried = _attempt(shop, Settings(), f"```python\n{ADD_AND_TOTAL}\n```", home).reproduction
    assert tried.status is ReproductionStatus.NOT_ATTEMPTED and tried.reason == VERIFY_OFF_REASON
    assert not (home / "verify").exists()


def test_a_report_without_a_reproducer_says_so(shop: Path, verifying: Settings, home: Path) -> None:
    tried = _attempt(shop, verifying, "The total is wrong.", home).reproduction
    assert tried.status is ReproductionStatus.NOT_ATTEMPTED and tried.reason == NO_REPRODUCER


def test_without_bubblewrap_nothing_runs_unsandboxed(
    shop: Path, verifying: Settings, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    marker = tmp_path / "ran"
    text = f"```python\nopen({str(marker)!r}, 'w').write('x')\n```\nKeyError"
    tried = _attempt(shop, verifying, text, home).reproduction
    assert tried.status is ReproductionStatus.NOT_ATTEMPTED and "bwrap" in tried.reason
    assert not marker.exists()


def test_a_missing_runtime_is_not_attempted_with_why(shop: Path, home: Path) -> None:
    settings = Settings(verify=True, verify_python="/nonexistent/python3")
    tried = _attempt(shop, settings, f"```python\n{ADD_AND_TOTAL}\n```", home).reproduction
    assert tried.status is ReproductionStatus.NOT_ATTEMPTED
    assert "DIAGNOSER_VERIFY_PYTHON" in tried.reason and sys.executable not in tried.reason


PARSE_JS = """function parse(text) {
  const parts = text.split("=");
  return { key: parts[0].trim(), value: parts[1].trim() };
}
module.exports = { parse };
"""


def test_a_javascript_snippet_runs_with_node_requiring_the_package_by_name(
    make_repo: MakeRepo, verifying: Settings, home: Path
) -> None:
    repo = make_repo({
        "package.json": '{"name": "kvparse", "main": "lib/parse.js"}', "lib/parse.js": PARSE_JS,
    })  # fmt: skip
    text = (
        "Parsing a line without `=` crashes:\n\n```js\nconst { parse } = require('kvparse');\n"
        "console.log(parse('novalue'));\n```\n\nTypeError: Cannot read properties of undefined"
    )
    attempt = _attempt(repo, verifying, text, home)
    tried = attempt.reproduction
    assert tried.status is ReproductionStatus.REPRODUCED, tried.reason
    assert tried.command.split()[-1] == "_diagnoser_reproducer.cjs"
    assert tried.frames[-1] == RunFrame(path="lib/parse.js", line=3, function="parse")
    assert tried.exception.startswith("TypeError: Cannot read properties of undefined")
    assert not (repo / "node_modules").exists()  # the link lives in the copy only


def test_a_missing_node_is_not_attempted_with_why(
    make_repo: MakeRepo, verifying: Settings, home: Path
) -> None:
    repo = make_repo({"package.json": '{"name": "kvparse"}', "lib/parse.js": PARSE_JS})
    settings = verifying.model_copy(update={"verify_node": "/nonexistent/node"})
    text = "```js\nrequire('kvparse').parse('x')\n```\nTypeError"
    tried = _attempt(repo, settings, text, home).reproduction
    assert tried.status is ReproductionStatus.NOT_ATTEMPTED and "Node.js" in tried.reason


def test_a_test_command_template_runs_the_named_test_its_way(
    shop: Path, verifying: Settings, home: Path
) -> None:
    template = "{python} -m pytest -x -q --tb=native -p no:cacheprovider -k total {tests}"
    settings = verifying.model_copy(update={"verify_test_command": template})
    text = "FAILED tests/test_cart.py::test_total - KeyError: 'price'"
    tried = _attempt(shop, settings, text, home).reproduction
    assert tried.status is ReproductionStatus.REPRODUCED, tried.reason
    assert tried.command.endswith(
        "-x -q --tb=native -p no:cacheprovider -k total tests/test_cart.py::test_total"
    )
    assert tried.command.startswith(verifying.verify_python or "")


def test_a_test_command_template_without_its_tests_word_is_refused() -> None:
    with pytest.raises(ValueError, match=r"needs \{tests\}"):
        Settings(verify_test_command="{python} -m pytest")


def test_a_named_junit_test_is_compiled_and_run_and_its_frames_placed(
    calc: Path, verifying: Settings, home: Path
) -> None:
    attempt = _attempt(calc, verifying, f"Since 1.2:\n{CALC_FAILURE}\n", home)
    tried = attempt.reproduction
    assert tried.status is ReproductionStatus.REPRODUCED, tried.reason
    assert tried.source is ReproducerSource.NAMED_TEST
    assert "'com.acme.CalcTest#meanOfNothing'" in tried.command and "javac" in tried.command
    assert tried.exception == "java.lang.ArithmeticException: / by zero"
    assert tried.frames[-1] == RunFrame(path="src/main/java/com/acme/Calc.java", line=9,
                                        function="mean")  # fmt: skip
    assert attempt.traceback.startswith("java.lang.ArithmeticException")
    assert not list(calc.rglob("*.class"))  # compiled in the sandbox's own /tmp


def test_junit_names_that_are_no_test_and_code_that_does_not_build_are_errors(
    calc: Path, verifying: Settings, home: Path
) -> None:
    frame = "at com.acme.CalcTest.setUp(CalcTest.java:9)\nArithmeticException"
    tried = _attempt(calc, verifying, frame, home).reproduction
    assert tried.status is ReproductionStatus.ERROR and "(exit 5)" in tried.reason, tried.reason
    broken = calc / "src/main/java/com/acme/Calc.java"
    broken.write_text(CALC_JAVA.replace("int total = 0;", "int total = ;"), encoding="utf-8")
    tried = _attempt(calc, verifying, CALC_FAILURE, home).reproduction
    assert tried.status is ReproductionStatus.ERROR and "(exit 4)" in tried.reason
    assert "Calc.java:5: error" in (Logs(home).load(tried.log or "") or "")


def test_a_missing_jdk_is_not_attempted_with_why(
    calc: Path, verifying: Settings, home: Path
) -> None:
    settings = verifying.model_copy(update={"verify_java": "/nonexistent/java"})
    tried = _attempt(calc, settings, CALC_FAILURE, home).reproduction
    assert tried.status is ReproductionStatus.NOT_ATTEMPTED and "no Java runtime" in tried.reason
    settings = verifying.model_copy(update={"verify_classpath": "/nonexistent/junit.jar"})
    tried = _attempt(calc, settings, CALC_FAILURE, home).reproduction
    assert tried.status is ReproductionStatus.NOT_ATTEMPTED
    assert "/nonexistent/junit.jar" in tried.reason


PARSE_TEST_JS = """const test = require("node:test");
const assert = require("node:assert");
const { parse } = require("../lib/parse");

test("parses a pair", () => {
  assert.deepStrictEqual(parse("a=1"), { key: "a", value: "1" });
});

test("a line without a value", () => {
  assert.deepStrictEqual(parse("novalue").key, "novalue");
});
"""
NODE_FAILURE = "$ node --test test/parse.test.js\n✖ a line without a value (0.4ms)\n"


def test_a_named_node_test_runs_with_nodes_runner_by_its_name(
    make_repo: MakeRepo, verifying: Settings, home: Path
) -> None:
    repo = make_repo({
        "package.json": '{"name": "kvparse"}', "lib/parse.js": PARSE_JS,
        "test/parse.test.js": PARSE_TEST_JS,
    })  # fmt: skip
    attempt = _attempt(repo, verifying, f"Since 2.1:\n{NODE_FAILURE}TypeError", home)
    tried = attempt.reproduction
    assert tried.status is ReproductionStatus.REPRODUCED, tried.reason
    assert "--test-name-pattern=^a line without a value$" in tried.command
    assert tried.frames == [
        RunFrame(path="test/parse.test.js", line=10, function="TestContext.<anonymous>"),
        RunFrame(path="lib/parse.js", line=3, function="parse"),
    ]  # one failure, though Node's summary prints it twice
    log = Logs(home).load(tried.log or "") or ""
    assert "parses a pair (" in log and "does not match pattern" in log  # skipped by name


def test_a_jest_suite_is_not_run_with_nodes_runner(
    make_repo: MakeRepo, verifying: Settings, home: Path
) -> None:
    jest = (
        "const { parse } = require('../lib/parse');\ntest('x', () => expect(parse('a')).toBe(1));\n"
    )
    repo = make_repo({"package.json": '{"name": "kvparse"}', "lib/parse.js": PARSE_JS,
                      "test/parse.test.js": jest})  # fmt: skip
    tried = _attempt(repo, verifying, "FAIL test/parse.test.js\nTypeError", home).reproduction
    assert tried.status is ReproductionStatus.NOT_ATTEMPTED and "node:test" in tried.reason


JUPITER_TEST = """package com.acme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import org.junit.jupiter.api.Test;

class CalcTest {
    @Test
    void meanOfNothing() {
        assertEquals(0, Calc.mean(new int[0]));
    }
}
"""


def test_a_junit_5_test_runs_on_the_junit_platform(
    make_repo: MakeRepo, verifying: Settings, home: Path
) -> None:
    repo = make_repo({"src/main/java/com/acme/Calc.java": CALC_JAVA,
                      "src/test/java/com/acme/CalcTest.java": JUPITER_TEST})  # fmt: skip
    tried = _attempt(repo, verifying, "CalcTest > meanOfNothing() FAILED", home).reproduction
    assert tried.status is ReproductionStatus.REPRODUCED, tried.reason
    assert "DiagnoserJUnitPlatform.java" in tried.command
    assert tried.exception == "java.lang.ArithmeticException: / by zero"
    assert tried.frames[-1].path == "src/main/java/com/acme/Calc.java"


def test_without_the_junit_platform_junit_4_tests_run_with_junit_4_alone(
    calc: Path, verifying: Settings, home: Path
) -> None:
    junit4 = "/usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar"
    settings = verifying.model_copy(update={"verify_classpath": junit4})
    tried = _attempt(calc, settings, CALC_FAILURE, home).reproduction
    assert tried.status is ReproductionStatus.REPRODUCED, tried.reason
    assert "DiagnoserJUnit.java" in tried.command
