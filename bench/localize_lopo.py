"""Leave-one-project-out choice of the localization weights and rules (issues 11, 12).

    bash ../shared/bench/get_sources.sh bench/.cache/devbench
    .venv/bin/python bench/localize_lopo.py [--extra CASES=SOURCES ...]

`--extra bench/cases_extra.jsonl=bench/.cache/widened` adds another cases file (or a folder
of them) whose releases lie under SOURCES/src/; every distinct `package` is a project and
every case's `language` (default python) a group in the tables.

The candidate ranking only (`diagnoser.candidates`, no model, no tools), limit=10. Each
release's Workspace and each case's report are built once; the ranking is then re-run
under every setting of a small grid: one weight or rule changed at a time from the module
constants. For each fold (choose on all projects but one, measure on that one) every weight and
rule takes the value that is best on the training projects (macro mean of file Acc@1
and Acc@5; ties keep the module constant), and the combined choice is measured on the
held-out project, beside the choice made on all three (in-sample). Also prints a
per-project ablation table (each rule or signal off). File Acc@k is over distinct files;
function Acc@5 over the first five `file::symbol` places (last name component).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from diagnoser import candidates, crash_site, file_roles, frames, named, relevance, term_indexes
from diagnoser.candidate import Candidate
from diagnoser.intake import ReportIn, mentions
from diagnoser.intake.intake import build_report
from diagnoser.intake.report import Report
from diagnoser.workspace import Workspace
from repomap.terms import TermIndex

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import focus  # noqa: E402

LIMIT = 10
KS = (1, 3, 5, 10)
NEVER = re.compile(r"(?!)")


def _old_is_test(path: str) -> bool:
    """Before issue 11: `test*` names, a few suffixes, `tests/`, `test/`, `__tests__/`."""
    name = path.rsplit("/", 1)[-1]
    return (
        name.startswith("test")
        or name.endswith(("_test.py", "_tests.py", ".test.js", ".spec.js", "Test.java", "Test.kt"))
        or any(part in f"/{path}" for part in ("/tests/", "/test/", "/__tests__/"))
    )


WEIGHTS: dict[str, tuple[float, ...]] = {
    "FRAME_DECAY": (0.25, 0.5, 1.0, 2.0),
    "GUARD_PENALTY": (0.0, 1.0),
    "ARGUMENT_CHECK_PENALTY": (0.0, 1.0),
    "UTILITY_PENALTY": (0.0, 1.0),
    "FRAME_HEADLINE_WEIGHT": (0.0, 0.75, 1.5, 3.0),
    "TEXT_WEIGHT": (0.5, 1.0, 2.0),
    "HEADLINE_WEIGHT": (0.0, 0.35, 0.7, 1.4),
    "TEXT_HEADLINE_WEIGHT": (0.0, 0.5, 1.0, 1.5),
    "NAMED_FILE_WEIGHT": (0.0, 0.3, 0.6, 1.2),
    "NAMED_DEFINITION_WEIGHT": (0.0, 0.1, 0.2, 0.4, 0.8),
    "QUALIFIED_NAME_WEIGHT": (0.0, 0.3, 0.6, 1.2),
    "HEADLINE_NAME_WEIGHT": (0.0, 0.3, 0.6, 1.2),
    "HEADLINE_NAME_OTHER": (0.0, 0.1, 0.2, 0.4),
    "DECLARATION_FACTOR": (0.5, 0.75, 1.0),
    "OTHER_PLATFORM_FACTOR": (0.25, 0.5, 0.75, 1.0),
}
"""The grid: each weight's values, tried one weight at a time."""
RULES: dict[str, dict[tuple[object, str], object]] = {
    "null rule: any field of a parameter": {(crash_site, "NULL_FIELD_NEEDS_CALLER"): False},
    "no vendored/minified rule": {(candidates, "_is_copied"): lambda path, workspace: False},
    "no code names in mentions": {(mentions, "CODE_NAMES"): False},
    "old test-file conventions": {
        (term_indexes, "is_test"): _old_is_test,
        (file_roles, "is_test"): _old_is_test,
    },
    "no native-failure order": {(candidates, "NATIVE_FAILURE_FIRST"): False},
    "secondary files cut with the rest": {(candidates, "SECONDARY_BEFORE_CUT"): False},
    "headline names: every definer": {(relevance, "HEADLINE_NAME_OWN_FILE"): False},
    "a check that crashed still goes last": {(frames, "GUARD_NOT_WHEN_IT_CRASHED"): False},
    "no compound names as file names": {(named, "NAMES_AS_FILES"): False},
    "a Go panic's handlers are frames": {(frames, "PANIC_HANDLERS_LAST"): False},
    "the error's constructor is a frame": {(frames, "ERROR_CONSTRUCTOR_NOT_A_FRAME"): False},
}
"""Each new rule switched off (or back to what it replaced)."""
MEMOIZED = {
    "named_definitions": relevance,
    "named_files": relevance,
    "_best_function": candidates,
    "_is_copied": candidates,
}
"""The pure steps `memoized` caches → the module that calls them (where to patch)."""
SIGNALS: dict[str, dict[str, float]] = {
    "no frames' depth order": {"FRAME_DECAY": 0.0},
    "no headline": {"HEADLINE_WEIGHT": 0.0, "FRAME_HEADLINE_WEIGHT": 0.0},
    "no report words (BM25)": {"TEXT_WEIGHT": 0.0},
    "no named files or definitions": {"NAMED_FILE_WEIGHT": 0.0, "NAMED_DEFINITION_WEIGHT": 0.0},
    "no guard demotion": {"GUARD_PENALTY": 0.0, "ARGUMENT_CHECK_PENALTY": 0.0},
    "old utility-folder demotion": {"UTILITY_PENALTY": 1.0},
}


