"""bench/debian_pool.py: pool paths, `.dsc` parsing and picking the upstream tarballs."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))

import debian_pool
from debian_pool import Dsc, PoolError, SourceFile

SHA_ORIG = "a" * 64
SHA_DEBIAN = "b" * 64
SHA_DOCS = "c" * 64
SIGNED_DSC = f"""-----BEGIN PGP SIGNED MESSAGE-----
Hash: SHA512

Format: 3.0 (quilt)
Source: libfoo
Binary: libfoo1, libfoo-dev
Version: 1:2.3+dfsg-4
Description: a library
 spanning two lines
- -not a real field, dash-escaped
Checksums-Sha256:
 {SHA_ORIG} 1200 libfoo_2.3+dfsg.orig.tar.xz
 {"d" * 64} 488 libfoo_2.3+dfsg.orig.tar.xz.asc
 {SHA_DOCS} 300 libfoo_2.3+dfsg.orig-docs.tar.gz
 {SHA_DEBIAN} 80 libfoo_2.3+dfsg-4.debian.tar.xz
Files:
 {"1" * 32} 1200 libfoo_2.3+dfsg.orig.tar.xz
 {"2" * 32} 488 libfoo_2.3+dfsg.orig.tar.xz.asc
 {"3" * 32} 300 libfoo_2.3+dfsg.orig-docs.tar.gz
 {"4" * 32} 80 libfoo_2.3+dfsg-4.debian.tar.xz

-----BEGIN PGP SIGNATURE-----

