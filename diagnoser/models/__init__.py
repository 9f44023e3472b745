"""Model specs → PydanticAI models: the one place a model string is read.

    models = resolve_models(settings)                    # at start-up: ConfigError, one line
    model = models.explorer.build(report, workspace, ranked)   # per run: a `Model`
    check_endpoints(models)                              # explicit base URLs answer TCP

Modules: `chain` (a role's models in the order they are tried, `offline` last and built
per run), `endpoint` (a role's base URL and key; the start-up probe of an explicit
one), `resolve` (one model string → a `Model`, its provider and request settings),
`roles` (every role's models from the settings: `RoleModels`).

No provider SDK is imported with this package: PydanticAI imports one when a model of
its provider is resolved (`openai` for an `openai:` model).
"""

from __future__ import annotations

from diagnoser.models.chain import OFFLINE, ModelChoice, RunFallback, is_offline
from diagnoser.models.endpoint import Endpoint, Probe, check_endpoints, unreachable
from diagnoser.models.resolve import (
    ANTHROPIC_CACHE,
    EXAMPLE_MODEL,
    request_settings,
    resolve_model,
)
from diagnoser.models.roles import TRIAGE_NOT_OFFLINE, RoleModels, resolve_models

__all__ = [
    "ANTHROPIC_CACHE",
    "EXAMPLE_MODEL",
    "OFFLINE",
    "TRIAGE_NOT_OFFLINE",
    "Endpoint",
    "ModelChoice",
    "Probe",
    "RoleModels",
    "RunFallback",
    "check_endpoints",
    "is_offline",
    "request_settings",
    "resolve_model",
    "resolve_models",
    "unreachable",
]
