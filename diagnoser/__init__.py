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

from typing import TYPE_CHECKING

from repomap import lazy

if TYPE_CHECKING:  # what the names are, for type checkers; loaded on first use at run time
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


_EXPORTS = {  # public name → the module defining it, imported on first use
    "ConfigError": "diagnoser.errors",
    "DiagnoserError": "diagnoser.errors",
    "Draft": "diagnoser.draft",
    "Event": "diagnoser.events",
    "Finding": "diagnoser.finding",
    "IntakeError": "diagnoser.intake",
    "ModelChoice": "diagnoser.models",
    "Outcome": "diagnoser.pipeline",
    "PathRefused": "diagnoser.errors",
    "PayloadTooLarge": "diagnoser.intake",
    "Report": "diagnoser.intake",
    "ReportIn": "diagnoser.intake",
    "RoleModels": "diagnoser.models",
    "Settings": "diagnoser.settings",
    "State": "diagnoser.events",
    "Status": "diagnoser.finding",
    "TemplateError": "diagnoser.template",
    "ToolError": "diagnoser.errors",
    "TreeState": "diagnoser.registry",
    "UnknownRepo": "diagnoser.errors",
    "Workspace": "diagnoser.workspace",
    "Workspaces": "diagnoser.registry",
    "build_report": "diagnoser.intake",
    "diagnose": "diagnoser.pipeline",
    "diagnose_async": "diagnoser.pipeline",
    "from_payload": "diagnoser.intake",
    "load_settings": "diagnoser.settings",
    "resolve_models": "diagnoser.models",
}


__getattr__, __dir__ = lazy.exports(__name__, _EXPORTS)
