"""The hostile suite: probes a hostile user (or a hostile network) would send — secrets
behind innocent names, malformed and oversized input, poisoned caches, killed runs.

Each test asserts the defended behaviour; the whole suite stays within a few
minutes (the connection probes start real servers).
"""

from tests.api.conftest import database_url, service_settings  # noqa: F401  (fixtures)