iQIzBAEBCgAdFiEE
-----END PGP SIGNATURE-----
"""


@pytest.mark.parametrize(
    ("source", "prefix"),
    [("libxml2", "libx"), ("rust-semver", "r"), ("golang-github-spf13-pflag", "g"), ("lib", "l")],
)
def test_pool_prefix_is_lib_and_a_letter_for_libraries_else_the_first_letter(
    source: str, prefix: str
) -> None:
    assert debian_pool.pool_prefix(source) == prefix


def test_dsc_urls_drop_the_epoch_and_try_the_main_archive_first() -> None:
    urls = debian_pool.dsc_urls("libfoo", "1:2.3+dfsg-4")
    assert urls[0] == "https://deb.debian.org/debian/pool/main/libf/libfoo/libfoo_2.3+dfsg-4.dsc"
    assert any("debian-security" in url for url in urls[1:])
    assert all(url.endswith("/libfoo/libfoo_2.3+dfsg-4.dsc") for url in urls)


@pytest.mark.parametrize(
    ("version", "upstream"),
    [("1:2.3+dfsg-4", "2.3+dfsg"), ("1.0.6~git2021-d5e0c06-1", "1.0.6~git2021-d5e0c06"),
     ("3.1", "3.1"), ("1.0-2+deb12u1", "1.0")],
)  # fmt: skip
def test_upstream_version_drops_epoch_and_debian_revision(version: str, upstream: str) -> None:
    assert debian_pool.upstream_version(version) == upstream


def test_parse_dsc_reads_the_signed_paragraph_with_checksums_of_every_file() -> None:
    dsc = debian_pool.parse_dsc(SIGNED_DSC, "https://x/pool/main/libf/libfoo/libfoo.dsc")
    assert (dsc.source, dsc.version) == ("libfoo", "1:2.3+dfsg-4")
    by_name = {f.name: f for f in dsc.files}
    assert len(by_name) == 4
    assert by_name["libfoo_2.3+dfsg.orig.tar.xz"] == SourceFile(
        "libfoo_2.3+dfsg.orig.tar.xz", 1200, SHA_ORIG, "1" * 32
    )
    assert by_name["libfoo_2.3+dfsg-4.debian.tar.xz"].sha256 == SHA_DEBIAN


def test_deb822_fields_join_continuation_lines_and_undo_dash_escaping() -> None:
    paragraph = debian_pool.unsigned(SIGNED_DSC)
    assert "\n-not a real field" in paragraph and "- -not" not in paragraph
    assert "BEGIN PGP" not in paragraph and "iQIz" not in paragraph
    fields = debian_pool.deb822_fields(paragraph)
    assert fields["description"] == "a library\nspanning two lines"
    assert "hash" not in fields  # the armor header is not part of the paragraph


def test_an_unsigned_dsc_with_only_md5_still_lists_its_files() -> None:
    text = "Source: foo\nVersion: 1.0-1\nFiles:\n " + "9" * 32 + " 10 foo_1.0.orig.tar.gz\n"
    (only,) = debian_pool.parse_dsc(text).files
    assert (only.name, only.size, only.sha256) == ("foo_1.0.orig.tar.gz", 10, None)
    assert only.md5 == "9" * 32


def test_text_without_source_and_version_is_not_a_dsc() -> None:
    with pytest.raises(PoolError, match=r"not a \.dsc"):
        debian_pool.parse_dsc("<html>404</html>")


def test_upstream_tarballs_are_the_orig_and_its_components_never_debian_files() -> None:
    orig, components = debian_pool.upstream_tarballs(debian_pool.parse_dsc(SIGNED_DSC))
    assert orig.name == "libfoo_2.3+dfsg.orig.tar.xz"
    assert {name: f.name for name, f in components.items()} == {
        "docs": "libfoo_2.3+dfsg.orig-docs.tar.gz"
    }


def test_a_native_package_s_one_tarball_is_its_upstream() -> None:
    native = Dsc("tool", "0.7", (SourceFile("tool_0.7.tar.xz", 5, "e" * 64, None),))
    orig, components = debian_pool.upstream_tarballs(native)
    assert orig.name == "tool_0.7.tar.xz" and components == {}


def test_a_dsc_without_an_upstream_tarball_is_an_error_naming_its_files() -> None:
    patches_only = Dsc("foo", "1.0-1", (SourceFile("foo_1.0-1.diff.gz", 5, "e" * 64, None),))
    with pytest.raises(PoolError, match=r"foo_1\.0-1\.diff\.gz"):
        debian_pool.upstream_tarballs(patches_only)


@pytest.mark.parametrize(
    ("children", "top"),
    [([("pflag-1.0.6", True)], "pflag-1.0.6"), ([("a.go", False)], None),
     ([("src", True), ("README", False)], None), ([], None)],
)  # fmt: skip
def test_single_top_is_the_only_folder_else_none(
    children: list[tuple[str, bool]], top: str | None
) -> None:
    assert debian_pool.single_top(children) == top


def test_verify_checks_size_and_sha256(tmp_path: Path) -> None:
    data = tmp_path / "x.tar.gz"
    data.write_bytes(b"upstream")
    digest = hashlib.sha256(b"upstream").hexdigest()
    assert debian_pool.verify(data, SourceFile("x.tar.gz", 8, digest, None))
    assert not debian_pool.verify(data, SourceFile("x.tar.gz", 8, "0" * 64, None))
    assert not debian_pool.verify(data, SourceFile("x.tar.gz", 9, digest, None))
    assert not debian_pool.verify(tmp_path / "absent", SourceFile("absent", 8, digest, None))


def test_fetch_orig_takes_the_upstream_tarball_by_name_when_the_dsc_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    class Response:
        def __init__(self, url: str) -> None:
            self.url = url

        def __enter__(self) -> Response:
            return self

        def __exit__(self, *_: object) -> None:
            return None

        def read(self) -> bytes:
            return b"tarball"

    def urlopen(url: str, timeout: float) -> Response:
        asked.append(url)
        if not url.endswith("jsch_0.2.19.orig.tar.gz"):
            raise debian_pool.urllib.error.HTTPError(url, 404, "gone", {}, None)  # type: ignore[arg-type]
        return Response(url)

    monkeypatch.setattr(debian_pool.urllib.request, "urlopen", urlopen)
    found = debian_pool.fetch_orig("jsch", "0.2.19-1", tmp_path)
    assert found == tmp_path / "jsch_0.2.19.orig.tar.gz" and found.read_bytes() == b"tarball"
    assert asked[0].endswith("/pool/main/j/jsch/jsch_0.2.19.orig.tar.xz")
    asked.clear()
    assert debian_pool.fetch_orig("jsch", "0.2.19-1", tmp_path) == found and asked == []
    with pytest.raises(PoolError, match=r"neither its \.dsc nor its upstream tarball"):
        debian_pool.fetch_orig("gone", "1.0-1", tmp_path)