def home_of(name: str) -> object:
    """The module that defines the weight `name` (and reads it: where to patch it)."""
    [home] = [m for m in (frames, relevance) if name in vars(m)]
    return home


@dataclass(frozen=True)
class Setting:
    label: str
    weights: tuple[tuple[str, float], ...] = ()
    rules: tuple[str, ...] = ()

    def changes(self) -> dict[tuple[object, str], object]:
        found: dict[tuple[object, str], object] = {
            (home_of(name), name): value for name, value in self.weights
        }
        for rule in self.rules:
            found.update(RULES[rule])
        return found


@dataclass(frozen=True)
class Outcome:
    files: tuple[str, ...]
    places: tuple[tuple[str, str], ...]
    """(file, last name component of the symbol), first five distinct."""


@contextmanager
def patched(changes: dict[tuple[object, str], object]) -> Iterator[None]:
    saved = {key: getattr(*key) for key in changes}
    for (module, name), value in changes.items():
        setattr(module, name, value)
    retest = any(name == "is_test" for _, name in changes)
    if retest:
        term_indexes._TERM_INDEXES.clear()
        term_indexes._TEXT_INDEXES.clear()
    try:
        yield
    finally:
        for (module, name), value in saved.items():
            setattr(module, name, value)
        if retest:
            term_indexes._TERM_INDEXES.clear()
            term_indexes._TEXT_INDEXES.clear()


def grid() -> list[Setting]:
    settings = [Setting("module constants")]
    for name, values in WEIGHTS.items():
        current = getattr(home_of(name), name)
        settings += [Setting(f"{name}={v:g}", ((name, v),)) for v in values if v != current]
    settings += [Setting(rule, rules=(rule,)) for rule in RULES]
    for label, weights in SIGNALS.items():
        if any(getattr(home_of(n), n) != v for n, v in weights.items()):
            settings.append(Setting(label, tuple(weights.items())))
    return settings


@contextmanager
def memoized() -> Iterator[None]:
    """The ranking's pure, weight-free steps computed once per input (bench speed only):
    the names a report defines and the files it names, BM25 scores, a file's best function."""
    originals = {name: getattr(module, name) for name, module in MEMOIZED.items()}
    memo: dict[tuple[object, ...], object] = {}

    def cached(name: str, key: Callable[..., tuple[object, ...]]) -> Callable[..., object]:
        def call(*args: object) -> object:
            found = (name, *key(*args))
            if found not in memo:
                memo[found] = originals[name](*args)
            return memo[found]

        return call

    report_key = lambda report, index: (id(report), id(index))  # noqa: E731
    wrappers = {
        "named_definitions": cached("named_definitions", report_key),
        "named_files": cached("named_files", report_key),
        "_best_function": cached(
            "_best_function",
            lambda path, within, query, repo: (
                path,
                within,
                query,
                term_indexes.term_index(repo),
            ),
        ),
        "_is_copied": cached("_is_copied", lambda path, workspace: (path, id(workspace))),
    }
    scores = TermIndex.scores

    def cached_scores(self: TermIndex, query: object) -> dict[str, float]:
        # The index itself, not its id: an index rebuilt after a setting cleared them may
        # get a freed one's id, and would be served that index's scores.
        key = ("scores", self, tuple(sorted(set(query))))  # type: ignore[call-overload]
        if key not in memo:
            memo[key] = scores(self, query)  # type: ignore[arg-type]
        return memo[key]  # type: ignore[return-value]

    for name, wrapper in wrappers.items():
        setattr(MEMOIZED[name], name, wrapper)
    TermIndex.scores = cached_scores  # type: ignore[method-assign]
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(MEMOIZED[name], name, original)
        TermIndex.scores = scores  # type: ignore[method-assign]


