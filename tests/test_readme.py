"""The README's set-up commands and CLI usage must stay true."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from api.routes import diagnose, findings, health, jobs, repos, webhooks
from api.settings import SETTINGS_FILE_VAR, ServiceSettings
from repomap.__main__ import parser

ROOT = Path(__file__).parent.parent


def test_readme_commands_are_make_targets_and_ci_runs_the_test_one() -> None:
    readme = (ROOT / "README.md").read_text()
    makefile = (ROOT / "Makefile").read_text()
    for target in ("run", "test"):
        assert f"make {target}" in readme
        assert re.search(rf"^{target}:", makefile, re.MULTILINE)
    assert "\nmake test\n" in (ROOT / ".ci" / "run").read_text()


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_run_installs_the_service_alone_and_make_test_the_dev_tools_too(
    tmp_path: Path,
) -> None:
    """What `make run` and `make test` would install in a new virtualenv (`make -n`: the
    commands, none run): the service without the dev tools, then the tests with them."""

    def plan(target: str) -> str:
        venv = f"VENV={tmp_path / 'venv'}"
        done = subprocess.run(["make", "-n", venv, target], cwd=ROOT, capture_output=True,
                              text=True, check=True)  # fmt: skip
        return done.stdout

    run, test = plan("run"), plan("test")
    assert "pip install -q -e .\n" in run and "[dev]" not in run
    assert "pip install -q -e .\n" in test and "pip install -q -e '.[dev]'" in test


def test_readme_usage_lists_every_cli_option() -> None:
    readme = (ROOT / "README.md").read_text()
    usage = next(line for line in readme.splitlines() if "python -m repomap PATH" in line)
    options = {opt for action in parser()._actions for opt in action.option_strings}
    assert {opt for opt in options if opt.startswith("--") and opt != "--help"} == set(
        re.findall(r"--[a-z-]+", usage)
    )


def test_readme_python_imports_exist() -> None:
    readme = (ROOT / "README.md").read_text()
    imports = [
        line for line in readme.splitlines() if line.startswith(("from diagnoser", "from repomap"))
    ]
    assert imports
    exec("\n".join(imports), {})  # an import the code no longer has fails here


def test_every_service_setting_is_documented() -> None:
    readme = (ROOT / "README.md").read_text()
    for name in ServiceSettings.model_fields:
        assert f"`DIAGNOSER_{name.upper()}`" in readme, name
    assert f"`{SETTINGS_FILE_VAR}`" in readme


def test_readme_service_routes_exist() -> None:
    modules = (diagnose, findings, health, jobs, repos, webhooks)
    paths = {getattr(route, "path", "") for module in modules for route in module.router.routes}
    readme = (ROOT / "README.md").read_text()
    documented = set(
        re.findall(
            r"`(?:GET |POST )?(/(?:webhooks|healthz|readyz|metrics|diagnose)[^`?\s]*)", readme
        )
    )
    assert "/diagnose" in documented and "/webhooks/rollbar/{token}" in documented
    assert documented <= paths, documented - paths
