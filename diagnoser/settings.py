"""`Settings`: the one configuration object, from the environment (`DIAGNOSER_*`) or arguments.

Validated at start-up and passed in; tests construct it with values instead of patching.
The deny-list settings take a comma-separated list (`DIAGNOSER_DENY_EXTRA='*.sql, local/'`)
or a JSON list (`'["*.sql", "a,b.txt"]'`, for a pattern holding a comma); every pattern is
compiled here, so a bad one fails at start-up, named.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from diagnoser import constants
from diagnoser.errors import ConfigError
from repomap import DEFAULT_DENY, DenyList, data_home, parse_patterns

Patterns = Annotated[tuple[str, ...], NoDecode]
"""Deny patterns; `NoDecode` so the validator, not pydantic-settings' JSON-only decoding,
reads the environment's text."""


class Settings(BaseSettings):
    """Everything configurable, with safe defaults."""

    model_config = SettingsConfigDict(env_prefix="DIAGNOSER_", frozen=True)

    deny: Patterns = DEFAULT_DENY
    """Secret files, gitignore syntax; replaces the default list when set."""
    deny_extra: Patterns = ()
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

    @field_validator("deny", "deny_extra", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return parse_patterns(value) if isinstance(value, str) else value

    @field_validator("deny", "deny_extra")
    @classmethod
    def _compiles(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        DenyList(value)  # ValueError naming the first bad pattern
        return value

    def deny_list(self) -> DenyList:
        """The one deny rule every reader applies: `deny`, then `deny_extra`."""
        return DenyList(self.deny).extended(self.deny_extra)


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


def _variable(field: str) -> str:
    prefix = Settings.model_config.get("env_prefix", "")
    return f"{prefix}{field}".upper() if field else "a DIAGNOSER_* setting"
