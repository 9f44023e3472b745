"""Errors the repo map raises, split by audience.

    RepoMapError                 base; every message is fit to show a user
    ├── InvalidRepoError         the path given is not a readable directory (caller's mistake)
    └── QueryError               a bundled .scm query does not compile (our bug, named clearly)

Problems with single files (unreadable, invalid UTF-8, too large, syntax errors) are
never raised: they become warnings on the build result, and the map goes on.
"""

from __future__ import annotations


class RepoMapError(Exception):
    """Base of the repo map's errors."""


class InvalidRepoError(RepoMapError):
    """The repository path does not exist, is not a directory, or cannot be read."""


class QueryError(RepoMapError):
    """A tree-sitter query shipped in `repomap/queries/` failed to compile."""
