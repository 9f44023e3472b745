"""`Finding`: the output contract — what a diagnosis says, grounded against the repository.

The first entry of `files` is the most likely fault location. `status` is earned by
grounding (`grounding.py`), never claimed by a model: `verified` needs every location and
change to check out and at least one grounded fault location. `suspects` is the ranked
list beside them: computed by us from the report (`diagnoser.suspects`), never by a model,
and a hint, not a checked fact.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from diagnoser.intake.report import Classification, Kind


class Role(StrEnum):
    FAULT = "fault"  # where the defect is
    TRIGGER = "trigger"  # what sets it off (a caller, an input path)
    PROPAGATION = "propagation"  # where the bad value travels through
    CONTEXT = "context"  # needed to understand it


class Status(StrEnum):
    VERIFIED = "verified"  # every location and change grounded, with a fault location
    PARTIALLY_VERIFIED = "partially_verified"  # some dropped; a grounded fault remains
    UNVERIFIED = "unverified"  # no grounded fault location


class Level(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class RootCause(BaseModel):
    summary: str = Field(min_length=1, max_length=500)
    explanation: str = ""
    confidence: float = Field(ge=0.0, le=1.0)


class Location(BaseModel):
    """A place in the repository that matters, with the code that shows it."""

    model_config = ConfigDict(frozen=True)

    path: str = Field(min_length=1)
    """Repo-relative."""
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    symbol: str | None = None
    """The enclosing definition's (qualified) name, if any."""
    role: Role = Role.FAULT
    evidence: str = ""
    """An exact excerpt of those lines (whitespace may differ)."""
    reason: str = ""

    @model_validator(mode="after")
    def _ordered(self) -> Location:
        if self.end_line < self.start_line:
            raise ValueError(f"end_line {self.end_line} is before start_line {self.start_line}")
        return self


class Change(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str = Field(min_length=1)
    summary: str = Field(min_length=1)
    rationale: str = ""
    diff: str | None = None
    """A unified diff against the current file, when one is proposed."""


class BlastRadius(BaseModel):
    """Who depends on the changed symbols — computed from the symbol index, not guessed."""

    symbols: list[str] = Field(default_factory=list)
    references: int = 0
    """Lines anywhere that use those names."""
    files: list[str] = Field(default_factory=list)
    """Files that use them, most uses first (capped)."""


class Risk(BaseModel):
    complexity: Level = Level.LOW
    risk: Level = Level.LOW
    blast_radius: BlastRadius = Field(default_factory=BlastRadius)
    rationale: str = ""


class Check(BaseModel):
    name: str
    passed: bool
    detail: str = ""


class Usage(BaseModel):
    """Model requests and tokens of one part of a run (a funnel stage, the formatter)."""

    model_config = ConfigDict(frozen=True)

    requests: int = 0
    input_tokens: int = 0
    """Every input token, cached ones included."""
    output_tokens: int = 0
    cache_read_tokens: int = 0
    """Input tokens the provider read from its prompt cache (where it reports them)."""
    cache_write_tokens: int = 0
    """Input tokens the provider wrote to its prompt cache (Anthropic reports them)."""


class Provenance(BaseModel):
    repo: str = ""
    commit: str | None = None
    """The commit read: a git repository's snapshot, or a folder's checked-out HEAD."""
    revision_note: str = ""
    """Set when the report named a release or commit that could not be found: what was
    diagnosed instead."""
    models: list[str] = Field(default_factory=list)
    """Every model that touched this Finding (`offline` for the embedded investigator)."""
    answered: dict[str, list[str]] = Field(default_factory=dict)
    """Per step (`triage`, `investigate`, `structure`): the models that answered in it, in
    order — more than one when a fallback model took over."""
    tool_calls: dict[str, int] = Field(default_factory=dict)
    """Per funnel stage: explore, deep_dive, report."""
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    """Of `input_tokens`, read from the provider's prompt cache."""
    cache_write_tokens: int = 0
    """Of `input_tokens`, written to the provider's prompt cache."""
    usage: dict[str, Usage] = Field(default_factory=dict)
    """Per part of the run: the funnel's stages (explore, deep_dive, report) and
    `structure` (the formatter model), each only when a model was asked in it."""
    costs: dict[str, float | None] = Field(default_factory=dict)
    """USD per model that answered, from genai-prices: `offline` costs 0; None when the
    model's price is unknown (never a guess)."""
    cost_usd: float | None = None
    """The sum of `costs`; None when any model's price is unknown."""
    durations: dict[str, float] = Field(default_factory=dict)
    """Seconds per pipeline state."""


MAX_SUSPECTS = 10
"""Files a Finding lists as suspects: a list a person still scans (issue 11 asks ten
deep), and the deepest k the benchmark scores (file Acc@10, bench/README)."""


class Signal(StrEnum):
    """What put a suspect on the list (the ranking's signals, `diagnoser.candidates`)."""

    FRAME = "frame"  # a frame of the report's trace
    MENTION = "mention"  # the report names the file or a definition in it
    WORDS = "words"  # only the report's words match
    DATAFLOW = "dataflow"  # computes a value the failing check tested


class Suspect(BaseModel):
    """A ranked place to look: one file, at its best-ranked function. A hint from the
    report's signals, not a checked fact — grounding only keeps it if the file and the
    line exist."""

    model_config = ConfigDict(frozen=True)

    path: str = Field(min_length=1)
    """Repo-relative."""
    symbol: str | None = None
    """The (qualified) function or class the ranking placed it at, if any."""
    line: int = Field(ge=1)
    """A frame's line, or the definition's first line."""
    score: float
    """How strongly its signal points here: a frame's prior, else the file's relevance
    (`Candidate.score`). Comparable within one `source`, not across: the list's order
    is the ranking's, frames first."""
    source: Signal
    reason: str = ""
    """Why it is on the list, in words."""


class Finding(BaseModel):
    classification: Kind
    title: str
    root_cause: RootCause | None = None
    files: list[Location] = Field(default_factory=list)
    """Relevance order: the first is the most likely fault location."""
    changes: list[Change] = Field(default_factory=list)
    risk: Risk = Field(default_factory=Risk)
    checks: list[Check] = Field(default_factory=list)
    status: Status = Status.UNVERIFIED
    provenance: Provenance = Field(default_factory=Provenance)
    report_markdown: str = ""
    """The explorer's raw report."""
    triage: Classification | None = None
    """Intake's verdict on the report: kind, confidence, the source's prior and the
    signals that decided it (why this was, or was not, investigated)."""
    suspects: list[Suspect] = Field(default_factory=list, max_length=MAX_SUSPECTS)
    """Ranked files, best first, one entry per file, beside the grounded `files`:
    computed from the report (frames, names, words), never by a model; empty when the
    report was not investigated."""


def finding_schema() -> dict[str, object]:
    """JSON Schema of `Finding`."""
    return Finding.model_json_schema()
