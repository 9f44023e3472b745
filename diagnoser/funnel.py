"""The three-stage funnel: explore → deep-dive → report.

The stage lives in the run's deps; `offered_tools` (a `PrepareTools` hook) offers only the
stage's tools, so a locked tool is never shown to the model and a call to it is refused.
Each stage has a call budget; when it is spent the funnel moves on by itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

EXPLORE_CALLS = 8
"""Discovery calls before the funnel commits to what it has (DESIGN: ~10 calls a diagnosis)."""
DEEP_DIVE_CALLS = 5
MAX_FOCUS = 5
"""Locations `focus` keeps."""


class Stage(StrEnum):
    EXPLORE = "explore"  # grep, read_range, list_dir, find_symbol, focus
    DEEP_DIVE = "deep_dive"  # read_range on focused files and neighbours, reproduce, conclude
    REPORT = "report"  # no tools: write the template


STAGE_TOOLS: dict[Stage, frozenset[str]] = {
    Stage.EXPLORE: frozenset({"grep", "read_range", "list_dir", "find_symbol", "focus"}),
    Stage.DEEP_DIVE: frozenset({"read_range", "reproduce", "conclude"}),
    Stage.REPORT: frozenset(),
}
"""All transitions of the funnel, in one table: which tools each stage offers."""


@dataclass
class Funnel:
    """Where a run is in the funnel and what it has spent."""

    stage: Stage = Stage.EXPLORE
    explore_budget: int = EXPLORE_CALLS
    deep_dive_budget: int = DEEP_DIVE_CALLS
    calls: dict[Stage, int] = field(default_factory=lambda: dict.fromkeys(Stage, 0))
    focused: list[str] = field(default_factory=list)
    """`path:start-end` locations chosen by `focus`."""
    listener: Callable[[Stage, str], None] | None = None
    """Told of every stage change as it happens, with why (`focus`, `budget`, `conclude`)."""

    def allows(self, tool: str) -> bool:
        return tool in STAGE_TOOLS[self.stage]

    def spend(self) -> None:
        """Count one tool call; move on when the stage's budget is spent."""
        self.calls[self.stage] += 1
        if self.stage is Stage.EXPLORE and self.calls[Stage.EXPLORE] >= self.explore_budget:
            self._move(Stage.DEEP_DIVE, "explore budget spent")
        elif self.stage is Stage.DEEP_DIVE and self.calls[Stage.DEEP_DIVE] >= self.deep_dive_budget:
            self._move(Stage.REPORT, "deep-dive budget spent")

    def focus(self, locations: list[str]) -> None:
        self.focused = list(dict.fromkeys(locations))[:MAX_FOCUS]
        self._move(Stage.DEEP_DIVE, f"focus {', '.join(self.focused)}")

    def conclude(self) -> None:
        self._move(Stage.REPORT, "conclude")

    def stop(self, why: str) -> None:
        """Go to the report now, whatever the stage (the run's budget is nearly spent)."""
        self._move(Stage.REPORT, why)

    def _move(self, stage: Stage, why: str) -> None:
        if stage is not self.stage:
            self.stage = stage
            if self.listener:
                self.listener(stage, why)

    def focused_paths(self) -> set[str]:
        return {location.rsplit(":", 1)[0] for location in self.focused}
