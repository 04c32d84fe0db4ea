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
        from warband.cli import run_file

        raise SystemExit(run_file(__file__))

A scenario with a world declares it too; the world then is the run's clock (id ``"world"``),
steps the simulation every tick, answers the agents' Acts and sends their Percepts::

    @scenario.world
    def make_world(params: Params, seed: int) -> World:
        return World.create(load_map("warzone"), seed=seed, mode=..., roster=...)

``warband run FILE`` and ``python FILE`` both run it (the second through
:func:`warband.cli.run_file`, which takes the same options). Every process of a multi-process
run loads the same file and builds the same actors from the same parameters and seed, then
keeps the one it was started for, so actor constructors must not open sockets or start work
(``on_start`` is where work begins).
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, TypeAlias

from ._bundled import bundled_file, bundled_scenarios
from ._paths import wrong_kind
from .exceptions import ConfigurationError, WarbandError
from .messaging.actor import Actor
from .messaging.addresses import check_actor_id
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
ObserverFactory: TypeAlias = Callable[[Params], Mapping[str, str]]
"""Names the actors that perceive their team's common knowledge without a body (commanders)."""
OutsideFactory: TypeAlias = Callable[[Params], Sequence[str]]
"""Names the ids of a run's outside participants (clients in another language)."""
PlacementFactory: TypeAlias = Callable[[Params], Sequence[Sequence[str]]]
"""Names the groups of agents that share a worker process under ``warband run --workers N``."""
DepartureJudge: TypeAlias = Callable[[str, str, Params], "str | None"]
"""Decides, when an agent leaves a run for good, whether the run goes on (None) or ends there
(a reason)."""


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
        outside: Sequence[str] = (),
        counts: Sequence[str] = (),
    ) -> None:
        self.name = name
        self.counts = tuple(counts)
        """Outcome details that count something (``"kills"``: a dict of counts per team, or one
        number): a run without one counts 0 there. ``warband sweep`` averages them over every
        run, where it averages any other detail over the runs that reported it."""
        self.ticks = ticks
        self.defaults: dict[str, ParamValue] = dict(params or {})
        self.description = description
        self._clock_id = clock_id
        self._factory: ActorFactory | None = None
        self._world_factory: WorldFactory | None = None
        self._judge: OutcomeJudge | None = None
        self._departure: DepartureJudge | None = None
        self._observer_factory: ObserverFactory | None = None
        self._outside = tuple(outside)
        self._outside_factory: OutsideFactory | None = None
        self._placement_factory: PlacementFactory | None = None
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

    def outsiders(self, factory: OutsideFactory) -> OutsideFactory:
        """Decorator: register the function that names, for a run's params, the ids of the
        outside participants (see :meth:`outside_participants`); ``Scenario(outside=[...])``
        says it for every run."""
        self._outside_factory = factory
        return factory

    def outside_participants(self, params: Params) -> list[str]:
        """Ids that take part in a run without being built by ``@scenario.actors``: clients in
        another language that join over the wire, speaking PROTOCOL.md (``Scenario(outside=
        ["nora"])`` or ``@scenario.outsiders``).

        With the scenario's agents and its clock they make the run's membership: the clock
        declares them to the broker, waits for each to register and send ``_Ready`` (up to
        ``--start-timeout``) before the first tick, and then treats it like any participant
        (it takes part in every tick with ``TickDone``). Raises :class:`ConfigurationError` for
        an id that is not a valid agent id or is the clock's.
        """
        ids = list(self._outside)
        if self._outside_factory is not None:
            try:
                ids = list(self._outside_factory(params))
            except Exception as error:
                raise self._factory_failed(
                    "@scenario.outsiders", self._outside_factory, error
                ) from error
        for outsider in ids:
            try:
                check_actor_id(outsider)
            except WarbandError as error:
                raise ConfigurationError(
                    f"scenario {self.name!r}: outside participant {outsider!r}: {error}"
                ) from None
            if outsider == self.clock_id:
                raise ConfigurationError(
                    f"scenario {self.name!r}: outside participant {outsider!r} is the clock's id"
                )
        return sorted(set(ids))

    @property
    def has_world(self) -> bool:
        """True when the scenario declared a world with ``@scenario.world``."""
        return self._world_factory is not None

    def world(self, factory: WorldFactory) -> WorldFactory:
        """Decorator: register the function that builds the world model for a run."""
        self._world_factory = factory
        return factory

    def observers(self, factory: ObserverFactory) -> ObserverFactory:
        """Decorator: register the function that names the actors without a body in the world
        that perceive what their team knows (a commander): ``params -> {actor id: team}``."""
        self._observer_factory = factory
        return factory

    def build_observers(self, params: Params) -> dict[str, str]:
        """The world's observers for one run (see :meth:`observers`); empty without a factory."""
        if self._observer_factory is None:
            return {}
        try:
            return dict(self._observer_factory(params))
        except Exception as error:
            raise self._factory_failed(
                "@scenario.observers", self._observer_factory, error
            ) from error

    def build_world(self, params: Params, seed: int) -> Any:
        """The world model for one run (None when the scenario has no world).

        Raises :class:`ConfigurationError` naming the scenario and the factory when the factory
        raises (a parameter value it rejects, or a bug: then the message names file and line).
        """
        if self._world_factory is None:
            return None
        try:
            return self._world_factory(params, seed)
        except Exception as error:
            raise self._factory_failed("@scenario.world", self._world_factory, error) from error

    def placement(self, factory: PlacementFactory) -> PlacementFactory:
        """Decorator: register the function that names, for a run's params, the groups of agent
        ids that should share a worker process under ``warband run --workers N`` (a team, a
        squad with its bots): ``params -> [[id, ...], ...]``. Without one, agents are dealt to
        the workers round-robin. How groups meet workers: :mod:`warband.placement`."""
        self._placement_factory = factory
        return factory

    def placement_groups(self, params: Params) -> list[list[str]] | None:
        """The groups of :meth:`placement` for one run, or None without a factory."""
        if self._placement_factory is None:
            return None
        try:
            groups = list(self._placement_factory(params))
        except Exception as error:
            raise self._factory_failed(
                "@scenario.placement", self._placement_factory, error
            ) from error
        where = f"scenario {self.name!r}: @scenario.placement {_name_of(self._placement_factory)}()"
        for number, group in enumerate(groups, start=1):
            if isinstance(group, str) or not isinstance(group, Sequence):
                raise ConfigurationError(
                    f"{where}: group {number} is {group!r}, not a list of agent ids; return a "
                    "list of lists, e.g. [['red-1', 'red-2'], ['blue-1']]"
                )
        return [list(group) for group in groups]

    def departure(self, judge: DepartureJudge) -> DepartureJudge:
        """Decorator: register the function called with (agent id, reason, params) when an agent
        leaves the run for good (it stopped, failed to start, or its process or host is gone).

        It returns None to let the run go on without the agent, or a reason to end the run there
        (reported as not completed, with that reason). Without one, every run goes on, and the
        outcome judge sees who left in ``RunResult.departed``.
        """
        self._departure = judge
        return judge

    def on_departure(self, agent: str, reason: str, params: Params) -> str | None:
        """What the scenario says when ``agent`` left: None (go on) or why the run must end."""
        if self._departure is None:
            return None
        return self._departure(agent, reason, params)

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
        try:
            actors = self._factory(params, seed)
        except Exception as error:
            raise self._factory_failed("@scenario.actors", self._factory, error) from error
        where = f"scenario {self.name!r}: @scenario.actors {_name_of(self._factory)}()"
        if not isinstance(actors, list | tuple):
            raise ConfigurationError(f"{where} returned {actors!r}, not a list of Actors")
        if not actors:
            raise ConfigurationError(
                f"{where} returned no actors; a run needs at least one (the clock alone has "
                "nobody to tick)"
            )
        actors = list(actors)
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

    def _factory_failed(
        self, decorator: str, factory: Callable[..., Any], error: Exception
    ) -> ConfigurationError:
        where = f"scenario {self.name!r}: {decorator} {_name_of(factory)}()"
        if isinstance(error, WarbandError):
            return ConfigurationError(f"{where}: {error}")
        return ConfigurationError(
            f"{where} raised {type(error).__name__} at {_raised_at(error)}: {error}"
        )

    def judge(self, result: RunResult, params: Params) -> Outcome:
        """The run's outcome; without a judge, success means every actor reported back.

        Raises :class:`ConfigurationError` naming the scenario and its judge when the judge
        raises (with file and line) or returns anything but an :class:`Outcome`.
        """
        if self._judge is not None:
            try:
                outcome = self._judge(result, params)
            except Exception as error:
                raise self._factory_failed("@scenario.outcome", self._judge, error) from error
            if not isinstance(outcome, Outcome):
                where = f"scenario {self.name!r}: @scenario.outcome {_name_of(self._judge)}()"
                raise ConfigurationError(
                    f"{where} returned {outcome!r}, not an Outcome; return "
                    'Outcome(success, "summary", details)'
                )
            return outcome
        if result.missing:
            return Outcome(False, f"no final report from {', '.join(result.missing)}")
        return Outcome(True, f"{result.ticks} ticks completed")