def run(
    cases: list[dict[str, object]], src: Path, home: Path, settings: list[Setting]
) -> dict[str, list[Outcome]]:
    """Every setting's outcome per case (in case order), one Workspace at a time."""
    found: dict[str, list[Outcome | None]] = {s.label: [None] * len(cases) for s in settings}
    by_root: dict[Path, list[int]] = {}
    for number, case in enumerate(cases):
        by_root.setdefault(Path(str(case.get("_src", src))) / str(case["root"]), []).append(number)
    for root, numbers in by_root.items():
        with memoized():
            _run_root(cases, numbers, Workspace(root, home=home), settings, found)
        print(f"  {root.name}: {len(numbers)} cases", file=sys.stderr, flush=True)
    return {label: [o for o in outcomes if o is not None] for label, outcomes in found.items()}


def _run_root(
    cases: list[dict[str, object]],
    numbers: list[int],
    workspace: Workspace,
    settings: list[Setting],
    found: dict[str, list[Outcome | None]],
) -> None:
    index = workspace.repository.index
    reports: dict[bool, dict[int, Report]] = {}
    for code in (True, False):
        with patched({(mentions, "CODE_NAMES"): code}):
            reports[code] = {
                n: build_report(
                    ReportIn(text=str(cases[n]["problem_statement"])),
                    files=index.files,
                    index=index,
                    packages=workspace.packages,
                )
                for n in numbers
            }
    for setting in settings:
        with patched(setting.changes()):
            for n in numbers:
                ranked = candidates.rank_candidates(
                    reports[mentions.CODE_NAMES][n], workspace, limit=LIMIT
                )
                found[setting.label][n] = _outcome(ranked)


def _outcome(ranked: list[Candidate]) -> Outcome:
    files = tuple(dict.fromkeys(c.path for c in ranked))
    places = tuple(
        dict.fromkeys((c.path, c.symbol.rsplit(".", 1)[-1]) for c in ranked if c.symbol)
    )[:5]
    return Outcome(files, places)


def file_hits(case: dict[str, object], outcome: Outcome, k: int) -> bool:
    return bool(set(outcome.files[:k]) & set(case["gold_files"]))  # type: ignore[call-overload]


def function_hit(case: dict[str, object], outcome: Outcome) -> bool:
    wanted = {
        (g.split("::")[0], g.split("::")[1].rsplit(".", 1)[-1])
        for g in case["gold_functions"]  # type: ignore[attr-defined]
    }
    return bool(wanted & set(outcome.places))


def metrics(cases: list[dict[str, object]], outcomes: list[Outcome], keep: Callable) -> str:  # type: ignore[type-arg]
    pairs = [(c, o) for c, o in zip(cases, outcomes, strict=True) if keep(c)]
    cells = [
        f"{100 * sum(file_hits(c, o, k) for c, o in pairs) / max(len(pairs), 1):.0f}" for k in KS
    ]
    scored = [(c, o) for c, o in pairs if c["gold_functions"]]
    function = 100 * sum(function_hit(c, o) for c, o in scored) / max(len(scored), 1)
    return f"{'/'.join(cells)} | {function:.0f}"


def objective(cases: list[dict[str, object]], outcomes: list[Outcome], projects: set[str]) -> float:
    """Macro mean over `projects` of (file Acc@1 + Acc@5) / 2."""
    total = 0.0
    for project in projects:
        pairs = [(c, o) for c, o in zip(cases, outcomes, strict=True) if c["package"] == project]
        hits = sum(file_hits(c, o, 1) + file_hits(c, o, 5) for c, o in pairs)
        total += hits / (2 * max(len(pairs), 1))
    return total / len(projects)


def choose(
    cases: list[dict[str, object]], results: dict[str, list[Outcome]], projects: set[str]
) -> Setting:
    """Each weight and rule at its best on `projects` (ties keep the module constant)."""
    base = objective(cases, results["module constants"], projects)
    weights: list[tuple[str, float]] = []
    for name, values in WEIGHTS.items():
        best, best_score = getattr(home_of(name), name), base
        for value in values:
            label = f"{name}={value:g}"
            if label in results and (score := objective(cases, results[label], projects)) > (
                best_score + 1e-9
            ):
                best, best_score = value, score
        if best != getattr(home_of(name), name):
            weights.append((name, best))
    rules = tuple(r for r in RULES if objective(cases, results[r], projects) > base + 1e-9)
    label = ", ".join([f"{n}={v:g}" for n, v in weights] + list(rules)) or "module constants"
    return Setting(label, tuple(weights), rules)


