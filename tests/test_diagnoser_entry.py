"""The `diagnoser` command imports what its command uses (issue 24 §2): the CLI neither
the service (FastAPI, DBOS, SQLAlchemy, Alembic, uvicorn) nor a provider's SDK it was not
asked for; `--help` not even PydanticAI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "sample_reports" / "reports" / "issue_load_more_500.md"
SERVICE = {"api", "fastapi", "starlette", "dbos", "sqlalchemy", "alembic", "uvicorn", "psycopg"}
RUN_DEADLINE_SECONDS = 120
"""A hang guard: each command here ends by itself in a few seconds."""
PROVIDER_SDKS = {"openai", "anthropic", "groq", "mistralai", "cohere", "boto3", "google"}
RUN = """
import gc, json, sys
import diagnoser_entry
sys.argv = ["diagnoser", *json.loads(sys.argv[1])]
try:
    code = diagnoser_entry.main()
except SystemExit as exit:  # --help
    code = exit.code
collector = {{"on": gc.isenabled(), "tracked": len(gc.get_objects())}}
with open({out!r}, "w") as sink:
    json.dump({{
        "code": code, "modules": sorted({{m.split(".")[0] for m in sys.modules}}),
        "collector": collector,
    }}, sink)
"""
LEFT_TO_COLLECT = 1_000
"""Objects the interpreter's collections at exit still go over after a command: what the
lines after it made. Without `collector.before_exit`, an offline diagnosis left ~110,000."""


def _env(tmp_path: Path, settings: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment with only these `DIAGNOSER_*` settings, and a home."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIAGNOSER_")}
    return {**env, "DIAGNOSER_HOME": str(tmp_path / "home"), **(settings or {})}


def _loaded(
    args: list[str], tmp_path: Path, settings: dict[str, str] | None = None
) -> tuple[int, set[str]]:
    """Run `diagnoser ARGS` in a fresh interpreter with only these `DIAGNOSER_*` settings:
    its exit code and the top-level packages it imported."""
    out = tmp_path / "modules.json"
    subprocess.run(
        [sys.executable, "-c", RUN.format(out=str(out)), json.dumps(args)],
        cwd=ROOT, env=_env(tmp_path, settings), capture_output=True, check=False,
        timeout=RUN_DEADLINE_SECONDS,
    )  # fmt: skip
    found = json.loads(out.read_text())
    return found["code"], set(found["modules"])


def _collector(args: list[str], tmp_path: Path) -> dict[str, object]:
    """The garbage collector's state once `diagnoser ARGS` returned (fresh interpreter)."""
    _loaded(args, tmp_path)
    return dict(json.loads((tmp_path / "modules.json").read_text())["collector"])


def test_help_imports_neither_the_service_nor_pydantic_ai(tmp_path: Path) -> None:
    code, modules = _loaded(["--help"], tmp_path)
    assert code == 0
    assert not modules & (SERVICE | PROVIDER_SDKS | {"pydantic_ai", "numpy", "tree_sitter"})


def test_an_offline_diagnosis_imports_no_service_and_no_provider_sdk(tmp_path: Path) -> None:
    code, modules = _loaded(["diagnose", str(REPORT), "--quiet"], tmp_path)
    assert code == 0
    assert "pydantic_ai" in modules  # it did run the agent
    assert not modules & (SERVICE | PROVIDER_SDKS)


def test_a_command_leaves_the_collector_on_and_nothing_for_it_at_exit(tmp_path: Path) -> None:
    """`repomap.collector`: off while the modules load, on for the run, and as the command
    ends what is alive is frozen, so the collections at exit pass over it."""
    for args in (["diagnose", str(REPORT), "--quiet"], ["--help"]):
        state = _collector(args, tmp_path)
        assert state["on"] is True, args
        assert isinstance(state["tracked"], int) and state["tracked"] < LEFT_TO_COLLECT, args


def test_serve_is_the_service(tmp_path: Path) -> None:
    code, modules = _loaded(["serve", "--workers", "0"], tmp_path)  # refused: not positive
    assert code == 2
    assert "api" in modules


def test_serve_answers_help_and_a_bad_setting_before_the_service_loads(tmp_path: Path) -> None:
    heavy = (SERVICE - {"api"}) | PROVIDER_SDKS | {"pydantic_ai"}
    code, modules = _loaded(["serve", "--help"], tmp_path)
    assert code == 0 and not modules & heavy
    code, modules = _loaded(["serve"], tmp_path, {"DIAGNOSER_JOB_CONCURRENCY": "many"})
    assert code == 2 and not modules & heavy
    code, modules = _loaded(["worker", "--help"], tmp_path)
    assert code == 0 and not modules & heavy


WEB = {"fastapi", "starlette", "dbos", "alembic", "uvicorn"}
"""What `serve` and `worker` load only once their settings have passed `api.preflight`."""


def test_a_bad_model_or_database_stops_the_start_before_the_web_service_loads(
    tmp_path: Path,
) -> None:
    refused = {
        "DIAGNOSER_MODEL": "nope:model",
        "DIAGNOSER_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/x",
    }
    for command in ("serve", "worker"):
        for variable, value in refused.items():
            code, modules = _loaded([command], tmp_path, {variable: value})
            assert code == 2 and not modules & WEB, (command, variable, modules & WEB)


WEB_WORKER = """
import json, sys
from fastapi.testclient import TestClient
from api import ServiceSettings
from api.app import build_service, create_app
import api.workers  # what `serve --workers N` loads in each web worker
settings = ServiceSettings(database_url=sys.argv[1], repos={{"demo": {demo!r}}})
service = build_service(settings, runner=False, upgrade=True)
with TestClient(create_app(service=service)) as client:
    answers = [client.get(path).status_code for path in (
        "/healthz", "/findings", "/jobs/00000000-0000-0000-0000-000000000000",
        "/openapi.json", "/docs",
    )] + [client.post("/diagnose", json={{"report": {{"text": ""}}}}).status_code]
service.store.engine.dispose()
print(json.dumps({{"answers": answers, "pydantic_ai": "pydantic_ai" in sys.modules}}))
"""


def test_a_process_that_only_takes_requests_never_loads_pydantic_ai(tmp_path: Path) -> None:
    """A web worker of `serve --workers N` (or `serve --no-jobs`) runs no model: it answers
    reads, the docs and a refused report without PydanticAI (~30 MB and ~1 s of start
    each); the process that runs the jobs loads it at its start (`api.preflight`)."""
    script = WEB_WORKER.format(demo=str(ROOT / "sample_reports" / "demo_app"))
    done = subprocess.run(
        [sys.executable, "-c", script, f"sqlite:///{tmp_path / 'db' / 'diagnoser.sqlite'}"],
        cwd=ROOT, env=_env(tmp_path), capture_output=True, text=True, check=True,
        timeout=RUN_DEADLINE_SECONDS,
    )  # fmt: skip
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["answers"] == [200, 200, 404, 200, 200, 422], found
    assert found["pydantic_ai"] is False