def load_scenario(path: str | Path) -> Scenario:
    """Import the scenario file at ``path`` and return its module-level ``scenario``.

    A bare name that is no file here (``ping_pong``, ``ping_pong.py``) is the bundled scenario of
    that name (``warband scenarios`` lists them), so an installed wheel runs them too.

    Each file gets its own module (named after its stem and a digest of its full path), so two
    files with the same name do not replace each other. The file this process runs as
    ``__main__`` (``python scenarios/x.py``) is not imported a second time: its ``scenario`` is
    returned, so each of its classes exists once. Raises :class:`ConfigurationError` for a
    missing file, a file that does not import (naming the file and line), or one that defines
    no ``scenario``.
    """
    file = bundled_file(path) or Path(path)
    problem = wrong_kind(file, "file")
    if problem is not None:
        raise ConfigurationError(f"scenario file {str(file)!r} {problem}{_bundled_hint(file)}")
    resolved = file.resolve()
    module = _main_module_of(resolved) or _import_file(file, resolved)
    scenario = getattr(module, "scenario", None)
    if not isinstance(scenario, Scenario):
        raise ConfigurationError(
            f"{file} defines no module-level `scenario = Scenario(...)`; see scenarios/ping_pong.py"
        )
    scenario.path = resolved
    return scenario


