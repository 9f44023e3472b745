"""`Trials`: check a proposed change by running it — in a fresh copy with the change
applied, the reproducer must no longer fail and no neighbouring test that passed at base
may fail (`Tested`). Fail-closed: no reproduced failure at base, no trial.

    trials = Trials(workspace, bench)           # bench: what reproduced the failure
    tested = trials.test("shop/cart.py", diff)  # Tested: passed | failed | not_run

The neighbouring tests (`neighbours.neighbour_tests`) run once at base per set and once
with the change; their per-test outcomes are compared, so a test that already failed at
base is not held against the change. Every run is bounded by the sandbox's limits and by
the budget's deadline; each trial's log is stored.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path

from diagnoser.errors import ToolError
from diagnoser.finding import Tested, TestStatus
from diagnoser.grounding import apply_diff
from diagnoser.verify.logs import Logs
from diagnoser.verify.neighbours import neighbour_tests
from diagnoser.verify.reproducer import Reproducer
from diagnoser.verify.runner import Runner, prepare
from diagnoser.verify.sandbox import Sandbox, SandboxRun
from diagnoser.verify.scratch import Scratch
from diagnoser.workspace import Workspace

PASSED = "PASSED"
_OUTCOME = re.compile(r"^(?P<outcome>PASSED|FAILED|ERROR|XPASS|XFAIL) (?P<test>\S+::\S+)", re.M)
MIN_TRIAL_SECONDS = 3.0
"""A trial with less time than this left is not started."""


@dataclass(frozen=True, slots=True)
class Bench:
    """What reproduced the failure, to run again with a change applied."""

    sandbox: Sandbox
    runner: Runner
    reproducer: Reproducer
    deadline: float
    """`time.monotonic()` past which no trial starts (the verification budget)."""
    home: Path | None = None

    def resumed(self, seconds: float) -> Bench:
        """This bench with `seconds` of budget from now: what the reproduction left, given
        back after the model's investigation (whose time is not the sandbox's)."""
        return dataclasses.replace(self, deadline=time.monotonic() + max(0.0, seconds))


@dataclass
class Trials:
    workspace: Workspace
    bench: Bench
    _base: dict[tuple[str, ...], dict[str, str]] = field(default_factory=dict)
    _neighbours: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def time_left(self) -> float:
        return self.bench.deadline - time.monotonic()

    def test(self, path: str, diff: str) -> Tested:
        """Apply `diff` to `path` in a fresh copy and run the reproducer and the neighbours."""
        if self.time_left < MIN_TRIAL_SECONDS:
            return Tested(status=TestStatus.NOT_RUN, detail="the verification budget is spent")
        try:
            patched = "\n".join(apply_diff(diff, self.workspace.read_text_lines(path)[1])) + "\n"
        except (ToolError, ValueError) as exc:
            return Tested(status=TestStatus.NOT_RUN, detail=f"the diff does not apply: {exc}")
        if path not in self._neighbours:  # the same for every trial of a file: found once
            self._neighbours[path] = neighbour_tests([path], self.workspace.file_paths, self._read)
        neighbours = self._neighbours[path]
        before = self._base_outcomes(neighbours)
        with Scratch(self.bench.home).copy(self.workspace) as copy:
            (copy / path).write_text(patched, encoding="utf-8")
            reproducer, shown = self._reproducer(copy)
            after: dict[str, str] = {}
            command, output = shown, reproducer.output
            if neighbours:
                run, tests = self._tests(copy, neighbours)
                after = _outcomes(run.output)
                command = f"{shown} && {tests}"
                output = f"{reproducer.output}\n$ {tests}\n{run.output}"
        log = Logs(self.bench.home).save(command, output)
        fixed = reproducer.exit_code == 0 and not reproducer.timed_out
        broken = sorted(
            t for t, outcome in before.items() if outcome == PASSED and after.get(t) != PASSED
        )
        if not fixed:
            why = (
                "timed out"
                if reproducer.timed_out
                else f"still fails (exit {reproducer.exit_code})"
            )
            return Tested(status=TestStatus.FAILED, command=command, log=log,
                          detail=f"the reproducer {why} with the change")  # fmt: skip
        if broken:
            named = ", ".join(broken[:3]) + (
                f" and {len(broken) - 3} more" if len(broken) > 3 else ""
            )
            return Tested(status=TestStatus.FAILED, command=command, log=log,
                          detail=f"passed at base, fail with the change: {named}")  # fmt: skip
        kept = sum(1 for outcome in before.values() if outcome == PASSED)
        said = (
            f"{kept} neighbouring tests pass as at base"
            if neighbours
            else "no neighbouring tests found"
        )
        return Tested(status=TestStatus.PASSED, command=command, log=log,
                      detail=f"the reproducer runs clean with the change; {said}")  # fmt: skip

    def _reproducer(self, copy: Path) -> tuple[SandboxRun, str]:
        runner = self.bench.runner
        ready = prepare(runner, self.bench.reproducer, copy, self.workspace.file_paths)
        return self._run(copy, ready.command, ready.environment), shlex.join(ready.command)

    def _tests(self, copy: Path, tests: tuple[str, ...]) -> tuple[SandboxRun, str]:
        runner = self.bench.runner
        command = [*runner.test_command(tests, copy), "-rA"]
        code = "\n".join(self._read(test) for test in tests)
        environment = runner.environment(code, self.workspace.file_paths)
        return self._run(copy, command, environment), shlex.join(command)

    def _run(self, copy: Path, command: list[str], environment: dict[str, str]) -> SandboxRun:
        sandbox = self.bench.sandbox.within(self.time_left)
        return sandbox.run(command, copy=copy, binds=self.bench.runner.binds(), env=environment)

    def _base_outcomes(self, tests: tuple[str, ...]) -> dict[str, str]:
        if not tests:
            return {}
        if tests not in self._base:
            with Scratch(self.bench.home).copy(self.workspace) as copy:
                self._base[tests] = _outcomes(self._tests(copy, tests)[0].output)
        return self._base[tests]

    def _read(self, path: str) -> str:
        try:
            return "\n".join(self.workspace.read_text_lines(path)[1])
        except ToolError:
            return ""


def _outcomes(output: str) -> dict[str, str]:
    """pytest's `-rA` summary: test id → PASSED / FAILED / ERROR / XPASS / XFAIL."""
    return {m["test"]: m["outcome"] for m in _OUTCOME.finditer(output)}
