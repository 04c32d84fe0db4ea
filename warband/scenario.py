"""Scenario scripts: a Python file that declares its actors, parameters and outcome.

A scenario file creates one module-level :class:`Scenario` named ``scenario``::

    scenario = Scenario("ping_pong", ticks=20, params={"bots": 2})

    @scenario.actors
    def build(params: Params, seed: int) -> list[Actor]:
        return [Commander("commander", ...), *(Bot(f"bot-{i}") for i in ...)]

    @scenario.outcome
    def judge(result: RunResult, params: Params) -> Outcome:
        return Outcome(success=..., summary="...")

    if __name__ == "__main__":
        raise SystemExit(scenario.main())

A scenario with a world declares it too; the world then is the run's clock (id ``"world"``),
steps the simulation every tick, answers the agents' Acts and sends their Percepts::

    @scenario.world
    def make_world(params: Params, seed: int) -> World:
        return World.create(load_map("warzone"), seed=seed, mode=..., roster=...)

``warband run FILE`` and ``python FILE`` both run it. Every process of a multi-process run loads
the same file and builds the same actors from the same parameters and seed, then keeps the one
it was started for, so actor constructors must not open sockets or start work (``on_start`` is
where work begins).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from .exceptions import ConfigurationError
from .messaging.actor import Actor
from .messaging.clock import RunResult

ParamValue: TypeAlias = int | float | bool | str
Params: TypeAlias = Mapping[str, ParamValue]
ActorFactory: TypeAlias = Callable[[Params, int], list[Actor]]
WorldFactory: TypeAlias = Callable[[Params, int], Any]
"""Builds the world model (a ``warband.world.WorldModel``) for one run from params and seed."""


@dataclass(frozen=True)
class Outcome:
    """The scenario's verdict on a finished run, decided from what the actors reported."""

    success: bool
    summary: str
    details: dict[str, Any] = field(default_factory=dict)


OutcomeJudge: TypeAlias = Callable[[RunResult, Params], Outcome]


class Scenario:
    """A named run: its parameters with defaults, its actors, its tick count and its outcome."""

    def __init__(
        self,
        name: str,
        *,
        ticks: int = 50,
        params: Mapping[str, ParamValue] | None = None,
        description: str = "",
        clock_id: str | None = None,
    ) -> None:
        self.name = name
        self.ticks = ticks
        self.defaults: dict[str, ParamValue] = dict(params or {})
        self.description = description
        self._clock_id = clock_id
        self._factory: ActorFactory | None = None
        self._world_factory: WorldFactory | None = None
        self._judge: OutcomeJudge | None = None
        self.path: Path | None = None

    def actors(self, factory: ActorFactory) -> ActorFactory:
        """Decorator: register the function that builds the scenario's actors."""
        self._factory = factory
        return factory

    @property
    def clock_id(self) -> str:
        """The id of the actor that drives the ticks: ``"world"`` with a world, else ``"clock"``."""
        if self._clock_id is not None:
            return self._clock_id
        return "world" if self._world_factory is not None else "clock"

    @property
    def has_world(self) -> bool:
        """True when the scenario declared a world with ``@scenario.world``."""
        return self._world_factory is not None

    def world(self, factory: WorldFactory) -> WorldFactory:
        """Decorator: register the function that builds the world model for a run."""
        self._world_factory = factory
        return factory

    def build_world(self, params: Params, seed: int) -> Any:
        """The world model for one run (None when the scenario has no world)."""
        if self._world_factory is None:
            return None
        return self._world_factory(params, seed)

    def outcome(self, judge: OutcomeJudge) -> OutcomeJudge:
        """Decorator: register the function that judges a finished run."""
        self._judge = judge
        return judge

    def resolve_params(self, overrides: Mapping[str, str] | None = None) -> dict[str, ParamValue]:
        """The defaults with ``overrides`` (``--param KEY=VALUE`` text) converted and applied."""
        params = dict(self.defaults)
        for key, text in (overrides or {}).items():
            if key not in self.defaults:
                known = ", ".join(sorted(self.defaults)) or "(none)"
                raise ConfigurationError(
                    f"scenario {self.name!r} has no parameter {key!r}; known parameters: {known}"
                )
            params[key] = _convert(key, text, self.defaults[key])
        return params

    def build(self, params: Params, seed: int) -> list[Actor]:
        """Build the actors for one run; checks ids are unique and not reserved."""
        if self._factory is None:
            raise ConfigurationError(
                f"scenario {self.name!r} declares no actors; decorate a function with "
                "@scenario.actors"
            )
        actors = self._factory(params, seed)
        seen: set[str] = set()
        for actor in actors:
            if not isinstance(actor, Actor):
                raise ConfigurationError(
                    f"scenario {self.name!r}: @scenario.actors returned {actor!r}, not an Actor"
                )
            if actor.id in seen or actor.id == self.clock_id:
                raise ConfigurationError(
                    f"scenario {self.name!r}: agent id {actor.id!r} is used twice "
                    f"(or clashes with the clock id {self.clock_id!r})"
                )
            seen.add(actor.id)
        return actors

    def judge(self, result: RunResult, params: Params) -> Outcome:
        """The run's outcome; without a judge, success means every actor reported back."""
        if self._judge is not None:
            return self._judge(result, params)
        if result.missing:
            return Outcome(False, f"no final report from {', '.join(result.missing)}")
        return Outcome(True, f"{result.ticks} ticks completed")

    def main(self, argv: list[str] | None = None) -> int:
        """Run this scenario as ``warband run`` would: ``python scenarios/x.py [options]``."""
        from .cli import main as cli_main

        if self.path is None:
            self.path = Path(sys.modules["__main__"].__file__ or "")
        args = list(sys.argv[1:] if argv is None else argv)
        return cli_main(["run", str(self.path), *args])


def load_scenario(path: str | Path) -> Scenario:
    """Import the scenario file at ``path`` and return its module-level ``scenario``."""
    file = Path(path)
    if not file.is_file():
        raise ConfigurationError(f"scenario file {str(file)!r} does not exist")
    module_name = f"warband_scenario_{file.stem}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise ConfigurationError(f"{file} is not a Python file warband can import")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        raise ConfigurationError(f"{file}: importing the scenario failed: {error!r}") from error
    scenario = getattr(module, "scenario", None)
    if not isinstance(scenario, Scenario):
        raise ConfigurationError(
            f"{file} defines no module-level `scenario = Scenario(...)`; see scenarios/ping_pong.py"
        )
    scenario.path = file.resolve()
    return scenario


def _convert(key: str, text: str, default: ParamValue) -> ParamValue:
    try:
        if isinstance(default, bool):
            lowered = text.strip().lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValueError(text)
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float):
            return float(text)
    except ValueError:
        raise ConfigurationError(
            f"parameter {key!r} expects a {type(default).__name__} (default {default!r}), "
            f"got {text!r}"
        ) from None
    return text
