"""Caps and defaults of the read-only tools, in one place. Every byte a tool returns is
paid for in tokens on every later model call, so the caps are deliberately small."""

from __future__ import annotations

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
