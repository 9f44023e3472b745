"""Download and unpack the released sources that bench/cases_extra.jsonl names.

    .venv/bin/python bench/get_extra_sources.py [--cases PATH ...] [--dest DIR] [--package NAME ...]

`--cases` takes files, folders of `*.jsonl` or globs, several times over (default
bench/cases_extra.jsonl). For every distinct (package, version): a PyPI sdist (`dist: sdist`,
via `pip download --no-binary :all:`), an npm tarball (`dist: npm`, via `npm pack`) or a
Debian source package's upstream tarball (`dist: debian`, see debian_pool.py: the `.dsc` from
the pool, its `.orig.tar.*` checked against the `.dsc`'s sha256; `.orig-<component>.tar.*`
go to <root>/<component>/; Debian's own patches are not applied) is fetched into
DEST/dists/ and unpacked to DEST/src/<root>/ (an npm tarball's `package/` folder and a
Debian tarball's single top folder, whatever its name, are renamed to <root>; a tarball
without a single top folder becomes <root> as a whole). pip reads an sdist's metadata
before saving it, so a small build virtualenv with the common build backends is made once
under DEST/build/ (an sdist whose metadata pip cannot read is taken from the index's listing
directly). Idempotent: a release whose folder exists is skipped; a Debian or sdist release
that cannot be fetched is reported at the end (exit status 1), the others are fetched.
Point DEST at an ignored folder; never commit it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import casesets  # noqa: E402
import debian_pool  # noqa: E402

BUILD_BACKENDS = (
    "setuptools",
    "wheel",
    "setuptools_scm",
    "hatchling",
    "hatch-vcs",
    "hatch-fancy-pypi-readme",
    "flit_core",
    "poetry-core",
    "pdm-backend",
)
"""What pip needs to read an sdist's metadata without build isolation: the backends the
cases' releases declare (build isolation would fetch them again for every release)."""
PYPI_SIMPLE = "https://pypi.org/simple"
PEP691_JSON = "application/vnd.pypi.simple.v1+json"


def releases(cases: list[dict[str, object]], only: set[str]) -> list[tuple[str, str, str, str]]:
    """Distinct (package, version, dist, root) in first-seen order, limited to `only` if given;
    a case without a `package` (code in this repository, like the demo app) has none."""
    seen: dict[tuple[str, str, str, str], None] = {}
    for case in cases:
        if "package" not in case:
            continue
        key = (str(case["package"]), str(case["version"]), str(case["dist"]), str(case["root"]))
        if not only or key[0] in only:
            seen[key] = None
    return list(seen)


def build_venv(dest: Path) -> Path:
    venv = dest / "build"
    pip = venv / "bin" / "pip"
    if not pip.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        # -U: the venv's bundled setuptools (65 on 3.11) cannot read newer sdists'
        # metadata (a PEP 639 `license = "Apache-2.0 AND CNRI-Python"` string)
        subprocess.run([str(pip), "install", "-q", "-U", *BUILD_BACKENDS], check=True)
    return pip


def fetch_sdist(pip: Path, package: str, version: str, dists: Path) -> Path:
    found = archive_of(dists, package, version)
    if found is None:
        subprocess.run(
            [
                str(pip), "download", "-q", "--no-deps", "--no-binary", ":all:",
                "--no-build-isolation", "--ignore-requires-python", "-d", str(dists),
                f"{package}=={version}",
            ],
            check=True,
        )  # fmt: skip
        found = archive_of(dists, package, version)
    if found is None:
        raise SystemExit(f"no sdist for {package} {version} in {dists}")
    return found


