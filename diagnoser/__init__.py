"""The diagnosis domain: a report and a repository in, a grounded `Finding` out.

    outcome = diagnose(ReportIn(text=crash_log), Workspace("path/to/repo"))
    outcome.state, outcome.finding

Packages: `intake/` (report → normalized `Report`), `tools/` (the four read-only tools
over a `Workspace`), `render/` (JSON, Markdown, SARIF); modules: `funnel`, `agent`,
`offline` (the embedded investigator), `template`, `grounding`, `pipeline`, `cli`.
"""

from __future__ import annotations

from diagnoser.errors import ConfigError, DiagnoserError, PathRefused, ToolError
from diagnoser.finding import Finding, Status
from diagnoser.intake import Report, ReportIn, build_report, from_payload
from diagnoser.pipeline import Event, Outcome, State, diagnose, diagnose_async
from diagnoser.settings import Settings
from diagnoser.workspace import Workspace

__all__ = [
    "ConfigError",
    "DiagnoserError",
    "Event",
    "Finding",
    "Outcome",
    "PathRefused",
    "Report",
    "ReportIn",
    "Settings",
    "State",
    "Status",
    "ToolError",
    "Workspace",
    "build_report",
    "diagnose",
    "diagnose_async",
    "from_payload",
]
