"""Caps and defaults of the read-only tools, in one place. Every byte a tool returns is
paid for in tokens on every later model call, so the caps are deliberately small.
Also the defaults of a run (model, timeout, the demo repository)."""

from __future__ import annotations

from pathlib import Path

OFFLINE_MODEL = "offline"
"""The embedded investigator's model name: the default `--model` / `DIAGNOSER_MODEL`."""

REQUEST_LIMIT = 30
"""Model requests per investigation: the funnel needs ~12; this is the outer bound."""

MAX_TOOL_CALLS = 20
"""Tool calls per investigation: the funnel's budgets allow ~15 (8 explore, focus, 5
deep-dive, conclude); this is the outer bound."""
MAX_INPUT_TOKENS = 250_000
"""Input tokens per run (cached ones included): the goal is a median of 15k a diagnosis
(docs/benchmarks.md); a run sixteen times over it is stuck, not thorough."""
MAX_OUTPUT_TOKENS = 30_000
"""Output tokens per run: a dozen tool calls and a ~1k-token report, with ample room."""
MAX_TOTAL_TOKENS = 270_000
"""Input and output tokens per run."""
PROMPT_CACHE = True
"""Ask providers that need it (Anthropic) to cache the prompt prefix."""

EXPLORER_TEMPERATURE = 0.2
"""Low: the explorer reasons over evidence, creativity only adds wrong guesses."""
EXPLORER_MAX_TOKENS = 4_096
"""Output tokens of one explorer response: the template report is ~1k; room to spare."""
FORMATTER_TEMPERATURE = 0.0
"""The formatter only extracts."""
FORMATTER_MAX_TOKENS = 4_096
"""A Finding's JSON with a few diffs fits."""
MODEL_REQUEST_SECONDS = 120.0
"""One model request; a provider slower than this fails it (then the fallback answers)."""

RUN_TIMEOUT_SECONDS = 300.0
"""One diagnosis, every step included, ends `timed_out` after this long."""

VERIFY_SECONDS = 120.0
"""All sandboxed runs of one diagnosis (`diagnoser.verify`): well inside a run's timeout."""
VERIFY_RUN_SECONDS = 60.0
"""One sandboxed run: a test module or a snippet, with the interpreter's start-up."""
VERIFY_MEMORY_BYTES = 2 * 1024**3
"""Address space of each process of a run: room for a test suite, not for a runaway."""
VERIFY_PROCESSES = 128
"""Processes and threads of a run at once: a test's workers, not a fork bomb."""

DEMO_REPO = Path(__file__).resolve().parent.parent / "sample_reports" / "demo_app"
"""The demo application: a new user sees real findings at once (the default repository)."""

REPO_NAME_PATTERN = r"[a-z0-9][a-z0-9_.-]{0,63}"
"""A configured repository's name (`DIAGNOSER_REPOS`): safe in a URL path and a file name."""

MAX_PATH_CHARS = 1_024
"""Longer paths are refused before touching the file system."""

MAX_FILE_BYTES = 2_000_000
"""Files larger than this are neither read nor grepped."""

BINARY_SNIFF_BYTES = 8_192
"""A NUL byte in the first this-many bytes marks a file as binary."""

MAX_LINE_CHARS = 240
"""A line longer than this is cut (with `…`) in any tool output."""

GREP_DEFAULT_RESULTS = 40
GREP_MAX_RESULTS = 200
"""The model may ask for more matches than the default, never more than this."""

GREP_MAX_CHARS = 8_000
"""Rendered grep output stops at about this many characters."""

GREP_MAX_CONTEXT = 5
"""Context lines around a match, at most."""

GREP_TIME_SECONDS = 3.0
"""A grep stops scanning files after this long and says so."""

REGEX_MAX_MEMORY = 64 << 20
"""RE2's memory budget for one compiled pattern (bytes)."""

READ_WINDOW_LINES = 150
"""read_range returns at most this many lines per call."""

LIST_MAX_ENTRIES = 200
LIST_MAX_DEPTH = 4

SYMBOL_MAX_MATCHES = 10
SYMBOL_TOP_CALLERS = 5

DATABASE_FILE = "diagnoser.sqlite"
"""The embedded database's file name, inside the data directory."""

# Intake: what one input may cost before any model sees it. Budget: peak RSS under
# 300 MB and a few seconds for any input through `read_limited` → `load_json` →
# `from_payload` → `build_report` (a process with `diagnoser` imported starts at ~87 MB).
# Measured (`/usr/bin/time -f %M`, whole process) on the worst shapes found.

MAX_REPORT_BYTES = 2_000_000
"""A plain-text report (crash log, review, issue body): the bytes read from a file or
stdin, and `ReportIn.text`'s limit in characters (UTF-8 never decodes to more
characters than it has bytes). Worst 2 MB text measured: random bytes, 159 MB, 1 s
(2 MB of blank lines took 560 MB and 17 s before lines and frames were capped)."""

