"""Model specs → PydanticAI models: the one place a model string is checked.

    resolve_model("offline", setting="--model")        # "offline": built per run
    resolve_model("openai:gpt-4o", setting="--model")  # an OpenAIResponsesModel, or ConfigError

`offline` stays a name, because its model is built per run from the report and the
workspace. Every other string must resolve here, at start-up — provider package
installed, key set — so a typo or a missing key is one line naming the setting, never a
traceback in the middle of a run.
"""

from __future__ import annotations

from pydantic_ai.models import Model, infer_model

from diagnoser.errors import ConfigError
from diagnoser.offline import MODEL_NAME

EXAMPLE_MODEL = "openai:gpt-4o"
"""Shown in error messages as the shape of a model string."""


def resolve_model(spec: str, *, setting: str, offline: bool = True) -> Model | str:
    """`MODEL_NAME` for the embedded model, else the PydanticAI model `spec` names.

    Raises ConfigError naming `setting` (a flag or an environment variable) when `spec` is
    empty, unknown, or unusable on this machine — or is the embedded model where it cannot
    serve (`offline=False`: it investigates, it cannot structure another model's report).
    """
    name = spec.strip()
    if not name:
        raise ConfigError(
            f"{setting} is empty; use '{MODEL_NAME}' or a PydanticAI model string "
            f"such as {EXAMPLE_MODEL}"
        )
    if name == MODEL_NAME:
        if not offline:
            raise ConfigError(
                f"{setting} cannot be '{MODEL_NAME}': the embedded investigator writes the "
                "template itself; leave it unset, or name a model such as " + EXAMPLE_MODEL
            )
        return MODEL_NAME
    try:
        return infer_model(name)
    except Exception as exc:  # UserError, ImportError, ValueError…: each provider differs
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            f"{setting} {name!r} is not usable: {reason} "
            f"(use '{MODEL_NAME}' or a string such as {EXAMPLE_MODEL})"
        ) from None
