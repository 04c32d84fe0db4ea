"""The simulation: the world's state and its tick, pure and deterministic (the actor wraps it).

:class:`World` is a facade: the state lives in one :class:`~._state.WorldState` and each
concept has its module: acts (:mod:`._acts`, the verb table), bodies (:mod:`._bodies`),
objects (:mod:`._objects`), combat in play (:mod:`._battle`), movement (:mod:`._movement`),
lives, captures and scoring (:mod:`._rules`), percepts (:mod:`._senses`) and the snapshot
format (:mod:`._snapshot`). The verbs, facts and events are listed in
:mod:`warband.world.vocabulary`.

Life of a tick
==============

Agents call :meth:`World.submit` with a verb and its arguments (the *virtual controller*). The
world validates the act against the current state and queues it, or rejects it with a precise
reason. Each agent has two queues per tick: **movement** (``move``, ``wait``; a move persists
until the target waypoint is reached) and **one action** (every other verb, except ``look`` and
``respawn`` which are free). :meth:`World.step` then advances one tick, in this fixed order:

1. weapon timers (reload, cooldown) and ability timers (boost) count down; a character downed
   ``DOWNED_TICKS`` ticks ago bleeds out (``died``), one dead for ``RESPAWN_TICKS`` ticks
   respawns (``respawned``) at a base spawn or at a TSP its team holds (the one it chose with
   ``respawn``, else one at random);
2. actions in agent-id order: reload, select_weapon, crouch/stand, use, pickup, drop
   (capture, plant and defuse are resolved in their own phases);
3. shots in agent-id order, then automated turrets in turret-id order; each shot draws from
   the world's ``random.Random(seed)``; damage lands in the same order, and a character whose
   health reaches 0 is *downed* (the ``killed`` event credits the shooter);
4. movement along links at the class speed (boost x1.5, crouched x0.5);
5. symbolic objects: doors and bars worked by a plate are open while someone stands on it;
6. the game mode's things (:mod:`._objectives`): the retrieval object dropped by a downed
   carrier, returned or reset; plant and defuse work; charges whose fuse burnt down;
7. captures; 8. the game mode scores the tick's events.

:meth:`World.percepts_for` returns the facts of :data:`~warband.world.vocabulary.FACTS`;
:meth:`World.step` reports the events of :data:`~warband.world.vocabulary.EVENTS`, public or
private to one agent, which :meth:`World.events_for` merges for one agent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..exceptions import ConfigurationError, UnknownIdError
from ..values import Fact
from . import _acts, _battle, _movement, _objectives, _objects, _rules, _senses, _snapshot
from ._bodies import Character, Member, RosterEntry, member_of
from ._state import Args, Events, TickReport, WorldState
from .classes import get_class
from .geometry import heading
from .influence import InfluenceMap, InfluenceSettings
from .maps import Map
from .modes import GameMode, make_mode
from .perception import Body, Observer
from .strategic import StrategicGraph, build_strategic_graph


@dataclass(frozen=True, slots=True)
class ActVerdict:
    """The world's verdict on one act: accepted, or rejected with the reason."""

    accepted: bool
    reason: str = ""


