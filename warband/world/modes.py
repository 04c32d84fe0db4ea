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

Implemented: :class:`CaptureAndHold` and :class:`BodyCount`. The same interface fits the other
Warzone modes; how each would be written:

- **Search and Retrieve**: the world emits ``("picked_up", item, agent, team)``,
  ``("dropped", item, waypoint)`` and ``("returned", item, team)`` when a carrier reaches its
  team's return point; ``on_event("returned")`` adds a point and resets the item; ``outcome``
  is the first team to ``target_returns``, or the higher score at the time limit.
- **Assassination**: built with ``attackers``, ``defenders`` and the ``target`` agent id;
  ``on_event(("killed", target, ...))`` ends the game with the attackers as winner; reaching the
  time limit in ``on_tick`` ends it with the defenders as winner.
- **Search and Destroy**: built with the two destructible object ids; the world emits
  ``("destroyed", object, team)`` when a planted charge goes off; the attackers win when both
  are destroyed (``on_event``), the defenders when time runs out (``on_tick``).

Modes are deterministic and hold no reference to the world: the world tells them what
happened.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from ..exceptions import ConfigurationError
from ..values import Fact


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

    def on_tick(self, view: ModeView) -> list[Fact]:
        """Score the tick and check the time limit; returns the mode's own events."""
        if self._outcome is not None:
            return []
        events = self._score_tick(view)
        if self._outcome is None and view.tick >= self.time_limit:
            self._finish(self._leader(), "time limit reached", view.tick)
        if self._outcome is not None:
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

    def _score_tick(self, view: ModeView) -> list[Fact]:
        for point in self.capture_points:
            owner = view.owners.get(point)
            if owner is not None:
                self._add(owner, self.points_per_tick)
        reached = [t for t in self.teams if self._scores[t] >= self.target_score]
        if reached:
            best = max(self._scores[t] for t in reached)
            top = [t for t in reached if self._scores[t] == best]
            winner = top[0] if len(top) == 1 else None
            self._finish(winner, f"reached {self.target_score} points", view.tick)
        return []

    def _handle(self, event: Fact, tick: int) -> None:
        """Captures change ownership in the world; points come per tick, not per event."""


class BodyCount(GameMode):
    """Each kill of an enemy scores 1 for the killer's team, a team kill costs 1; the first to
    ``target_kills`` wins, else the leader at the time limit."""

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
        if self._scores.get(killer_team, 0) >= self.target_kills:
            self._finish(killer_team, f"reached {self.target_kills} kills", tick)


MODES: Final = ("capture_and_hold", "body_count")
"""Names accepted by :func:`make_mode`."""


def make_mode(
    name: str,
    teams: Sequence[str],
    *,
    capture_points: Sequence[str] = (),
    time_limit: int = 600,
) -> GameMode:
    """Build a built-in mode by name with its default targets.

    Raises ConfigurationError naming the known modes for an unknown name.
    """
    if name == "capture_and_hold":
        return CaptureAndHold(teams, capture_points, time_limit=time_limit)
    if name == "body_count":
        return BodyCount(teams, time_limit=time_limit)
    raise ConfigurationError(f"unknown game mode {name!r}; known modes: {', '.join(MODES)}")
