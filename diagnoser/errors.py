"""Errors of the diagnosis domain, split by audience.

    DiagnoserError               base; every message is fit to show a user or a model
    ├── ConfigError              a setting is wrong (the operator fixes it)
    └── ToolError                a tool call cannot be served; the message says what to do
        └── PathRefused          a path outside the repository, a secret, a device, …

A `ToolError` is the model's to act on: the agent turns it into a retry with the same
words, the API into a 4xx. Nothing here carries a traceback to the caller.
"""

from __future__ import annotations


class DiagnoserError(Exception):
    """Base of the diagnoser's errors."""


class ConfigError(DiagnoserError):
    """A setting is invalid."""


class ToolError(DiagnoserError):
    """A read-only tool could not answer; the message says how to ask instead."""


class PathRefused(ToolError):
    """A path the workspace will not open: outside the root, a secret, not a regular file."""
