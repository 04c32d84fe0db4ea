"""A Warzone round (Killzone 3, §29.2): game modes played one after another by the same teams.

Killzone 3's Warzone plays its modes in succession on one map, and the two modes with an
attacker and a defender (Assassination, Search and Destroy) twice, each team defending once.
:class:`WarzoneRound` is such a round as a :class:`~warband.world.actor.WorldModel`: it runs one
:class:`~warband.world.World` per *mission* and starts the next when a mission is decided, in
the tick after. Every character starts each mission at its base with full health; a mission
has its own seed (the round's seed and the mission's index) and time limit.

Agents learn of the change from their percepts: ``game_mode`` and ``role`` facts name the new
mission (the commander of :func:`~warband.agents.objectives.round_source` follows them), and
the tick a mission ends the ``game_over`` event says who won it. The round is won by the team
that won the most missions; its outcome lists every mission's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..exceptions import ConfigurationError
from ..values import Value
from ._bodies import RosterEntry
from ._state import TickReport
from .maps import Map
from .modes import MODES
from .simulation import ActVerdict, World

ATTACK_DEFEND_MODES: Final = ("assassination", "search_and_destroy")
"""The modes with an attacker and a defender: a round plays each twice, sides swapped."""


@dataclass(frozen=True)
class Mission:
    """One mode of a round, and the attacking team of a mode that has one."""

    mode: str
    attackers: str | None = None

    def __str__(self) -> str:
        return f"{self.mode} ({self.attackers} attack)" if self.attackers else self.mode


def round_missions(teams: Sequence[str], modes: Sequence[str] = MODES) -> list[Mission]:
    """The missions of a round of ``modes`` (Killzone's order by default): each mode once, an
    attack/defend mode twice, the first team attacking first. Raises ConfigurationError for an
    unknown mode or a map without two teams for an attack/defend mode."""
    missions: list[Mission] = []
    for mode in modes:
        if mode not in MODES:
            raise ConfigurationError(
                f"a round plays game modes; unknown mode {mode!r}; known modes: {', '.join(MODES)}"
            )
        if mode in ATTACK_DEFEND_MODES:
            if len(teams) != 2:
                raise ConfigurationError(
                    f"{mode} needs a map with two teams, got {', '.join(teams) or 'none'}"
                )
            missions += [Mission(mode, teams[0]), Mission(mode, teams[1])]
        else:
            missions.append(Mission(mode))
    if not missions:
        raise ConfigurationError("a round needs at least one game mode")
    return missions


class WarzoneRound:
    """The missions of a round on one map, one :class:`World` at a time (module doc).

    ``prepare`` is called with each mission's world before its first tick (e.g. to
    :meth:`World.track_influence`). :attr:`world` is the mission being played.
    """

    def __init__(
        self,
        game_map: Map,
        *,
        seed: int,
        roster: Mapping[str, RosterEntry],
        missions: Sequence[Mission],
        time_limit: int = 600,
        prepare: Callable[[World], None] | None = None,
    ) -> None:
        if not missions:
            raise ConfigurationError("a round needs at least one mission")
        self.map = game_map
        self.seed = seed
        self.roster = dict(roster)
        self.missions = list(missions)
        self.time_limit = time_limit
        self.prepare = prepare
        self.results: list[dict[str, Any]] = []
        """The outcome of every mission played, in order, with its ``mode`` and ``attackers``."""
        self.tick = 0
        """Ticks of the whole round (each mission's world counts its own from 0)."""
        self.world = self._start(0)
        self._stepped = self.world  # the world whose report the agents are told next

    def _start(self, index: int) -> World:
        mission = self.missions[index]
        world = World.create(
            self.map,
            # A seed per mission: each is a game of its own, and the round stays deterministic.
            seed=self.seed * len(self.missions) + index,
            mode=mission.mode,
            roster=self.roster,
            time_limit=self.time_limit,
            attackers=mission.attackers,
        )
        if self.prepare is not None:
            self.prepare(world)
        return world

    # --- the WorldModel protocol ---------------------------------------------------------------

    def has_agent(self, agent_id: str) -> bool:
        return self.world.has_agent(agent_id)

    def submit(self, agent_id: str, verb: str, args: Mapping[str, Value]) -> ActVerdict:
        return self.world.submit(agent_id, verb, dict(args))

    def step(self) -> TickReport:
        """One tick of the mission; a decided mission is recorded, and the next one starts."""
        report = self.world.step()
        self.tick += 1
        self._stepped = self.world
        decided = self.world.outcome()
        if decided is not None and len(self.results) < len(self.missions):
            mission = self.missions[len(self.results)]
            self.results.append({"mode": mission.mode, "attackers": mission.attackers, **decided})
            if len(self.results) < len(self.missions):
                self.world = self._start(len(self.results))
        return report

    def percepts_for(self, agent_id: str) -> list[Sequence[Value]]:
        return list(self.world.percepts_for(agent_id))

    def events_for(self, agent_id: str, report: Any) -> list[Sequence[Value]]:
        return list(self._stepped.events_for(agent_id, report))

    def team_facts(self, team: str) -> list[Sequence[Value]]:
        return list(self.world.team_facts(team))

    def score(self) -> dict[str, int]:
        """Missions won per team so far."""
        won = {team: 0 for team in self.map.teams}
        for result in self.results:
            if result.get("winner") in won:
                won[result["winner"]] += 1
        return won

    def outcome(self) -> dict[str, Any] | None:
        """None until every mission is decided; then the team that won the most (None on a
        tie), the missions won per team as ``scores``, and every mission's outcome."""
        if len(self.results) < len(self.missions):
            return None
        won = self.score()
        best = max(won.values(), default=0)
        leaders = [team for team, n in won.items() if n == best]
        winner = leaders[0] if len(leaders) == 1 and best > 0 else None
        tally = ", ".join(f"{team} {n}" for team, n in won.items())
        return {
            "winner": winner,
            "scores": won,
            "reason": f"missions won: {tally} of {len(self.missions)}",
            "tick": self.tick,
            "missions": [dict(result) for result in self.results],
        }

    def snapshot(self) -> dict[str, Any]:
        """The mission's snapshot, with the round's tick, the mission and the missions won."""
        mission = self.missions[min(len(self.results), len(self.missions) - 1)]
        return {
            **self.world.snapshot(),
            "tick": self.tick,
            "mission": {
                "index": min(len(self.results), len(self.missions) - 1),
                "of": len(self.missions),
                "mode": mission.mode,
                "attackers": mission.attackers,
            },
            "missions_won": self.score(),
        }


__all__ = ["ATTACK_DEFEND_MODES", "Mission", "WarzoneRound", "round_missions"]
