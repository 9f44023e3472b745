"""The repo map: a ranked, token-budgeted view of a repository, and its symbol index.

Run it: `python -m repomap PATH [--tokens N] [--focus FILE_OR_IDENT ...] [--stats]`.
Secret files (`.env*`, keys, credentials, …) never enter it: see `DenyList`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from repomap import lazy

if TYPE_CHECKING:  # what the names are, for type checkers; loaded on first use at run time
    from repomap.build import BuildStats
    from repomap.cache import data_home
    from repomap.constants import DEFAULT_DENY
    from repomap.deny import DenyList, parse_patterns
    from repomap.errors import InvalidRepoError, QueryError, RepoMapError
    from repomap.files import Skipped
    from repomap.focus import Focus
    from repomap.index import Lookup, MatchKind, ReferenceSite, Symbol, SymbolIndex
    from repomap.languages import LANGUAGES, language_for
    from repomap.rank import Ranking
    from repomap.repository import Repository
    from repomap.tags import Definition, FileTags

__all__ = [
    "DEFAULT_DENY",
    "LANGUAGES",
    "BuildStats",
    "Definition",
    "DenyList",
    "FileTags",
    "Focus",
    "InvalidRepoError",
    "Lookup",
    "MatchKind",
    "QueryError",
    "Ranking",
    "ReferenceSite",
    "RepoMapError",
    "Repository",
    "Skipped",
    "Symbol",
    "SymbolIndex",
    "data_home",
    "language_for",
    "parse_patterns",
]


_EXPORTS = {  # public name → the module defining it, imported on first use
    "BuildStats": "repomap.build",
    "DEFAULT_DENY": "repomap.constants",
    "Definition": "repomap.tags",
    "DenyList": "repomap.deny",
    "FileTags": "repomap.tags",
    "Focus": "repomap.focus",
    "InvalidRepoError": "repomap.errors",
    "LANGUAGES": "repomap.languages",
    "Lookup": "repomap.index",
    "MatchKind": "repomap.index",
    "QueryError": "repomap.errors",
    "Ranking": "repomap.rank",
    "ReferenceSite": "repomap.index",
    "RepoMapError": "repomap.errors",
    "Repository": "repomap.repository",
    "Skipped": "repomap.files",
    "Symbol": "repomap.index",
    "SymbolIndex": "repomap.index",
    "data_home": "repomap.cache",
    "language_for": "repomap.languages",
    "parse_patterns": "repomap.deny",
}


__getattr__, __dir__ = lazy.exports(__name__, _EXPORTS)