MAX_PAYLOAD_BYTES = 5_000_000
"""A webhook JSON body. Real events stay well under it: Sentry and Bugsnag refuse events
over 1 MB. Worst 5 MB body measured: a list of 2-character strings, 165 MB, 0.5 s
(99,000 Bugsnag frames: 138 MB, was 244 MB; 96 MB of them once took 1.9 GB)."""

MAX_JSON_DEPTH = 64
"""Nesting of a JSON body. Python's parser recurses (a 10,000-deep body raised
`RecursionError`); SDKs cap the variables they send at depth ~10. Deeper parts are cut
before parsing (`payloads.nesting`), and refused where intake reads them."""

MAX_JSON_CONTAINERS = 100_000
"""Objects plus arrays in a JSON body: each costs 60-250 bytes parsed, so this bounds
`[{},{},…]` to ~25 MB. A 1 MB Sentry event with frame variables holds a few thousand."""

MAX_JSON_SCANNED_CONTAINERS = 250_000
"""Objects plus arrays in a JSON body before those nested deeper than `MAX_JSON_DEPTH`
are cut (cut ones are never parsed, so only `MAX_JSON_CONTAINERS` bounds the parse):
bounds the scan that finds them. A Sentry event with 249,000 nested arrays in `extra`:
0.65 s, 96 MB whole process (999,000 of them took 3.2 s, 105 MB)."""

MAX_JSON_INT_DIGITS = 40
"""Digits of one JSON number: more is no id, count or line, and Python refuses to
convert integers over 4,300 digits (`ValueError`)."""

REPORT_VIEW_CHARS = 24_000
"""Of a report's text, what the explorer is shown (`intake.excerpt`: head, tail and every
trace; intake itself reads all of it). The first message is re-sent with each of the
funnel's ~12 requests: 24,000 characters are 6-8k tokens (3-4 characters a token), so
~70-100k of `MAX_INPUT_TOKENS` over a run, leaving the rest to the instructions, the map
and the tool results. A 1.86 MB log shown whole counted 308k input tokens (offline model)
in one request; its view, 33k over the whole run (8 requests)."""

TITLE_VIEW_CHARS = 1_000
"""Of a report's title, what the explorer is shown (payload adapters clip titles to this
too; a title sent to the API is not otherwise limited)."""

MAX_FRAMES = 512
"""Frames per trace, text or payload; the innermost are kept, as Sentry itself trims
the outer ones. A deeper stack is recursion: its outer frames add nothing."""

MAX_TRACES = 32
"""Traces per report: the newest exceptions of a payload's chain, the first traces of
a text."""

MAX_THREADS = 1_000
"""Threads of a native crash looked through for the crashed one (Android dumps a few
hundred at most)."""

MAX_REVIEWS = 200
"""Reviews taken from one store poll: App Store Connect pages hold at most 200,
Google Play's `reviews.list` 100."""

MAX_LABELS = 100
"""Labels of a GitHub issue (GitHub's own maximum)."""

MAX_METADATA_CHARS = 20_000
"""A provider's free-form metadata (Sentry `contexts`, `tags`) serialized to JSON; a
larger one is left out of `Report.metadata` (and said so)."""
MAP_TOKENS = 1_024
"""Repo map size in the instructions. The map is re-sent with every request: with the
scripted careful explorer on 107 reports, a 2,048-token map cost a median 15.9k input
tokens per diagnosis against 11.8k at 1,024, the same fault file in every case
(docs/benchmarks.md, "Model backends: tokens per diagnosis")."""
KEEP_TOOL_RESULTS = 6
"""Tool results older than the last this-many are trimmed from the explorer's history
(discovery results too, once it has focused)."""

PROVIDERS = (
    "sentry", "bugsnag", "rollbar", "github", "standard", "appfollow", "slack", "crashlytics",
    "app_store", "google_play",
)  # fmt: skip
"""Webhook payload formats `diagnoser.intake.from_payload` reads (`--provider`), named
here so the CLI's parser lists them without importing the adapters."""
MAX_REVISION_CHARS = 200
"""A report's commit or release (a SHA, a ref, a version) is at most this long."""
TRIAGE_BELOW = 0.7
"""Ask the model when the rules are less sure than this (`diagnoser.triage`). The rules'
confidences are a few fixed values (`intake.classify.RULE_CONFIDENCE`); under 0.7 fall
the verdicts that rest on the least: a bare star rating (0.6), a store complaint naming
no failure (0.6), a developer report with no cue at all (0.6), a text with no signal
(0.4). Measured with
`bench/classify_bench.py --uncertain`: 40 of 245 dev texts (16%) and 23 of 186 held-out
test texts (12%) fall below it, holding the only dev miss and 2 of the 6 test misses;
14 of the developer benchmark's 100 real bug reports do (all `developer-prior`), so one
run in seven pays a short call there. At 0.75 the short-text rule (0.7) joins: 6 more
test texts for 1 more miss, and a model cannot tell more from "ok" than the rules. (What
a model makes of the texts under the cut is not measured: no model is reachable here.)"""
TRIAGE_TIMEOUT_SECONDS = 30.0
"""The whole refinement, retries included: a cheap model answers a one-line
classification in a few seconds; a slower one is not worth holding the run for."""
