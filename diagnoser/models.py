"""Model specs → PydanticAI models: the one place a model string is read.

    models = resolve_models(settings)                    # at start-up: ConfigError, one line
    model = models.explorer.build(report, workspace, ranked)   # per run: a `Model`
    check_endpoints(models)                              # explicit base URLs answer TCP

A role (the explorer, the formatter) has a `ModelChoice`: its real models, resolved once
at start-up — provider package installed, key set, base URL well-formed — and, for the
explorer, whether the chain ends in `offline`, the embedded investigator, which is built
per run from the report, the workspace and the run's ranking. Two or more models are a
PydanticAI `FallbackModel`: the next is tried when a provider fails.

The triage model (`diagnoser.triage`) is the formatter's unless `DIAGNOSER_TRIAGE_MODEL`
names one, on the formatter's endpoint; none when triage is off.

Keys and base URLs come from the providers' usual variables (`OPENAI_API_KEY`,
`OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`, `OLLAMA_BASE_URL`, `GOOGLE_API_KEY`, …) or from
ours per role (`DIAGNOSER_MODEL_BASE_URL`, `DIAGNOSER_MODEL_API_KEY`, `DIAGNOSER_FORMATTER_…`),
which win: with one set, the provider is built here with them.

Every provider built here sends through `retries.retrying_client()`, the one retry
policy (429/5xx/timeouts, `Retry-After` capped), and every model's settings turn its SDK
client's own retries off (`max_retries=0`) and bound one request, retries and waits
included (`request_timeout`), so a dead provider costs one timeout, then the fallback.
Anthropic models cache their prompt prefix (`ANTHROPIC_CACHE`).
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urlsplit

from pydantic import SecretStr
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, infer_model
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.providers import Provider, infer_provider, infer_provider_class
from pydantic_ai.settings import ModelSettings

from diagnoser import retries
from diagnoser.candidate import Candidate
from diagnoser.constants import OFFLINE_MODEL
from diagnoser.errors import ConfigError
from diagnoser.intake.report import Report
from diagnoser.offline import offline_model
from diagnoser.redact import redact_url, scrub
from diagnoser.settings import Settings
from diagnoser.workspace import Workspace

__all__ = [
    "EXAMPLE_MODEL",
    "OFFLINE",
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
]

OFFLINE = OFFLINE_MODEL
"""The embedded investigator's spec and model name."""
EXAMPLE_MODEL = "openai:gpt-4o"
"""Shown in error messages as the shape of a model string."""
CONNECT_SECONDS = 2.0
"""The start-up TCP connect to an explicit base URL: a live local gateway answers in
milliseconds; a dead one should not hold the start for long."""
BASE_URL_VARIABLES = {
    "openai": "OPENAI_BASE_URL",
    "openai-chat": "OPENAI_BASE_URL",
    "openai-responses": "OPENAI_BASE_URL",
    "anthropic": "ANTHROPIC_BASE_URL",
    "ollama": "OLLAMA_BASE_URL",
    "groq": "GROQ_BASE_URL",
}
"""The providers' own base-URL variables: set, the endpoint is explicit and is probed."""
TRIAGE_NOT_OFFLINE = (
    f"cannot be '{OFFLINE_MODEL}': the rules already are the offline triage; leave it "
    "unset, or set DIAGNOSER_TRIAGE_ENABLED=false"
)
"""Said of a triage model set to `offline` (at start-up and by `diagnoser doctor`)."""
ANTHROPIC_CACHE: dict[str, Any] = {
    "anthropic_cache_tool_definitions": True,
    "anthropic_cache_instructions": True,
    "anthropic_cache_messages": True,
    "framing_announcement": "always",
}
"""`cache_control` on the last tool definition, the last system block and the last
message of every Anthropic request: the tools, the instructions (with the map) and the
history so far are read from the cache by the next request. Per-block `_messages`
rather than the top-level automatic `anthropic_cache`, which gateways speaking the
Anthropic protocol may not accept. The note on `<system>` blocks PydanticAI adds to
the system prompt once a tool appears mid-run (`conclude`) is there from the first
request (`framing_announcement="always"`), so the instructions never change. (A funnel
stage change rewrites the tool list, so the prefix is cached again once per stage: at
most three writes a run.)"""
_VARIABLE = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:API_KEY|BASE_URL)\b")
"""A provider's variable named in its error (`Set the ANTHROPIC_API_KEY environment …`)."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A role's own base URL and key (`DIAGNOSER_MODEL_BASE_URL`…), over the provider's."""

    base_url: str | None = None
    api_key: str | None = None
    prefix: str = "DIAGNOSER_MODEL"
    """Our settings' prefix for this role, named in messages (`…_API_KEY`, `…_BASE_URL`)."""

    @classmethod
    def explorer(cls, settings: Settings) -> Endpoint:
        """`DIAGNOSER_MODEL_BASE_URL` and `…_API_KEY` (the fallbacks' too)."""
        return cls(_plain(settings.model_base_url), _secret(settings.model_api_key))

    @classmethod
    def formatter(cls, settings: Settings) -> Endpoint:
        """`DIAGNOSER_FORMATTER_BASE_URL` and `…_API_KEY`."""
        return cls(
            _plain(settings.formatter_base_url), _secret(settings.formatter_api_key),
            prefix="DIAGNOSER_FORMATTER",
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Probe:
    """An explicit base URL to try at start-up, and what to blame if it is dead."""

    setting: str
    spec: str
    url: str
    variable: str
    """The variable that set the URL (ours or the provider's)."""


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One role's models, in the order they are tried; `offline` last, built per run."""

    models: tuple[Model, ...] = ()
    offline: bool = True
    """The chain ends in the embedded investigator (the default: nothing else)."""

    def __post_init__(self) -> None:
        if not self.models and not self.offline:
            raise ValueError("a ModelChoice needs a model or offline")

    @classmethod
    def of(cls, *models: Model, offline: bool = False) -> ModelChoice:
        """Given models (tests, embedding): no resolution, no fallback beyond them."""
        return cls(tuple(models), offline)

    @property
    def names(self) -> tuple[str, ...]:
        return (*(m.model_name for m in self.models), *([OFFLINE] if self.offline else []))

    @property
    def name(self) -> str:
        """The chain in words: `openai:gpt-4o → offline`."""
        return " → ".join(self.names)

    def build(
        self, report: Report, workspace: Workspace, candidates: Sequence[Candidate] | None = None
    ) -> Model:
        """The run's model. Blocking when the chain ends in `offline` without `candidates`
        (it ranks for itself), so call it from a worker thread."""
        chain = list(self.models)
        if self.offline:
            chain.append(offline_model(report, workspace, candidates))
        return chain[0] if len(chain) == 1 else RunFallback(*chain)

    def model(self) -> Model:
        """The model of a chain without `offline` (which needs a run)."""
        if self.offline:
            raise ValueError("a chain ending in offline is built per run (build)")
        return self.models[0] if len(self.models) == 1 else FallbackModel(*self.models)


class RunFallback(FallbackModel):
    """One run's fallback chain (`ModelChoice.build`): a model that failed a request is
    tried last for the rest of the run, so a dead provider costs its timeout (or a 500
    storm its retries) once, not at every step of the funnel. PydanticAI's own
    `ModelFallback(sticky=True)` capability does this for an agent's default model only;
    our runs pass their model to `run`. Its name stays the chain's, in the order given."""

    def __init__(self, *models: Model) -> None:
        super().__init__(*models)
        self._names = (super().model_name, super().model_id)

    @property
    def model_name(self) -> str:
        return self._names[0]

    @property
    def model_id(self) -> str:
        return self._names[1]

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        response = await super().request(messages, model_settings, model_request_parameters)
        failed = {attempt.model_name for attempt in response.failed_attempts or ()}
        if failed:
            self.models = [m for m in self.models if m.model_name not in failed] + [
                m for m in self.models if m.model_name in failed
            ]
        return response


@dataclass(frozen=True, slots=True)
class RoleModels:
    """The models of every role, resolved; what the CLI and the service run with."""

    explorer: ModelChoice = field(default_factory=ModelChoice)
    formatter: Model | None = None
    """Structures a report off the template; None: such a run fails."""
    triage: Model | None = None
    """Refines an uncertain classification (`diagnoser.triage`); None: the rules decide."""
    probes: tuple[Probe, ...] = ()
    """Explicit base URLs, for `check_endpoints`."""

    @classmethod
    def using(
        cls, model: Model, formatter: Model | None = None, triage: Model | None = None
    ) -> RoleModels:
        return cls(ModelChoice.of(model), formatter, triage)


def is_offline(spec: str) -> bool:
    return spec.strip() == OFFLINE


def resolve_models(
    settings: Settings,
    *,
    model: str | None = None,
    formatter_model: str | None = None,
    fallback_models: str | None = None,
) -> RoleModels:
    """Every role's models from `settings`; a flag given (`--model`…) wins over its
    setting. ConfigError, one line naming what to set, on the first unusable one."""
    explorer = Endpoint.explorer(settings)
    first, blame = _named(model, "--model", settings.model, "DIAGNOSER_MODEL")
    chain = [(first or "", blame)]
    if fallback_models is not None:
        chain += [(s.strip(), "--fallback-models") for s in fallback_models.split(",") if s.strip()]
    else:
        chain += [(spec, "DIAGNOSER_FALLBACK_MODELS") for spec in settings.fallback_models]
    built: list[Model] = []
    probes: list[Probe] = []
    for position, (spec, setting) in enumerate(chain):
        if is_offline(spec):
            if position != len(chain) - 1:
                later, blamed = chain[position + 1]
                raise ConfigError(
                    f"{blamed}: {later!r} comes after '{OFFLINE}' ({setting}), which never "
                    f"fails, so it is never tried; put '{OFFLINE}' last"
                )
            continue
        built.append(resolve_model(spec, setting=setting, endpoint=explorer,
                                   settings=settings.explorer_settings()))  # fmt: skip
        probes += _probes(spec, setting, built[-1], explorer)
    choice = ModelChoice(tuple(built), offline=is_offline(chain[-1][0]))
    spec_, setting_ = _named(
        formatter_model, "--formatter-model", settings.formatter_model, "DIAGNOSER_FORMATTER_MODEL"
    )
    formatter = None
    if spec_ is not None:
        endpoint = Endpoint.formatter(settings)
        formatter = resolve_model(
            spec_, setting=setting_, endpoint=endpoint, settings=settings.formatter_settings(),
            offline_allowed=False,
        )  # fmt: skip
        probes += _probes(spec_, setting_, formatter, endpoint)
    triage = _triage(settings, formatter, probes)
    return RoleModels(choice, formatter, triage, tuple(probes))


def resolve_model(
    spec: str,
    *,
    setting: str,
    endpoint: Endpoint | None = None,
    settings: ModelSettings | None = None,
    offline_allowed: bool = True,
) -> Model:
    """The PydanticAI model `spec` names, with `settings` as its own and the endpoint's
    base URL and key when set. ConfigError naming `setting` when `spec` is empty, unknown,
    `offline` (built per run: `ModelChoice`), or unusable here (package, key, URL)."""
    endpoint = endpoint or Endpoint()
    name = spec.strip()
    if not name:
        raise ConfigError(
            f"{setting} is empty; use '{OFFLINE}' or a PydanticAI model string "
            f"such as {EXAMPLE_MODEL}"
        )
    if name == OFFLINE:
        if not offline_allowed:
            raise ConfigError(
                f"{setting} cannot be '{OFFLINE}': the embedded investigator writes the "
                "template itself; leave it unset, or name a model such as " + EXAMPLE_MODEL
            )
        raise ConfigError(f"{setting}: '{OFFLINE}' is built per run; use ModelChoice")
    try:
        model = infer_model(name, provider_factory=_provider_factory(endpoint, name))
    except ConfigError:
        raise
    except Exception as exc:  # UserError, ImportError, OpenAIError…: each provider differs
        raise ConfigError(_misconfigured(name, setting, endpoint, exc)) from None
    # infer_model takes no settings; a Model keeps its own in `_settings` (set by
    # `Model.__init__`, read by `Model.settings` and merged into every request).
    model._settings = request_settings(model, settings)
    return model


def request_settings(model: Model, settings: ModelSettings | None = None) -> ModelSettings:
    """`settings` as `model` is given them: the SDK's own retries off (ours are in the
    HTTP client), `request_timeout` (every attempt and wait of one request) equal to the
    per-attempt `timeout`, and — when `settings` ask for a prompt cache (`cache`) — the
    one Anthropic needs asked for in its own settings (`ANTHROPIC_CACHE`)."""
    merged = ModelSettings(max_retries=0)
    merged.update(settings or {})
    if "timeout" in merged and "request_timeout" not in merged:
        timeout = merged["timeout"]
        if isinstance(timeout, int | float):
            merged["request_timeout"] = float(timeout)
    if getattr(model, "system", None) == "anthropic" and merged.get("cache"):
        merged = cast(ModelSettings, {**ANTHROPIC_CACHE, **merged})
    return merged


def check_endpoints(models: RoleModels, *, timeout: float = CONNECT_SECONDS) -> None:
    """A TCP connect to every explicit base URL; ConfigError naming the first that does
    not accept one, and the variable that set it."""
    for probe in models.probes:
        failure = unreachable(probe.url, timeout=timeout)
        if failure:
            raise ConfigError(
                f"{probe.setting} {probe.spec!r}: {redact_url(probe.url)} is unreachable "
                f"({scrub(failure, probe.url)}); "
                f"check {probe.variable}"
            )


def unreachable(url: str, *, timeout: float = CONNECT_SECONDS) -> str | None:
    """Why `url`'s host and port refuse a TCP connection, or None when they accept one."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        return str(exc)
    if not parts.hostname:
        return "no host"
    try:
        socket.create_connection((parts.hostname, port), timeout).close()
    except OSError as exc:
        return exc.strerror or str(exc) or type(exc).__name__
    return None


def _provider_factory(endpoint: Endpoint, spec: str) -> Callable[[str], Provider[Any]]:
    """The provider, built with our retrying HTTP client and — when set — our base URL
    and key. A provider that takes no HTTP client (Bedrock) keeps its SDK's retries."""

    def build(provider: str) -> Provider[Any]:
        if provider.startswith("gateway/"):
            return infer_provider(provider)
        given = {"base_url": endpoint.base_url, "api_key": endpoint.api_key}
        kwargs: dict[str, Any] = {key: value for key, value in given.items() if value is not None}
        try:
            cls = infer_provider_class(provider)
        except ValueError:  # worded as pydantic-ai's own resolver words it
            raise ValueError(f"Unknown model: {spec}") from None
        try:
            return cls(**kwargs, http_client=retries.retrying_client())  # type: ignore[call-arg]
        except TypeError:
            pass
        try:
            return cls(**kwargs)
        except TypeError:  # e.g. Bedrock: credentials of its own, no base URL
            names = " or ".join(f"{endpoint.prefix}_{key.upper()}" for key in kwargs)
            raise ConfigError(f"the {provider} provider does not take {names}; unset it") from None

    return build


def _misconfigured(spec: str, setting: str, endpoint: Endpoint, exc: Exception) -> str:
    text = str(exc).strip()
    reason = text.splitlines()[0] if text else type(exc).__name__
    if reason.startswith(("Unknown model", "Unknown provider")):
        return f"{setting} {spec!r}: {reason} (use '{OFFLINE}' or a string such as {EXAMPLE_MODEL})"
    variables = list(dict.fromkeys(_VARIABLE.findall(text)))
    if variables:
        needed = " or ".join(variables)
        kinds = dict.fromkeys("API_KEY" if v.endswith("API_KEY") else "BASE_URL" for v in variables)
        ours = " or ".join(f"{endpoint.prefix}_{kind}" for kind in kinds)
        return f"{setting} {spec!r} needs {needed} (or {ours})"
    return f"{setting} {spec!r} is not usable: {reason}"


def _probes(spec: str, setting: str, model: Model, endpoint: Endpoint) -> list[Probe]:
    provider = spec.strip().split(":", 1)[0]
    variable = f"{endpoint.prefix}_BASE_URL" if endpoint.base_url else None
    if variable is None and os.environ.get(BASE_URL_VARIABLES.get(provider, "")):
        variable = BASE_URL_VARIABLES[provider]
    url = model.base_url
    return [Probe(setting, spec.strip(), url, variable)] if variable and url else []


def _named(
    flag_value: str | None, flag: str, setting_value: str | None, variable: str
) -> tuple[str | None, str]:
    """A flag's spec, else the setting's, with the name to blame for a bad one."""
    return (flag_value, flag) if flag_value is not None else (setting_value, variable)


def _plain(value: str | None) -> str | None:
    return value or None


def _secret(value: SecretStr | None) -> str | None:
    return (value.get_secret_value() or None) if value is not None else None


def _triage(settings: Settings, formatter: Model | None, probes: list[Probe]) -> Model | None:
    """The triage model: `DIAGNOSER_TRIAGE_MODEL` on the formatter's endpoint, else the
    formatter itself; None when triage is off or there is neither (adds its probe)."""
    if not settings.triage_enabled:
        return None
    spec = settings.triage_model
    if spec is None:
        return formatter
    setting = "DIAGNOSER_TRIAGE_MODEL"
    if is_offline(spec):
        raise ConfigError(f"{setting} {TRIAGE_NOT_OFFLINE}")
    endpoint = Endpoint.formatter(settings)
    model = resolve_model(
        spec, setting=setting, endpoint=endpoint, settings=settings.formatter_settings()
    )
    probes += _probes(spec, setting, model, endpoint)
    return model
