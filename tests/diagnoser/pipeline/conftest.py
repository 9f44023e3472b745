"""The demo application's workspace, shared by a module's tests."""

from __future__ import annotations

import pytest

from diagnoser.workspace import Workspace
from tests.diagnoser.pipeline.scripted import SAMPLES


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(SAMPLES / "demo_app", home=tmp_path_factory.mktemp("home"))