def fetch_sdist_file(package: str, version: str, dists: Path) -> Path:
    """The sdist straight from the package index (PEP 691 JSON listing), sha256 checked —
    for a release pip cannot read the metadata of (a Python 2 `setup.py`)."""
    url = f"{PYPI_SIMPLE}/{re.sub(r'[-_.]+', '-', package).lower()}/"
    request = urllib.request.Request(url, headers={"Accept": PEP691_JSON})
    try:
        with urllib.request.urlopen(request, timeout=debian_pool.TIMEOUT_SECONDS) as response:
            listing = json.load(response)
        found = sdist_in_listing(listing, package, version)
        if found is None:
            raise MissingRelease(f"sdist {package} {version}: no sdist listed at {url}")
        name, link, sha256 = found
        with urllib.request.urlopen(link, timeout=debian_pool.TIMEOUT_SECONDS) as response:
            data = response.read()
    except urllib.error.URLError as error:
        raise MissingRelease(f"sdist {package} {version}: {error}") from error
    if hashlib.sha256(data).hexdigest() != sha256:
        raise MissingRelease(f"sdist {package} {version}: sha256 differs from the index's")
    (dists / name).write_bytes(data)
    return dists / name


def sdist_in_listing(
    listing: dict[str, Any], package: str, version: str
) -> tuple[str, str, str] | None:
    """(file name, url, sha256) of the release's sdist in a PEP 691 project listing."""
    for entry in listing.get("files", []):
        name = str(entry.get("filename", ""))
        sha256 = entry.get("hashes", {}).get("sha256")
        if sha256 and _is_sdist_of(name, package, version):
            return name, str(entry["url"]), str(sha256)
    return None


def _is_sdist_of(name: str, package: str, version: str) -> bool:
    def normal(text: str) -> str:
        return re.sub(r"[-_.]+", "_", text).lower()

    for suffix in (".tar.gz", ".zip"):
        if name.lower().endswith(suffix):
            return normal(name[: -len(suffix)]) == normal(f"{package}-{version}")
    return False


def archive_of(dists: Path, package: str, version: str) -> Path | None:
    """The sdist pip saved: its name normalises `-`/`.` to `_` and case varies by release."""
    wanted = package.lower().replace("-", "_").replace(".", "_")
    for path in sorted(dists.iterdir()):
        name = path.name.lower()
        for suffix in (".tar.gz", ".zip"):
            stem = name.removesuffix(suffix)
            if stem != name and stem.replace("-", "_").replace(".", "_") == (
                f"{wanted}_{version}".replace(".", "_").replace("-", "_")
            ):
                return path
    return None


