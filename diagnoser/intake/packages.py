"""The packages a repository publishes, read from its manifests: its names as a library.

A trace from a program that installed the repository shows its code where installed
packages live (`node_modules/axios/lib/utils.js`, `…/pkg/mod/github.com/spf13/cobra@v1.6.1/
command.go`, `…/.cargo/registry/src/index.crates.io-…/toml-0.5.9/src/de.rs`,
`…/gems/rack-2.2.3/lib/rack/utils.rb`); `mapping` maps such a frame onto the repository
when the package is one of these. Each manifest names one package and its folder is the
package's root, so a monorepo (several `package.json` or `Cargo.toml`) maps each name to
its own folder:

- `package.json` `name` (`axios`, `@scope/name`);
- `go.mod` `module` (`github.com/spf13/cobra`; Go frames also name it as their module);
- `Cargo.toml` `[package] name` (its code also says `toml::de`, with `-` as `_`);
- `pom.xml` `artifactId` and `groupId` (the parent's when the project has none), Gradle
  `group` (`build.gradle`, `build.gradle.kts`): JVM frames name classes by package, and
  the group is often its prefix (`org.apache.commons` → `org.apache.commons.lang3.…`);
- a `.gemspec`'s `name`.

Pure: `read_packages` takes `{path: text}`; the workspace reads the files (`MANIFESTS`).
A manifest that does not parse names nothing.
"""

from __future__ import annotations

import json
import re
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass

MANIFEST_NAMES = frozenset(
    {"package.json", "go.mod", "Cargo.toml", "pom.xml", "build.gradle", "build.gradle.kts"}
)
MANIFEST_SUFFIXES = (".gemspec",)
MAX_MANIFEST_DEPTH = 4
"""Folders deep a manifest may sit (`packages/core/package.json` is 2): deeper ones are
fixtures and examples more often than packages."""
MAX_MANIFESTS = 200
MAX_MANIFEST_BYTES = 256_000
_NOT_PACKAGES = re.compile(
    r"(?:^|/)(?:tests?|testdata|fixtures|__fixtures__|examples?|samples?|docs?|"
    r"node_modules|vendor|third_party)/"
)
"""Folders whose manifests describe test data or demos, not what the repository ships."""
_GO_MODULE = re.compile(r"^\s*module\s+\"?([^\s\"]+)\"?", re.MULTILINE)
_GEM_NAME = re.compile(r"\.name\s*=\s*[\"']([^\"']+)[\"']")
_GRADLE_GROUP = re.compile(r"^\s*group\s*=?\s*[\"']([\w.-]+)[\"']", re.MULTILINE)
_MAVEN_NS = re.compile(r"^\{[^}]*\}")


@dataclass(frozen=True, slots=True)
class Package:
    name: str
    """As installed code is filed: `axios`, `@scope/name`, `github.com/spf13/cobra`, `toml`."""
    folder: str
    """Repo-relative folder of its manifest ("" for the root)."""


@dataclass(frozen=True, slots=True)
class Packages:
    packages: tuple[Package, ...] = ()
    modules: frozenset[str] = frozenset()
    """Module prefixes that are the repository's own code (JVM groups, Rust crates with
    `_`, Go module paths): a frame's module under one is in-app, runtime name or not."""

    def owns_module(self, module: str) -> bool:
        """Whether `module` (`kotlinx.coroutines.Job`, `tokio::runtime`) is under one of
        ours."""
        dotted = module.replace("::", ".")
        return any(
            dotted == own or dotted.startswith((own + ".", own + "/")) for own in self.modules
        )


NO_PACKAGES = Packages()


def is_manifest(path: str) -> bool:
    """A manifest `read_packages` reads, shallow enough and outside test/demo folders."""
    name = path.rsplit("/", 1)[-1]
    return (
        (name in MANIFEST_NAMES or name.endswith(MANIFEST_SUFFIXES))
        and path.count("/") <= MAX_MANIFEST_DEPTH
        and not _NOT_PACKAGES.search(path)
    )


def read_packages(texts: Mapping[str, str]) -> Packages:
    """Manifest path → its text, to the packages they name (sorted by folder, then name)."""
    found: set[Package] = set()
    modules: set[str] = set()
    for path, text in texts.items():
        folder, _, name = path.rpartition("/")
        names, prefixes = _names(name, text)
        found.update(Package(n, folder) for n in names)
        modules.update(prefixes)
    ordered = tuple(sorted(found, key=lambda p: (p.folder, p.name)))
    return Packages(ordered, frozenset(modules))


def _names(manifest: str, text: str) -> tuple[list[str], list[str]]:
    """(package names, own module prefixes) one manifest gives."""
    if manifest == "package.json":
        return _listed(_json_name(text)), []
    if manifest == "go.mod":
        match = _GO_MODULE.search(text)
        return (_listed(match.group(1)),) * 2 if match else ([], [])
    if manifest == "Cargo.toml":
        name = _cargo_name(text)
        return _listed(name), _listed(name.replace("-", "_") if name else None)
    if manifest == "pom.xml":
        group, artifact = _maven(text)
        return _listed(artifact), _listed(group)
    if manifest.startswith("build.gradle"):
        match = _GRADLE_GROUP.search(text)
        return [], _listed(match.group(1) if match else None)
    match = _GEM_NAME.search(text)  # .gemspec
    return _listed(match.group(1) if match else None), []


def _listed(name: str | None) -> list[str]:
    return [name.strip()] if name and name.strip() else []


def _json_name(text: str) -> str | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else None


def _cargo_name(text: str) -> str | None:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    package = data.get("package")
    name = package.get("name") if isinstance(package, dict) else None
    return name if isinstance(name, str) else None


def _maven(text: str) -> tuple[str | None, str | None]:
    """The project's (groupId, artifactId); the parent's groupId when it has none."""
    try:
        # the repository's own file, size-capped by the reader; expat expands no external
        # entities and refuses runaway internal ones
        root = ET.fromstring(text)
    except ET.ParseError:
        return None, None
    fields: dict[str, str] = {}
    for child in root:
        tag = _MAVEN_NS.sub("", child.tag)
        if tag in ("groupId", "artifactId") and child.text:
            fields[tag] = child.text.strip()
        elif tag == "parent":
            for item in child:
                if _MAVEN_NS.sub("", item.tag) == "groupId" and item.text:
                    fields.setdefault("parentGroupId", item.text.strip())
    return fields.get("groupId") or fields.get("parentGroupId"), fields.get("artifactId")
