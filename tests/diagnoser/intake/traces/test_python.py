from __future__ import annotations

from diagnoser.intake.report import FrameOrder, TraceException, TraceFormat
from diagnoser.intake.traces import parse_traces, python
from tests.diagnoser.intake.traces.conftest import read_fixture, where


def test_traceback_in_markdown_fence_with_carets() -> None:
    text = read_fixture("python_github_issue.md")
    (trace,) = python.parse(text)
    site = "/home/maria/.venvs/billing/lib/python3.12/site-packages/billing"
    assert where(trace) == [
        (f"{site}/cli.py", 88, "main"),
        (f"{site}/export.py", 142, "export"),
    ]
    assert trace.exception == TraceException(type="KeyError", message="'pdf'")
    assert trace.format is TraceFormat.PYTHON
    assert trace.source_order is FrameOrder.OLDEST_FIRST
    assert text[trace.start :].startswith("Traceback (most recent call last):")
    assert text[: trace.end].endswith("KeyError: 'pdf'")
    assert all(f.language == "python" and f.module is None for f in trace.frames)
    assert all(f.in_app is None for f in trace.frames)


def test_chained_exceptions_are_split_in_text_order() -> None:
    text = read_fixture("python_chained.txt")
    first, second = python.parse(text)
    assert first.exception == TraceException(
        type="TypeError", message="'NoneType' object is not subscriptable"
    )
    assert where(first) == [("/srv/inventory/stock/db.py", 57, "fetch_level")]
    assert second.exception == TraceException(
        type="stock.errors.StockError", message="no stock row for SKU-9"
    )
    assert where(second) == [
        ("/srv/inventory/manage.py", 12, "<module>"),
        ("/srv/inventory/stock/service.py", 30, "reserve"),
        ("/srv/inventory/stock/service.py", 22, "fetch_level"),
    ]
    assert first.end < second.start
    assert "During handling" not in text[first.start : first.end]


def test_windows_paths_are_kept_as_written() -> None:
    (trace,) = python.parse(read_fixture("python_windows.txt"))
    assert where(trace) == [
        (r"C:\Program Files\Python311\Lib\runpy.py", 198, "_run_module_as_main"),
        (r"C:\Users\dev\shop\shop\sync.py", 41, "<module>"),
        (r"C:\Users\dev\shop\shop\sync.py", 17, "load_orders"),
    ]
    assert trace.exception is not None
    assert trace.exception.type == "FileNotFoundError"
    assert trace.exception.message == (
        r"[Errno 2] No such file or directory: 'D:\\exports\\orders.csv'"
    )


def test_crlf_line_endings_keep_offsets_exact() -> None:
    text = read_fixture("python_chained.txt").replace("\n", "\r\n")
    first, second = python.parse(text)
    assert where(second)[-1] == ("/srv/inventory/stock/service.py", 22, "fetch_level")
    assert second.exception is not None
    assert second.exception.message == "no stock row for SKU-9"
    assert text[second.start : second.end].endswith("SKU-9")
    assert text[first.start : first.end].endswith("not subscriptable")


def test_pytest_long_form_takes_function_names_from_def_lines() -> None:
    text = read_fixture("python_pytest.txt")
    (trace,) = python.parse(text)
    assert where(trace) == [
        ("tests/test_cart.py", 14, "test_total"),
        ("shop/cart.py", 27, "total"),
    ]
    assert trace.exception == TraceException(
        type="TypeError", message="unsupported operand type(s) for *: 'NoneType' and 'int'"
    )
    assert text[trace.start :].startswith("    def test_total():")
    assert text[: trace.end].endswith("shop/cart.py:27: TypeError")


def test_pytest_short_form_frames() -> None:
    (trace,) = python.parse(read_fixture("python_pytest_short.txt"))
    assert where(trace) == [
        ("tests/test_pricing.py", 31, "test_discount"),
        ("shop/pricing.py", 12, "apply_discount"),
    ]
    assert trace.exception == TraceException(type="KeyError", message="'SPRING'")


def test_pytest_assertion_without_e_type() -> None:
    text = "tests/test_a.py:3: in test_a\n    assert f() == 2\nE   assert 1 == 2\n"
    (trace,) = python.parse(text)
    assert where(trace) == [("tests/test_a.py", 3, "test_a")]
    assert trace.exception is None


def test_pytest_warning_summary_is_not_a_trace() -> None:
    assert python.parse("tests/test_a.py:3: DeprecationWarning: old api\n") == []


def test_ipython_cell_and_file_frames() -> None:
    (trace,) = python.parse(read_fixture("python_ipython.txt"))
    assert where(trace) == [("Cell In[4]", 3, None), ("~/work/stats/stats.py", 8, "mean")]
    assert trace.exception == TraceException(type="ZeroDivisionError", message="division by zero")


def test_old_ipython_arrow_sets_line() -> None:
    text = (
        "ValueError                                Traceback (most recent call last)\n"
        "<ipython-input-2-9f8e> in <module>\n"
        "----> 1 load('x')\n"
        "\n"
        "~/proj/io.py in load(path)\n"
        "      3 def load(path):\n"
        "----> 4     raise ValueError(path)\n"
        "\n"
        "ValueError: x\n"
    )
    (trace,) = python.parse(text)
    assert where(trace) == [("<ipython-input-2-9f8e>", 1, "<module>"), ("~/proj/io.py", 4, "load")]
    assert trace.exception == TraceException(type="ValueError", message="x")


