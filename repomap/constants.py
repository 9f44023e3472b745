"""Every tunable number of the repo map, in one place."""

from __future__ import annotations

# --- files ---------------------------------------------------------------
MAX_FILE_BYTES = 1_000_000
"""Files larger than this are skipped (generated code, data, bundles)."""

MAX_LINE_CHARS = 5_000
"""A file whose longest line is longer than this is treated as minified and skipped."""

BINARY_SNIFF_BYTES = 8_192
"""How much of a file is inspected for NUL bytes to decide it is binary."""

MAX_WALK_DEPTH = 64
"""Directories nested deeper than this are not entered (guards against pathological trees)."""

DEFAULT_IGNORED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "node_modules",
        "bower_components",
        "__pycache__",
        ".venv",
        "venv",
        ".env",
        "env",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "build",
        "dist",
        "target",
        "vendor",
        "third_party",
        "Pods",
        ".gradle",
        ".idea",
        ".vscode",
        ".next",
        ".nuxt",
        "coverage",
        "htmlcov",
        ".eggs",
        "site-packages",
        ".terraform",
        "DerivedData",
    }
)
"""Directory names never walked: VCS internals, dependencies, virtualenvs, build output."""

MINIFIED_SUFFIXES = (".min.js", ".min.css", ".bundle.js", ".min.mjs")
"""File name endings of minified or bundled assets."""

# --- parsing ------------------------------------------------------------
MAX_SIGNATURE_CHARS = 160
"""A definition's signature line is cut to this many characters."""

PARSE_CHUNK_FILES = 32
"""Files handed to a worker process at once during a cold build."""

MIN_FILES_FOR_POOL = 64
"""Below this many files to parse, a process pool costs more than it saves."""

# --- cache ---------------------------------------------------------------
CACHE_FORMAT_VERSION = 1
"""Bump when the cached tags change shape or the queries change meaning."""

HOME_ENV_VAR = "DIAGNOSER_HOME"
"""Environment variable naming the service's data directory."""

APP_NAME = "diagnoser"
"""Used for the default data directory under the user cache dir."""

# --- ranking -------------------------------------------------------------
PAGERANK_DAMPING = 0.85
PAGERANK_MAX_ITERATIONS = 100
PAGERANK_TOLERANCE = 1e-6
"""L1 change between iterations at which ranks are settled (orders, not values, matter)."""

FOCUS_IDENT_WEIGHT = 10.0
"""Edges for identifiers the caller focused on count this much more."""

PRIVATE_IDENT_WEIGHT = 0.1
"""Identifiers starting with `_` are usually local plumbing: they count less."""

COMMON_IDENT_WEIGHT = 0.1
"""Identifiers defined in more than COMMON_IDENT_DEFINERS files (e.g. `get`, `save`) count less."""

COMMON_IDENT_DEFINERS = 5

MAX_DEFINERS = 100
"""Uses of a name defined in more files than this (`__init__`, `setUp`) make no edges at all:
each would carry under 1/1000 of a normal edge's weight, yet they are a third of Django's edges."""

LONG_IDENT_WEIGHT = 10.0
"""Descriptive identifiers (snake/camel case, >= LONG_IDENT_CHARS) carry more signal."""

LONG_IDENT_CHARS = 8

SHORT_IDENT_WEIGHT = 0.1
"""Names of SHORT_IDENT_CHARS or fewer (`e`, `_`, `db`) are too vague to point anywhere."""

SHORT_IDENT_CHARS = 2

FOCUS_FILE_MASS = 100.0
"""Personalisation mass given to each focused file."""

FOCUS_DEFINER_MASS = 10.0
"""Personalisation mass given to files defining a focused identifier."""

FOCUS_PATH_TOKEN_MASS = 1.0
"""Personalisation mass for files whose path contains a focused word."""

REVERSE_EDGE_WEIGHT = 0.5
"""Weight of the edge from a definition back to each file that uses it. Without it rank
only flows to what a focused file calls, never to its callers. On the developer benchmark
(100 cases, gold file in the focused map at 1k/2k/4k tokens): 78/83/89 without, 82/85/90
at 0.5 and at 1.0."""

# --- rendering -----------------------------------------------------------
DEFAULT_MAP_TOKENS = 2_048
CHARS_PER_TOKEN = 3.7
"""Token estimate without a tokenizer (none can be downloaded at run time). Calibrated on
25 maps of Django, scikit-learn, matplotlib and the language fixtures against cl100k
(GPT-4o's tokenizer): line numbers and punctuation make maps denser than prose's ~4."""

BUDGET_TOLERANCE = 0.10
"""The rendered map must land within this share of the budget (below, never above)."""
