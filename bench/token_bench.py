"""Tokens per diagnosis through a real provider client (issue 13 §5).

    PYTHONPATH=$PWD .venv/bin/python bench/token_bench.py [--limit N] [--samples-only]
        [--arms NAME ...] [--only CASE ...] [--json OUT]

A scripted explorer (`engineer`) that behaves like a careful engineer answers, through
the fake provider on loopback (`tests.fakes.provider`), the real OpenAI Chat Completions
client (`openai-chat:`, `OpenAIChatModel` pointed at the fake): it reads the suspects the
instructions give (without suspects it greps the report's key identifier once or twice
and reads the best hit), focuses the fault, reads it once in the deep-dive, concludes
and writes the report in the template (`template.render` of a `Draft`), citing the exact
lines it read. Its behaviour is generic: it sees only what a model would (the request),
and nothing of a case's gold.

Every actionable sample report (`sample_reports/`, the demo app) and developer benchmark
case (`../shared/bench/cases.jsonl`, sources under bench/.cache/devbench/src/<root>) runs
through the pipeline's steps (intake → rank → investigate → structure → ground) in
every arm: with/without suspects × with/without history trimming × a 1k/2k/4k-token
map. Per arm: input tokens per request and per diagnosis, output tokens, requests and
tool calls per diagnosis, and how often the grounded Finding's fault file is the gold
file (a sample's planted fault; a devbench case's gold files). Tokens are the fake's
ESTIMATE (characters / 3.7 of everything the model reads, `count_input_tokens`), not a
provider's tokenizer.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

import casesets  # noqa: E402
import focus  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

from diagnoser.agent import BATCH_HINT, SUSPECTS_HEADER  # noqa: E402
from diagnoser.candidates import rank_candidates  # noqa: E402
from diagnoser.draft import Draft  # noqa: E402
from diagnoser.finding import Level, Location, ProposedChange, Role, RootCause  # noqa: E402
from diagnoser.intake import ReportIn, Source, Trace, from_payload  # noqa: E402
from diagnoser.intake.mentions import find_mentions  # noqa: E402
from diagnoser.pipeline import ground_finding, intake, investigate, structure  # noqa: E402
from diagnoser.suspects import SUSPECT_CANDIDATES, suspects  # noqa: E402
from diagnoser.template import render  # noqa: E402
from diagnoser.workspace import Workspace  # noqa: E402
from tests.fakes.provider import (  # noqa: E402
    Calls,
    FakeProvider,
    Reply,
    Request,
    Text,
    ToolCall,
    call,
)

SAMPLES = ROOT / "sample_reports"
MODEL = "gpt-bench"
MAP_SIZES = (1_024, 2_048, 4_096)
READ_SUSPECTS = 2
"""Suspects (distinct files) the engineer reads before it focuses the first."""
GREPS = 2
"""Searches the engineer makes without suspects before it settles for the best hit."""
READ_BEFORE, READ_AFTER = 12, 24
"""Lines read around a place in the explore stage (a function's head and body)."""
FAULT_BEFORE, FAULT_AFTER = 3, 3
"""Lines focused and read again in the deep-dive, and cited as evidence."""
PERCENTILE = 0.9


@dataclass(frozen=True, slots=True)
class Arm:
    suspects: bool
    trim: bool
    map_tokens: int

    @property
    def name(self) -> str:
        hints = "suspects" if self.suspects else "no-suspects"
        trim = "trim" if self.trim else "keep-all"
        return f"{hints}/{trim}/map-{self.map_tokens // 1024}k"


ARMS = [Arm(s, t, m) for s in (True, False) for t in (True, False) for m in MAP_SIZES]


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    report_in: ReportIn
    root: Path
    gold: frozenset[str]
    set: str
    """`samples` or `devbench`."""
    traces: tuple[Trace, ...] = ()
    """What a payload adapter returned beside the report."""


@dataclass
class Result:
    case: str
    set: str
    arm: str
    investigated: bool
    request_tokens: list[int] = field(default_factory=list)
    output_tokens: int = 0
    tool_calls: int = 0
    fault: str | None = None
    hit: bool = False
    status: str = ""

    @property
    def input_tokens(self) -> int:
        return sum(self.request_tokens)


# The scripted engineer: a function of the request alone, like a model.

_SUSPECT = re.compile(r"^\d+\. `(?P<path>[^`]+):(?P<line>\d+)`", re.M)
_NUMBERED = re.compile(r"^ *(?P<number>\d+): (?P<text>.*)$")
_ENCLOSING = re.compile(r"\w+ (?P<name>\S+) \(lines \d+-\d+\)")
_GREP_FILE = re.compile(r"^(?P<path>\S[^\n]*):$")
_GREP_HIT = re.compile(r"^ *(?P<line>\d+): (?P<text>.*?)(?:  \[(?P<symbol>[^\]]+)\])?$")
_PY_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<name>[\w.<>]+)')
_AT_FRAME = re.compile(r"\bat (?:[\w$.]+\.)?(?P<name>[\w$]+) ?\((?P<path>[^():\s]+):(?P<line>\d+)")
_QUOTED = re.compile(r"['\"`]([A-Za-z_][\w.]{2,60})['\"`]")


