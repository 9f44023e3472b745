"""A package's public names, imported from their modules on first use (PEP 562).

    __getattr__, __dir__ = lazy.exports(__name__, {"Repository": "repomap.repository"})

Importing such a package loads none of its modules: a command that needs one module, or
only parses its arguments, does not pay for the rest (numpy, tree-sitter, PydanticAI).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def exports(
    package: str, names: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, whose public `names` (name → the
    module defining it) load when first asked for, then stay in its namespace."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # asked once
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
