"""Classification by source: our labelled set and the developer benchmark, old vs new.

    PYTHONPATH=$PWD .venv/bin/python bench/classify_bench.py [--calibrate SPLIT] [--errors dev]
        [--uncertain]

Data: bench/data/classify/{dev,test,messy}.jsonl — short texts written for this benchmark
(not taken from any public app-review dataset), one JSON object a line: `text`, `title`?,
`rating`?, `source`, `label` (crash | bug | performance | feature_request | question |
praise | noise), `lang`. The test half was written before any tuning and is held out;
rules were tuned on dev only. `messy` (issue 27 §1): store reviews written the way real
ones are — mixed intents, sarcasm, stars that disagree with the text, typos, one-word
reviews, many languages — before the classifier was touched, each with `mix` tags; its
table breaks the reviews down by tag. "keys" is the plain keyword baseline (`KEYWORDS`).

Per split and source group:
- store reviews: bug recall and precision (bug = crash | bug | performance) and
  four-class accuracy (bug, feature_request, praise, other = question | noise);
- developer reports: the share of real defects called not actionable, and the share of
  requests and questions called actionable;
- the developer benchmark's problem statements (../shared/bench/cases.jsonl, all real
  bugs, source github): how many are called not actionable.
Plus leave-one-language-out numbers are not needed for rules that are not fitted; the
per-language table shows where they miss instead.

`--uncertain`: per confidence cut, how many texts of each split (and of the developer
benchmark) fall below it — each one a triage model call when one is configured
(`diagnoser.triage`) — and how many of the rules' misses are among them: what chose
`TRIAGE_BELOW`.

"Old" is `diagnoser/intake/classify.py` as on the `main` branch (loaded from `git show`
at run time, so the comparison is made in the same run); it has no `source` argument.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from diagnoser.intake.classify import classify, prior_for
from diagnoser.intake.report import Classification, Kind, Source
from diagnoser.intake.traces import find_traces
from diagnoser.triage import TRIAGE_BELOW

HERE = Path(__file__).parent
DATA = HERE / "data" / "classify"
CASES = HERE.parent.parent / "shared" / "bench" / "cases.jsonl"
DEFECTS = frozenset({"crash", "bug", "performance"})
SPLITS = ("dev", "test", "messy")
# fmt: off
KEYWORDS = (
    "crash", "bug", "error", "freez", "broken", "not working", "doesn't work", "doesnt work",
    "won't open", "wont open", "stopped working", "slow", "lag", "fix", "glitch", "problem",
    "absturz", "stürzt", "fehler", "funktioniert nicht", "langsam",  # de
    "falla", "se cierra", "no funciona", "lento",  # es, and "error"
    "plante", "ne marche pas", "ne fonctionne pas", "lent",  # fr, and "bug"
    "trava", "não funciona", "nao funciona", "erro",  # pt, and "lento"
    "落ち", "クラッシュ", "不具合", "バグ", "エラー", "重い",  # ja
    "вылет", "ошибк", "не работает", "тормоз",  # ru
    "闪退", "崩溃", "错误", "卡",  # zh
)
# fmt: on
"""The plain keyword baseline for store reviews: a defect when the text holds any of these
(lower-cased substring) — a list anyone would write, never tuned on the sets."""

Classifier = Callable[[dict[str, object]], Classification]


def keywords(row: dict[str, object]) -> Classification:
    """The plain baseline: `bug` when a defect keyword occurs, else `praise` (a review that
    names no defect; the four-class cell of this baseline means little)."""
    text = str(row["text"]).lower()
    kind = Kind.BUG if any(k in text for k in KEYWORDS) else Kind.PRAISE
    return Classification(kind=kind, confidence=1.0)


def load(split: str) -> list[dict[str, object]]:
    with (DATA / f"{split}.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def four_class(kind: str) -> str:
    if kind in DEFECTS:
        return "bug"
    return kind if kind in {"feature_request", "praise"} else "other"


def new_classifier(row: dict[str, object]) -> Classification:
    text = str(row["text"])
    return classify(
        text,
        title=row.get("title"),  # type: ignore[arg-type]
        rating=row.get("rating"),  # type: ignore[arg-type]
        traces=find_traces(text).traces,
        source=str(row["source"]),
    )


def old_classifier() -> Classifier:
    """`classify` from `main`, imported from a temporary copy."""
    source = subprocess.run(
        ["git", "show", "main:diagnoser/intake/classify.py"],
        capture_output=True, text=True, check=True, cwd=HERE.parent,
    ).stdout  # fmt: skip
    path = Path(tempfile.mkdtemp(prefix="classify-main-")) / "classify_main.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("classify_main", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)

    def run(row: dict[str, object]) -> Classification:
        text = str(row["text"])
        result: Classification = module.classify(
            text, title=row.get("title"), rating=row.get("rating"),
            traces=find_traces(text).traces,
        )  # fmt: skip
        return result

    return run


def review_metrics(rows: list[dict[str, object]], kinds: list[str]) -> dict[str, float]:
    truth = [four_class(str(r["label"])) for r in rows]
    said = [four_class(k) for k in kinds]
    tp = sum(t == s == "bug" for t, s in zip(truth, said, strict=True))
    return {
        "n": len(rows),
        "bug_recall": tp / max(1, truth.count("bug")),
        "bug_precision": tp / max(1, said.count("bug")),
        "acc4": sum(t == s for t, s in zip(truth, said, strict=True)) / max(1, len(rows)),
    }


def developer_metrics(rows: list[dict[str, object]], kinds: list[str]) -> dict[str, float]:
    defects = [k for r, k in zip(rows, kinds, strict=True) if r["label"] in DEFECTS]
    others = [k for r, k in zip(rows, kinds, strict=True) if r["label"] not in DEFECTS]
    return {
        "n": len(rows),
        "defects": len(defects),
        "defects_skipped": sum(k not in DEFECTS for k in defects) / max(1, len(defects)),
        "asks": len(others),
        "asks_investigated": sum(k in DEFECTS for k in others) / max(1, len(others)),
    }


def group(row: dict[str, object]) -> str:
    return prior_for(str(row["source"]), row.get("rating")).value  # type: ignore[arg-type]


def run_split(split: str, classifiers: dict[str, Classifier]) -> list[str]:
    rows = load(split)
    out = [f"\n{split}: {len(rows)} texts"]
    kinds = {name: [f(r).kind.value for r in rows] for name, f in classifiers.items()}
    reviews = [i for i, r in enumerate(rows) if group(r) == "review"]
    developer = [i for i, r in enumerate(rows) if group(r) == "developer"]
    for name in classifiers:
        rm = review_metrics([rows[i] for i in reviews], [kinds[name][i] for i in reviews])
        dm = developer_metrics([rows[i] for i in developer], [kinds[name][i] for i in developer])
        exact = sum(k == r["label"] for k, r in zip(kinds[name], rows, strict=True))
        out.append(
            f"  {name:4} reviews (n={rm['n']}): bug recall {rm['bug_recall']:.2f} "
            f"precision {rm['bug_precision']:.2f} 4-class acc {rm['acc4']:.2f} | "
            f"developer (n={dm['n']}): defects not actionable {dm['defects_skipped']:.1%} "
            f"of {dm['defects']}, requests/questions investigated "
            f"{dm['asks_investigated']:.1%} of {dm['asks']} | 7-class exact "
            f"{exact / len(rows):.2f}"
        )
    by_lang: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_lang[str(r["lang"])].append(i)
    cells = []
    for lang, idx in sorted(by_lang.items(), key=lambda kv: -len(kv[1])):
        right = {
            name: sum(four_class(kinds[name][i]) == four_class(str(rows[i]["label"])) for i in idx)
            for name in classifiers
        }
        cells.append(f"{lang} {'/'.join(str(right[n]) for n in classifiers)} of {len(idx)}")
    out.append(f"  4-class right by language ({'/'.join(classifiers)}): " + ", ".join(cells))
    if any("mix" in r for r in rows):
        out += mix_report(rows, reviews, kinds)
    return out


def mix_report(
    rows: list[dict[str, object]], reviews: list[int], kinds: dict[str, list[str]]
) -> list[str]:
    """Store reviews by what makes them hard (`mix` tags: mixed intents, sarcasm, stars that
    disagree, typos, one word, languages…): bug recall / precision and four-class accuracy
    of each classifier."""
    out = ["  store reviews by mix (classifier: bug recall / precision, 4-class acc):"]
    tags = Counter(t for i in reviews for t in rows[i].get("mix", []))  # type: ignore[attr-defined]
    for tag, count in tags.most_common():
        idx = [i for i in reviews if tag in rows[i].get("mix", [])]  # type: ignore[operator]
        cells = []
        for name in kinds:
            m = review_metrics([rows[i] for i in idx], [kinds[name][i] for i in idx])
            cells.append(f"{name} {m['bug_recall']:.2f}/{m['bug_precision']:.2f}, {m['acc4']:.2f}")
        out.append(f"    {tag:17} n={count:3}  " + " | ".join(cells))
    return out


def run_cases(classifiers: dict[str, Classifier]) -> list[str]:
    if not CASES.exists():
        return [f"\n{CASES} missing: developer benchmark skipped"]
    rows: list[dict[str, object]] = []
    with CASES.open(encoding="utf-8") as lines:
        for line in lines:
            case = json.loads(line)
            rows.append({"text": case["problem_statement"], "source": Source.GITHUB.value})
    out = [f"\ndeveloper benchmark: {len(rows)} problem statements (all real bugs, github)"]
    for name, f in classifiers.items():
        kinds = Counter(f(r).kind.value for r in rows)
        skipped = sum(n for k, n in kinds.items() if k not in DEFECTS)
        detail = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()) if k not in DEFECTS)
        out.append(f"  {name:4} not actionable: {skipped} ({detail or 'none'})")
    return out


def calibrate(rows: Iterable[dict[str, object]]) -> list[str]:
    """Per deciding rule: how often the verdict it reached was right (four classes for
    reviews, defect vs not for developer reports) — what RULE_CONFIDENCE should say."""
    seen: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        verdict = new_classifier(row)
        rule = next((s[5:] for s in verdict.signals if s.startswith("rule:")), "other")
        if group(row) == "developer":
            right = (verdict.kind.value in DEFECTS) == (row["label"] in DEFECTS)
        else:
            right = four_class(verdict.kind.value) == four_class(str(row["label"]))
        seen[f"{group(row)}/{rule}"].append(right)
    return [f"  {rule:28} {sum(v) / len(v):.2f} of {len(v)}" for rule, v in sorted(seen.items())]


def right(row: dict[str, object], verdict: Classification) -> bool:
    """Four classes for reviews, defect or not for developer reports (as `calibrate`)."""
    if group(row) == "developer":
        return (verdict.kind.value in DEFECTS) == (row["label"] in DEFECTS)
    return four_class(verdict.kind.value) == four_class(str(row["label"]))


def uncertain() -> list[str]:
    """Per cut: texts under it (asked of a model) and the rules' misses among them."""
    verdicts = {split: [(r, new_classifier(r)) for r in load(split)] for split in SPLITS}
    cases = []
    if CASES.exists():
        with CASES.open(encoding="utf-8") as lines:
            cases = [
                new_classifier({"text": json.loads(line)["problem_statement"], "source": "github"})
                for line in lines
            ]
    cuts = sorted({v.confidence for pairs in verdicts.values() for _, v in pairs} | {1.0})
    out = [
        "under each cut: texts a model is asked about (share), the rules' misses among them "
        f"/ all their misses (default cut: {TRIAGE_BELOW})"
    ]
    for cut in cuts:
        cells = []
        for split, pairs in verdicts.items():
            below = [right(r, v) for r, v in pairs if v.confidence < cut]
            misses = sum(not right(r, v) for r, v in pairs)
            cells.append(
                f"{split} {len(below)} of {len(pairs)} ({len(below) / len(pairs):.0%}), "
                f"misses {below.count(False)}/{misses}"
            )
        if cases:
            cells.append(f"benchmark {sum(v.confidence < cut for v in cases)} of {len(cases)}")
        out.append(f"  < {cut:.2f}: " + " | ".join(cells))
    return out


def errors(split: str) -> list[str]:
    out = []
    for row in load(split):
        verdict = new_classifier(row)
        if four_class(verdict.kind.value) != four_class(str(row["label"])):
            out.append(
                f"  [{row['source']} {row.get('rating', '-')}] {row['label']} -> "
                f"{verdict.kind.value} {verdict.signals}: {str(row['text'])[:90]!r}"
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calibrate", choices=SPLITS, help="per-rule accuracy on a split")
    parser.add_argument("--errors", choices=SPLITS, help="list the misses on a split")
    parser.add_argument("--uncertain", action="store_true", help="texts under each confidence")
    args = parser.parse_args()
    if args.uncertain:
        print("\n".join(uncertain()))
        return
    if args.errors:
        print("\n".join(errors(args.errors)))
        return
    if args.calibrate:
        print(f"{args.calibrate}, per deciding rule:")
        print("\n".join(calibrate(load(args.calibrate))))
        return
    classifiers: dict[str, Classifier] = {
        "old": old_classifier(), "new": new_classifier, "keys": keywords,
    }  # fmt: skip
    lines: list[str] = []
    for split in SPLITS:
        lines += run_split(split, classifiers)
    lines += run_cases(classifiers)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
