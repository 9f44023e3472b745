from __future__ import annotations

import pytest

from diagnoser.intake.mentions import code_lines, find_mentions

TEXT = """The app crashes in `NoteStore.save` when I save. See notes/store.py:42 and
django.db.models.query (docs: https://example.com/guide/setup.py).
File "/usr/lib/python3/site-packages/django/db/models/query.py", line 248, in __repr__
Calling fetch_all() fails; getUserById returned null. C:\\Users\\me\\app\\main.py
"""


def test_files_modules_and_identifiers_in_order() -> None:
    found = find_mentions(TEXT)
    assert found.files == [
        "notes/store.py",
        "/usr/lib/python3/site-packages/django/db/models/query.py",
        "C:\\Users\\me\\app\\main.py",
    ]
    assert found.modules == ["django.db.models.query"]
    assert found.identifiers == ["NoteStore", "save", "fetch_all", "getUserById"]


def test_urls_and_prose_are_not_mentions() -> None:
    found = find_mentions("Please see https://example.com/a/b.py, thanks. It is e.g. fine.")
    assert found.files == [] and found.modules == [] and found.identifiers == []


def test_caps_and_huge_input() -> None:
    text = " ".join(f"name_{i}" for i in range(500)) + " x.py" * 10
    found = find_mentions(text * 100)
    assert len(found.identifiers) == 30 and found.files == ["x.py"]


def test_names_in_code_the_reporter_ran() -> None:
    text = (
        "Multiplying on the left is wrong\n\n"
        ">>> from sympy import Poly, Symbol as S\n"
        ">>> x*Poly(x)\n"
        "x*Poly(x, x, domain='ZZ')\n"
        "In [3]: expr.subs(a, b).doit()\n\n"
        "```python\n"
        "model = make_pipeline().fit(X)\n"
        "model.score_samples(X)\n"
        "```\n"
        "Outside code, a.prose_call(x) chain is not read as code.\n"
    )
    found = find_mentions(text)
    assert found.identifiers[:2] == ["Poly", "subs"]
    for name in ("doit", "Symbol", "make_pipeline", "fit", "score_samples"):
        assert name in found.identifiers, name
    assert "S" not in found.identifiers


def test_code_lines_are_fenced_blocks_and_repl_input() -> None:
    text = "prose x.y()\n```\na.b()\n```\n>>> c.d()\n... e.f()\nIn [2]: g.h()\nOut[2]: 1\n"
    assert code_lines(text) == ["a.b()", "c.d()", "e.f()", "g.h()"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("panics in toml::de::from_str", ["de.from_str", "from_str"]),
        ("C++ Parser::~Parser frees twice", ["Parser.Parser", "Parser"]),
        ("Calling Repo#fetch twice", ["Repo.fetch", "fetch"]),
        ("segfault: conn->ssl_ctx is NULL", ["ssl_ctx"]),
        ("json.Marshal drops the field", ["json.Marshal", "Marshal"]),
        ("cobra.Command.Execute returns nil", ["Command.Execute", "Execute"]),
        ("the --dry-run flag is ignored", ["dry_run", "dryRun", "DryRun"]),
        ("it returns ERROR_CODE", ["ERROR_CODE"]),
    ],
)
def test_names_in_each_languages_spelling(text: str, expected: list[str]) -> None:
    found = find_mentions(text).identifiers
    assert found[: len(expected)] == expected, found


def test_short_members_flags_and_prose_dots_are_not_names() -> None:
    found = find_mentions("use a->b, x::y, --no and --v; it is e.g. fine. See Main.Run.")
    assert found.identifiers == []
