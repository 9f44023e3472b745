"""`api.server`'s pure parts: the connection cap fitted to the file limit, the proxies
exempt from the per-address cap. The protocol itself is tested against a real server
in `tests/hostile/test_connections.py`."""

from __future__ import annotations

import resource

import pytest

from api.server import RESERVED_FILES, Limits, fitted_cap, raised_soft_limit
from diagnoser import ConfigError

INFINITY = resource.RLIM_INFINITY


def test_the_soft_file_limit_is_raised_only_as_far_as_needed_and_allowed() -> None:
    needed = 1000 + RESERVED_FILES
    assert raised_soft_limit(1000, soft=20_000, hard=20_000) == 20_000
    assert raised_soft_limit(1000, soft=1024, hard=1_048_576) == needed
    assert raised_soft_limit(1000, soft=1024, hard=INFINITY) == needed
    assert raised_soft_limit(1000, soft=256, hard=512) == 512


def test_the_cap_stays_below_the_file_limit() -> None:
    assert fitted_cap(1000, 20_000) == 1000
    assert fitted_cap(1000, INFINITY) == 1000
    assert fitted_cap(1000, 512) == 512 - RESERVED_FILES
    with pytest.raises(ConfigError, match=r"file limit is 64 \(ulimit -n\): raise it"):
        fitted_cap(1000, 64)


def test_trusted_proxies_have_no_per_address_cap() -> None:
    limits = Limits(
        max_header_bytes=65536, header_timeout=10, body_timeout=60, max_connections=1000,
        max_per_address=100, exempt=("10.0.0.0/8", "127.0.0.1"),
    )  # fmt: skip
    assert limits.is_exempt("10.1.2.3") and limits.is_exempt("127.0.0.1")
    assert not limits.is_exempt("127.0.0.2") and not limits.is_exempt("not-an-address")
