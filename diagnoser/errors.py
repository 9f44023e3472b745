"""Errors of the diagnosis domain, split by audience: one tree, one base.

    DiagnoserError          base; every message is fit to show a user or a model
    ├── ConfigError         a setting is wrong; fixed by the operator      start-up: exit 2, 500
    ├── UnknownRepo         no repository of that name is configured       404
    ├── ToolError           a tool call or a repository cannot be served   400
    │   └── PathRefused     outside the repository, a secret, a device…    400
    ├── IntakeError         a payload is malformed or of an unknown shape  400
    │   └── PayloadTooLarge a body over its size limit                     413
    └── TemplateError       a report is not in the fixed template          422 (see below)

Where they live: `diagnoser/errors.py` (this module: the base, `ConfigError`,
`UnknownRepo`, `ToolError`, `PathRefused`), `diagnoser/intake/payloads/errors.py`
(`IntakeError`, `PayloadTooLarge`), `diagnoser/template.py` (`TemplateError`); all are
exported from `diagnoser`. `UnknownRepo` is also a `LookupError`, `IntakeError` also a
`ValueError`.

A `ToolError` is the model's to act on: the agent turns it into a retry with the same
words. A `TemplateError` never escapes a run (the model is asked again, then the
formatter model takes over or the run ends `failed`); only `parse_report` called
directly raises it — on a user's markdown a 422, on our own output an internal error.
Outside the tree: `repomap.RepoMapError` (e.g. a data directory inside the repository:
configuration, 500) and pydantic's `ValidationError` for a `ReportIn` out of range (422).
The statuses are what `api/` maps these to, in one handler; nothing here carries a
traceback to the caller.
"""

from __future__ import annotations


class DiagnoserError(Exception):
    """Base of the diagnoser's errors."""


class ConfigError(DiagnoserError):
    """A setting is invalid."""


class UnknownRepo(DiagnoserError, LookupError):
    """No repository of this name is configured; the message lists the names that are."""


class ToolError(DiagnoserError):
    """A read-only tool could not answer; the message says how to ask instead."""


class PathRefused(ToolError):
    """A path the workspace will not open: outside the root, a secret, not a regular file."""
