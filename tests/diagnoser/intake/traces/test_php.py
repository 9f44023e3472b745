from __future__ import annotations

from diagnoser.constants import MAX_FRAMES
from diagnoser.intake.report import FrameOrder, TraceException, TraceFormat
from diagnoser.intake.traces import php
from tests.diagnoser.intake.traces.conftest import read_fixture

APP = "/var/www/app"


def test_uncaught_exception_with_stack_trace() -> None:
    text = read_fixture("php_uncaught.txt")
    (trace,) = php.parse(text)
    assert trace.format is TraceFormat.PHP
    assert trace.source_order is FrameOrder.NEWEST_FIRST
    assert trace.exception == TraceException(
        type="InvalidArgumentException", message='Unknown coupon "SPRING"'
    )
    assert [(f.module, f.function, f.file, f.line) for f in trace.frames] == [
        (None, "{main}", None, None),
        (None, "call_user_func_array", f"{APP}/public/index.php", 20),
        ("App\\Controller\\CheckoutController", "submit", None, None),
        (
            "App\\Checkout\\Checkout",
            "applyCoupon",
            f"{APP}/src/Controller/CheckoutController.php",
            37,
        ),
        ("App\\Coupon\\CouponRepository", "get", f"{APP}/src/Checkout/Checkout.php", 112),
        (None, None, f"{APP}/src/Coupon/CouponRepository.php", 48),
    ]
    assert (trace.start, trace.end) == (0, len(text.rstrip("\n")))


def test_exception_cast_to_string_with_next() -> None:
    text = (
        "RuntimeException: db down in /app/Db.php:10\n"
        "Stack trace:\n"
        "#0 /app/index.php(3): Db::connect()\n"
        "#1 {main}\n"
        "\n"
        "Next LogicException: cannot boot in /app/Kernel.php:22\n"
        "Stack trace:\n"
        "#0 {main}\n"
    )
    first, second = php.parse(text)
    assert first.exception == TraceException(type="RuntimeException", message="db down")
    assert [(f.module, f.function, f.line) for f in first.frames] == [
        (None, "{main}", None),
        ("Db", "connect", 3),
        (None, None, 10),
    ]
    assert second.exception == TraceException(type="LogicException", message="cannot boot")


def test_message_containing_in_uses_last_location() -> None:
    text = "PHP Fatal error:  Uncaught Error: called in a loop in /app/x.php:5\n"
    (trace,) = php.parse(text)
    assert trace.exception == TraceException(type="Error", message="called in a loop")
    assert [(f.file, f.line) for f in trace.frames] == [("/app/x.php", 5)]


def test_a_capped_stack_keeps_the_frame_where_it_was_thrown() -> None:
    frames = "".join(f"#{i} /app/f{i}.php({i + 1}): f{i}()\n" for i in range(600))
    text = "PHP Fatal error:  Uncaught Exception: boom in /app/x.php:7\nStack trace:\n" + frames
    (trace,) = php.parse(text)
    assert (trace.frames[-1].file, trace.frames[-1].line) == ("/app/x.php", 7)
    assert trace.frames[-2].file == "/app/f0.php"
    assert len(trace.frames) == MAX_FRAMES and trace.omitted_frames == 601 - MAX_FRAMES