def test_exception_without_message_and_indented_log_prefix() -> None:
    text = (
        "worker | Traceback (most recent call last):\n"
        'worker |   File "/app/run.py", line 5, in <module>\n'
        "worker |     loop()\n"
        "worker | KeyboardInterrupt\n"
    )
    (trace,) = python.parse(text)
    assert where(trace) == [("/app/run.py", 5, "<module>")]
    assert trace.exception == TraceException(type="KeyboardInterrupt", message=None)
    assert text[trace.start :].startswith("Traceback")


def test_prose_mentioning_traceback_alone_is_ignored() -> None:
    assert python.parse("I got a Traceback (most recent call last): and nothing else\n") == []


def test_markdown_blockquote_prefix_is_followed() -> None:
    text = (
        "> Traceback (most recent call last):\n"
        '>   File "/app/x.py", line 3, in <module>\n'
        ">     run()\n"
        "> RuntimeError: boom\n"
    )
    (trace,) = python.parse(text)
    assert where(trace) == [("/app/x.py", 3, "<module>")]
    assert trace.exception == TraceException(type="RuntimeError", message="boom")


def test_a_traceback_pasted_without_its_header() -> None:
    text = (
        "Relevant part of the traceback:\n\n"
        '  File "/venv/site-packages/psutil/__init__.py", line 748, in cmdline\n'
        "    return self._proc.cmdline()\n"
        '  File "/venv/site-packages/psutil/_psosx.py", line 405, in cmdline\n'
        "    return cext.proc_cmdline(self.pid)\n"
        "OSError: [Errno 0] Undefined error: 0\n"
    )
    (trace,) = python.parse(text)
    assert [(f.file, f.line) for f in trace.frames] == [
        ("/venv/site-packages/psutil/__init__.py", 748),
        ("/venv/site-packages/psutil/_psosx.py", 405),
    ]
    assert trace.exception == TraceException(type="OSError", message="[Errno 0] Undefined error: 0")
    assert text[trace.start :].startswith('File "/venv/site-packages/psutil/__init__.py"')


FAULT = """Fatal Python error: Segmentation fault

Thread 0x00007f01 (most recent call first):
  File "/usr/lib/python3.10/threading.py", line 320 in wait

Current thread 0x0000725dacb1fb80 (most recent call first):
  File "/app/site-packages/sanic/asgi.py", line 135 in create
  File "/app/site-packages/sanic_testing/testing.py", line 324 in app_call
  <no Python frame>

Extension modules: multidict._multidict (total: 1)
"""


def test_faulthandler_dump_of_the_crashed_thread() -> None:
    (trace,) = python.parse(FAULT)
    assert trace.source_order is FrameOrder.NEWEST_FIRST
    assert [(f.file, f.line, f.function) for f in trace.frames] == [
        ("/app/site-packages/sanic_testing/testing.py", 324, "app_call"),
        ("/app/site-packages/sanic/asgi.py", 135, "create"),
    ]
    assert trace.exception == TraceException(
        type="Fatal Python error", message="Segmentation fault"
    )
    assert parse_traces(FAULT) == [trace]


def test_source_lines_that_lost_their_indentation_stay_inside_the_traceback() -> None:
    text = (
        "Traceback (most recent call last):\n"
        'File "/srv/django/contrib/sessions/backends/base.py", line 118, in decode\n'
        "return signing.loads(session_data)\n"
        'File "/srv/django/core/signing.py", line 184, in unsign\n'
        "raise BadSignature(sig)\n"
        "django.core.signing.BadSignature: Signature does not match\n"
    )
    (trace,) = python.parse(text)
    assert [f.function for f in trace.frames] == ["decode", "unsign"]
    assert trace.exception == TraceException(
        type="django.core.signing.BadSignature", message="Signature does not match"
    )


def test_a_frame_line_wrapped_by_the_terminal_is_joined() -> None:
    site = "/home/someone/.local/share/virtualenvs/project-O9qARFZW/lib/python3.9/site-packages"
    text = (
        "Traceback (most recent call last):\n"
        f' File "{site}/django/core/management/__init__.py", line 446, in e\n'
        "xecute_from_command_line\n"
        "\tutility.execute()\n"
        f' File "{site}/django/core/management/commands/migrate.py", line 3\n'
        "49, in handle\n"
        "\tpost_migrate_state = executor.migrate()\n"
        "AttributeError: 'str' object has no attribute '_meta'\n"
    )
    (trace,) = python.parse(text)
    assert [(f.line, f.function) for f in trace.frames] == [
        (446, "execute_from_command_line"),
        (349, "handle"),
    ]
    assert trace.exception is not None and trace.exception.type == "AttributeError"


def test_an_exception_after_a_frame_without_source_is_the_exception() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\n'
        "ZeroDivisionError: division by zero\n"
        "ERROR: the job failed\n"
    )
    (trace,) = python.parse(text)
    assert trace.exception == TraceException(type="ZeroDivisionError", message="division by zero")
