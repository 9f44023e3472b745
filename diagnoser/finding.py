"""`Finding`: the output contract — what a diagnosis says, grounded against the repository.

The first entry of `files` is the most likely fault location. `status` is earned by
grounding (`grounding.py`), never claimed by a model: `grounded` needs every cited
location and change to check out against the files and at least one grounded fault
location — it means the citations are real, not that anything was run. What was run
says `reproduction` (the report's failure, at the base commit) and each change's
`tested`. `suspects` is the ranked list beside them: computed by us from the report
(`diagnoser.suspects`), never by a model, and a hint, not a checked fact.
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
    """How much of a Finding's citations checked out against the files (not a run)."""

    GROUNDED = "grounded"  # every location and change grounded, with a fault location
    PARTIALLY_GROUNDED = "partially_grounded"  # some dropped; a grounded fault remains
    UNGROUNDED = "ungrounded"  # no grounded fault location

    @classmethod
    def _missing_(cls, value: object) -> Status | None:
        """A legacy name (`verified` …) read as its new one: stored and sent Findings
        written before the rename still validate."""
        return LEGACY_STATUSES.get(value) if isinstance(value, str) else None


LEGACY_STATUSES: dict[str, Status] = {
    "verified": Status.GROUNDED,
    "partially_verified": Status.PARTIALLY_GROUNDED,
    "unverified": Status.UNGROUNDED,
}
"""The statuses' names before issue 26, accepted on input (never written) for one release."""


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


class TestStatus(StrEnum):
    __test__ = False  # a contract type, not a pytest test class

    PASSED = "passed"  # the tests ran with the change applied and passed
    FAILED = "failed"  # they ran and failed (`detail` says what)
    NOT_RUN = "not_run"  # nothing ran (`detail` says why, when there is a reason)


class Tested(BaseModel):
    """What running the tests with one proposed change applied showed."""

    __test__ = False  # a contract type, not a pytest test class
    model_config = ConfigDict(frozen=True)

    status: TestStatus = TestStatus.NOT_RUN
    command: str = ""
    """What ran, as a shell would show it; empty when nothing ran."""
    log: str | None = None
    """Reference to the run's stored output (`diagnoser log REF` prints it)."""
    detail: str = ""
    """Why, in words: what failed, or why it was not run."""


class ProposedChange(BaseModel):
    """A change as a report proposes it: what a `Draft` holds, nothing we compute."""

    # A `Change` put where a ProposedChange goes (a Finding's changes into a Draft) is
    # read as a ProposedChange: a Draft never holds a `tested`, and equals its parse.
    model_config = ConfigDict(frozen=True, revalidate_instances="subclass-instances")

    path: str = Field(min_length=1)
    summary: str = Field(min_length=1)
    rationale: str = ""
    diff: str | None = None
    """A unified diff against the current file, when one is proposed."""


class Origin(StrEnum):
    MODEL = "model"  # the explorer proposed it
    TEMPLATE = "template"  # a repair template at the blamed line, kept only when a run passed it


class Change(ProposedChange):
    """A proposed change in a Finding: grounded against the files, and maybe tested."""

    tested: Tested = Field(default_factory=Tested)
    """Whether the repository's tests were run with this change applied, and how it went."""
    origin: Origin = Origin.MODEL
    """Who made it: the explorer, or a repair template (`diagnoser.verify.templates`: shown
    only when its `tested` is `passed`)."""


class ReproductionStatus(StrEnum):
    # failed at base the way the report says: its exception type, a frame in the repository
    REPRODUCED = "reproduced"
    DIFFERENT_FAILURE = "different_failure"  # failed, but not that way
    NOT_REPRODUCED = "not_reproduced"  # ran clean
    # off, no sandbox, no runtime, no reproducer (`reason` says which)
    NOT_ATTEMPTED = "not_attempted"
    ERROR = "error"  # the sandbox or the runtime failed (`reason` says why)


