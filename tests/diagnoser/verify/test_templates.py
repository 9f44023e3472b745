"""Repair templates: the candidate edits each failure kind gets (they are only shown
after a run passed them: `test_fixes`)."""

from __future__ import annotations

from diagnoser.verify.templates import MAX_CANDIDATES, repairs

SOURCE = """def pages(total, per_page):
    return max(1, total // per_page)


def price(item):
    return item["price"] * 2


def share(total, people):
    return total / people


def last(items, n):
    return items[n]


def owner_name(note):
    return note.owner.name


def window(items, size):
    return [items[i] for i in range(len(items) - 1)]


async def fetch(client):
    data = client.get()
    return data
"""


def _edits(line: int, exception: str = "", message: str = "", context=()) -> dict[str, str]:
    found = repairs("m.py", SOURCE, fault_line=line, context_lines=context, exception=exception,
                    message=message)  # fmt: skip
    return {r.template: _added(r.diff) for r in found}


def _added(diff: str) -> str:
    """The lines a diff adds, without their `+`."""
    lines = diff.splitlines(keepends=True)
    return "".join(
        line[1:] for line in lines if line.startswith("+") and not line.startswith("+++")
    )


def test_each_failure_kind_gets_its_template_at_the_fault_line() -> None:
    assert _edits(6, "KeyError", "'price'")["default-for-missing-key"].strip() == \
        'return item.get("price") * 2'  # fmt: skip
    assert _edits(10, "ZeroDivisionError", "division by zero")["guard-division"].strip() == \
        "return (total / people if people else 0)"  # fmt: skip
    assert _edits(14, "IndexError", "list index out of range")["bounds-check"].strip() == \
        "return (items[n] if -len(items) <= n < len(items) else None)"  # fmt: skip
    guard = _edits(18, "AttributeError", "'NoneType' object has no attribute 'name'")["guard-none"]
    assert guard == "    if note.owner is None:\n        return None\n"
    awaited = _edits(26, "RuntimeWarning", "coroutine 'get' was never awaited")["await-call"]
    assert awaited.strip() == "data = await client.get()"


def test_off_by_one_templates_apply_at_the_fault_and_its_context() -> None:
    assert _edits(2)["ceiling-division"].strip() == "return max(1, -(-total // per_page))"
    assert _edits(22)["range-end"].strip() in {
        "return [items[i] for i in range(len(items) - 1 + 1)]",
        "return [items[i] for i in range(len(items))]",
    }
    assert "ceiling-division" in _edits(14, "IndexError", context=[2])


def test_comparison_bounds_flip_one_operator_at_a_time() -> None:
    source = "def ok(page, pages):\n    return 1 <= page <= pages\n"
    found = repairs("m.py", source, fault_line=2)
    changed = sorted(r.diff.splitlines()[-1].strip() for r in found)
    assert changed == ["+    return 1 < page <= pages", "+    return 1 <= page < pages"]


def test_nothing_to_repair_or_no_python_gives_no_candidates() -> None:
    assert repairs("m.py", "x = 1\n", fault_line=1) == []
    assert repairs("m.js", "const x = ;", fault_line=1) == []
    many = "def f(a):\n" + "".join(f"    a{n} = a // {n + 1}\n" for n in range(40))
    assert len(repairs("m.py", many, fault_line=2, context_lines=range(3, 42))) == MAX_CANDIDATES
