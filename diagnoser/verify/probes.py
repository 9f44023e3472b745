"""`Probes`: reproducers the explorer writes itself — a real model, in the deep-dive, when
the report's own reproducers did not reproduce the failure (`reproduce` tool, agent.py).

Each probe is a Python script run like a report's snippet: in a fresh throwaway copy in
the sandbox, judged by the same base gate. The script is written only inside that copy,
never into the repository. Bounded: `MAX_PROBES` runs, `MAX_PROBE_CHARS` each, each within
`Settings.verify_run_seconds`. The model gets the verdict and the run's traceback; the
best attempt is kept for the Finding (and, reproduced, for checking the fixes).
"""

from __future__ import annotations

from pathlib import Path

from diagnoser.errors import ToolError
from diagnoser.finding import ReproducerSource
from diagnoser.intake import Report
from diagnoser.verify.reproduce import Attempt, best, run_reproducers
from diagnoser.verify.reproducer import Reproducer
from diagnoser.workspace import Workspace

MAX_PROBES = 2
MAX_PROBE_CHARS = 8_000
SHOWN_TRACEBACK_CHARS = 3_000
"""Of a probe's traceback, what the model is shown (its end: the innermost frames)."""


class Probes:
    def __init__(self, report: Report, workspace: Workspace, *, home: Path | None = None) -> None:
        self.report, self.workspace, self.home = report, workspace, home
        self.attempts: list[Attempt] = []

    @property
    def best(self) -> Attempt | None:
        return best(self.attempts) if self.attempts else None

    def __call__(self, code: str) -> str:
        """Run `code`; the verdict in words for the model. ToolError past the bounds."""
        if len(code) > MAX_PROBE_CHARS:
            raise ToolError(f"a script of at most {MAX_PROBE_CHARS} characters")
        if len(self.attempts) >= MAX_PROBES:
            raise ToolError(f"at most {MAX_PROBES} runs; write the report with what you have")
        if not code.strip():
            raise ToolError("the script is empty")
        reproducer = Reproducer(ReproducerSource.EXPLORER_TEST, code=code)
        seconds = self.workspace.settings.verify_run_seconds
        attempt = run_reproducers([reproducer], self.report, self.workspace, seconds=seconds,
                                  home=self.home)  # fmt: skip
        self.attempts.append(attempt)
        tried = attempt.reproduction
        lines = [f"{tried.status.value}: {tried.reason}"]
        if tried.exception:
            lines.append(f"exception: {tried.exception}")
        lines += [f"frame: {f.path}:{f.line} in {f.function or '?'}" for f in tried.frames[-5:]]
        if attempt.traceback:
            lines.append(attempt.traceback[-SHOWN_TRACEBACK_CHARS:])
        return "\n".join(lines)
