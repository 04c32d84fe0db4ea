"""Game modes as rules objects: one interface, one class per mode.

The simulation drives a mode through four calls (see :class:`GameMode`):

- ``on_tick(view)`` once per tick, after movement, combat and captures, with a :class:`ModeView`
  (the tick number, who owns each capture point, how many of each team are alive); the mode
  scores what it scores per tick and checks its time limit;
- ``on_event(event)`` for every game event of the tick, a flat tuple (a *fact*) such as
  ``("killed", victim, victim_team, killer, killer_team, weapon)`` or
  ``("captured", point, team)``;
- ``score()`` -> points per team;
- ``outcome()`` -> None while the game runs, else a :class:`GameResult` (winner or None for a
  draw, final scores, the reason).

The five Warzone modes of Killzone 3:

- :class:`CaptureAndHold`: a point per held capture point per tick; first to the target.
- :class:`BodyCount`: a point per enemy kill; first to the target.
- :class:`SearchAndRetrieve`: one object (spawning at the map's ``retrieval`` marker) that both
  teams want at their own ``return`` marker. The world moves it (``pickup``, ``drop``, dropped
  by a downed carrier, back at its spawn after ``reset_ticks`` lying untouched) and reports
  ``("returned", object, agent, team)`` when a carrier reaches its team's return point: a point,
  and the object is back at its spawn. First to ``target_returns`` wins, else the leader.
- :class:`Assassination`: the attackers must down one agent of the defenders (the VIP; the
  world designates one from the seed when the mode has none). Downing it wins for the
  attackers; the time limit wins for the defenders. Its team always knows who and where the
  VIP is; the attackers know who, and where only when ``reveal_position``.
- :class:`SearchAndDestroy`: the attackers must destroy the defenders' two ``target`` markers:
  ``plant`` a charge (``plant_ticks`` ticks of work in a row), which goes off ``fuse_ticks``
  later unless a defender defuses it with ``defuse`` (``defuse_ticks`` ticks in a row). The
  world reports ``("destroyed", target, defenders, planter)``; both destroyed wins for the
  attackers, the time limit for the defenders.

The attack / defence modes are played twice in Warzone, each team defending once: choose the
side with ``attackers``. Modes are deterministic and hold no reference to the world: they hold
the ids of what they play on (marker ids, the VIP), and the world tells them what happened.
:func:`make_mode` builds any of them by name, reading the markers it needs from the map.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from ..exceptions import ConfigurationError
from ..values import Fact
from .maps import Map
from .vocabulary import ATTACK, DEFEND


@dataclass(frozen=True, slots=True)
class ModeView:
    """What a mode sees of the world at the end of a tick."""

    tick: int
    owners: Mapping[str, str | None] = field(default_factory=dict)
    """Capture point id -> owning team, or None while neutral."""
    alive: Mapping[str, int] = field(default_factory=dict)
    """Team -> number of its characters alive (not downed, not dead)."""


@dataclass(frozen=True, slots=True)
class GameResult:
    """How a game ended: ``winner`` (None for a draw), final scores, the reason, the tick."""

    winner: str | None
    scores: Mapping[str, int]
    reason: str
    tick: int

    def as_dict(self) -> dict[str, object]:
        """A plain dict for logs and snapshots."""
        return {
            "winner": self.winner,
            "scores": dict(self.scores),
            "reason": self.reason,
            "tick": self.tick,
        }


class GameMode(ABC):
    """The rules of one game mode; subclasses score ticks and events.

    ``teams`` are the playing teams (at least two); ``time_limit`` is in ticks: at the end of
    tick ``time_limit`` the game ends, and the team with the most points wins (a draw when the
    top scores are equal), unless the mode decides otherwise.
    """

    name: str = "mode"

    def __init__(self, teams: Sequence[str], *, time_limit: int) -> None:
        if len(set(teams)) < 2:
            raise ConfigurationError(
                f"a game mode needs at least two distinct teams, got {list(teams)}"
            )
        if time_limit <= 0:
            raise ConfigurationError(
                f"time_limit must be a positive number of ticks, got {time_limit}"
            )
        self.teams: tuple[str, ...] = tuple(teams)
        self.time_limit = time_limit
        self._scores: dict[str, int] = dict.fromkeys(self.teams, 0)
        self._outcome: GameResult | None = None
        self._announced = False

    def on_tick(self, view: ModeView) -> list[Fact]:
        """Score the tick and check the time limit; returns the mode's own events
        (``game_over`` once, in the tick the game ended, whether by an event or the tick)."""
        if self._announced:
            return []
        events = self._score_tick(view) if self._outcome is None else []
        if self._outcome is None and view.tick >= self.time_limit:
            self._time_up(view.tick)
        if self._outcome is not None:
            self._announced = True
            events.append(("game_over", self._outcome.winner or "", self._outcome.reason))
        return events

    def on_event(self, event: Fact, tick: int = 0) -> None:
        """React to one game event of tick ``tick`` (ignored after the game is over)."""
        if self._outcome is None:
            self._handle(event, tick)

    def score(self) -> dict[str, int]:
        """Points per team, a copy."""
        return dict(self._scores)

    def outcome(self) -> GameResult | None:
        """None while the game runs, else how it ended."""
        return self._outcome

    @property
    def markers(self) -> tuple[str, ...]:
        """The ids of the map markers this mode plays on (told to agents as ``objective``)."""
        return ()

    def roles(self) -> dict[str, str]:
        """Team -> :data:`~warband.world.vocabulary.ATTACK` or ``DEFEND`` in the attack /
        defence modes; empty in the symmetric ones."""
        return {}

    def _time_up(self, tick: int) -> None:
        """The time limit is reached: by default the leader wins (a draw on equal scores)."""
        self._finish(self._leader(), "time limit reached", tick)

    def _score_tick(self, view: ModeView) -> list[Fact]:
        """Per-tick scoring; the default scores nothing."""
        return []

    @abstractmethod
    def _handle(self, event: Fact, tick: int) -> None:
        """Per-event scoring."""

    def _add(self, team: str, points: int) -> None:
        if team in self._scores:
            self._scores[team] += points

    def _leader(self) -> str | None:
        best = max(self._scores.values())
        leaders = [t for t in self.teams if self._scores[t] == best]
        return leaders[0] if len(leaders) == 1 else None

    def _finish(self, winner: str | None, reason: str, tick: int) -> None:
        self._outcome = GameResult(winner, dict(self._scores), reason, tick)

    def _finish_at(self, target: int, reason: str, tick: int) -> None:
        """End the game when a team has ``target`` points: at the end of a tick, so that every
        team's points of that tick count; of several teams there, the highest wins, a draw on
        equal points."""
        reached = [t for t in self.teams if self._scores[t] >= target]
        if reached:
            best = max(self._scores[t] for t in reached)
            top = [t for t in reached if self._scores[t] == best]
            self._finish(top[0] if len(top) == 1 else None, reason, tick)


class CaptureAndHold(GameMode):
    """Teams score ``points_per_tick`` for every capture point they own at the end of a tick;
    the first to ``target_score`` wins, else the leader at the time limit."""

    name = "capture_and_hold"

    def __init__(
        self,
        teams: Sequence[str],
        capture_points: Sequence[str],
        *,
        time_limit: int = 600,
        target_score: int = 100,
        points_per_tick: int = 1,
    ) -> None:
        super().__init__(teams, time_limit=time_limit)
        if not capture_points:
            raise ConfigurationError("capture and hold needs at least one capture point")
        self.capture_points: tuple[str, ...] = tuple(capture_points)
        self.target_score = target_score
        self.points_per_tick = points_per_tick

    @property
    def markers(self) -> tuple[str, ...]:
        return self.capture_points

    def _score_tick(self, view: ModeView) -> list[Fact]:
        for point in self.capture_points:
            owner = view.owners.get(point)
            if owner is not None:
                self._add(owner, self.points_per_tick)
        self._finish_at(self.target_score, f"reached {self.target_score} points", view.tick)
        return []

    def _handle(self, event: Fact, tick: int) -> None:
        """Captures change ownership in the world; points come per tick, not per event."""


class BodyCount(GameMode):
    """Each kill of an enemy scores 1 for the killer's team, a team kill costs 1; the first to
    ``target_kills`` wins, else the leader at the time limit.

    The target is checked at the end of a tick, when all of its kills have counted: the shots of
    a tick land together, so two teams may reach it in one tick (the higher score wins, a draw on
    equal scores). Checked at each kill, the team whose kill the world happened to report first
    (its bots' ids sort first: blue before red) won every such tick."""

    name = "body_count"

    def __init__(
        self, teams: Sequence[str], *, time_limit: int = 600, target_kills: int = 20
    ) -> None:
        super().__init__(teams, time_limit=time_limit)
        self.target_kills = target_kills

    def _handle(self, event: Fact, tick: int) -> None:
        if event[0] != "killed" or len(event) < 5:
            return
        victim_team, killer_team = str(event[2]), str(event[4])
        self._add(killer_team, -1 if killer_team == victim_team else 1)

    def _score_tick(self, view: ModeView) -> list[Fact]:
        self._finish_at(self.target_kills, f"reached {self.target_kills} kills", view.tick)
        return []


class SearchAndRetrieve(GameMode):
    """Both teams want the one retrieval object at their own return point.

    ``spawn`` is the marker the object spawns at (and goes back to); ``return_points`` maps
    each team to its return marker. A ``("returned", object, agent, team)`` event scores a
    point; the first to ``target_returns`` wins, else the leader at the time limit. The world
    moves the object (``object_id``) and puts it back at its spawn when it lay away from it,
    untouched, for ``reset_ticks`` ticks.
    """

    name = "search_and_retrieve"

    def __init__(
        self,
        teams: Sequence[str],
        spawn: str,
        return_points: Mapping[str, str],
        *,
        object_id: str = "retrieval-object",
        time_limit: int = 600,
        target_returns: int = 3,
        reset_ticks: int = 30,
    ) -> None:
        super().__init__(teams, time_limit=time_limit)
        missing = [t for t in self.teams if t not in return_points]
        if missing:
            raise ConfigurationError(
                f"search and retrieve needs a return point for every team; none for {missing}"
            )
        if target_returns <= 0 or reset_ticks <= 0:
            raise ConfigurationError(
                "target_returns and reset_ticks must be positive, got "
                f"{target_returns} and {reset_ticks}"
            )
        self.spawn = spawn
        self.return_points: dict[str, str] = {t: return_points[t] for t in self.teams}
        self.object_id = object_id
        self.target_returns = target_returns
        self.reset_ticks = reset_ticks

    @property
    def markers(self) -> tuple[str, ...]:
        return (self.spawn, *self.return_points.values())

    def _handle(self, event: Fact, tick: int) -> None:
        if event[0] != "returned" or len(event) != 4 or event[1] != self.object_id:
            return
        team = str(event[3])
        self._add(team, 1)
        if self._scores.get(team, 0) >= self.target_returns:
            self._finish(team, f"returned the object {self.target_returns} times", tick)


class _AttackDefend(GameMode):
    """A mode with an attacking and a defending team (exactly two teams)."""

    def __init__(self, teams: Sequence[str], *, attackers: str, time_limit: int) -> None:
        super().__init__(teams, time_limit=time_limit)
        if len(self.teams) != 2 or attackers not in self.teams:
            raise ConfigurationError(
                f"{self.name} is played by two teams, one attacking: got teams "
                f"{list(self.teams)} and attackers {attackers!r}"
            )
        self.attackers = attackers
        self.defenders = next(t for t in self.teams if t != attackers)

    def roles(self) -> dict[str, str]:
        return {self.attackers: ATTACK, self.defenders: DEFEND}


class Assassination(_AttackDefend):
    """The attackers must down the defenders' VIP (``target``, an agent id) before the time
    limit; the defenders win by keeping it alive until then. Each win scores 1 for the winner.

    A mode built without a ``target`` is given one by the world (:meth:`designate`) from the
    defenders it spawns. ``reveal_position``: whether the attackers are told where the VIP is
    (they always know who it is); its own team always knows both. ``hiding_spots`` are the
    map's ``hiding`` markers where the VIP may hide, told to agents as objectives.
    """

    name = "assassination"

    def __init__(
        self,
        teams: Sequence[str],
        *,
        attackers: str,
        target: str | None = None,
        reveal_position: bool = True,
        hiding_spots: Sequence[str] = (),
        time_limit: int = 600,
    ) -> None:
        super().__init__(teams, attackers=attackers, time_limit=time_limit)
        self.target = target
        self.reveal_position = reveal_position
        self.hiding_spots: tuple[str, ...] = tuple(hiding_spots)

    @property
    def markers(self) -> tuple[str, ...]:
        return self.hiding_spots

    def designate(self, candidates: Sequence[str], seed: int) -> str:
        """Pick the VIP among ``candidates`` (the defenders' agent ids), the same for the same
        seed, unless the mode already has one; returns it."""
        if self.target is None:
            if not candidates:
                raise ConfigurationError(
                    f"assassination: the defenders ({self.defenders}) have no agent to protect"
                )
            self.target = random.Random(seed).choice(sorted(candidates))
        return self.target

    def _handle(self, event: Fact, tick: int) -> None:
        if event[0] == "killed" and self.target is not None and event[1] == self.target:
            self._add(self.attackers, 1)
            self._finish(self.attackers, f"the VIP {self.target} was taken down", tick)

    def _time_up(self, tick: int) -> None:
        self._add(self.defenders, 1)
        self._finish(self.defenders, "the VIP survived the time limit", tick)


PLANT_TICKS: Final = 3
"""Default ticks of ``plant`` in a row that arm a charge (Search and Destroy)."""
DEFUSE_TICKS: Final = 3
"""Default ticks of ``defuse`` in a row that make an armed target safe again."""
FUSE_TICKS: Final = 15
"""Default ticks from arming a charge to the target's destruction."""


class SearchAndDestroy(_AttackDefend):
    """The attackers must destroy every one of the defenders' ``targets`` (marker ids, two on
    Warzone) before the time limit; the defenders win by saving one until then.

    Each destroyed target scores 1 for the attackers. The world runs the charges: a target is
    armed after ``plant_ticks`` ticks of ``plant`` in a row by an attacker, goes off
    ``fuse_ticks`` ticks later (``("destroyed", target, defenders, planter)``) unless defused
    by ``defuse_ticks`` ticks of ``defuse`` in a row by a defender.
    """

    name = "search_and_destroy"

    def __init__(
        self,
        teams: Sequence[str],
        targets: Sequence[str],
        *,
        attackers: str,
        time_limit: int = 600,
        plant_ticks: int = PLANT_TICKS,
        defuse_ticks: int = DEFUSE_TICKS,
        fuse_ticks: int = FUSE_TICKS,
    ) -> None:
        super().__init__(teams, attackers=attackers, time_limit=time_limit)
        if not targets:
            raise ConfigurationError("search and destroy needs at least one target")
        if min(plant_ticks, defuse_ticks, fuse_ticks) <= 0:
            raise ConfigurationError(
                "plant_ticks, defuse_ticks and fuse_ticks must be positive, got "
                f"{plant_ticks}, {defuse_ticks} and {fuse_ticks}"
            )
        self.targets: tuple[str, ...] = tuple(targets)
        self.plant_ticks = plant_ticks
        self.defuse_ticks = defuse_ticks
        self.fuse_ticks = fuse_ticks
        self._destroyed: set[str] = set()

    @property
    def markers(self) -> tuple[str, ...]:
        return self.targets

    def _handle(self, event: Fact, tick: int) -> None:
        if event[0] != "destroyed" or event[1] not in self.targets:
            return
        target = str(event[1])
        if target in self._destroyed:
            return
        self._destroyed.add(target)
        self._add(self.attackers, 1)
        if len(self._destroyed) == len(self.targets):
            self._finish(self.attackers, f"destroyed all {len(self.targets)} targets", tick)

    def _time_up(self, tick: int) -> None:
        saved = len(self.targets) - len(self._destroyed)
        self._finish(self.defenders, f"time limit reached with {saved} target(s) saved", tick)


MODES: Final = (
    "capture_and_hold",
    "body_count",
    "search_and_retrieve",
    "assassination",
    "search_and_destroy",
)
"""Names accepted by :func:`make_mode`."""


def make_mode(
    name: str,
    teams: Sequence[str],
    *,
    capture_points: Sequence[str] = (),
    time_limit: int = 600,
    game_map: Map | None = None,
    attackers: str | None = None,
    vip: str | None = None,
) -> GameMode:
    """Build a built-in mode by name with its default targets.

    ``capture_and_hold`` plays on ``capture_points`` (default: the map's ``capture`` markers);
    the other new modes read their markers from ``game_map``: ``search_and_retrieve`` the one
    ``retrieval`` marker and each team's ``return`` marker, ``search_and_destroy`` the
    defenders' ``target`` markers, ``assassination`` the ``hiding`` markers (optional).
    ``attackers`` is the attacking team of ``assassination``
    and ``search_and_destroy`` (default: the first team); ``vip`` the assassination target
    (default: the world designates one).

    Raises ConfigurationError naming the known modes for an unknown name, or what the map
    lacks for the mode.
    """
    if name == "capture_and_hold":
        if not capture_points and game_map is not None:
            capture_points = [m.id for m in game_map.markers_of("capture")]
        return CaptureAndHold(teams, capture_points, time_limit=time_limit)
    if name == "body_count":
        return BodyCount(teams, time_limit=time_limit)
    if name not in MODES:
        raise ConfigurationError(f"unknown game mode {name!r}; known modes: {', '.join(MODES)}")
    side = attackers if attackers is not None else (teams[0] if teams else "")
    if side not in teams:
        raise ConfigurationError(
            f"{name}: attackers must be one of the teams {list(teams)}, got {side!r}"
        )
    if name == "assassination":
        hiding = [m.id for m in game_map.markers_of("hiding")] if game_map is not None else []
        return Assassination(
            teams, attackers=side, target=vip, hiding_spots=hiding, time_limit=time_limit
        )
    if game_map is None:
        raise ConfigurationError(f"{name} reads its markers from a map; pass game_map")
    if name == "search_and_retrieve":
        spawns = game_map.markers_of("retrieval")
        if len(spawns) != 1:
            raise ConfigurationError(
                f"search_and_retrieve needs exactly one 'retrieval' marker (where the object "
                f"spawns); the map has {len(spawns)}"
            )
        returns: dict[str, str] = {}
        for team in teams:
            found = game_map.markers_of("return", team)
            if len(found) != 1:
                raise ConfigurationError(
                    f"search_and_retrieve needs one 'return' marker of team {team!r}; "
                    f"the map has {len(found)}"
                )
            returns[team] = found[0].id
        return SearchAndRetrieve(teams, spawns[0].id, returns, time_limit=time_limit)
    defenders = [t for t in teams if t != side]
    targets = [m.id for m in game_map.markers_of("target") if m.team in defenders]
    if not targets:
        raise ConfigurationError(
            f"search_and_destroy needs 'target' markers of the defending team "
            f"({', '.join(defenders) or 'none'}); the map has none"
        )
    return SearchAndDestroy(teams, targets, attackers=side, time_limit=time_limit)
