"""The world's mutable state in one place, the events of a step, and the report of a tick.

Every rule module (acts, objects, battle, movement, rules, senses, snapshot) works on one
:class:`WorldState`; :class:`~warband.world.simulation.World` owns it and is the facade.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from math import floor as _floor
from typing import TYPE_CHECKING, TypeAlias

from ..values import Fact, Value
from ._bodies import Character, Turret
from .influence import InfluenceMap
from .maps import Map
from .modes import GameMode
from .perception import Noise, SightIndex
from .strategic import StrategicGraph

if TYPE_CHECKING:
    from ._objectives import Objectives
    from ._senses import TickSenses

Args: TypeAlias = Mapping[str, Value]
"""The arguments of an act, as they come off the wire."""


@dataclass(frozen=True, slots=True)
class TickReport:
    """What happened in one tick: public events, and private events per agent id."""

    tick: int
    events: tuple[Fact, ...] = ()
    private: Mapping[str, tuple[Fact, ...]] = field(default_factory=dict)

    def events_for(self, agent_id: str) -> list[Fact]:
        """The public events followed by ``agent_id``'s private ones."""
        return [*self.events, *self.private.get(agent_id, ())]


class Events:
    """The events of the step being computed: public ones, and private ones per agent."""

    def __init__(self) -> None:
        self.public: list[Fact] = []
        self.private: dict[str, list[Fact]] = {}

    def add(self, *fact: Value) -> None:
        """A public event."""
        self.public.append(tuple(fact))

    def tell(self, agent_id: str, *fact: Value) -> None:
        """A private event for ``agent_id``."""
        self.private.setdefault(agent_id, []).append(tuple(fact))


class WorldState:
    """Everything that changes in a world, by concept; the rule modules read and change it."""

    def __init__(self, game_map: Map, *, seed: int, mode: GameMode | None) -> None:
        self.map = game_map
        self.mode = mode
        self.seed = seed
        self.rng = random.Random(seed)
        self.tick = 0
        # bodies
        self.agents: dict[str, Character] = {}
        self.turrets: dict[str, Turret] = {}
        # capture points and TSPs: owner, and (team, ticks) of a capture in progress
        self.owners: dict[str, str | None] = {
            m.id: m.team for m in game_map.markers if m.kind in ("capture", "tsp")
        }
        self.progress: dict[str, tuple[str, int]] = {}
        # symbolic objects
        self.open: dict[str, bool] = {
            o.id: o.open for o in game_map.objects if o.kind in ("door", "bars", "lever")
        }
        self.hand = dict(self.open)
        """Where a hand last left each door, bars and lever (plates and levers add to it)."""
        self.unlocked: set[str] = set()
        self.item_at: dict[str, str | None] = {
            o.id: o.waypoint for o in game_map.objects if o.kind == "item"
        }
        self.carrier: dict[str, str | None] = dict.fromkeys(self.item_at)
        # the game mode's things in play (retrieval object, VIP, destroy targets): None
        # without a mode; set up once the agents have spawned
        self.objectives: Objectives | None = None
        # the acts queued for the next step: agent id -> (verb, args)
        self.movement: dict[str, tuple[str, Args]] = {}
        self.actions: dict[str, tuple[str, Args]] = {}
        # senses: the step's noises (with the waypoint they came from), sight lines, a cache
        self.noises: list[tuple[Noise, str]] = []
        self.sight = SightIndex(game_map.walls)
        self.senses_cache: TickSenses | None = None
        self.team_cache: tuple[int, dict[tuple[str, str], list[Fact]]] | None = None
        """What each team knows this tick (see ``_senses.team_knowledge``)."""
        # what the renderer and logs see
        self.last = TickReport(0)
        self.corridors: dict[str, list[str]] = {}
        self.influence: dict[str, InfluenceMap] = {}
        self.influence_from_sight = False
        """A team's influence map counts the enemies its members see (else every enemy)."""
        self.influence_every = 1
        """A team is told its influence map every this many ticks (see ``track_influence``)."""
        self.influence_told: dict[str, list[Fact]] = {}
        """The influence facts each team was told last, which hold until the next telling."""
        self.graph: StrategicGraph | None = None

    def position_of(self, entity: str) -> tuple[float, float]:
        """Where an agent or turret is."""
        if entity in self.agents:
            return self.agents[entity].position
        return self.turrets[entity].position

    def waypoint_of(self, entity: str) -> str:
        """The waypoint an agent or turret is at."""
        if entity in self.agents:
            return self.agents[entity].waypoint
        return self.turrets[entity].waypoint

    def team_of(self, entity: str) -> str:
        """The team of an agent or turret."""
        if entity in self.agents:
            return self.agents[entity].team
        return self.turrets[entity].team


def article(noun: str) -> str:
    """``noun`` with its indefinite article: ``an assault``, ``a medic``."""
    return f"an {noun}" if noun[0] in "aeiou" else f"a {noun}"


def rounded(value: float) -> float:
    """Round for facts and snapshots: readable, and stable across platforms.

    ``round(value, 2)`` bit for bit, at about a third less cost for most values (a 1000-entity
    world rounds some 10,000 distances a tick): ``round`` works the decimal digits out exactly,
    while a float from 0.01 to 10 million times 100 is within a millionth of the exact
    product, so its whole part and fraction say the rounded hundredths unless the fraction is
    near a half (a tie, or too close to tell): those, and ints, signs and the rest, go to
    ``round``. A whole number of hundredths divided by 100 is the float nearest it, which is
    what ``round`` gives.
    """
    if type(value) is float:
        hundredths = value * 100.0
        if 1.0 <= hundredths < 1e9:
            whole = _floor(hundredths)
            part = hundredths - whole  # exact: whole is at least half of hundredths
            if part < 0.4999:
                return whole / 100.0
            if part > 0.5001:
                return (whole + 1) / 100.0
    return round(value, 2)