class World:
    """The world state and its tick. Build one with :meth:`create`.

    Deterministic: the same map, seed, roster and acts give the same events, percepts and
    snapshots. Not thread-safe; the world actor calls it from one task.
    """

    def __init__(
        self,
        game_map: Map,
        *,
        seed: int,
        mode: GameMode | None,
        members: Mapping[str, Member],
    ) -> None:
        self._state = WorldState(game_map, seed=seed, mode=mode)
        self._spawn_members(members)
        self._state.objectives = _objectives.setup(self._state)
        _objects.update_objects(self._state, Events())

    # --- construction -------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        game_map: Map,
        *,
        seed: int,
        mode: GameMode | str | None = None,
        roster: Mapping[str, RosterEntry],
        time_limit: int = 600,
        attackers: str | None = None,
        vip: str | None = None,
    ) -> World:
        """A new world on ``game_map`` with the agents of ``roster`` at their spawns.

        ``mode`` is a :class:`~warband.world.modes.GameMode`, the name of a built-in one
        (:data:`~warband.world.modes.MODES`; built by :func:`~warband.world.modes.make_mode`
        from the map's markers, ``time_limit`` in ticks), or None for no scoring (cooperation
        scenarios). ``attackers`` is the attacking team of ``"assassination"`` and
        ``"search_and_destroy"`` (default: the map's first team) and ``vip`` the
        assassination target (default: one of the defenders, picked from the seed).
        Raises ConfigurationError for an unknown class, team, start waypoint or mode, or a
        map without the markers the mode needs.
        """
        members = {agent: member_of(agent, entry) for agent, entry in roster.items()}
        for agent, member in sorted(members.items()):
            get_class(member.cls)
            if member.team not in game_map.teams:
                raise ConfigurationError(
                    f"roster: agent {agent!r} is on team {member.team!r}, which map "
                    f"{game_map.name!r} does not have; its teams: {', '.join(game_map.teams)}"
                )
            if member.start is not None and not game_map.has_waypoint(member.start):
                raise ConfigurationError(
                    f"roster: agent {agent!r} starts at unknown waypoint {member.start!r} "
                    f"of map {game_map.name!r}"
                )
        if isinstance(mode, str):
            try:
                mode = make_mode(
                    mode,
                    game_map.teams,
                    time_limit=time_limit,
                    game_map=game_map,
                    attackers=attackers,
                    vip=vip,
                )
            except ConfigurationError as exc:
                raise ConfigurationError(f"map {game_map.name!r}: {exc}") from None
        return cls(game_map, seed=seed, mode=mode, members=members)

    def _spawn_members(self, members: Mapping[str, Member]) -> None:
        state = self._state
        used: dict[str, int] = {}
        for agent_id in sorted(members):
            member = members[agent_id]
            waypoint = member.start
            if waypoint is None:
                spawns = state.map.spawns(member.team)
                if not spawns:
                    raise ConfigurationError(
                        f"roster: team {member.team!r} has no spawn marker on map "
                        f"{state.map.name!r}; give agent {agent_id!r} a 'start' waypoint"
                    )
                index = used.get(member.team, 0)
                used[member.team] = index + 1
                waypoint = spawns[index % len(spawns)].waypoint
            position = state.map.position(waypoint)
            state.agents[agent_id] = Character(
                agent_id,
                member.team,
                get_class(member.cls),
                waypoint,
                position,
                heading(position, state.map.centre),
            )

    def track_influence(
        self,
        graph: StrategicGraph | None = None,
        settings: InfluenceSettings | None = None,
        *,
        enemies: str = "all",
        tell_every: int = 1,
    ) -> None:
        """Keep one influence map per team up to date (every step, from the positions of its
        living members and turrets, of the enemies, and the tick's deaths) and put it in
        snapshots, and in what the team knows (:meth:`team_facts`, a dead member's percept):
        one ``influence`` fact per area of the strategic graph where the enemy has some.

        ``enemies="all"`` counts every enemy where it truly is (the world's truth, for
        rendering and logs); ``enemies="seen"`` only those some living member of the team sees
        that tick, so the map is the faction's knowledge, which fades (the map's persistence)
        once the enemy is out of sight. ``graph`` defaults to
        :func:`~warband.world.strategic.build_strategic_graph` of the map.

        ``tell_every``: the team is told its map on the ticks that are a multiple of it (and
        on the first tick it is asked); between, the facts it was told last hold. The map
        itself, and the snapshots, still change every step. A map smoothed over time changes
        a little in nearly every area every tick, so telling it every tick makes every squad
        and commander take in the whole map anew each tick: a cost that grows with the squads
        times the areas, so faster than the battle (``scenarios/warzone.py`` tells it every 5
        ticks, its ``influence_every``).
        """
        if enemies not in ("all", "seen"):
            raise ConfigurationError(
                f"track_influence(enemies={enemies!r}): say 'all' (every enemy) or 'seen' "
                "(those the team's members see)"
            )
        if isinstance(tell_every, bool) or not isinstance(tell_every, int) or tell_every < 1:
            raise ConfigurationError(
                f"track_influence(tell_every={tell_every!r}): say a whole number of ticks, "
                "1 or more (1: the team is told its map every tick)"
            )
        state = self._state
        state.influence_from_sight = enemies == "seen"
        state.influence_every = tell_every
        state.influence_told = {}
        state.graph = graph if graph is not None else build_strategic_graph(state.map)
        state.influence = {
            team: InfluenceMap(state.graph, team, settings) for team in state.map.teams
        }
        state.team_cache = None  # what a team knows now holds its influence

    def influence(self, team: str) -> InfluenceMap:
        """The influence map of ``team``, kept since :meth:`track_influence`.

        Raises :class:`~warband.exceptions.UnknownIdError` (a KeyError) for a team the world
        does not track, naming the tracked ones.
        """
        found = self._state.influence.get(team)
        if found is None:
            tracked = ", ".join(self._state.influence) or "none (call track_influence() first)"
            raise UnknownIdError(
                f"no influence map for team {team!r} on map {self.map.name!r}; tracked: {tracked}"
            )
        return found

    def set_corridor(self, squad: str, areas: Sequence[str | int]) -> None:
        """Record a squad's corridor (its sequence of area ids) for snapshots and rendering;
        an empty sequence removes it."""
        if areas:
            self._state.corridors[squad] = [str(a) for a in areas]
        else:
            self._state.corridors.pop(squad, None)

    # --- queries ------------------------------------------------------------------------------

    @property
    def map(self) -> Map:
        """The map this world is played on."""
        return self._state.map

    @property
    def mode(self) -> GameMode | None:
        """The game mode scoring this world, or None."""
        return self._state.mode

    @property
    def seed(self) -> int:
        """The seed of the world's random source."""
        return self._state.seed

    @property
    def tick(self) -> int:
        """The number of steps taken."""
        return self._state.tick

    @property
    def agent_ids(self) -> tuple[str, ...]:
        """Every agent id, sorted."""
        return tuple(sorted(self._state.agents))

    def has_agent(self, agent_id: str) -> bool:
        """True when ``agent_id`` has a body in this world."""
        return agent_id in self._state.agents

    def owner_of(self, point: str) -> str | None:
        """The team owning a capture point or TSP, or None while neutral."""
        return self._state.owners[point]

    def is_open(self, object_id: str) -> bool:
        """True when a door, bars or lever is open (a lever: switched on)."""
        return self._state.open[object_id]

    def score(self) -> dict[str, int]:
        """Points per team (empty without a game mode)."""
        mode = self._state.mode
        return mode.score() if mode is not None else {}

    def outcome(self) -> dict[str, Any] | None:
        """None while the game runs, else ``{"winner", "scores", "reason", "tick"}``."""
        mode = self._state.mode
        if mode is None:
            return None
        result = mode.outcome()
        return result.as_dict() if result is not None else None

    @property
    def last_report(self) -> TickReport:
        """The report of the last step (tick 0: empty)."""
        return self._state.last

    def spawn_options(self, team: str) -> list[str]:
        """Waypoints a member of ``team`` may respawn at: TSPs the team holds, else its base
        spawns (a held TSP is nearer the fight, which is why tacticians capture them)."""
        return _rules.spawn_options(self._state, team)

    # --- acts ---------------------------------------------------------------------------------

    def submit(self, agent_id: str, verb: str, args: Args | None = None) -> ActVerdict:
        """Validate one act of ``agent_id`` and queue it for the next :meth:`step`.

        ``agent_id`` must be the true sender (the actor passes it). Rejections say why:
        unknown agent, downed or dead agent (the dead may only ``respawn``: choose their
        spawn), game over, unknown verb, missing / unexpected /
        mistyped arguments, a second action in one tick, or the verb's own checks.
        """
        given: Args = args if args is not None else {}
        reason = _acts.reject_reason(self._state, agent_id, verb, given)
        if reason is not None:
            return ActVerdict(False, reason)
        _acts.queue(self._state, agent_id, verb, given)
        return ActVerdict(True)

    # --- the tick -----------------------------------------------------------------------------

    def step(self) -> TickReport:
        """Advance one tick (see the module docstring for the order) and report its events.

        After the game is over, returns an empty report and does not advance.
        """
        state = self._state
        if self.outcome() is not None:
            return TickReport(state.tick)
        state.tick += 1
        events = Events()
        state.noises = []
        _rules.run_timers(state)
        _rules.update_lives(state, events)
        _acts.perform_actions(state, events)
        _battle.resolve_combat(state, events)
        _movement.move(state, events)
        _objects.update_objects(state, events)
        _objectives.update(state, events)
        _rules.update_captures(state, events)
        _rules.score(state, events)
        # Senses are worked out anew from the tick's end state (nothing above may have cached
        # a mid-step view), once: the influence map and the percepts share them.
        state.senses_cache = state.team_cache = None
        seen = _senses.sightings(state) if state.influence_from_sight else None
        _rules.update_influence(state, events, seen)
        state.actions.clear()
        state.last = TickReport(
            state.tick,
            tuple(events.public),
            {k: tuple(v) for k, v in sorted(events.private.items())},
        )
        return state.last

    def events_for(self, agent_id: str, report: TickReport | None = None) -> list[Fact]:
        """The events of ``report`` (default: the last step's) that ``agent_id`` should know."""
        return (report or self._state.last).events_for(agent_id)

    # --- senses -------------------------------------------------------------------------------

    def perception_inputs(self) -> tuple[list[Observer], list[Body]]:
        """The observers (living agents) and bodies (everyone not dead, turrets) the senses of
        this tick work on; the benchmark feeds them to the all-pairs reference."""
        return _senses.perception_inputs(self._state)

    def percepts_for(self, agent_id: str) -> list[Fact]:
        """The facts ``agent_id``'s sensors allow now (the vocabulary's ``FACTS``).

        Raises :class:`~warband.exceptions.UnknownIdError` (a KeyError) for an agent that is
        not in the world (check :meth:`has_agent`).
        """
        agent = self._state.agents.get(agent_id)
        if agent is None:
            known = ", ".join(self.agent_ids) or "none"
            raise UnknownIdError(
                f"unknown agent {agent_id!r}: it has no body in this world "
                f"(map {self.map.name!r}); agents: {known}"
            )
        return _senses.percepts(self._state, agent)

    def team_facts(self, team: str) -> list[Fact]:
        """What every member of ``team`` knows wherever it stands (the tick, capture points,
        objects, score, time left, the mode's state, the team's influence map when the world
        tracks one): what a commander, which has no body in the world, perceives. Raises
        UnknownIdError for a team the map does not have."""
        if team not in self.map.teams:
            raise UnknownIdError(
                f"unknown team {team!r} on map {self.map.name!r}; its teams: "
                + ", ".join(self.map.teams)
            )
        return [
            ("tick", self._state.tick),
            *_senses.team_knowledge(self._state, team, "common"),
            *_senses.team_knowledge(self._state, team, "influence"),
        ]

    # --- snapshot -----------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The whole state as plain, JSON-ready data (format in :mod:`._snapshot`)."""
        return _snapshot.snapshot(self._state, self.score(), self.outcome())
