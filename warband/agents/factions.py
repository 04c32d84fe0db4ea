"""A Killzone faction's actors on any map: its commander, squads and bots, or freelance bots.

Killzone 3's hierarchy is one commander per team, a pool of squads and the bots
(:mod:`~warband.agents.commander`, :mod:`~warband.agents.squad`, :mod:`~warband.agents.bot`).
:func:`faction_actors` builds them for a map and a game mode, with the stock roles or yours
(a bot class of your own: ``bot=bot_role(game_map, domain="sniper.htn", functions=...)``), and
:func:`check_map` refuses, before a match starts, a map that lacks what the mode or the
commander needs, naming the marker and the mode. ``scenarios/warzone.py`` is built on both.

Ids: bots are given; the squads are ``<team>-squad-<n>`` (one for every two bots, rounded up:
the pool the commander activates squads from) and the commander ``<team>-commander``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from ..exceptions import ConfigurationError
from ..world import Map, make_mode
from .agent import Agent
from .bot import bot_role
from .commander import Assigner, commander_role
from .objectives import MapMarkers, objective_source, round_source
from .role import Role
from .squad import squad_role

Control = Literal["hierarchy", "freelance"]
CONTROLS: tuple[Control, ...] = ("hierarchy", "freelance")
"""How a faction is led: Killzone 3's hierarchy, or bots on their own (no commander, no squads:
each goes for its mode's objective as a bot alone would pick it; ``bot.htn``'s "on its own"
branches)."""

SQUAD_SIZE = 4
"""Most bots a squad of the stock commander leads."""


def squad_ids(team: str, bots: int) -> list[str]:
    """The squad pool of a team with ``bots`` bots: one squad id for every two bots."""
    return [f"{team}-squad-{i}" for i in range(1, math.ceil(bots / 2) + 1)]


def commander_id(team: str) -> str:
    return f"{team}-commander"


def faction_observers(team: str, bots: int, control: Control = "hierarchy") -> dict[str, str]:
    """The faction's members without a body, for the world's observers (participant -> team):
    each tick the world tells them what the team knows (capture points, the mode's state, the
    team's influence map). With the hierarchy, the commander and the squad pool; freelance,
    none."""
    if control != "hierarchy":
        return {}
    return {name: team for name in (commander_id(team), *squad_ids(team, bots))}


def check_map(game_map: Map, mode: str, teams: Sequence[str]) -> None:
    """Raise :class:`~warband.exceptions.ConfigurationError` when ``game_map`` cannot host a
    match of ``mode`` between ``teams``: a team without a ``spawn`` marker, or a marker the mode
    plays on missing (a ``capture`` point, the ``retrieval`` marker, a team's ``return`` marker,
    the defenders' ``target`` markers). The message names the map, the mode and the marker."""
    where = f"map {game_map.name!r} cannot host {mode}"
    for team in teams:
        if not game_map.spawns(team):
            raise ConfigurationError(
                f"{where}: team {team!r} has no 'spawn' marker (add one with team = {team!r})"
            )
    try:
        make_mode(mode, list(teams), game_map=game_map)
    except ConfigurationError as error:
        raise ConfigurationError(f"{where}: {error}") from None


def faction_actors(
    game_map: Map,
    team: str,
    bots: Sequence[str],
    *,
    mode: str | None = "capture_and_hold",
    control: Control = "hierarchy",
    seed: int = 0,
    bot: Role | None = None,
    squad: Role | None = None,
    corridors: bool = True,
    markers: MapMarkers | None = None,
) -> list[Agent]:
    """The actors of one faction: with ``control="hierarchy"`` a commander (its objectives from
    :func:`~warband.agents.objectives.objective_source` for ``mode``; with ``mode=None``, from
    :func:`~warband.agents.objectives.round_source`, whatever mode the world says: a Warzone
    round), the squad pool and the
    ``bots``; freelance, the bots alone. ``bot`` and ``squad`` replace the stock roles;
    ``markers`` (a :class:`MapMarkers` of ``game_map``) is shared between factions to save
    reading the map twice."""
    if control not in CONTROLS:
        raise ConfigurationError(
            f"a faction is controlled by one of {', '.join(CONTROLS)}; got {control!r}"
        )
    bot = bot if bot is not None else bot_role(game_map)
    if control == "freelance":
        return [Agent(b, bot, team=team, seed=seed) for b in bots]
    markers = markers if markers is not None else MapMarkers(game_map)
    squads = squad_ids(team, len(bots))
    leader = commander_id(team)
    objectives, direct = (
        objective_source(markers, mode, team) if mode is not None else round_source(markers, team)
    )
    assigner = Assigner(
        bots, squads, objectives, markers.distance, max_squad_size=SQUAD_SIZE, direct=direct
    )
    squad = squad if squad is not None else squad_role(game_map, corridors=corridors)
    return [
        Agent(
            leader, commander_role(assigner), subordinates=[*squads, *bots], team=team, seed=seed
        ),
        *(Agent(s, squad, superior=leader, team=team, seed=seed) for s in squads),
        *(Agent(b, bot, superior=leader, team=team, seed=seed) for b in bots),
    ]


__all__ = [
    "CONTROLS",
    "SQUAD_SIZE",
    "Control",
    "check_map",
    "commander_id",
    "faction_actors",
    "faction_observers",
    "squad_ids",
]
