"""The base gate, fail-closed: only a run that fails the way the report says is
`reproduced`."""

from __future__ import annotations

from diagnoser.finding import ReproducerSource, ReproductionStatus, RunFrame
from diagnoser.intake import ReportIn, build_report
from diagnoser.verify.sandbox import SandboxRun
from diagnoser.verify.verdict import expected_exceptions, judge

FILES = frozenset({"shop/cart.py", "tests/test_cart.py"})
SNIPPET = ReproducerSource.SNIPPET
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "_diagnoser_reproducer.py", line 2, in <module>\n'
    "    Cart().total()\n"
    '  File "shop/cart.py", line 9, in total\n'
    "    return sum(p['price'] for p in self.items)\n"
    '  File "/usr/lib/python3.11/functools.py", line 4, in wrapper\n'
    "    return f()\n"
    "{error}\n"
)


def _run(output: str, exit_code: int = 1, *, timed_out: bool = False) -> SandboxRun:
    return SandboxRun(exit_code, output, len(output), 0.4, timed_out)


def _report(text: str) -> object:
    return build_report(ReportIn(text=text, source="bug_report"))


def test_same_exception_with_a_repository_frame_is_reproduced() -> None:
    report = _report("Cart().total() on an empty cart raises KeyError: 'price'")
    verdict = judge(_run(TRACEBACK.format(error="KeyError: 'price'")), report, FILES, SNIPPET)
    assert verdict.status is ReproductionStatus.REPRODUCED
    assert verdict.exception == "KeyError: 'price'"
    assert verdict.frames == (RunFrame(path="shop/cart.py", line=9, function="total"),)
    assert verdict.traces and verdict.traces[-1].exception.type == "KeyError"


def test_another_exception_is_a_different_failure_naming_both() -> None:
    report = _report("Cart().total() raises KeyError")
    verdict = judge(_run(TRACEBACK.format(error="TypeError: bad operand")), report, FILES, SNIPPET)
    assert verdict.status is ReproductionStatus.DIFFERENT_FAILURE
    assert "TypeError" in verdict.reason and "KeyError" in verdict.reason


def test_the_same_exception_outside_the_repository_earns_no_credit() -> None:
    report = _report("raises KeyError")
    output = (
        "Traceback (most recent call last):\n"
        '  File "_diagnoser_reproducer.py", line 1, in <module>\n'
        "    {}['x']\nKeyError: 'x'\n"
    )
    verdict = judge(_run(output), report, FILES, SNIPPET)
    assert verdict.status is ReproductionStatus.DIFFERENT_FAILURE
    assert "no frame" in verdict.reason


def test_a_clean_run_is_not_reproduced() -> None:
    verdict = judge(_run("42\n", 0), _report("raises KeyError"), FILES, SNIPPET)
    assert verdict.status is ReproductionStatus.NOT_REPRODUCED


def test_a_report_naming_no_exception_credits_only_its_named_test() -> None:
    report = _report("tests/test_cart.py::test_total fails since 2.0")
    output = TRACEBACK.format(error="AssertionError: assert 3 == 0")
    named = judge(_run(output), report, FILES, ReproducerSource.NAMED_TEST)
    assert named.status is ReproductionStatus.REPRODUCED
    assert (
        judge(_run(output), report, FILES, SNIPPET).status is ReproductionStatus.DIFFERENT_FAILURE
    )


def test_a_missing_dependency_is_the_runtimes_error_not_the_reports() -> None:
    report = _report("raises KeyError")
    output = TRACEBACK.format(error="ModuleNotFoundError: No module named 'requests'")
    verdict = judge(_run(output), report, FILES, SNIPPET)
    assert verdict.status is ReproductionStatus.ERROR
    assert "DIAGNOSER_VERIFY_PYTHON" in verdict.reason


def test_limits_and_timeouts_say_what_stopped_the_run() -> None:
    report = _report("raises KeyError")
    assert "did not finish" in judge(_run("", -9, timed_out=True), report, FILES, SNIPPET).reason
    assert "CPU" in judge(_run("", 128 + 24), report, FILES, SNIPPET).reason
    assert "file-size" in judge(_run("", -25), report, FILES, SNIPPET).reason
    sandbox = judge(_run("bwrap: Can't mkdir /x: Read-only file system\n"), report, FILES, SNIPPET)
    assert sandbox.status is ReproductionStatus.ERROR


