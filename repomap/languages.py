"""Which language a file is, and its tree-sitter parser and tag query (loaded lazily, cached)."""

from __future__ import annotations

import functools
from importlib import resources

from tree_sitter import Parser, Query
from tree_sitter_language_pack import get_language, get_parser

from repomap.errors import QueryError

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".go": "go",
    ".rs": "rust",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".cs": "csharp",
    ".c": "c",
    # `.h` is shared by C and C++; the C++ grammar parses both well enough for tags.
    ".h": "cpp",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".c++": "cpp",
    ".h++": "cpp",
    ".php": "php",
    ".swift": "swift",
}
"""File name suffix → language name as `tree_sitter_language_pack` spells it."""

FILENAMES: dict[str, str] = {"Rakefile": "ruby", "Gemfile": "ruby"}
"""Whole file names that identify a language without a suffix."""

QUERY_PARTS: dict[str, tuple[str, ...]] = {
    "javascript": ("ecmascript", "javascript"),
    "typescript": ("ecmascript", "typescript"),
    "tsx": ("ecmascript", "typescript"),  # TSX is TypeScript plus JSX
}
"""Languages whose query is several `.scm` files, in order; the others use `<language>.scm`."""

LANGUAGES: frozenset[str] = frozenset(EXTENSIONS.values())


def language_for(path: str) -> str | None:
    """The language of a repo-relative path, or None when we do not map it."""
    # Plain string work, not PurePosixPath: this runs for every file of a large tree.
    name = path.rsplit("/", 1)[-1]
    if name in FILENAMES:
        return FILENAMES[name]
    dot = name.rfind(".")
    return EXTENSIONS.get(name[dot:].lower()) if dot > 0 else None


def query_files(language: str) -> tuple[str, ...]:
    """The `.scm` files (stems) whose text makes up a language's tag query."""
    return QUERY_PARTS.get(language, (language,))


def query_source(language: str) -> str:
    """The text of the tag query used for a language."""
    folder = resources.files("repomap.queries")
    return "\n".join(
        folder.joinpath(f"{name}.scm").read_text("utf-8") for name in query_files(language)
    )


@functools.cache
def parser_for(language: str) -> Parser:
    return get_parser(language)  # type: ignore[arg-type]


@functools.cache
def query_for(language: str) -> Query:
    try:
        return Query(get_language(language), query_source(language))  # type: ignore[arg-type]
    except Exception as exc:  # tree_sitter raises QueryError/NameError subclasses by version
        raise QueryError(f"the {language} tag query does not compile: {exc}") from exc
