"""bench/cases_extra.jsonl and bench/data/multilang/*.jsonl are well formed: the fields the
bench scripts read, usable paths."""

from __future__ import annotations

import json
import sys
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))

from debian_pool import upstream_version

CASES = Path(__file__).parents[1] / "bench" / "cases_extra.jsonl"
MULTILANG = CASES.parent / "data" / "multilang"
LANGUAGES = {"c", "cpp", "go", "rust", "java", "javascript", "typescript", "python"}
DISTS = {"sdist", "npm", "debian"}
FIELDS = {
    "id": str,
    "package": str,
    "version": str,
    "dist": str,
    "root": str,
    "language": str,
    "problem_statement": str,
    "gold_files": list,
    "gold_functions": list,
    "has_traceback": bool,
    "source_url": str,
    "fixed_version": str,
    "how_gold": str,
}
FORBIDDEN_REPOS = {
    "astropy", "django", "flask", "matplotlib", "pylint", "pytest", "requests",
    "scikit-learn", "seaborn", "sphinx", "sympy", "xarray",
}  # fmt: skip
"""The SWE-bench repositories: held-out sets are drawn from them (bench/cases_extra.md)."""


def load(path: Path = CASES) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def multilang() -> list[dict[str, Any]]:
    return [case for path in sorted(MULTILANG.glob("*.jsonl")) for case in load(path)]


def repo_relative(path: str) -> bool:
    pure = PurePosixPath(path)
    return bool(path) and not pure.is_absolute() and ".." not in pure.parts and "\\" not in path


def assert_functions_in_gold(case: dict[str, Any]) -> None:
    """Each gold function (`path::symbol`) names one of the case's gold files."""
    for function in case["gold_functions"]:
        path, _, symbol = str(function).partition("::")
        assert path in case["gold_files"] and symbol, (case["id"], function)


def assert_gold_files_exist(cases: list[dict[str, Any]], sources: Path) -> None:
    """Every gold file of each case whose release is under `sources`."""
    for case in cases:
        if (sources / case["root"]).is_dir():
            for path in case["gold_files"]:
                assert (sources / case["root"] / path).is_file(), (case["id"], path)


def test_every_case_has_the_fields_with_their_types() -> None:
    for case in load():
        for name, kind in FIELDS.items():
            assert isinstance(case.get(name), kind), (case.get("id"), name)


def test_ids_are_unique() -> None:
    ids = [case["id"] for case in load()]
    assert len(ids) == len(set(ids))


def test_gold_files_are_repo_relative_and_functions_name_a_gold_file() -> None:
    for case in load():
        gold = case["gold_files"]
        assert gold and all(isinstance(p, str) and repo_relative(p) for p in gold), case["id"]
        assert_functions_in_gold(case)


def test_sources_are_packages_outside_the_held_out_projects() -> None:
    for case in load():
        assert case["dist"] in {"sdist", "npm"}, case["id"]
        assert case["version"] != case["fixed_version"], case["id"]
        repo = str(case["source_url"]).removeprefix("https://github.com/").split("/")
        assert len(repo) >= 4 and repo[2] == "issues", case["id"]
        assert repo[1].lower() not in FORBIDDEN_REPOS, case["id"]


@pytest.mark.parametrize("path", ["a/b.py", "lib/x.js"])
def test_repo_relative_accepts_plain_paths(path: str) -> None:
    assert repo_relative(path)


@pytest.mark.parametrize("path", ["", "/abs/x.py", "../x.py", "a\\b.py"])
def test_repo_relative_rejects_escaping_paths(path: str) -> None:
    assert not repo_relative(path)


SOURCES = CASES.parent / ".cache" / "widened" / "src"


@pytest.mark.skipif(not SOURCES.is_dir(), reason="run bench/get_extra_sources.py first")
def test_gold_files_exist_in_the_downloaded_releases() -> None:
    present = [case for case in load() if (SOURCES / case["root"]).is_dir()]
    for case in present:
        for path in case["gold_files"]:
            assert (SOURCES / case["root"] / path).is_file(), (case["id"], path)