def load_extra(spec: str) -> list[dict[str, object]]:
    """`CASES=SOURCES`: the cases of a jsonl file (or every *.jsonl in a folder) whose
    release is unpacked under SOURCES/src/, each marked with that folder."""
    path, _, sources = spec.partition("=")
    files = sorted(Path(path).glob("*.jsonl")) if Path(path).is_dir() else [Path(path)]
    src = Path(sources or ".") / "src"
    found = []
    for file in files:
        for line in file.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                if (src / case["root"]).is_dir():
                    found.append({**case, "_src": str(src)})
    return found


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--src", type=Path, default=HERE / ".cache" / "devbench" / "src")
    cli.add_argument("--home", type=Path, default=HERE / ".cache" / "localize-home")
    cli.add_argument(
        "--extra", action="append", default=[], metavar="CASES=SOURCES",
        help="another cases file or folder, with the folder holding its src/",
    )  # fmt: skip
    args = cli.parse_args()
    cases = [c for c in focus.load_cases() if (args.src / c["root"]).is_dir()]
    for spec in args.extra:
        cases += load_extra(spec)
    projects = list(dict.fromkeys(str(c["package"]) for c in cases))
    if len(projects) < 2:
        raise SystemExit(
            f"leave-one-project-out needs cases of two projects or more, found {projects}: "
            "fetch the sources of another (../shared/bench/get_sources.sh) or pass --extra"
        )
    languages = list(dict.fromkeys(map(_language, cases)))
    started = time.perf_counter()
    settings = grid()
    results = run(cases, args.src, args.home, settings)
    print(f"grid: {len(settings)} settings x {len(cases)} cases in "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr)  # fmt: skip

    everyone = set(projects)
    chosen = {"in-sample (all projects)": choose(cases, results, everyone)}
    for held in projects:
        chosen[f"held out {held}"] = choose(cases, results, everyone - {held})
    folds = [chosen[f"held out {held}"] for held in projects]
    common = [w for w in folds[0].weights if all(w in f.weights for f in folds)]
    rules = tuple(r for r in folds[0].rules if all(r in f.rules for f in folds))
    label = ", ".join([f"{n}={v:g}" for n, v in common] + list(rules)) or "module constants"
    chosen["every fold agrees"] = Setting(label, tuple(common), rules)
    combined = [s for s in dict.fromkeys(chosen.values()) if s.label not in results]
    results |= run(cases, args.src, args.home, combined) if combined else {}

    head = "| {} | cases | file Acc@1/3/5/10 | function Acc@5 |\n|---|---|---|---|"
    print("\n## Choices\n")
    for fold, setting in chosen.items():
        print(f"- {fold}: {setting.label}")
    insample = chosen["in-sample (all projects)"]
    pooled = [results[chosen[f"held out {c['package']}"].label][n] for n, c in enumerate(cases)]
    print("\n## Held-out vs in-sample (file Acc@1/3/5/10, function Acc@5)\n")
    print(head.format("group: weights chosen on"))
    groups = [(f"language {lang}", _language_is(lang)) for lang in languages]
    if len(projects) <= 6:
        groups = [(f"project {p}", _project(p)) for p in projects] + groups
    for name, keep in [*groups, ("all", _always), ("with traceback", _traceback)]:
        count = sum(map(keep, cases))
        for label, outcomes in (
            ("module constants", results["module constants"]),
            ("all projects (in-sample)", results[insample.label]),
            ("each project held out", pooled),
            ("every fold agrees", results[chosen["every fold agrees"].label]),
        ):
            print(f"| {name}: {label} | {count} | {metrics(cases, outcomes, keep)} |")

    print("\n## Ablation by language (file Acc@1/3/5/10 | function Acc@5)\n")
    print("| setting | " + " | ".join(languages) + " | all |")
    print("|---|" + "---|" * (len(languages) + 1))
    for setting in settings:
        outcomes = results[setting.label]
        cells = [metrics(cases, outcomes, _language_is(lang)) for lang in languages]
        cells.append(metrics(cases, outcomes, _always))
        print(f"| {setting.label} | " + " | ".join(c.replace(" | ", " · ") for c in cells) + " |")


def _language(case: dict[str, object]) -> str:
    return str(case.get("language") or "python")


def _language_is(name: str) -> Callable[[dict[str, object]], bool]:
    return lambda case: _language(case) == name


def _project(name: str) -> Callable[[dict[str, object]], bool]:
    return lambda case: case["package"] == name


def _always(case: dict[str, object]) -> bool:
    return True


def _traceback(case: dict[str, object]) -> bool:
    return bool(case["has_traceback"])


if __name__ == "__main__":
    main()
