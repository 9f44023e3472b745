"""The repo map: a ranked, token-budgeted view of a repository, and its symbol index.

Run it: `python -m repomap PATH [--tokens N] [--focus FILE_OR_IDENT ...] [--stats]`.
"""

from __future__ import annotations

from repomap.build import BuildStats
from repomap.cache import data_home
from repomap.errors import InvalidRepoError, QueryError, RepoMapError
from repomap.files import Skipped
from repomap.focus import Focus
from repomap.index import Lookup, MatchKind, ReferenceSite, Symbol, SymbolIndex
from repomap.languages import LANGUAGES, language_for
from repomap.rank import Ranking
from repomap.repository import Repository
from repomap.tags import Definition, FileTags

__all__ = [
    "LANGUAGES",
    "BuildStats",
    "Definition",
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
]
