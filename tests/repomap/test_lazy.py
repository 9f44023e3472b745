from __future__ import annotations

import subprocess
import sys
import types

import pytest

from repomap import lazy


def test_a_name_loads_from_its_module_when_first_asked_for() -> None:
    package = types.ModuleType("lazy_probe")
    sys.modules["lazy_probe"] = package
    try:
        package.__getattr__, package.__dir__ = lazy.exports(  # type: ignore[method-assign]
            "lazy_probe", {"dedent": "textwrap"}
        )
        import textwrap  # noqa: PLC0415

        assert package.dedent is textwrap.dedent
        assert "dedent" in vars(package)  # kept: the hook is not asked again
        assert "dedent" in package.__dir__()
        with pytest.raises(AttributeError, match="no attribute 'missing'"):
            _ = package.missing
    finally:
        del sys.modules["lazy_probe"]


def test_importing_the_packages_loads_none_of_their_heavy_modules() -> None:
    probe = (
        "import sys, repomap, diagnoser; print(sorted({'numpy', 'pydantic_ai'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    probe = "import repomap; repomap.Repository; import sys; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
