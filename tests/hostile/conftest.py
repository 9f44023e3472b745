"""The hostile suite: probes a hostile user (or a hostile network) would send — secrets
behind innocent names, malformed and oversized input, poisoned caches, killed runs.

Each test asserts the defended behaviour; the whole suite stays within a few
minutes (the connection probes start real servers). Under pytest-xdist it runs on one
worker, one test at a time (`tests/scheduling.py`).
"""

from tests.api.conftest import (  # noqa: F401  (fixtures)
    database_url,
    postgres_template,
    service_settings,
)