class ReproducerSource(StrEnum):
    NAMED_TEST = "named_test"  # a failing test the report names
    SNIPPET = "snippet"  # runnable code the report carries
    EXPLORER_TEST = "explorer_test"  # a test the explorer wrote


VERIFY_OFF_REASON = "verification is off (--verify or DIAGNOSER_VERIFY=1 turns it on)"
"""`Reproduction.reason` when nothing was tried because verification is off (the default)."""


class RunFrame(BaseModel):
    """One frame of a run's traceback, inside the repository."""

    model_config = ConfigDict(frozen=True)

    path: str = Field(min_length=1)
    """Repo-relative."""
    line: int = Field(ge=1)
    function: str | None = None


class Reproduction(BaseModel):
    """Running the report's failure at the base commit: what ran, and whether it failed
    the way the report says."""

    status: ReproductionStatus = ReproductionStatus.NOT_ATTEMPTED
    reason: str = VERIFY_OFF_REASON
    """The status in words: why it counts as reproduced, or why nothing was run."""
    source: ReproducerSource | None = None
    """Where the code that ran came from; None when nothing was found to run."""
    command: str = ""
    """What ran, as a shell would show it."""
    exception: str = ""
    """The run's exception line, e.g. `KeyError: 'name'`."""
    frames: list[RunFrame] = Field(default_factory=list)
    """The run's frames inside the repository, outermost first."""
    seconds: float = Field(default=0.0, ge=0.0)
    """How long the run took."""
    log: str | None = None
    """Reference to the run's stored output (`diagnoser log REF` prints it)."""


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


class Localization(StrEnum):
    """Where the signal that placed the fault location came from."""

    REPORT = "report"  # the report's own text and traces
    REPRODUCTION = "reproduction"  # the traceback of a run that reproduced the failure


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
    localized_from: Localization = Localization.REPORT
    """Where the fault location's signal came from: the report, or a reproducing run."""


MAX_SUSPECTS = 12
RANKING_ONLY = (
    "not investigated: where it would land in the code, ranked from the report's names and "
    "words alone (no model, no tool call); hints for a triager, not findings"
)
"""What the suspects of a request or a question are, said in every format."""
"""Files a Finding lists as suspects: a list a person still scans (issue 11 asks ten
deep), and the deepest k the benchmark scores (file Acc@10, bench/README)."""


class Signal(StrEnum):
    """What put a suspect on the list (the ranking's signals, `diagnoser.candidates`)."""

    FRAME = "frame"  # a frame of the report's trace
    MENTION = "mention"  # the report names the file or a definition in it
    WORDS = "words"  # only the report's words match
    DATAFLOW = "dataflow"  # computes a value the failing check tested
    MEANING = "meaning"  # a store review's meaning is nearest what the function says


class Suspect(BaseModel):
    """A ranked place to look: a file at one of its functions (the best-ranked; the first
    file may come again at its next best). A hint from the report's signals, not a
    checked fact — grounding only keeps it if the file and the line exist."""

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
    status: Status = Status.UNGROUNDED
    """Whether the cited locations and changes checked out against the files: set by
    grounding, and no claim that anything ran (`reproduction`, `Change.tested` say that)."""
    reproduction: Reproduction = Field(default_factory=Reproduction)
    """Running the report's failure at the base commit, when verification is on."""
    provenance: Provenance = Field(default_factory=Provenance)
    report_markdown: str = ""
    """The explorer's raw report."""
    triage: Classification | None = None
    """Intake's verdict on the report: kind, confidence, the source's prior and the
    signals that decided it (why this was, or was not, investigated)."""
    suspects: list[Suspect] = Field(default_factory=list, max_length=MAX_SUSPECTS)
    """Ranked files, best first, one entry per file (the first file's next best functions
    right after it), beside the grounded `files`:
    computed from the report (frames, names, words), never by a model. A feature request
    or a question is not investigated, but gets them (ranking only: where it would land,
    its title says so); other reports not investigated get none."""


def finding_schema() -> dict[str, object]:
    """JSON Schema of `Finding`."""
    return Finding.model_json_schema()
