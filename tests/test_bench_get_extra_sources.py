"""bench/get_extra_sources.py: how a Debian tarball becomes `src/<root>/` (no network)."""

from __future__ import annotations

import io
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))

import get_extra_sources


def tarball(path: Path, files: dict[str, bytes], links: dict[str, str] | None = None) -> Path:
    with tarfile.open(path, "w:xz") as tarred:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tarred.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tarred.addfile(info)
    return path


def test_the_single_top_folder_is_renamed_to_the_root_whatever_its_name(tmp_path: Path) -> None:
    archive = tarball(tmp_path / "o.tar.xz", {"./pflag-d5e0c06/flag.go": b"package pflag\n"})
    get_extra_sources.unpack_whole(archive, tmp_path / "src" / "pflag-1.0.6")
    assert (tmp_path / "src" / "pflag-1.0.6" / "flag.go").read_bytes() == b"package pflag\n"
    assert sorted(p.name for p in (tmp_path / "src").iterdir()) == ["pflag-1.0.6"]


def test_without_a_single_top_folder_the_whole_content_is_the_root(tmp_path: Path) -> None:
    archive = tarball(tmp_path / "o.tar.xz", {"src/lib.rs": b"fn a() {}\n", "Cargo.toml": b""})
    get_extra_sources.unpack_whole(archive, tmp_path / "src" / "semver-1.0")
    root = tmp_path / "src" / "semver-1.0"
    assert sorted(p.name for p in root.iterdir()) == ["Cargo.toml", "src"]
    assert (root / "src" / "lib.rs").is_file()


def test_unsafe_members_are_skipped_and_the_rest_unpacked(tmp_path: Path) -> None:
    archive = tarball(
        tmp_path / "o.tar.xz",
        {"top/ok.c": b"int x;\n", "../escape.c": b"int y;\n"},
        links={"top/passwd": "/etc/passwd"},
    )
    get_extra_sources.unpack_whole(archive, tmp_path / "src" / "c-1.0")
    assert (tmp_path / "src" / "c-1.0" / "ok.c").is_file()
    assert not (tmp_path / "src" / "c-1.0" / "passwd").exists()
    assert not (tmp_path / "src" / "escape.c").exists() and not (tmp_path / "escape.c").exists()


def test_releases_are_distinct_in_first_seen_order_and_filtered_by_package() -> None:
    cases: list[dict[str, object]] = [
        {"package": "zlib", "version": "1:1.3-1", "dist": "debian", "root": "zlib-1.3"},
        {"package": "qs", "version": "6.9.1", "dist": "npm", "root": "qs-6.9.1"},
        {"package": "zlib", "version": "1:1.3-1", "dist": "debian", "root": "zlib-1.3"},
        {"app": "demo"},  # code of this repository: nothing to fetch
    ]
    assert get_extra_sources.releases(cases, set()) == [
        ("zlib", "1:1.3-1", "debian", "zlib-1.3"),
        ("qs", "6.9.1", "npm", "qs-6.9.1"),
    ]
    assert get_extra_sources.releases(cases, {"qs"}) == [("qs", "6.9.1", "npm", "qs-6.9.1")]


def test_component_tarballs_go_to_their_folder_under_the_root(tmp_path: Path) -> None:
    archives = {
        "": tarball(tmp_path / "x.orig.tar.xz", {"x-2.0/main.c": b"int main;\n"}),
        "docs": tarball(tmp_path / "x.orig-docs.tar.xz", {"x-docs-2.0/index.md": b"# x\n"}),
    }
    src = tmp_path / "src"
    src.mkdir()
    get_extra_sources.unpack_components(archives, src, "x-2.0")
    assert (src / "x-2.0" / "main.c").is_file()
    assert (src / "x-2.0" / "docs" / "index.md").is_file()
    assert [p.name for p in src.iterdir()] == ["x-2.0"]  # no scratch folder left behind


def test_the_sdist_in_an_index_listing_is_matched_by_normalised_name_and_version() -> None:
    listing = {
        "files": [
            {"filename": "simplejson-2.1.6-py2.7.egg", "url": "u0", "hashes": {"sha256": "0"}},
            {"filename": "simplejson-2.1.60.tar.gz", "url": "u1", "hashes": {"sha256": "1"}},
            {"filename": "SimpleJSON-2.1.6.tar.gz", "url": "u2", "hashes": {"sha256": "2"}},
        ]
    }
    assert get_extra_sources.sdist_in_listing(listing, "simplejson", "2.1.6") == (
        "SimpleJSON-2.1.6.tar.gz", "u2", "2",
    )  # fmt: skip
    assert get_extra_sources.sdist_in_listing(listing, "simplejson", "9.9") is None


def test_an_sdist_listed_without_a_sha256_is_not_taken() -> None:
    listing = {"files": [{"filename": "pydantic_core-2.14.3.tar.gz", "url": "u", "hashes": {}}]}
    assert get_extra_sources.sdist_in_listing(listing, "pydantic-core", "2.14.3") is None
