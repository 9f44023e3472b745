"""A role's endpoint: its own base URL and key, and the start-up check that an explicit
base URL accepts a connection.

Keys and base URLs come from the providers' usual variables (`OPENAI_API_KEY`,
`OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`, `OLLAMA_BASE_URL`, …) or from ours per role
(`DIAGNOSER_MODEL_BASE_URL`, `DIAGNOSER_MODEL_API_KEY`, `DIAGNOSER_FORMATTER_…`), which
win. A base URL set by either is explicit: it is probed at start-up (`check_endpoints`),
a TCP connect, so a dead gateway stops the start in one line instead of failing a run.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

from pydantic import SecretStr
from pydantic_ai.models import Model

from diagnoser.errors import ConfigError
from diagnoser.redact import redact_url, scrub
from diagnoser.settings import Settings

__all__ = [
    "BASE_URL_VARIABLES",
    "CONNECT_SECONDS",
    "Endpoint",
    "Probe",
    "Probed",
    "check_endpoints",
    "probes_for",
    "unreachable",
]

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


def probes_for(spec: str, setting: str, model: Model, endpoint: Endpoint) -> list[Probe]:
    """The probe of `model`'s base URL when it is explicit (ours or the provider's
    variable set it), else none."""
    provider = spec.strip().split(":", 1)[0]
    variable = f"{endpoint.prefix}_BASE_URL" if endpoint.base_url else None
    if variable is None and os.environ.get(BASE_URL_VARIABLES.get(provider, "")):
        variable = BASE_URL_VARIABLES[provider]
    url = model.base_url
    return [Probe(setting, spec.strip(), url, variable)] if variable and url else []


class Probed(Protocol):
    """What carries the probes of its models (`RoleModels`)."""

    @property
    def probes(self) -> tuple[Probe, ...]: ...


def check_endpoints(models: Probed, *, timeout: float = CONNECT_SECONDS) -> None:
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


def _plain(value: str | None) -> str | None:
    return value or None


def _secret(value: SecretStr | None) -> str | None:
    return (value.get_secret_value() or None) if value is not None else None
