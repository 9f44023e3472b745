from __future__ import annotations

import time

from diagnoser.intake.report import FrameOrder, TraceException, TraceFormat
from diagnoser.intake.traces import dotnet
from diagnoser.intake.traces._common import MAX_TRACES_PER_FAMILY
from tests.diagnoser.intake.traces.conftest import read_fixture

SRC = "C:\\src\\Shop\\"


def test_inner_exception_with_async_frames() -> None:
    text = read_fixture("dotnet_inner_async.txt")
    outer, inner = dotnet.parse(text)
    assert outer.format is TraceFormat.DOTNET
    assert outer.source_order is FrameOrder.NEWEST_FIRST
    assert outer.exception == TraceException(
        type="System.InvalidOperationException", message="Checkout failed for basket 42"
    )
    assert [(f.module, f.function, f.file, f.line) for f in outer.frames] == [
        ("Shop.Program", "Main", SRC + "Program.cs", 12),
        (
            "Shop.Checkout.CheckoutService",
            "PlaceOrderAsync",
            SRC + "Checkout\\CheckoutService.cs",
            66,
        ),
    ]
    assert inner.exception == TraceException(
        type="System.Collections.Generic.KeyNotFoundException",
        message="The given key 'SKU-7' was not present in the dictionary.",
    )
    assert [(f.module, f.function, f.line) for f in inner.frames] == [
        ("Shop.Api.Controllers.OrdersController", "Post", 24),
        ("Shop.Checkout.CheckoutService", "PlaceOrderAsync", 58),
        ("Shop.Pricing.PriceList", "For", 31),
        ("System.Collections.Generic.Dictionary`2", "get_Item", None),
    ]
    assert inner.frames[-1].file is None
    assert inner.frames[0].language == "csharp"
    assert text[outer.start :].startswith("Unhandled exception. System.InvalidOperationException")
    assert text[inner.start :].startswith(" ---> System.Collections")
    assert outer.start < inner.start < inner.end < outer.end
    assert text[: outer.end].endswith("Program.cs:line 12")


def test_framework_style_inner_on_same_line_and_generics() -> None:
    text = (
        "Unhandled Exception: System.Exception: outer ---> System.FormatException: bad\n"
        "   at System.Number.ParseInt32(String s)\n"
        "   at App.Util.Parse[T](String s) in /src/Util.cs:line 9\n"
        "   --- End of inner exception stack trace ---\n"
        "   at App.Program.Main() in /src/Program.cs:line 4\n"
    )
    outer, inner = dotnet.parse(text)
    assert outer.exception == TraceException(type="System.Exception", message="outer")
    assert inner.exception == TraceException(type="System.FormatException", message="bad")
    assert [(f.module, f.function) for f in inner.frames] == [
        ("App.Util", "Parse"),
        ("System.Number", "ParseInt32"),
    ]
    assert [(f.function, f.line) for f in outer.frames] == [("Main", 4)]


def test_a_flood_of_inner_exception_headers_is_read_once() -> None:
    # Every line used to start a chain running to the end of the flood: 8,000 lines, 188 s.
    started = time.monotonic()
    assert dotnet.parse(" ---> System.Exception: x\n" * 10_000) == []
    assert time.monotonic() - started < 5


def test_a_chain_is_capped_before_its_frames() -> None:
    text = "System.Exception: top\n" + " ---> System.Exception: inner\n" * 1_000
    found = dotnet.parse(text + "   at A.B.C() in c.cs:line 3\n")
    assert 0 < len(found) <= MAX_TRACES_PER_FAMILY
    assert found[-1].frames[-1].function == "C"