@pytest.mark.skipif(not multilang(), reason="no multi-language cases yet")
def test_multilang_cases_are_well_formed() -> None:
    everything = load() + multilang()
    ids = [case["id"] for case in everything]
    assert len(ids) == len(set(ids))
    for case in multilang():
        for name, kind in FIELDS.items():
            assert isinstance(case.get(name), kind), (case.get("id"), name)
        assert case["language"] in LANGUAGES and case["dist"] in DISTS, case["id"]
        assert case["version"] != case["fixed_version"], case["id"]
        gold = case["gold_files"]
        assert gold and all(isinstance(p, str) and repo_relative(p) for p in gold), case["id"]
        repo = str(case["source_url"]).removeprefix("https://github.com/").split("/")
        assert len(repo) < 2 or repo[1].lower() not in FORBIDDEN_REPOS, case["id"]


@pytest.mark.skipif(not multilang(), reason="no multi-language cases yet")
def test_a_debian_case_s_root_is_its_source_package_and_upstream_version() -> None:
    for case in multilang():
        if case["dist"] == "debian":
            wanted = f"{case['package']}-{upstream_version(case['version'])}"
            assert case["root"] == wanted, case["id"]


MULTILANG_SOURCES = CASES.parent / ".cache" / "multilang" / "src"


@pytest.mark.skipif(not MULTILANG_SOURCES.is_dir(), reason="fetch the multilang sources first")
def test_multilang_gold_files_exist_in_the_downloaded_releases() -> None:
    present = [case for case in multilang() if (MULTILANG_SOURCES / case["root"]).is_dir()]
    for case in present:
        for path in case["gold_files"]:
            assert (MULTILANG_SOURCES / case["root"] / path).is_file(), (case["id"], path)


JAVA_CRASHES = CASES.parent / "data" / "java_crashes" / "jcrashpack.jsonl"


def test_java_crash_cases_are_well_formed_verbatim_traces() -> None:
    cases = load(JAVA_CRASHES)
    ids = [case["id"] for case in cases + load() + multilang()]
    assert len(cases) >= 60 and len(ids) == len(set(ids))
    for case in cases:
        for name, kind in FIELDS.items():
            assert isinstance(case.get(name), kind), (case.get("id"), name)
        assert case["language"] == "java" and case["dist"] == "debian", case["id"]
        assert case["text"] == "verbatim" and case["has_traceback"], case["id"]
        assert "\tat " in case["problem_statement"], case["id"]
        gold = case["gold_files"]
        assert gold and all(repo_relative(p) for p in gold), case["id"]
        assert_functions_in_gold(case)


JAVA_SOURCES = CASES.parent / ".cache" / "java_crashes" / "src"


@pytest.mark.skipif(not JAVA_SOURCES.is_dir(), reason="fetch the java_crashes sources first")
def test_java_crash_gold_files_exist_in_the_downloaded_releases() -> None:
    assert_gold_files_exist(load(JAVA_CRASHES), JAVA_SOURCES)


RUST_APPS = CASES.parent / "data" / "rust_apps" / "apps.jsonl"
RUST_SOURCES = CASES.parent / ".cache" / "rust_apps" / "src"


def test_rust_app_cases_are_well_formed() -> None:
    cases = load(RUST_APPS)
    ids = [case["id"] for case in cases + load() + multilang() + load(JAVA_CRASHES)]
    assert len(cases) >= 25 and len(ids) == len(set(ids))
    for case in cases:
        for name, kind in FIELDS.items():
            assert isinstance(case.get(name), kind), (case.get("id"), name)
        assert case["language"] == "rust" and case["dist"] == "sdist", case["id"]
        assert case["version"] != case["fixed_version"], case["id"]
        assert case["paraphrase_check"] in ("verbatim", "excerpt"), case["id"]
        gold = case["gold_files"]
        assert gold and all(repo_relative(p) and p.endswith(".rs") for p in gold), case["id"]
        assert_functions_in_gold(case)


@pytest.mark.skipif(not RUST_SOURCES.is_dir(), reason="fetch the rust_apps sources first")
def test_rust_app_gold_files_exist_in_the_downloaded_releases() -> None:
    assert_gold_files_exist(load(RUST_APPS), RUST_SOURCES)
