"""The README's set-up commands and CLI usage must stay true."""

from __future__ import annotations

import re
from pathlib import Path

from repomap.__main__ import parser

ROOT = Path(__file__).parent.parent


def test_readme_commands_are_make_targets_and_ci_runs_the_test_one() -> None:
    readme = (ROOT / "README.md").read_text()
    makefile = (ROOT / "Makefile").read_text()
    for target in ("run", "test"):
        assert f"make {target}" in readme
        assert re.search(rf"^{target}:", makefile, re.MULTILINE)
    assert "\nmake test\n" in (ROOT / ".ci" / "run").read_text()


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
