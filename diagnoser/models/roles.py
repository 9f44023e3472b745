"""The roles' models — the explorer's chain, the formatter, the triage model — resolved
from the settings at start-up (`resolve_models`), with every explicit base URL to probe.

A flag given (`--model`, `--formatter-model`, `--fallback-models`) wins over its
setting; the first unusable model stops the start with one line naming what to set.

The formatter is the one set (`DIAGNOSER_FORMATTER_MODEL`), else — for a real explorer —
the explorer's own models: one model configured is enough for a Finding whatever shape
its report takes. An `offline` explorer needs none: it writes the template itself. The
triage model (`diagnoser.triage`) is the formatter set unless `DIAGNOSER_TRIAGE_MODEL`
names one, on the formatter's endpoint; none when triage is off.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic_ai.models import Model
from pydantic_ai.models.fallback import FallbackModel

from diagnoser.errors import ConfigError
from diagnoser.models.chain import OFFLINE, ModelChoice, is_offline
from diagnoser.models.endpoint import Endpoint, Probe, probes_for
from diagnoser.models.resolve import resolve_model
from diagnoser.settings import Settings

__all__ = ["TRIAGE_NOT_OFFLINE", "RoleModels", "explorers_formatter", "resolve_models"]

TRIAGE_NOT_OFFLINE = (
    f"cannot be '{OFFLINE}': the rules already are the offline triage; leave it "
    "unset, or set DIAGNOSER_TRIAGE_ENABLED=false"
)
"""Said of a triage model set to `offline` (at start-up and by `diagnoser doctor`)."""


@dataclass(frozen=True, slots=True)
class RoleModels:
    """The models of every role, resolved; what the CLI and the service run with."""

    explorer: ModelChoice = field(default_factory=ModelChoice)
    formatter: Model | None = None
    """Structures a report off the template; None: such a run fails. Resolved from
    settings, it is the one set, else a real explorer's own (`explorers_formatter`)."""
    triage: Model | None = None
    """Refines an uncertain classification (`diagnoser.triage`); None: the rules decide."""
    probes: tuple[Probe, ...] = ()
    """Explicit base URLs, for `check_endpoints`."""

    @classmethod
    def using(
        cls, model: Model, formatter: Model | None = None, triage: Model | None = None
    ) -> RoleModels:
        return cls(ModelChoice.of(model), formatter, triage)


def resolve_models(
    settings: Settings,
    *,
    model: str | None = None,
    formatter_model: str | None = None,
    fallback_models: str | None = None,
) -> RoleModels:
    """Every role's models from `settings`; a flag given (`--model`…) wins over its
    setting. ConfigError, one line naming what to set, on the first unusable one.

    With no formatter set, a real explorer's own models are the formatter
    (`explorers_formatter`); an `offline` explorer needs none."""
    chain = _chain(settings, model, fallback_models)
    explorer = Endpoint.explorer(settings)
    built: list[Model] = []
    probes: list[Probe] = []
    for spec, setting in chain:
        if is_offline(spec):  # last: `_chain` said so
            continue
        built.append(resolve_model(spec, setting=setting, endpoint=explorer,
                                   settings=settings.explorer_settings()))  # fmt: skip
        probes += probes_for(spec, setting, built[-1], explorer)
    choice = ModelChoice(tuple(built), offline=is_offline(chain[-1][0]))
    spec_, setting_ = _named(
        formatter_model, "--formatter-model", settings.formatter_model, "DIAGNOSER_FORMATTER_MODEL"
    )
    formatter = None
    if spec_ is not None:
        endpoint = Endpoint.formatter(settings)
        formatter = resolve_model(
            spec_, setting=setting_, endpoint=endpoint, settings=settings.formatter_settings(),
            offline_allowed=False,
        )  # fmt: skip
        probes += probes_for(spec_, setting_, formatter, endpoint)
    # Triage follows a formatter someone set, not the explorer's own: that one is called
    # only when a report drifts, triage on every uncertain report — a cost not asked for.
    triage = _triage(settings, formatter, probes)
    if formatter is None:
        formatter = explorers_formatter(settings, chain)
    return RoleModels(choice, formatter, triage, tuple(probes))


def explorers_formatter(settings: Settings, chain: Sequence[tuple[str, str]]) -> Model | None:
    """The formatter when none is set: the explorer's real models, in the order
    configured, on the explorer's endpoint with the formatter's model settings (a
    temperature of 0, its token and time bounds); None when the explorer is `offline`
    alone, whose report is always in the template.

    The explorer's whole chain rather than the one model that answered its run: it is
    known at start-up (resolved once, shown by `diagnoser doctor`, no state carried
    between runs of the service), and a provider that fails while structuring falls back
    as it would while exploring. `offline` is left out: it writes the template, it
    cannot read another model's report — and when it answered the run, its report is in
    the template and the parser structures it. The cost: a provider that failed during
    the exploration is asked first again (one more timeout at most), as `RunFallback`'s
    order is one run's and this chain is shared by every run. (Its providers were
    already probed with the explorer's: no probes of its own.)"""
    real = [(spec, setting) for spec, setting in chain if not is_offline(spec)]
    endpoint = Endpoint.explorer(settings)
    models = [
        resolve_model(spec, setting=setting, endpoint=endpoint,
                      settings=settings.formatter_settings())
        for spec, setting in real
    ]  # fmt: skip
    if not models:
        return None
    return models[0] if len(models) == 1 else FallbackModel(*models)


def _chain(
    settings: Settings, model: str | None, fallback_models: str | None
) -> list[tuple[str, str]]:
    """The explorer's specs in order, each with the name to blame; ConfigError when
    `offline` is not last (it never fails: what follows it is never tried)."""
    first, blame = _named(model, "--model", settings.model, "DIAGNOSER_MODEL")
    chain = [(first or "", blame)]
    if fallback_models is not None:
        chain += [(s.strip(), "--fallback-models") for s in fallback_models.split(",") if s.strip()]
    else:
        chain += [(spec, "DIAGNOSER_FALLBACK_MODELS") for spec in settings.fallback_models]
    for position, (spec, setting) in enumerate(chain[:-1]):
        if is_offline(spec):
            later, blamed = chain[position + 1]
            raise ConfigError(
                f"{blamed}: {later!r} comes after '{OFFLINE}' ({setting}), which never "
                f"fails, so it is never tried; put '{OFFLINE}' last"
            )
    return chain


def _named(
    flag_value: str | None, flag: str, setting_value: str | None, variable: str
) -> tuple[str | None, str]:
    """A flag's spec, else the setting's, with the name to blame for a bad one."""
    return (flag_value, flag) if flag_value is not None else (setting_value, variable)


def _triage(settings: Settings, formatter: Model | None, probes: list[Probe]) -> Model | None:
    """The triage model: `DIAGNOSER_TRIAGE_MODEL` on the formatter's endpoint, else the
    formatter itself; None when triage is off or there is neither (adds its probe)."""
    if not settings.triage_enabled:
        return None
    spec = settings.triage_model
    if spec is None:
        return formatter
    setting = "DIAGNOSER_TRIAGE_MODEL"
    if is_offline(spec):
        raise ConfigError(f"{setting} {TRIAGE_NOT_OFFLINE}")
    endpoint = Endpoint.formatter(settings)
    model = resolve_model(
        spec, setting=setting, endpoint=endpoint, settings=settings.formatter_settings()
    )
    probes += probes_for(spec, setting, model, endpoint)
    return model
