"""The diagnosis domain: a report and a repository in, a grounded `Finding` out.

    outcome = diagnose(ReportIn(text=crash_log), Workspace("path/to/repo"))
    outcome.state, outcome.finding

Packages: `intake/` (report → normalized `Report`), `tools/` (the four read-only tools
over a `Workspace`), `render/` (JSON, Markdown, SARIF); modules: `funnel`, `agent`,
`offline` (the embedded investigator), `models` (model specs → PydanticAI models and
fallback chains), `triage` (a cheap model refines an uncertain classification), `draft`
(what a report states), `template`, `formatter`, `grounding`
(a draft → a Finding), `events` (states and events of a run),
`pipeline`, `registry` (configured repositories by name), `commit`, `errors` (the one
error tree), `settings`, `cli`.
"""

from __future__ import annotations

from diagnoser.draft import Draft
from diagnoser.errors import ConfigError, DiagnoserError, PathRefused, ToolError, UnknownRepo
from diagnoser.events import Event, State
from diagnoser.finding import Finding, Status
from diagnoser.intake import (
    IntakeError,
    PayloadTooLarge,
    Report,
    ReportIn,
    build_report,
    from_payload,
)
from diagnoser.models import ModelChoice, RoleModels, resolve_models
from diagnoser.pipeline import Outcome, diagnose, diagnose_async
from diagnoser.registry import TreeState, Workspaces
from diagnoser.settings import Settings, load_settings
from diagnoser.template import TemplateError
from diagnoser.workspace import Workspace

__all__ = [
    "ConfigError",
    "DiagnoserError",
    "Draft",
    "Event",
    "Finding",
    "IntakeError",
    "ModelChoice",
    "Outcome",
    "PathRefused",
    "PayloadTooLarge",
    "Report",
    "ReportIn",
    "RoleModels",
    "Settings",
    "State",
    "Status",
    "TemplateError",
    "ToolError",
    "TreeState",
    "UnknownRepo",
    "Workspace",
    "Workspaces",
    "build_report",
    "diagnose",
    "diagnose_async",
    "from_payload",
    "load_settings",
    "resolve_models",
]
