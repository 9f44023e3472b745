"""`diagnoser.pipeline.report`: intake maps a report's frames onto the workspace."""

from __future__ import annotations

from pathlib import Path

from diagnoser.intake import ReportIn
from diagnoser.pipeline import intake
from diagnoser.settings import Settings
from diagnoser.workspace import Workspace
from tests.conftest import MakeRepo
from tests.diagnoser.pipeline.scripted import TRACE


def test_intake_maps_the_trace_onto_the_workspace(workspace: Workspace) -> None:
    report = intake(ReportIn(text=TRACE), workspace)
    assert report.classification.kind.value == "crash"
    assert [f.repo_path for f in report.frames if f.in_app] == ["src/app.py", "src/app.py"]
    assert workspace.is_warm


def test_intake_maps_an_installed_copy_of_the_repository_itself(
    tmp_path: Path, make_repo: MakeRepo
) -> None:
    root = make_repo({
        "package.json": '{"name": "@acme/cart"}',
        "tests/fixtures/package.json": '{"name": "lodash"}',
        "lib/total.js": "function total(items) {\n  return items.map((i) => i.price);\n}\n",
        "node_modules/lodash/lib/total.js": "x\n",
    })  # fmt: skip
    text = (
        "TypeError: Cannot read properties of undefined (reading 'map')\n"
        "    at total (/srv/shop/node_modules/@acme/cart/lib/total.js:2:16)\n"
        "    at run (/srv/shop/node_modules/lodash/lib/total.js:9:3)\n"
    )
    workspace = Workspace(root, home=tmp_path / "home")
    assert [p.name for p in workspace.packages.packages] == ["@acme/cart"]
    report = intake(ReportIn(text=text), workspace)
    assert [(f.repo_path, f.in_app) for f in report.frames] == [
        (None, False), ("lib/total.js", True),
    ]  # fmt: skip


REVIEW = ReportIn(
    text="uygulama her açtığımda kapanıyor, hiçbir şey yapamıyorum",  # tr: closes on open
    rating=1, source="google_play",
)  # fmt: skip


def test_an_unsure_store_review_is_decided_by_its_nearest_prototypes(
    workspace: Workspace,
) -> None:
    report = intake(REVIEW, workspace)
    assert report.classification.actionable
    assert report.classification.signals[0].startswith("prototypes:")
    assert "was:noise" in report.classification.signals


def test_the_review_encoder_is_a_setting(tmp_path: Path, make_repo: MakeRepo) -> None:
    root = make_repo({"app.py": "def main():\n    pass\n"})
    off = Workspace(root, Settings(review_encoder=False), home=tmp_path / "home")
    verdict = intake(REVIEW, off).classification
    assert verdict.kind.value == "noise"
    assert not any(s.startswith("prototypes:") for s in verdict.signals)
