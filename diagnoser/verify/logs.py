"""Run logs: each sandboxed run's command and output, kept in the data directory under a
short reference the Finding carries (`Reproduction.log`, `Tested.log`) and `diagnoser log
REF` prints.

Content-addressed (the same log is stored once), bounded: past `MAX_LOGS` files the
oldest go. A reference is 16 hex digits; anything else is refused before a path is made.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from repomap import data_home

LOG_DIR = "verify/logs"
MAX_LOGS = 2_000
REF_PATTERN = re.compile(r"^[0-9a-f]{16}$")


class Logs:
    def __init__(self, home: Path | None = None) -> None:
        self.folder = (home or data_home()) / LOG_DIR

    def save(self, command: str, output: str) -> str:
        """Store one run's log; its reference."""
        text = f"$ {command}\n{output}"
        data = text.encode("utf-8", "replace")
        ref = hashlib.sha256(data).hexdigest()[:16]
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / f"{ref}.log").write_bytes(data)
        self._prune()
        return ref

    def load(self, ref: str) -> str | None:
        """The log of `ref`, None when there is none (or `ref` is not a reference)."""
        if not REF_PATTERN.match(ref):
            return None
        try:
            return (self.folder / f"{ref}.log").read_text("utf-8", "replace")
        except OSError:
            return None

    def _prune(self) -> None:
        logs = list(self.folder.glob("*.log"))
        if len(logs) <= MAX_LOGS:
            return
        for old in sorted(logs, key=lambda p: p.stat().st_mtime)[: len(logs) - MAX_LOGS]:
            old.unlink(missing_ok=True)
