"""Package names from each ecosystem's manifests, with the folder they live in."""

from __future__ import annotations

import pytest

from diagnoser.intake.packages import Package, Packages, is_manifest, read_packages

POM = """<?xml version="1.0"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <parent><groupId>org.apache.commons</groupId><artifactId>commons-parent</artifactId></parent>
  <artifactId>commons-lang3</artifactId>
  <dependencies>
    <dependency><groupId>junit</groupId><artifactId>junit</artifactId></dependency>
  </dependencies>
</project>
"""
GEMSPEC = 'Gem::Specification.new do |s|\n  s.name = "rack"\n  s.version = Rack::VERSION\nend\n'


def test_each_ecosystem_names_its_package_and_folder() -> None:
    found = read_packages({
        "package.json": '{"name": "axios", "version": "1.6.0"}',
        "packages/ui/package.json": '{"name": "@acme/ui"}',
        "go.mod": "module github.com/spf13/cobra\n\ngo 1.15\n\nrequire (\n\tgithub.com/x/y v1\n)\n",
        "crates/toml/Cargo.toml": '[package]\nname = "toml"\nversion = "0.5.9"\n',
        "pom.xml": POM,
        "rack.gemspec": GEMSPEC,
    })  # fmt: skip
    assert found.packages == (
        Package("axios", ""), Package("commons-lang3", ""), Package("github.com/spf13/cobra", ""),
        Package("rack", ""), Package("toml", "crates/toml"), Package("@acme/ui", "packages/ui"),
    )  # fmt: skip
    assert found.modules == {"github.com/spf13/cobra", "toml", "org.apache.commons"}


def test_module_prefixes_are_owned_by_segment() -> None:
    found = read_packages({
        "build.gradle.kts": 'plugins { kotlin("jvm") }\ngroup = "org.jetbrains.kotlinx"\n',
        "tokio/Cargo.toml": '[package]\nname = "tokio-util"\n',
        "Cargo.toml": '[workspace]\nmembers = ["tokio"]\n',
    })  # fmt: skip
    assert found.packages == (Package("tokio-util", "tokio"),)
    assert found.owns_module("org.jetbrains.kotlinx.coroutines.JobSupport")
    assert found.owns_module("tokio_util::codec") and not found.owns_module("tokio::runtime")
    assert not found.owns_module("org.jetbrains.kotlinxy.Other")


@pytest.mark.parametrize(
    "texts",
    [
        {"package.json": "{not json"}, {"package.json": '["a"]'}, {"package.json": "{}"},
        {"Cargo.toml": "[package\nname="}, {"pom.xml": "<project>"}, {"go.mod": "go 1.21\n"},
        {"x.gemspec": "Gem::Specification.new do |s| end"},
        {"build.gradle": "apply plugin: 'java'"},
    ],
)  # fmt: skip
def test_a_manifest_that_does_not_parse_names_nothing(texts: dict[str, str]) -> None:
    assert read_packages(texts) == Packages()


def test_which_files_are_manifests() -> None:
    for path in ("package.json", "packages/core/package.json", "go.mod", "crates/a/Cargo.toml",
                 "pom.xml", "build.gradle.kts", "rack.gemspec"):  # fmt: skip
        assert is_manifest(path), path
    for path in ("tests/fixtures/package.json", "examples/app/package.json", "a/b/c/d/e/go.mod",
                 "src/node_modules/x/package.json", "package-lock.json", "Cargo.lock"):  # fmt: skip
        assert not is_manifest(path), path