def _bundled_hint(file: Path) -> str:
    """Where to find the scenarios when a path to one is not there (a wheel has no checkout)."""
    names = bundled_scenarios()
    if not names:
        return ""
    example = file.stem if file.stem in names else "ping_pong"
    return (
        f"; the bundled scenarios run by name (warband run {example}): {', '.join(names)}; "
        "`warband scenarios --copy DIR` copies them out"
    )


def _main_module_of(resolved: Path) -> ModuleType | None:
    main = sys.modules.get("__main__")
    main_file = getattr(main, "__file__", None)
    if main is None or main_file is None or Path(main_file).resolve() != resolved:
        return None
    return main if isinstance(getattr(main, "scenario", None), Scenario) else None


def _import_file(file: Path, resolved: Path) -> ModuleType:
    digest = hashlib.sha1(str(resolved).encode(), usedforsecurity=False).hexdigest()[:10]
    module_name = f"warband_scenario_{file.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise ConfigurationError(f"{file} is not a Python file warband can import")
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs: dataclasses and msgspec look a class's module up by name.
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        sys.modules.pop(module_name, None)
        raise ConfigurationError(
            f"{error.filename or file}:{error.lineno}: the scenario does not parse: {error.msg}"
        ) from None
    except SystemExit as exit_:
        # A script's exit at import (its own argument check, say) would end warband with its
        # code and no word of why.
        sys.modules.pop(module_name, None)
        raise ConfigurationError(
            f"{_raised_at(exit_, prefer=resolved)}: the scenario {str(file)!r} called "
            f"sys.exit({exit_.code!r}) while it was imported; a scenario file must only define "
            '`scenario` when imported (run code under `if __name__ == "__main__":`)'
        ) from None
    except Exception as error:
        sys.modules.pop(module_name, None)
        raise ConfigurationError(
            f"{_raised_at(error, prefer=resolved)}: importing the scenario {str(file)!r} failed: "
            f"{type(error).__name__}: {error}"
        ) from error
    return module


def _name_of(function: Callable[..., Any]) -> str:
    return getattr(function, "__name__", repr(function))


def _raised_at(error: BaseException, prefer: Path | None = None) -> str:
    """``file:line`` where ``error`` was raised: the last frame in ``prefer`` if it has one."""
    frames: list[traceback.FrameSummary] = list(traceback.extract_tb(error.__traceback__))
    if prefer is not None:
        frames = [f for f in frames if Path(f.filename).resolve() == prefer] or frames
    if not frames:
        return "<unknown>"
    return f"{frames[-1].filename}:{frames[-1].lineno}"


_KINDS: dict[type, str] = {
    bool: "true or false",
    int: "a whole number",
    float: "a number",
}
"""What a parameter's value must be, by the type of its default, in words for error messages."""


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
            f"parameter {key!r} expects {_KINDS[type(default)]} (default {default!r}), got {text!r}"
        ) from None
    return text
