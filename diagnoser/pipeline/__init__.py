"""The pipeline: one diagnosis as four steps, each a function of values, run in order by
an explicit state machine (`diagnoser.events`: `State`, `TRANSITIONS`, `Event`).

    step            in → out                          states                   runs
    intake          ReportIn → Report                 classified               in a thread
    triage          Report → Triage (its kind)        classified               on the loop
    rank            Report → candidates               mapped                   in a thread
    investigate     Report → Investigation            exploring, deep_dive,    on the loop (its
                                                      reporting                tools in threads)
    structure       markdown → Structured (a Draft)   structuring              on the loop
    ground_finding  Structured → Finding (grounded)   grounding, complete      in a thread

Modules: `run` (the state machine: `diagnose`, `Outcome`, the one timeout), `step` (a
step's name and `StepFailed`), and one per step — `report` (intake, triage),
`investigation`, `structured`, `ground`.

The ranking (`rank_candidates`) is computed once per run, whatever the model: the offline
model reads its first places, every model is shown its distinct files as `suspects` (hints
in the explorer's instructions), and the Finding lists them.

Control flow is plain Python; a model is called only inside `investigate` (one run of
`agent.explorer` through the funnel), for a report off the template, `structure` (the
formatter), and, for a classification the rules are unsure of, `triage` (one short call
that may change the kind, or fails and changes nothing: `diagnoser.triage`). The first
two only write or extract a `Draft`; `ground_finding` alone makes the Finding (status,
checks, blast radius; provenance with every model's usage summed). Every
loop is bounded (funnel budgets, `UsageLimits`, output retries), and ONE timeout covers the
whole run: exceeded in any step, the run ends `timed_out` saying where.
"""

from __future__ import annotations

from diagnoser.events import TRANSITIONS, Event, Sink, State
from diagnoser.pipeline.ground import ground_finding
from diagnoser.pipeline.investigation import Investigation, investigate
from diagnoser.pipeline.report import intake, triage
from diagnoser.pipeline.run import DEFAULT_TIMEOUT_SECONDS, Outcome, diagnose, diagnose_async
from diagnoser.pipeline.step import INVESTIGATE, STRUCTURE, TRIAGE, StepFailed
from diagnoser.pipeline.structured import Structured, structure

__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "INVESTIGATE",
    "STRUCTURE",
    "TRANSITIONS",
    "TRIAGE",
    "Event",
    "Investigation",
    "Outcome",
    "Sink",
    "State",
    "StepFailed",
    "Structured",
    "diagnose",
    "diagnose_async",
    "ground_finding",
    "intake",
    "investigate",
    "structure",
    "triage",
]
