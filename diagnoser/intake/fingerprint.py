"""Crash fingerprints: identical crashes from different users collapse to one, different
crashes do not. Stable across line-number drift and noise: exception type + the top
in-app frames' module and function; the message with numbers, ids and addresses masked
only when there are no frames."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from diagnoser.intake.report import MappedFrame, TraceException

TOP_FRAMES = 3
"""In-app frames (innermost first) that identify a crash."""
MESSAGE_CHARS = 200
FINGERPRINT_HEX = 16

_MASKS = (
    (re.compile(r"0x[0-9a-fA-F]+"), "<addr>"),
    (re.compile(r"\b[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b"), "<uuid>"),
    (re.compile(r"\b[0-9a-fA-F]{16,}\b"), "<hex>"),
    (re.compile(r"\d+"), "<n>"),
    (re.compile(r"'[^'\n]{0,80}'|\"[^\"\n]{0,80}\""), "<str>"),
    (re.compile(r"\s+"), " "),
)  # fmt: skip


def mask(message: str) -> str:
    """The message with the parts that vary between occurrences replaced by placeholders."""
    for pattern, placeholder in _MASKS:
        message = pattern.sub(placeholder, message)
    return message.strip()[:MESSAGE_CHARS]


def fingerprint(
    exception: TraceException | None, frames: Sequence[MappedFrame], *, text: str = ""
) -> str:
    """A short stable hash naming this crash (or, with no exception, this text)."""
    parts = [exception.type or "" if exception else ""]
    top = [f for f in reversed(frames) if f.in_app][:TOP_FRAMES] or list(reversed(frames))[
        :TOP_FRAMES
    ]
    for mapped in top:
        place = mapped.repo_path or mapped.frame.module or _basename(mapped.frame.file)
        parts.append(f"{place}:{mapped.symbol or mapped.frame.function or ''}")
    if not top:
        parts.append(mask(exception.message or "") if exception else mask(text.lower()))
    digest = hashlib.sha256("\n".join(parts).encode("utf-8", "replace")).hexdigest()
    return digest[:FINGERPRINT_HEX]


def _basename(path: str | None) -> str:
    return re.split(r"[\\/]", path)[-1] if path else ""


def at_revision(crash: str, revision: str | None) -> str:
    """`crash`'s fingerprint for a repository served at the revision each report names
    (`diagnoser.mirror`): the same crash at two releases is two diagnoses, of two trees."""
    if not revision:
        return crash
    return hashlib.sha256(f"{crash}@{revision}".encode()).hexdigest()[:FINGERPRINT_HEX]
