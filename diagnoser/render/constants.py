"""Fixed strings and thresholds of the renderers, in one place."""

from __future__ import annotations

from diagnoser.finding import ReproducerSource, ReproductionStatus, Status, TestStatus
from diagnoser.intake.report import Kind

# --- SARIF -------------------------------------------------------------------------------

SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
TOOL_NAME = "diagnoser"

INFORMATION_URI = "https://example.invalid/diagnoser"
"""Placeholder until the project has a public home (`.invalid` cannot resolve, RFC 2606);
callers with a real one pass `information_uri=`."""

DEFAULT_TOOL_VERSION = "0.0.0"
"""Used when the `diagnoser` distribution's metadata cannot be read (a source checkout)."""

SRCROOT = "%SRCROOT%"
"""The uriBaseId GitHub code scanning resolves against the checkout root."""

RULE_PREFIX = "diagnoser/"
"""Rule ids are `diagnoser/<classification>`, e.g. `diagnoser/crash`."""

FINGERPRINT_KEY = "diagnoserFault/v1"
"""partialFingerprints key; bump the suffix if the hashed fields ever change."""

ERROR_MIN_CONFIDENCE = 0.5
"""A grounded crash/bug is an `error` only when the root cause is at least this likely."""

ERROR_KINDS = frozenset({Kind.CRASH, Kind.BUG})
"""Classifications that can be SARIF `error`s (a defect, not a slowness or a wish)."""

RULE_DESCRIPTIONS: dict[Kind, str] = {
    Kind.CRASH: "A crash traced to its root cause in the code.",
    Kind.BUG: "A functional bug traced to its root cause in the code.",
    Kind.PERFORMANCE: "A performance problem traced to the code responsible.",
    Kind.FEATURE_REQUEST: "A feature request; code locations are context only.",
    Kind.QUESTION: "A question; code locations are context only.",
    Kind.PRAISE: "Praise; code locations are context only.",
    Kind.NOISE: "A report with no actionable content.",
}

# --- Markdown ----------------------------------------------------------------------------

STATUS_BADGES: dict[Status, str] = {
    Status.GROUNDED: "✅ grounded",
    Status.PARTIALLY_GROUNDED: "⚠️ partially grounded",
    Status.UNGROUNDED: "❔ ungrounded",
}

REPRODUCTION_WORDS: dict[ReproductionStatus, str] = {
    ReproductionStatus.REPRODUCED: "reproduced",
    ReproductionStatus.DIFFERENT_FAILURE: "failed differently",
    ReproductionStatus.NOT_REPRODUCED: "not reproduced",
    ReproductionStatus.NOT_ATTEMPTED: "not attempted",
    ReproductionStatus.ERROR: "could not run",
}

REPRODUCER_WORDS: dict[ReproducerSource, str] = {
    ReproducerSource.NAMED_TEST: "a test the report names",
    ReproducerSource.SNIPPET: "code the report carries",
    ReproducerSource.EXPLORER_TEST: "a test the explorer wrote",
}

TEST_WORDS: dict[TestStatus, str] = {
    TestStatus.PASSED: "passed",
    TestStatus.FAILED: "failed",
    TestStatus.NOT_RUN: "not run",
}

LOG_COMMAND = "diagnoser log"
"""Prints a run's stored output by its reference (`Reproduction.log`, `Tested.log`)."""

CHECK_PASSED = "✓"
CHECK_FAILED = "✗"

MIN_FENCE = 3
"""CommonMark's shortest code fence; longer when the content holds a run of backticks."""

COMMIT_CHARS = 12
"""A commit hash is shown abbreviated to this many characters."""

FALLBACK_LANGUAGE = "text"
"""Fence info string for files whose language is not recognised."""

MAX_TRIAGE_SIGNALS = 6
"""The triage line names this many deciding signals: the prior, the rule and the first
few cues say why; a long tail of matched phrases would bury the line."""
