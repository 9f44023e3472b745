from __future__ import annotations

from repomap.focus import resolve_focus

FILES = ["django/db/models/query.py", "django/db/models/sql/query.py", "notes/store.py", "app.js"]


def test_paths_suffixes_and_lines_resolve_to_files() -> None:
    focus = resolve_focus(
        ["notes/store.py", "/site-packages/django/db/models/query.py:248", "./app.js"], FILES
    )
    assert focus.files == {"notes/store.py", "django/db/models/query.py", "app.js"}
    assert focus.lines == {"django/db/models/query.py": frozenset({248})}
    assert not focus.idents


def test_ambiguous_suffix_prefers_the_shortest_path() -> None:
    assert resolve_focus(["query.py"], FILES).files == {"django/db/models/query.py"}


def test_words_and_dotted_names_become_identifiers() -> None:
    focus = resolve_focus(["QuerySet.filter", "_fetch_all", "C:\\x\\nothing.py"], FILES)
    assert focus.idents == {"QuerySet", "filter", "_fetch_all", "nothing"}
    assert not focus.files
    assert bool(focus)


def test_empty_focus_is_falsy() -> None:
    assert not resolve_focus(["", "  "], FILES)
