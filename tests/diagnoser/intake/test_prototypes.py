"""Store reviews the rules are unsure of, decided by the nearest labelled prototypes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from diagnoser.encoder import encoder
from diagnoser.intake import prototypes as prototypes_module
from diagnoser.intake.classify import classify
from diagnoser.intake.prototypes import (
    SURE,
    TEXTS,
    K,
    Prototypes,
    digest,
    prototypes,
    refine,
    unsure_review,
)
from diagnoser.intake.report import Classification, Kind

HELD_OUT = Path(__file__).parents[3] / "bench" / "data" / "classify"


def _unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_the_nearest_weighted_group_wins_then_its_label() -> None:
    labels = (Kind.CRASH, Kind.BUG, Kind.PERFORMANCE, Kind.PRAISE, Kind.PRAISE, Kind.NOISE)
    vectors = np.stack(
        [_unit(1, 0.05), _unit(1, 0.3), _unit(1, 0.35), _unit(1, 0.2), _unit(1, 0.2), _unit(0, 1)]
    )
    vote = Prototypes(labels, vectors).vote(_unit(1, 0), k=5)
    # three defects outweigh two praises, though no single defect label has two votes
    assert vote.kind is Kind.CRASH
    assert 0.55 < vote.share < 0.65
    assert vote.nearest == pytest.approx(float(vectors[0][0]))
    assert Prototypes(labels, vectors).vote(_unit(0, 1), k=1).kind is Kind.NOISE


def test_shipped_vectors_are_those_of_the_shipped_texts() -> None:
    model = encoder()
    assert model is not None
    with np.load(prototypes_module.VECTORS) as data:
        assert str(data["digest"]) == digest(), "run: python -m diagnoser.intake.prototypes"
        shipped = np.asarray(data["vectors"], dtype=np.float32)
    rows = [json.loads(line) for line in TEXTS.read_text(encoding="utf-8").splitlines()]
    assert shipped.shape == (len(rows), 384)
    sample = [0, len(rows) // 2, len(rows) - 1]
    fresh = model.query([rows[i]["text"] for i in sample])
    np.testing.assert_allclose(shipped[sample], fresh, atol=2e-3)


def test_prototypes_are_labelled_reviews_none_of_them_held_out() -> None:
    rows = [json.loads(line) for line in TEXTS.read_text(encoding="utf-8").splitlines()]
    assert {row["label"] for row in rows} == {kind.value for kind in Kind}
    held_out = {
        json.loads(line)["text"]
        for split in ("test", "messy")
        for line in (HELD_OUT / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
    }
    assert not held_out & {row["text"] for row in rows}
    assert sum(row["lang"] != "en" for row in rows) > len(rows) / 4


def test_stale_vectors_are_embedded_again(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    model = encoder()
    assert model is not None
    texts = tmp_path / "reviews.jsonl"
    rows = [
        ("crashes on start", "crash"),
        ("love it", "praise"),
        ("add dark mode", "feature_request"),
    ]
    texts.write_text("".join(json.dumps({"text": t, "label": k}) + "\n" for t, k in rows))
    monkeypatch.setattr(prototypes_module, "TEXTS", texts)  # the shipped vectors: of others
    prototypes_module._prototypes.cache_clear()
    try:
        fresh = prototypes(model)
    finally:
        prototypes_module._prototypes.cache_clear()
    assert fresh.labels == (Kind.CRASH, Kind.PRAISE, Kind.FEATURE_REQUEST)
    np.testing.assert_allclose(fresh.vectors, model.query([t for t, _ in rows]), atol=1e-5)


def test_an_unsure_review_takes_the_prototypes_verdict() -> None:
    # a failure in words the rules do not list: a complaint naming nothing, to the rules
    text = "my lists stay empty whatever I do, the spinner just spins"
    rules = classify(text, rating=2, source="google_play")
    assert unsure_review(rules), rules
    refined = refine(rules, text, encoder())
    assert refined.actionable, refined
    assert refined.signals[0].startswith("prototypes:")
    assert f"of {K}" in refined.signals[0]
    assert f"was:{rules.kind.value}" in refined.signals
    assert refined.confidence < SURE


def test_a_review_in_another_language_the_rules_do_not_read() -> None:
    text = "uygulama her açtığımda kapanıyor, hiçbir şey yapamıyorum"  # tr: closes on open
    rules = classify(text, rating=1, source="google_play")
    assert not rules.actionable
    assert refine(rules, text, encoder()).actionable


def test_sure_verdicts_other_sources_and_no_encoder_stay_as_they_are() -> None:
    crash = classify("It crashes every time I open a photo", rating=5, source="google_play")
    assert crash.confidence >= SURE
    assert refine(crash, "It crashes every time I open a photo", encoder()) == crash
    github = Classification(kind=Kind.NOISE, confidence=0.4, prior="developer")
    assert refine(github, "app closes on start", encoder()) == github
    unsure = Classification(kind=Kind.NOISE, confidence=0.4, prior="review")
    assert refine(unsure, "app closes on start", None) == unsure


def test_agreeing_prototypes_add_their_signal_only() -> None:
    text = "Scam. They charge you every month and support never answers."
    rules = classify(text, rating=1, source="app_store")
    assert unsure_review(rules) and rules.kind is Kind.NOISE, rules
    refined = refine(rules, text, encoder())
    assert refined.kind is Kind.NOISE
    assert refined.confidence == rules.confidence
    assert refined.signals[: len(rules.signals)] == rules.signals
    assert refined.signals[-1].startswith("prototypes:noise")