def engineer(request: Request) -> Reply:
    """The next step of a careful engineer, from what the request shows: the stage (the
    tools offered), the report (first user turn), the suspects (instructions) and the
    tool results so far."""
    offered = set(request.tools) | set(request.added_tools)
    history = [c for m in request.messages for c in m.tool_calls]
    if "focus" in offered:
        return _explore(request, history)
    if "conclude" in offered:
        if any(c.name == "read_range" for c in history[_focus_at(history) :]):
            return call("conclude")
        read = ToolCall("read_range", _fault_window(request, history))
        if BATCH_HINT in request.instructions:  # as told: the last read with conclude()
            return Calls((read, ToolCall("conclude")))
        return Calls((read,))
    return Text(render(_draft(request)))


def _explore(request: Request, history: list[Any]) -> Reply:
    hints = _suspects(request.instructions)
    if not hints:
        return _search(request, history)
    reads = [c for c in history if c.name == "read_range"]
    places = _distinct_files(hints)[:READ_SUSPECTS]
    if len(reads) >= len(places):
        return _focus(*places[0])
    wanted = [_read(path, line) for path, line in places[len(reads) :]]
    if BATCH_HINT in request.instructions:  # as told: independent reads in one turn
        return Calls(tuple(wanted))
    return Calls(tuple(wanted[:1]))


def _search(request: Request, history: list[Any]) -> Reply:
    """Without suspects: grep the report's key names (GREPS at most), read the best hit,
    focus it; with no hit at all, focus where the map puts most weight."""
    reads = [c for c in history if c.name == "read_range"]
    greps = [c for c in history if c.name == "grep"]
    hit = _best_hit(request, len(greps))
    if hit is not None and not reads:
        return Calls((_read(*hit),))
    keys = _keys(_report_text(request))
    if hit is None and not reads and len(greps) < min(GREPS, len(keys)):
        return call("grep", **keys[len(greps)])
    place = hit or _map_head(request.instructions)
    return _focus(*place) if place else call("focus", locations=["."])


def _read(path: str, line: int) -> ToolCall:
    return ToolCall("read_range", {"path": path, "start": max(1, line - READ_BEFORE),
                                   "end": line + READ_AFTER})  # fmt: skip


