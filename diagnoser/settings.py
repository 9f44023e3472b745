"""`Settings`: the one configuration object, from the environment (`DIAGNOSER_*`) or arguments.

Validated at start-up and passed in; tests construct it with values instead of patching.
"""

from __future__ import annotations

import re

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict, SettingsError

from diagnoser import constants
from diagnoser.errors import ConfigError
from repomap import data_home

DEFAULT_DENY: tuple[str, ...] = (
    # environment files and private keys
    ".env", ".env.*", "*.env", ".envrc",
    "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx", "*.asc", "*.gpg",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*.ppk",
    # credential and secret stores
    "credentials", "credentials.*", "*credentials*.json", "secrets", "secrets.*", "!secrets.py",
    "*.secret", "*.secrets", "service-account*.json", "*.tfvars", "*.tfstate", "*.tfstate.*",
    ".npmrc", ".pypirc", ".netrc", ".pgpass", ".htpasswd", ".git-credentials", ".dockercfg",
    ".docker/config.json", ".aws/", ".ssh/", ".gnupg/", ".kube/config",
    # version-control internals
    ".git/", ".hg/", ".svn/",
)  # fmt: skip
"""Gitignore-style patterns of files no tool lists, greps or reads."""


class Settings(BaseSettings):
    """Everything configurable, with safe defaults."""

    model_config = SettingsConfigDict(env_prefix="DIAGNOSER_", frozen=True)

    deny: tuple[str, ...] = DEFAULT_DENY
    """Secret files, gitignore syntax; replaces the default list when set."""
    deny_extra: tuple[str, ...] = ()
    """Patterns added to `deny` (the usual way to extend it)."""
    max_file_bytes: int = Field(default=constants.MAX_FILE_BYTES, gt=0)
    grep_max_results: int = Field(default=constants.GREP_MAX_RESULTS, gt=0)
    grep_max_chars: int = Field(default=constants.GREP_MAX_CHARS, gt=0)
    grep_time_seconds: float = Field(default=constants.GREP_TIME_SECONDS, gt=0)
    read_window_lines: int = Field(default=constants.READ_WINDOW_LINES, gt=0)
    list_max_entries: int = Field(default=constants.LIST_MAX_ENTRIES, gt=0)
    database_url: str | None = None
    """Where jobs and findings are stored: `sqlite:///path` or `postgresql://…`; unset,
    an SQLite file in the data directory (`default_database_url`)."""


def default_database_url() -> str:
    """An SQLite file in the data directory (`$DIAGNOSER_HOME`, else the user cache dir)."""
    return f"sqlite:///{data_home() / constants.DATABASE_FILE}"


def load_settings() -> Settings:
    """`Settings()` from the environment, or ConfigError naming the variable to fix."""
    try:
        return Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else ""
        raise ConfigError(f"{_variable(field)}: {first['msg']}") from None
    except SettingsError as exc:  # a value that is not even parseable (bad JSON for a list)
        named = re.search(r'field "(\w+)"', str(exc))
        reason = f" ({exc.__cause__})" if exc.__cause__ else ""
        variable = _variable(named.group(1) if named else "")
        raise ConfigError(f"{variable}: cannot parse the value{reason}") from None


def _variable(field: str) -> str:
    prefix = Settings.model_config.get("env_prefix", "")
    return f"{prefix}{field}".upper() if field else "a DIAGNOSER_* setting"
