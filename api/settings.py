"""`ServiceSettings`: the diagnosis `Settings` plus what only the HTTP service needs.

Read from the environment (`DIAGNOSER_*`) and, when `DIAGNOSER_SETTINGS_FILE` names one,
a TOML file of the same keys in lower case (`api_keys = ["…"]`); the environment wins.
Validated once at start (`load_service_settings`): a bad value stops the start with one
line naming the variable.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
from pathlib import Path
from typing import Annotated

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from api.signatures import SignatureError, standard_key
from diagnoser import ConfigError, Settings

SETTINGS_FILE_VAR = "DIAGNOSER_SETTINGS_FILE"
HASH_PREFIX = "sha256:"
"""An API key given as `sha256:<hex>` is already hashed: the plain key never sits in the
environment."""

Keys = Annotated[tuple[str, ...], NoDecode]


class ServiceSettings(Settings):
    """Everything the service reads at start; defaults run it locally with no set-up."""

    model_config = SettingsConfigDict(env_prefix="DIAGNOSER_", frozen=True)

    api_keys: Keys = ()
    """Keys for every read and write endpoint (comma-separated; plain or `sha256:<hex>`).
    None: the service binds to 127.0.0.1 only."""
    sentry_secret: str | None = None
    """Client secret of the Sentry integration (`Sentry-Hook-Signature`)."""
    github_secret: str | None = None
    """Secret of the GitHub webhook (`X-Hub-Signature-256`)."""
    standard_webhook_secret: str | None = None
    """`whsec_…` secret of Standard Webhooks senders (`webhook-signature`)."""
    webhook_token: str | None = None
    """URL token of `/webhooks/bugsnag/{token}`, `/webhooks/rollbar/{token}` and
    `/webhooks/reviews?token=…`."""
    dedupe_window_seconds: float = Field(default=3600.0, ge=0)
    """How long after a job ends an identical report still attaches to its Finding."""
    max_wait_seconds: float = Field(default=30.0, ge=0)
    """Cap of `POST /diagnose?wait=`."""
    rate_limit_per_minute: int = Field(default=600, gt=0)
    """Requests per minute per API key (per client address without keys)."""
    job_concurrency: int = Field(default=2, gt=0)
    """Diagnoses running at once in one process (the queue's worker concurrency)."""
    fleet_concurrency: int | None = Field(default=None, gt=0)
    """Diagnoses running at once in the whole fleet (the queue's global concurrency: a
    provider's rate limit is the fleet's); none: only each process's limit. The queue
    keeps the value the last runner started with: give every runner the same."""
    takeover_seconds: float = Field(default=60.0, gt=0)
    """A job runner silent this long is taken for dead, and the fleet runs its
    unfinished jobs (`api.fleet`). 60: a busy runner beats every 10 s, so only a dead
    or cut-off one misses six beats; a takeover costs the restart of a diagnosis."""
    stop_grace_seconds: float = Field(default=30.0, ge=0)
    """How long a stopping runner lets its running diagnoses end (it takes no new ones);
    what still runs then is handed back to the fleet (or, alone, to its next start)."""
    refused_budget_bytes: int = Field(default=8 * 1024 * 1024, ge=0)
    """Bytes of refused webhook bodies kept (their first 4 KiB each, ~2,000 refusals at
    the default); past it a refusal keeps only its size, hash, headers and reason."""
    retention_days: float = Field(default=30.0, ge=0)
    """Stored inputs older than this go, with their jobs, events and findings (0: no age
    limit). Unfinished jobs and their inputs are never removed."""
    max_stored_bytes: int = Field(default=1024**3, ge=0)
    """Stored inputs, events and findings past this size go, oldest first (0: no cap)."""
    cors_origins: Keys = ()
    """Origins allowed by CORS; none (the default) turns CORS off."""
    metrics_public: bool = False
    """`GET /metrics` without a key when keys are set. Off: the job counts, queue depth
    and token totals are the service's business, and Prometheus sends a key as easily
    (`authorization: {credentials: KEY}` in its scrape config)."""
    docs_public: bool = True
    """`/docs`, `/redoc` and `/openapi.json` without a key when keys are set. On: the
    schema holds no configured value (no repo, key or secret) and says no more than the
    public source; and a browser opening `/docs` cannot send a key, so off means no
    Swagger UI except through a proxy that adds one."""
    auth_failures_per_minute: int = Field(default=20, gt=0)
    """Failed authentications (missing or wrong key, bad webhook signature or token) a
    client address may make in a minute; past it every request from that address gets
    429, a correct key too, until a minute after its first counted failure. 20: a person
    retyping a key or a sender with a wrong secret sees the 401s first, and a key
    guesser gets 28,800 guesses a day, nothing against a random 128-bit key."""
    webhook_rate_limit_per_minute: int = Field(default=60, gt=0)
    """Deliveries a minute per client address and webhook route (bursts of as many),
    checked before the body is read. 60: one a second from one sender, far above the
    diagnoses the queue finishes (`DIAGNOSER_JOB_CONCURRENCY` at a time, seconds each)."""
    max_queued_jobs: int = Field(default=200, gt=0)
    """Jobs waiting on the queue past which new work is refused (503 + `Retry-After`;
    webhooks per route, see `api/backpressure.py`). 200: at the ~7 jobs/s drain issue 23
    measured (fake model) that is ~30 s of work; with a real model, two at a time, it is
    hours, and a report queued deeper is stale before it is read."""
    max_header_bytes: int = Field(default=64 * 1024, ge=1024)
    """Request line + headers of one request; past it 431. 64 KiB: browsers and webhook
    senders send a few KiB; nginx's largest default header buffers total 32 KiB."""
    header_timeout_seconds: float = Field(default=10.0, gt=0)
    """From a connection's or request's first byte to its headers' end; past it 408. A real
    client sends its headers in one packet; 10 s leaves a slow link a few retransmissions
    and bounds what one slowloris connection holds."""
    body_timeout_seconds: float = Field(default=60.0, gt=0)
    """From the headers' end to the whole body's end; past it 408. A deadline, not a
    minimum rate: a rate lets a client at that rate hold a connection as long as it
    likes, a deadline bounds every connection. 60 s takes the largest body (5 MB) at
    ~85 KB/s."""
    max_connections: int = Field(default=1000, gt=0)
    """Connections open at once in one process; past it 503. Lowered, with a warning, to
    fit below the file limit (`ulimit -n`)."""
    max_connections_per_address: int = Field(default=100, gt=0)
    """Connections open at once from one client address (trusted proxies excepted); past
    it 503. 100 is httpx's default pool: one well-behaved client never needs more."""
    trusted_proxies: Keys = ()
    """Proxies (comma-separated IPs or CIDRs) whose `X-Forwarded-For` names the client;
    none (the default): proxy headers are ignored and the caller is the socket's peer."""

    @field_validator("api_keys", "cors_origins", "trusted_proxies", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("api_keys")
    @classmethod
    def _keys(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for key in value:
            if key.startswith(HASH_PREFIX) and len(key) != len(HASH_PREFIX) + 64:
                raise ValueError("a hashed key is 'sha256:' and 64 hex digits")
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for proxy in value:
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError:
                raise ValueError(f"{proxy!r} is not an IP address or network") from None
        return value

    @field_validator("standard_webhook_secret")
    @classmethod
    def _standard_secret(cls, value: str | None) -> str | None:
        if value:
            try:
                standard_key(value)
            except SignatureError as exc:
                raise ValueError(str(exc)) from None
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        path = os.environ.get(SETTINGS_FILE_VAR)
        extra = (TomlConfigSettingsSource(settings_cls, toml_file=Path(path)),) if path else ()
        return (init_settings, env_settings, *extra)

    def key_hashes(self) -> frozenset[str]:
        """The API keys as sha256 hex digests (only these are kept in memory)."""
        return frozenset(
            key[len(HASH_PREFIX) :].lower() if key.startswith(HASH_PREFIX) else hash_key(key)
            for key in self.api_keys
        )


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def load_service_settings() -> ServiceSettings:
    """`ServiceSettings()` or ConfigError naming the variable (or file) to fix."""
    path = os.environ.get(SETTINGS_FILE_VAR)
    if path and not Path(path).is_file():
        raise ConfigError(f"{SETTINGS_FILE_VAR}: no such file: {path}")
    try:
        return ServiceSettings()
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else ""
        name = f"DIAGNOSER_{field.upper()}" if field else "a DIAGNOSER_* setting"
        raise ConfigError(f"{name}: {first['msg']}") from None
    except ValueError as exc:  # a TOML file that does not parse
        raise ConfigError(f"{SETTINGS_FILE_VAR}: {exc}") from None