def _distinct_files(places: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Each file once, at its first place."""
    first: dict[str, tuple[str, int]] = {}
    for path, line in places:
        first.setdefault(path, (path, line))
    return list(first.values())


def _focus(path: str, line: int) -> Calls:
    return call("focus", locations=[f"{path}:{max(1, line - FAULT_BEFORE)}-{line + FAULT_AFTER}"])


def _focus_at(history: list[Any]) -> int:
    return next((i for i, c in enumerate(history) if c.name == "focus"), len(history))


def _fault_window(request: Request, history: list[Any]) -> dict[str, Any]:
    location = (_args(history[_focus_at(history)]).get("locations") or ["."])[0]
    path, _, lines = location.rpartition(":")
    start, _, end = lines.partition("-")
    if not path or not start.isdigit():
        return {"path": location, "start": 1, "end": 1 + FAULT_BEFORE + FAULT_AFTER}
    return {"path": path, "start": int(start), "end": int(end or start)}


def _args(tool_call: Any) -> dict[str, Any]:
    """A call's arguments as sent (the history carries them as a JSON string)."""
    try:
        found = json.loads(tool_call.arguments())
    except json.JSONDecodeError:
        return {}
    return found if isinstance(found, dict) else {}


def _suspects(instructions: str) -> list[tuple[str, int]]:
    if SUSPECTS_HEADER not in instructions:
        return []
    block = instructions[instructions.index(SUSPECTS_HEADER) :]
    return [(m.group("path"), int(m.group("line"))) for m in _SUSPECT.finditer(block)]


def _report_text(request: Request) -> str:
    first = next((m for m in request.messages if m.role == "user"), None)
    return first.text if first else ""


def _keys(text: str) -> list[dict[str, Any]]:
    """What to search for, best first: the innermost frame's function as a definition,
    then names the message quotes, then names the report mentions."""
    frames = [(m.group("name"), m.group("path")) for m in _PY_FRAME.finditer(text)]
    frames.reverse()  # Python prints the innermost frame last
    frames += [(m.group("name"), m.group("path")) for m in _AT_FRAME.finditer(text)]
    names = [n.rsplit(".", 1)[-1] for n, _ in frames if not n.startswith("<")]
    names += [m.group(1).rsplit(".", 1)[-1] for m in _QUOTED.finditer(text)]
    names += find_mentions(text).identifiers
    keys = []
    for name in dict.fromkeys(n for n in names if len(n) >= 3):
        keys.append({"pattern": rf"(def|class|function|fun|func) {re.escape(name)}\b"})
    return keys[:GREPS]


def _best_hit(request: Request, greps: int) -> tuple[str, int] | None:
    """The last grep's best hit: a definition outside tests, else the first hit."""
    results = [r for m in request.messages for r in m.tool_results if r.name == "grep"]
    if not results or greps == 0:
        return None
    hits: list[tuple[str, int, str]] = []
    path = ""
    for line in results[-1].text.splitlines():
        if (found := _GREP_FILE.match(line)) and not _NUMBERED.match(line):
            path = found.group("path")
        elif (hit := _GREP_HIT.match(line)) and path:
            hits.append((path, int(hit.group("line")), hit.group("text")))
    if not hits:
        return None
    ranked = sorted(hits, key=lambda h: ("test" in h[0].lower(), h[0].count("/")))
    return ranked[0][0], ranked[0][1]


def _map_head(instructions: str) -> tuple[str, int] | None:
    """The repo map's first file and definition line: where the map puts most weight."""
    after = instructions.split("Repository map", 1)[-1].splitlines()[1:]
    for head, first in itertools.pairwise(after):
        if head.endswith(":") and (number := _NUMBERED.match(first)):
            return head[:-1], int(number.group("number"))
    return None


def _draft(request: Request) -> Draft:
    """The report: the fault as last read (exact lines), the report's first line as what
    fails."""
    reads = [r for m in request.messages for r in m.tool_results if r.name == "read_range"]
    read = reads[-1].text if reads else ""
    head, *body = read.splitlines() or [""]
    numbered = [(int(m.group("number")), m.group("text")) for line in body
                if (m := _NUMBERED.match(line))]  # fmt: skip
    what = (_report_text(request).replace("<report>", "").strip().splitlines() or ["?"])[0][:80]
    if not numbered:
        return Draft(
            title=f"Not located: {what}",
            root_cause=RootCause(
                summary="nothing in the repository fits the report", confidence=0.1
            ),
        )
    path = head.split(" lines ", 1)[0]
    enclosing = _ENCLOSING.findall(head)
    symbol = enclosing[-1] if enclosing else None
    start, end = numbered[0][0], numbered[-1][0]
    where = f"`{symbol}`" if symbol else f"`{path}`"
    return Draft(
        title=f"{what} — in {symbol or path}",
        root_cause=RootCause(
            summary=f"{where} ({path}:{start}-{end}) mishandles the case the report describes.",
            explanation="Read in the deep-dive; the lines below are where it goes wrong.",
            confidence=0.6,
        ),
        files=[
            Location(
                path=path, start_line=start, end_line=end, symbol=symbol, role=Role.FAULT,
                evidence="\n".join(text for _, text in numbered),
                reason="the suspect the report's signals point at, read and confirmed",
            )
        ],
        changes=[ProposedChange(path=path, summary=f"handle the failing case in {symbol or path}")],
        complexity=Level.LOW,
        risk=Level.LOW,
        rationale="a local change at the fault",
    )  # fmt: skip


# Cases and runs.


def sample_cases() -> list[Case]:
    expected = json.loads((SAMPLES / "expected.json").read_text("utf-8"))
    cases = []
    for entry in expected:
        raw = (SAMPLES / entry["report"]).read_text("utf-8")
        traces: tuple[Trace, ...] = ()
        if entry["kind"] == "text":
            rating = entry.get("rating")
            source = Source.REVIEW if rating is not None else Source.BUG_REPORT
            report_in = ReportIn(text=raw, rating=rating, source=source)
        else:
            adapted = from_payload(entry["kind"], json.loads(raw))[0]
            report_in, traces = adapted.report, tuple(adapted.traces)
        gold = frozenset([entry["fault"]["path"]] if entry.get("fault") else [])
        name = str(entry["report"]).rsplit("/", 1)[-1]
        cases.append(Case(name, report_in, SAMPLES / "demo_app", gold, "samples", traces))
    return cases


def devbench_cases(src: Path, limit: int | None) -> list[Case]:
    found = [c for c in casesets.load([focus.CASES_PATH]) if (src / c["root"]).is_dir()]
    return [
        Case(c["id"], ReportIn(text=c["problem_statement"], source=Source.GITHUB),
             src / c["root"], frozenset(c["gold_files"]), "devbench")
        for c in found[:limit]
    ]  # fmt: skip


async def run_case(
    case: Case, workspace: Workspace, model: OpenAIChatModel, fake: FakeProvider,
    arms: Sequence[Arm],
) -> list[Result]:  # fmt: skip
    """One case in every arm: intake and ranking once, then the explorer per arm."""
    report = await asyncio.to_thread(intake, case.report_in, workspace, case.traces)
    if not report.classification.actionable:
        return [Result(case.id, case.set, arm.name, investigated=False) for arm in arms]
    ranked = await asyncio.to_thread(rank_candidates, report, workspace, limit=SUSPECT_CANDIDATES)
    suspected = suspects(ranked)
    results = []
    for arm in arms:
        fake.replay(engineer)
        investigation = await investigate(
            report, workspace, model, candidates=ranked,
            suspects=suspected if arm.suspects else (), map_tokens=arm.map_tokens,
            trim=arm.trim,
        )  # fmt: skip
        if fake.failures:
            raise SystemExit(f"{case.id} {arm.name}: the script failed\n{fake.failures[0]}")
        structured = await structure(investigation.markdown, None)
        finding = await asyncio.to_thread(
            ground_finding, structured, workspace, investigation,
            kind=report.classification.kind, durations={}, suspected=suspected,
        )  # fmt: skip
        faults = [f.path for f in finding.files if f.role is Role.FAULT]
        results.append(
            Result(
                case.id,
                case.set,
                arm.name,
                investigated=True,
                request_tokens=[r.input_tokens for r in fake.requests],
                output_tokens=investigation.usage.output_tokens,
                tool_calls=investigation.usage.tool_calls,
                fault=faults[0] if faults else None,
                hit=bool(faults) and faults[0] in case.gold,
                status=finding.status.value,
            )
        )
    return results


async def run_all(
    cases: Sequence[Case], arms: Sequence[Arm], home: Path, *, quiet: bool = False
) -> list[Result]:
    results: list[Result] = []
    with FakeProvider(engineer) as fake:
        provider = OpenAIProvider(base_url=fake.url + "/v1", api_key="bench")
        model = OpenAIChatModel(MODEL, provider=provider)
        workspace: Workspace | None = None
        for case in cases:
            if workspace is None or workspace.root != case.root.resolve():
                workspace = Workspace(case.root, home=home)
            started = time.perf_counter()
            done = await run_case(case, workspace, model, fake, arms)
            results += done
            if not quiet:
                cells = " ".join(f"{r.input_tokens}/{r.tool_calls}{'+' if r.hit else ''}"
                                 for r in done)  # fmt: skip
                seconds = time.perf_counter() - started
                print(f"{case.id:45s} {seconds:5.1f}s {cells}", file=sys.stderr)
    return results


# The report.


def percentile(values: Sequence[int], q: float = PERCENTILE) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0


def table(results: Sequence[Result], arms: Sequence[Arm]) -> str:
    lines = [
        "| arm | diagnoses | input/request median · p90 | input/diagnosis median · p90 · max "
        "| output/diagnosis median | requests median · max | tool calls median · max "
        "| fault file = gold: samples · devbench |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for arm in arms:
        mine = [r for r in results if r.arm == arm.name and r.investigated]
        if not mine:
            continue
        per_request = [t for r in mine for t in r.request_tokens]
        per_run = [r.input_tokens for r in mine]
        requests = [len(r.request_tokens) for r in mine]
        calls = [r.tool_calls for r in mine]
        hits = []
        for name in ("samples", "devbench"):
            scored = [r for r in mine if r.set == name]
            hits.append(f"{sum(r.hit for r in scored)}/{len(scored)}" if scored else "–")
        lines.append(
            f"| {arm.name} | {len(mine)} "
            f"| {statistics.median(per_request):.0f} · {percentile(per_request)} "
            f"| {statistics.median(per_run):.0f} · {percentile(per_run)} · {max(per_run)} "
            f"| {statistics.median([r.output_tokens for r in mine]):.0f} "
            f"| {statistics.median(requests):g} · {max(requests)} "
            f"| {statistics.median(calls):g} · {max(calls)} | {' · '.join(hits)} |"
        )
    skipped = {r.case for r in results if not r.investigated}
    lines.append(f"\nnot investigated (not actionable): {len(skipped)} of "
                 f"{len({r.case for r in results})} cases")  # fmt: skip
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> list[Result]:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--limit", type=int, help="devbench cases to run (default: all)")
    cli.add_argument("--samples-only", action="store_true")
    cli.add_argument("--src", type=Path, default=HERE / ".cache" / "devbench" / "src")
    cli.add_argument("--home", type=Path, default=HERE / ".cache" / "token-bench-home")
    cli.add_argument("--arms", nargs="+", help="arm names to run (default: all)")
    cli.add_argument("--only", nargs="+", help="case ids to run (default: all)")
    cli.add_argument("--json", type=Path, help="write every result here")
    cli.add_argument("--quiet", action="store_true")
    args = cli.parse_args(argv)
    arms = [a for a in ARMS if not args.arms or a.name in args.arms]
    cases = sample_cases()
    if not args.samples_only:
        cases += devbench_cases(args.src, args.limit)
    cases = [c for c in cases if not args.only or c.id in args.only]
    results = asyncio.run(run_all(cases, arms, args.home, quiet=args.quiet))
    print(table(results, arms))
    if args.json:
        rows = [{**vars(r), "input_tokens": r.input_tokens} for r in results]
        args.json.write_text(json.dumps(rows, indent=1))
    return results


if __name__ == "__main__":
    main()
