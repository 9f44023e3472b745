"""A Debian source package's upstream code, from the archive's pool.

    dsc = fetch_dsc("rust-semver", "1.0.14-1", dists)      # tries each archive in ARCHIVES
    orig, components = upstream_tarballs(dsc)              # the `.orig.tar.*` (+ components)
    archive = fetch_file(dsc, orig, dists)                 # downloaded once, sha256 checked

The pure parts — pool paths, `.dsc` parsing (a PGP-clearsigned deb822 paragraph), picking
the upstream tarballs — take and return values; `fetch_*` are the thin urllib callers. Only
the upstream tarballs are used, never `.debian.tar.*` or `.diff.gz`: a case's code is the
upstream release as Debian shipped it, without Debian's patches.
"""

from __future__ import annotations

import hashlib
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ARCHIVES = (
    "https://deb.debian.org/debian/pool/main",
    "https://deb.debian.org/debian-security/pool/updates/main",
    "https://deb.debian.org/debian-security/pool/main",
)
"""Where a source package's files may be, tried in order: the main archive, then the
security archive (whose pool is `pool/updates/main` on current releases)."""
TIMEOUT_SECONDS = 120
CHUNK_BYTES = 1 << 20

_TARBALL = r"\.tar\.(?:gz|bz2|xz|lzma|zst)"
_SIGNED = "-----BEGIN PGP SIGNED MESSAGE-----"
_SIGNATURE = "-----BEGIN PGP SIGNATURE-----"


class PoolError(Exception):
    """A source package cannot be fetched as the case names it (message fit for a user)."""


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One file a `.dsc` lists."""

    name: str
    size: int
    sha256: str | None
    """From `Checksums-Sha256`; None in an old `.dsc` that has only `Files` (md5)."""
    md5: str | None


@dataclass(frozen=True, slots=True)
class Dsc:
    """The parts of a `.dsc` needed to fetch the upstream code."""

    source: str
    version: str
    files: tuple[SourceFile, ...]
    url: str = ""
    """Where it was fetched from; the files sit beside it."""


def pool_prefix(source: str) -> str:
    """The pool's folder for a source package: `lib` + next letter for `lib*`, else the
    first letter (`libxml2` → `libx`, `rust-semver` → `r`)."""
    if source.startswith("lib") and len(source) > 3:
        return source[:4]
    return source[:1]


def without_epoch(version: str) -> str:
    """File names in the pool drop the epoch (`1:2.3-1` → `2.3-1`)."""
    return version.split(":", 1)[1] if ":" in version else version


def upstream_version(version: str) -> str:
    """`1:2.3+dfsg-1` → `2.3+dfsg`; a native package's version has no Debian revision."""
    bare = without_epoch(version)
    return bare.rsplit("-", 1)[0] if "-" in bare else bare


def dsc_name(source: str, version: str) -> str:
    return f"{source}_{without_epoch(version)}.dsc"


def dsc_urls(source: str, version: str) -> list[str]:
    """Every place the `.dsc` may be, in the order tried."""
    name = dsc_name(source, version)
    return [f"{archive}/{pool_prefix(source)}/{source}/{name}" for archive in ARCHIVES]


def unsigned(text: str) -> str:
    """The paragraph inside a PGP clearsigned message (dash-escaping undone); plain text
    is returned as it is."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != _SIGNED:
        return text
    body: list[str] = []
    started = False
    for line in lines[1:]:
        if not started:
            started = not line.strip()  # armor headers (`Hash: SHA512`) end at a blank line
            continue
        if line.strip() == _SIGNATURE:
            break
        body.append(line[2:] if line.startswith("- ") else line)
    return "\n".join(body)


def deb822_fields(text: str) -> dict[str, str]:
    """The first paragraph's fields, names lower-cased; continuation lines joined by `\\n`."""
    fields: dict[str, str] = {}
    name = ""
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break
            continue
        if line[0] in " \t":
            if name:
                fields[name] += "\n" + line.strip()
            continue
        key, sep, value = line.partition(":")
        if sep:
            name = key.strip().lower()
            fields[name] = value.strip()
    return fields


def parse_dsc(text: str, url: str = "") -> Dsc:
    """A `.dsc`'s source, version and files (sha256 where given, md5 from `Files`)."""
    fields = deb822_fields(unsigned(text))
    if "source" not in fields or "version" not in fields:
        raise PoolError(f"not a .dsc (no Source/Version field): {url or text[:80]!r}")
    sha256 = _checksums(fields.get("checksums-sha256", ""))
    md5 = _checksums(fields.get("files", ""))
    names = list(dict.fromkeys([*sha256, *md5]))
    files = tuple(
        SourceFile(
            name=name,
            size=(sha256.get(name) or md5[name])[1],
            sha256=sha256[name][0] if name in sha256 else None,
            md5=md5[name][0] if name in md5 else None,
        )
        for name in names
    )
    return Dsc(source=fields["source"], version=fields["version"], files=files, url=url)


def _checksums(block: str) -> dict[str, tuple[str, int]]:
    """`{name: (hash, size)}` from a `Files` / `Checksums-*` field's lines."""
    found = {}
    for line in block.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1].isdigit():
            found[parts[2]] = (parts[0].lower(), int(parts[1]))
    return found