def fetch_npm(package: str, version: str, dists: Path) -> Path:
    name = f"{package.lstrip('@').replace('/', '-')}-{version}.tgz"
    target = dists / name
    if not target.exists():
        subprocess.run(
            ["npm", "pack", "--silent", f"{package}@{version}", "--pack-destination", str(dists)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return target


def unpack(archive: Path, src: Path, root: str, rename_from: str | None) -> None:
    with tempfile.TemporaryDirectory(dir=src) as scratch:
        if archive.suffix == ".zip":
            with zipfile.ZipFile(archive) as zipped:
                zipped.extractall(scratch)
        else:
            with tarfile.open(archive) as tarred:
                tarred.extractall(scratch, filter="data")
        top = Path(scratch) / (rename_from or root)
        tops = [p for p in Path(scratch).iterdir() if p.is_dir()]
        if not top.is_dir() and len(tops) == 1:  # an old npm tarball's own folder name
            top = tops[0]
        if not top.is_dir():
            raise SystemExit(f"unpacked {archive.name} but {top.name}/ is missing")
        shutil.move(str(top), str(src / root))


class MissingRelease(Exception):
    """A release that cannot be fetched; the others are fetched all the same."""


def fetch_debian(package: str, version: str, dists: Path, src: Path, root: str) -> None:
    """A Debian source package's upstream tarball (and components) unpacked to src/root."""
    try:
        try:
            dsc = debian_pool.fetch_dsc(package, version, dists)
        except debian_pool.PoolError as gone:
            # the revision left the pool; its upstream tarball may not have
            archives = {"": debian_pool.fetch_orig(package, version, dists)}
            print(f"   {gone}; took the upstream tarball by name (unverified)", file=sys.stderr)
        else:
            orig, components = debian_pool.upstream_tarballs(dsc)
            archives = {
                name: debian_pool.fetch_file(dsc, wanted, dists)
                for name, wanted in {"": orig, **components}.items()
            }
    except debian_pool.PoolError as error:
        raise MissingRelease(f"debian {package} {version}: {error}") from error
    unpack_components(archives, src, root)


def unpack_components(archives: dict[str, Path], src: Path, root: str) -> None:
    """The upstream tarball (key "") to src/root, each component tarball to
    src/root/<component>; moved into place only when all are unpacked."""
    with tempfile.TemporaryDirectory(dir=src) as scratch:
        staged = Path(scratch) / root
        unpack_whole(archives[""], staged)
        for component, archive in archives.items():
            if component:
                unpack_whole(archive, staged / component)
        shutil.move(str(staged), str(src / root))


def unpack_whole(archive: Path, target: Path) -> None:
    """Unpack a tarball to `target`: its single top folder becomes `target`, else
    everything in it does. Members the "data" filter refuses (absolute or escaping
    links, devices) are skipped, not fatal: a few odd upstream entries should not lose
    the release."""
    with tempfile.TemporaryDirectory(dir=target.parent if target.parent.is_dir() else None) as s:
        scratch = Path(s)
        with tarfile.open(archive) as tarred:
            tarred.extractall(scratch, filter=_data_or_skip)
        children = [(p.name, p.is_dir() and not p.is_symlink()) for p in scratch.iterdir()]
        top = debian_pool.single_top(children)
        target.parent.mkdir(parents=True, exist_ok=True)
        if top is not None:
            shutil.move(str(scratch / top), str(target))
        else:
            target.mkdir(exist_ok=True)
            for name, _ in children:
                shutil.move(str(scratch / name), str(target / name))


def _data_or_skip(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
    try:
        return tarfile.data_filter(member, path)
    except tarfile.FilterError:
        print(f"   skipped {member.name} (unsafe member)", file=sys.stderr)
        return None


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument(
        "--cases", action="extend", nargs="+", help="cases .jsonl files, folders of them or globs"
    )
    cli.add_argument("--dest", type=Path, default=HERE / ".cache" / "widened")
    cli.add_argument("--package", action="append", default=[], help="only this package")
    args = cli.parse_args()
    cases = casesets.load(args.cases or [HERE / "cases_extra.jsonl"])
    dists, src = args.dest / "dists", args.dest / "src"
    dists.mkdir(parents=True, exist_ok=True)
    src.mkdir(parents=True, exist_ok=True)
    pip: Path | None = None
    missing: list[str] = []
    for package, version, dist, root in releases(cases, set(args.package)):
        if (src / root).is_dir():
            continue
        print(f"== {package} {version} ({dist})", file=sys.stderr)
        if dist == "npm":
            unpack(fetch_npm(package, version, dists), src, root, rename_from="package")
        elif dist == "debian":
            try:
                fetch_debian(package, version, dists, src, root)
            except MissingRelease as error:
                print(f"   {error}", file=sys.stderr)
                missing.append(str(error))
        else:
            pip = pip or build_venv(args.dest)
            try:
                try:
                    archive = fetch_sdist(pip, package, version, dists)
                except subprocess.CalledProcessError:
                    print("   pip could not read it; fetching the file itself", file=sys.stderr)
                    archive = fetch_sdist_file(package, version, dists)
            except MissingRelease as error:
                print(f"   {error}", file=sys.stderr)
                missing.append(str(error))
                continue
            unpack(archive, src, root, rename_from=None)
    print(f"sources ready under {src}", file=sys.stderr)
    if missing:
        raise SystemExit(f"{len(missing)} release(s) missing:\n" + "\n".join(missing))


if __name__ == "__main__":
    main()
