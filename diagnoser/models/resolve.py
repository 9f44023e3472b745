"""One model string → a PydanticAI `Model`: its provider built with our HTTP client and
the role's endpoint, its request settings, and — when it cannot be used here (package,
key, URL) — one line naming what to set.

A provider's SDK is imported by PydanticAI when its model is inferred here
(`infer_model`), never at import: `openai` only for an `openai:` model.

Every provider built here sends through `retries.retrying_client()`, the one retry
policy (429/5xx/timeouts, `Retry-After` capped), and every model's settings turn its SDK
client's own retries off (`max_retries=0`) and bound one request, retries and waits
included (`request_timeout`), so a dead provider costs one timeout, then the fallback.
Anthropic models cache their prompt prefix (`ANTHROPIC_CACHE`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, cast

from pydantic_ai.models import Model, infer_model
from pydantic_ai.providers import Provider, infer_provider, infer_provider_class
from pydantic_ai.settings import ModelSettings

from diagnoser import retries
from diagnoser.errors import ConfigError
from diagnoser.models.chain import OFFLINE
from diagnoser.models.endpoint import Endpoint

__all__ = ["ANTHROPIC_CACHE", "EXAMPLE_MODEL", "request_settings", "resolve_model"]

EXAMPLE_MODEL = "openai:gpt-4o"
"""Shown in error messages as the shape of a model string."""
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