def test_a_named_test_that_cannot_be_found_or_built_is_an_error_showing_why() -> None:
    report = _report("tests/test_cart.py::test_gone fails")
    verdict = judge(_run("ERROR: not found: tests/test_cart.py::test_gone\n", 4), report, FILES,
                    ReproducerSource.NAMED_TEST)  # fmt: skip
    assert verdict.status is ReproductionStatus.ERROR
    assert "could not be built or found" in verdict.reason and "test_gone" in verdict.reason


JAVA_FILES = frozenset({"src/main/java/com/acme/Calc.java", "src/test/java/com/acme/CalcTest.java"})
JAVA_FAILURE = (
    "java.lang.ArithmeticException: / by zero\n"
    "\tat com.acme.Calc.mean(Calc.java:9)\n"
    "\tat com.acme.CalcTest.meanOfNothing(CalcTest.java:9)\n"
    "\tat org.junit.runners.ParentRunner.run(ParentRunner.java:413)\n"
)


def test_jvm_frames_naming_only_their_file_are_placed_by_their_class() -> None:
    report = _report("CalcTest.meanOfNothing fails with an ArithmeticException")
    verdict = judge(_run(JAVA_FAILURE), report, JAVA_FILES, ReproducerSource.NAMED_TEST,
                    frozenset({"java"}))  # fmt: skip
    assert verdict.status is ReproductionStatus.REPRODUCED, verdict.reason
    assert verdict.frames == (
        RunFrame(path="src/test/java/com/acme/CalcTest.java", line=9, function="meanOfNothing"),
        RunFrame(path="src/main/java/com/acme/Calc.java", line=9, function="mean"),
    )


def test_a_failure_printed_again_in_a_summary_is_one_failure() -> None:
    report = _report("It raises ArithmeticException")
    twice = f"{JAVA_FAILURE}\nFailures:\n{JAVA_FAILURE}"
    verdict = judge(_run(twice), report, JAVA_FILES, SNIPPET, frozenset({"java"}))
    assert len(verdict.traces) == 1 and len(verdict.frames) == 2


def test_expected_exceptions_come_from_the_trace_and_the_prose() -> None:
    report = _report(
        "Since 2.1 `load()` fails with a yaml.constructor.ConstructorError, and sometimes a "
        'ValueError.\n\nTraceback (most recent call last):\n  File "a.py", line 1, in f\n'
        "    g()\nshop.errors.CartError: empty\n"
    )
    assert expected_exceptions(report) >= {"ConstructorError", "ValueError", "CartError"}


def test_an_exception_named_loosely_still_counts() -> None:
    report = _report("With 3.0 the same expression raises UndefinedException.")
    output = TRACEBACK.format(error="jinja2.exceptions.UndefinedError: 'dict object' has no 'a'")
    verdict = judge(_run(output), report, FILES, SNIPPET)
    assert verdict.status is ReproductionStatus.REPRODUCED


def test_a_report_whose_traceback_lost_its_last_line_is_matched_by_place() -> None:
    cut = (
        "Running it:\n\nTraceback (most recent call last):\n"
        '  File "/home/me/venv/lib/site-packages/shop/cart.py", line 9, in total\n'
        "    return sum(p['price'] for p in self.items)\n"
    )
    report = build_report(ReportIn(text=cut, source="bug_report"), files=FILES)
    output = TRACEBACK.format(error="TypeError: unsupported operand")
    verdict = judge(_run(output), report, FILES, SNIPPET)
    assert verdict.status is ReproductionStatus.REPRODUCED
    assert "shop/cart.py:total" in verdict.reason
    elsewhere = TRACEBACK.format(error="TypeError: x").replace("in total", "in add")
    assert (
        judge(_run(elsewhere), report, FILES, SNIPPET).status
        is ReproductionStatus.DIFFERENT_FAILURE
    )


def test_a_cut_traceback_is_matched_by_place_whatever_its_prose_names() -> None:
    cut = (
        "Error classes take different parameters (UnexpectedCharError takes three).\n\n"
        "Traceback (most recent call last):\n"
        '  File "/venv/lib/site-packages/shop/cart.py", line 9, in total\n'
        "    return sum(p['price'] for p in self.items)\n"
    )
    report = build_report(ReportIn(text=cut, source="bug_report"), files=FILES)
    verdict = judge(_run(TRACEBACK.format(error="TypeError: x")), report, FILES, SNIPPET)
    assert verdict.status is ReproductionStatus.REPRODUCED