def upstream_tarballs(dsc: Dsc) -> tuple[SourceFile, dict[str, SourceFile]]:
    """The upstream tarball and the component tarballs by component name
    (`x_1.0.orig-docs.tar.xz` → `docs`). A native package's one `.tar.*` is its upstream."""
    upstream = re.escape(f"{dsc.source}_{upstream_version(dsc.version)}")
    orig = re.compile(upstream + r"\.orig" + _TARBALL + "$")
    component = re.compile(upstream + r"\.orig-([A-Za-z0-9][A-Za-z0-9-]*)" + _TARBALL + "$")
    native = re.compile(re.escape(f"{dsc.source}_{without_epoch(dsc.version)}") + _TARBALL + "$")
    main = [f for f in dsc.files if orig.match(f.name)] or [
        f for f in dsc.files if native.match(f.name)
    ]
    if len(main) != 1:
        listed = ", ".join(f.name for f in dsc.files)
        raise PoolError(f"{dsc.source} {dsc.version}: no single upstream tarball in {listed}")
    components = {m.group(1): f for f in dsc.files if (m := component.match(f.name))}
    return main[0], components


def single_top(children: list[tuple[str, bool]]) -> str | None:
    """The one top folder of an unpacked tarball, given its top-level `(name, is_dir)`
    entries; None when there is not exactly one folder and nothing else (then the
    whole content is the root)."""
    if len(children) == 1 and children[0][1]:
        return children[0][0]
    return None


def verify(data_path: Path, wanted: SourceFile) -> bool:
    """Whether the file's size and sha256 (md5 when the `.dsc` has no sha256) match."""
    if not data_path.is_file() or data_path.stat().st_size != wanted.size:
        return False
    digest = hashlib.sha256() if wanted.sha256 else hashlib.md5(usedforsecurity=False)
    with data_path.open("rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest() == (wanted.sha256 or wanted.md5)


def fetch_dsc(source: str, version: str, dists: Path) -> Dsc:
    """The package's `.dsc` (cached in `dists`), from the first archive that has it."""
    cached = dists / dsc_name(source, version)
    urls = dsc_urls(source, version)
    if cached.is_file():
        url = (dists / f"{cached.name}.url").read_text(encoding="utf-8").strip()
        return parse_dsc(cached.read_text(encoding="utf-8", errors="replace"), url)
    for url in urls:
        data = _get(url)
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        cached.write_text(text, encoding="utf-8")
        (dists / f"{cached.name}.url").write_text(url, encoding="utf-8")
        return parse_dsc(text, url)
    raise PoolError(
        f"{source} {version} is not in the Debian pool (tried {', '.join(urls)}): the pool "
        "keeps only the versions of current releases — pick one listed in "
        "dists/<release>/main/source/Sources.xz, or fetch it from snapshot.debian.org by hand"
    )


def fetch_file(dsc: Dsc, wanted: SourceFile, dists: Path) -> Path:
    """A file the `.dsc` lists, downloaded from beside it once; checksum verified."""
    target = dists / wanted.name
    if verify(target, wanted):
        return target
    url = dsc.url.rsplit("/", 1)[0] + "/" + wanted.name
    partial = target.with_name(target.name + ".part")
    try:
        with (
            urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response,
            partial.open("wb") as handle,
        ):
            while chunk := response.read(CHUNK_BYTES):
                handle.write(chunk)
    except urllib.error.HTTPError as error:
        gone = " (listed in the .dsc but gone from the pool)" if error.code == 404 else ""
        raise PoolError(f"{url}: HTTP {error.code}{gone}") from error
    except urllib.error.URLError as error:
        raise PoolError(f"{url}: {error.reason}") from error
    if not verify(partial, wanted):
        partial.unlink()
        raise PoolError(f"{url}: size or checksum differs from {dsc.url}")
    partial.replace(target)
    return target


ORIG_SUFFIXES = (".orig.tar.xz", ".orig.tar.gz", ".orig.tar.bz2")
"""An upstream tarball's names, tried in this order when the `.dsc` is gone."""


def fetch_orig(source: str, version: str, dists: Path) -> Path:
    """The upstream tarball by its name alone, for a version whose `.dsc` left the pool
    while its upstream tarball stayed (a later Debian revision of the same upstream
    release keeps it). Unverified: there is no `.dsc` to check it against."""
    stem = f"{source}_{upstream_version(version)}"
    for suffix in ORIG_SUFFIXES:
        if (dists / (stem + suffix)).is_file():
            return dists / (stem + suffix)
    for archive in ARCHIVES:
        for suffix in ORIG_SUFFIXES:
            data = _get(f"{archive}/{pool_prefix(source)}/{source}/{stem}{suffix}")
            if data is not None:
                (dists / (stem + suffix)).write_bytes(data)
                return dists / (stem + suffix)
    raise PoolError(f"{source} {version}: neither its .dsc nor its upstream tarball is in the pool")


def _get(url: str) -> bytes | None:
    """The body at `url`, None when the pool has no such file (404)."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            body: bytes = response.read()
            return body
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise PoolError(f"{url}: HTTP {error.code}") from error
    except urllib.error.URLError as error:
        raise PoolError(f"{url}: {error.reason}") from error
