"""Warzone: two factions of bots on the Warzone map, led by Killzone 3's hierarchy or freelance.

Every bot, squad and commander is its own actor running the one agent loop with an HTN domain
(warband/agents/domains/*.htn): the commander turns the game state into objectives and shares
its squads and bots among them, the squads order their members in command sequences, the bots
fight, capture and report back. A faction set to ``freelance`` has the same bots and nothing
above them: each goes for its mode's objective as a bot alone would pick it (in Capture and
Hold the nearest point its team does not hold; in Body Count it hunts: where it last saw an
enemy, towards gunfire, else to the enemy's spawns).

    warband run scenarios/warzone.py
    warband run scenarios/warzone.py --param bots=12 --param blue=freelance --log runs/wz
    warband run scenarios/warzone.py --processes --param bots=6
    warband run scenarios/warzone.py --workers 2 --param bots=48
    warband trace runs/wz --type Order --type CompletionReport
    warband explain runs/wz --agent red-squad-1 --tick 40

Parameters: ``bots`` per faction (1..128), ``mode`` (``capture_and_hold``, ``body_count``,
``search_and_retrieve``, ``assassination``, ``search_and_destroy``; red attacks in the last two),
``red`` and ``blue`` (``hierarchy`` or ``freelance``), ``time_limit`` (the mode's, in ticks),
``corridors`` (``on``, the default: squads keep their members to the squad's route, Listing 29.3;
``off``: the same orders, unrestricted; see :mod:`warband.agents.squad`), ``influence`` (``on``, the
default: the world keeps each faction's influence map of the enemies its bots see, and tells its
commander, squads and dead bots; ``off``: none, squads weigh their members' threat reports),
``influence_every`` (5, the default: the ticks between two tellings of the influence map to a
faction, the map itself changing every tick; 1 tells it every tick, as before; see
:meth:`warband.world.World.track_influence`), ``map`` (``auto``, the default: the smallest bundled
Warzone map made for ``bots`` a side, :data:`SIZED_MAPS`: ``warzone`` up to 12, ``warzone-x2`` up to
24, ``warzone-x4`` up to 48 and beyond, each the warzone layout repeated at the same density, with
Capture and Hold's target score and Body Count's target kills times the copies of warzone; or a
bundled map name, ``map=warzone`` keeping the 12-a-side map at any size, or a path to a TOML map
file; one without a marker the mode needs is refused before the match, naming the marker and the
mode), ``round`` (``off``, the default: one match of ``mode``; ``on``: a Warzone round, Killzone 3's
five modes in succession, Assassination and Search and Destroy twice with the sides swapped, red
attacking first; or a comma-separated list of modes to play so: see :mod:`warband.world.round`. The
round's winner won the most missions; ``missions`` in the outcome details lists each one's outcome),
``outside`` (bot ids, comma-separated, that clients in another language play through ``warband
gateway``: the world gives them bodies and their hierarchy orders them as any bot, but warband
builds no actor for them; such a run needs ``--endpoint tcp://HOST:PORT --secret FILE``). With
``--workers N`` each faction keeps to workers of its own (``@scenario.placement``).

    warband run scenarios/warzone.py --param round=on --param bots=6
    warband run scenarios/warzone.py --param round=body_count,assassination
The factions are :func:`warband.agents.factions.faction_actors`; each mode's commander objectives
come from :mod:`warband.agents.objectives` (Capture and Hold attacks the majority of points the
team lacks and defends what it holds, and takes the TSP nearest its base when it has a bot to
spare; the others use ``objectives_for_<mode>`` with TSPs below the rest). The world decides who
wins; the outcome details hold ``winner``, ``scores``, ``kills``,
``captures``, and per layer the ``orders`` it gave and the ``reports`` it sent.
"""

from __future__ import annotations

from functools import cache

from warband import Actor, ConfigurationError, Outcome, Params, RunResult, Scenario
from warband.agents.factions import (
    CONTROLS,
    Control,
    check_map,
    commander_id,
    faction_actors,
    faction_observers,
    squad_ids,
)
from warband.agents.objectives import MapMarkers
from warband.world import (
    MODES,
    BodyCount,
    CaptureAndHold,
    GameMode,
    Map,
    Mission,
    WarzoneRound,
    World,
    load_map,
    make_mode,
    round_missions,
)

scenario = Scenario(
    "warzone",
    # A cap: the world ends a match (time_limit is the mode's), and a round of seven missions
    # (--param round=on) takes up to seven time limits.
    ticks=3000,
    params={
        "bots": 6,
        "mode": "capture_and_hold",
        "red": "hierarchy",
        "blue": "hierarchy",
        "time_limit": 400,
        "corridors": "on",
        "influence": "on",
        "influence_every": 5,
        "round": "off",
        "map": "auto",
        "outside": "",
    },
    description="Two factions on Warzone: Killzone 3's hierarchy (or freelance bots) per side.",
    # A team that killed or captured nothing has no key in these: `warband sweep` counts it 0.
    counts=("kills", "captures"),
)

TEAMS = ("red", "blue")
CLASSES = ("assault", "medic", "engineer", "tactician")
MAX_BOTS = 128
"""Bots per faction at most: a Warzone map has no room limit (any number of bots may stand on
one waypoint; beyond 48 a side, ``map=auto`` plays on warzone-x4, more crowded); 128 a side (322
agents) is about what one 2-core machine still plays at a tick a second (`warband bench
scale`)."""


SIZED_MAPS: tuple[tuple[str, int], ...] = (("warzone", 12), ("warzone-x2", 24), ("warzone-x4", 48))
"""The bundled Warzone maps and the bots a side each is made for, smallest first: ``map=auto``
plays on the first that holds the match's bots, on the last beyond (warzone-x2 and x4 are
warzone's layout stacked two and four times, warband/world/_warzone_maps.py, so a bot has as
much room at 48 a side on x4 as at 12 on warzone)."""


def map_for(bots: int) -> str:
    """The bundled map ``map=auto`` plays ``bots`` a side on (see :data:`SIZED_MAPS`)."""
    return next((name for name, most in SIZED_MAPS if bots <= most), SIZED_MAPS[-1][0])


def _copies(game_map: Map) -> int:
    """How many warzone fields ``game_map`` is: 2 and 4 for warzone-x2 and x4, else 1."""
    made_for = dict(SIZED_MAPS).get(game_map.name, SIZED_MAPS[0][1])
    return made_for // SIZED_MAPS[0][1]


def _mode(params: Params, game_map: Map) -> GameMode | str:
    """The game mode of ``--param mode=``. On warzone-x2 and x4 the targets that grow with the
    battle grow with the fields: Capture and Hold's score and Body Count's kills are warzone's
    times the copies of warzone (with four times the capture points and the bots, a match at
    warzone's targets was over in a fifth of the time); a mode on one object, one VIP or each
    field's own targets keeps its rules (its markers are the map's)."""
    mode = str(params["mode"])
    copies = _copies(game_map)
    if copies == 1 or mode not in ("capture_and_hold", "body_count"):
        return mode  # built by the world from the map, as before
    limit = _time_limit(params)
    built = make_mode(mode, TEAMS, time_limit=limit, game_map=game_map)
    if isinstance(built, CaptureAndHold):
        target = built.target_score * copies
        return CaptureAndHold(TEAMS, built.capture_points, time_limit=limit, target_score=target)
    assert isinstance(built, BodyCount)
    return BodyCount(TEAMS, time_limit=limit, target_kills=built.target_kills * copies)


def _map_source(params: Params) -> str:
    """The map of ``--param map=``: ``auto`` is the sized map for the match's bots."""
    source = str(params["map"])
    return map_for(_count(params)) if source == "auto" else source


@cache
def _map(source: str) -> tuple[Map, MapMarkers]:
    """The map of ``--param map=`` (a bundled name or a TOML path), read once per process."""
    game_map = load_map(source)
    return game_map, MapMarkers(game_map)


def _checked_map(params: Params) -> Map:
    game_map, _ = _map(_map_source(params))
    mode = str(params["mode"])
    if mode not in MODES:
        raise ConfigurationError(
            f"--param mode={mode}: unknown game mode; known modes: {', '.join(MODES)}"
        )
    missions = _round(params)
    for played in sorted({m.mode for m in missions}) if missions else [mode]:
        check_map(game_map, played, TEAMS)
    return game_map


def _round(params: Params) -> list[Mission] | None:
    """The missions of ``--param round=`` (None: off, one match of ``mode``)."""
    value = str(params["round"])
    if value == "off":
        return None
    modes = MODES if value == "on" else [m.strip() for m in value.split(",") if m.strip()]
    try:
        return round_missions(TEAMS, modes)
    except ConfigurationError as error:
        raise ConfigurationError(
            f"--param round={value}: say off, on, or game modes separated by commas: {error}"
        ) from None


def _count(params: Params) -> int:
    count = int(params["bots"])
    if not 1 <= count <= MAX_BOTS:
        raise ConfigurationError(
            f"bots must be 1..{MAX_BOTS} per faction (--param bots=N), got {count}"
        )
    return count


def _control(params: Params, team: str) -> Control:
    control = str(params[team])
    if control not in CONTROLS:
        raise ConfigurationError(
            f"--param {team}={control}: a faction is controlled by one of {', '.join(CONTROLS)}"
        )
    return control


def _influence(params: Params) -> bool:
    value = str(params["influence"])
    if value not in ("on", "off"):
        raise ConfigurationError(
            f"--param influence={value}: the world keeps each faction's influence map or not: "
            "say on or off"
        )
    return value == "on"


def _influence_every(params: Params) -> int:
    value = params["influence_every"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(
            f"--param influence_every={value}: the ticks between two tellings of a faction's "
            "influence map to its commander, squads and dead bots: say a whole number, 1 or "
            "more (1: every tick)"
        )
    return value


def _corridors(params: Params) -> bool:
    value = str(params["corridors"])
    if value not in ("on", "off"):
        raise ConfigurationError(
            f"--param corridors={value}: squads keep members to corridors or not: say on or off"
        )
    return value == "on"


def _bots(team: str, count: int) -> list[str]:
    return [f"{team}-{i}" for i in range(1, count + 1)]


def _outside(params: Params) -> list[str]:
    bots = set(_bots("red", _count(params)) + _bots("blue", _count(params)))
    ids = [b.strip() for b in str(params["outside"]).split(",") if b.strip()]
    unknown = sorted(set(ids) - bots)
    if unknown:
        raise ConfigurationError(
            f"--param outside={params['outside']}: {', '.join(unknown)} is no bot of this match; "
            f"bots are red-1..red-{_count(params)} and blue-1..blue-{_count(params)}"
        )
    return ids


@scenario.outsiders
def outsiders(params: Params) -> list[str]:
    """The bots clients play through ``warband gateway`` (``--param outside=red-1,...``)."""
    return _outside(params)


@scenario.world
def make_world(params: Params, seed: int) -> World | WarzoneRound:
    count = _count(params)
    game_map = _checked_map(params)
    roster = {
        bot: {"team": team, "class": CLASSES[index % len(CLASSES)]}
        for team in TEAMS
        for index, bot in enumerate(_bots(team, count))
    }
    influence = _influence(params)
    influence_every = _influence_every(params)

    def prepare(world: World) -> None:
        # Each faction's influence map (Killzone 3, 29.5.2), of the enemies its bots see: its
        # squads route and regroup by it, its commander scores objectives and hides its VIP by
        # it, its dead bots choose their spawn by it; `warband view` draws it.
        # (--param influence=off: none; squads weigh their members' threat reports instead.)
        # The map changes every tick; the faction is told it every `influence_every` ticks.
        if influence:
            world.track_influence(enemies="seen", tell_every=influence_every)

    missions = _round(params)
    if missions is not None:
        return WarzoneRound(
            game_map,
            seed=seed,
            roster=roster,
            missions=missions,
            time_limit=_time_limit(params),
            prepare=prepare,
        )
    world = World.create(
        game_map,
        seed=seed,
        mode=_mode(params, game_map),
        roster=roster,
        time_limit=_time_limit(params),
    )
    prepare(world)
    return world


def _time_limit(params: Params) -> int:
    limit = int(params["time_limit"])
    if limit < 1:
        raise ConfigurationError(
            f"time_limit must be at least 1 tick (--param time_limit=N), got {limit}"
        )
    return limit


@scenario.observers
def commanders(params: Params) -> dict[str, str]:
    """Each hierarchy's commander and squads: the world tells them what their team knows."""
    count = _count(params)
    observers: dict[str, str] = {}
    for team in TEAMS:
        observers.update(faction_observers(team, count, _control(params, team)))
    return observers


@scenario.actors
def build(params: Params, seed: int) -> list[Actor]:
    count = _count(params)
    game_map = _checked_map(params)
    _, markers = _map(_map_source(params))
    actors: list[Actor] = []
    for team in TEAMS:
        actors += faction_actors(
            game_map,
            team,
            _bots(team, count),
            # In a round the commanders play whatever mode the world says (round_source).
            mode=None if _round(params) is not None else str(params["mode"]),
            control=_control(params, team),
            seed=seed,
            corridors=_corridors(params),
            markers=markers,
        )
    played_outside = set(_outside(params))
    return [actor for actor in actors if actor.id not in played_outside]


@scenario.placement
def teams(params: Params) -> list[list[str]]:
    """``--workers N``: each faction (its commander, squads and bots) keeps to workers of its
    own (with one worker, both share it)."""
    count = _count(params)
    played_outside = set(_outside(params))  # no actor of ours: clients play them
    groups = []
    for team in TEAMS:
        bots = [bot for bot in _bots(team, count) if bot not in played_outside]
        if _control(params, team) == "hierarchy":
            bots = [commander_id(team), *squad_ids(team, count), *bots]
        groups.append(bots)
    return groups


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    world = result.final_states.get("world", {})
    outcome = world.get("outcome")
    layers: dict[str, dict[str, int]] = {}
    for state in result.final_states.values():
        role = state.get("role")
        if role is None:
            continue
        layer = layers.setdefault(str(role), {"orders": 0, "reports": 0, "agents": 0})
        layer["orders"] += int(state.get("orders_given", 0))
        layer["reports"] += int(state.get("reports_sent", 0))
        layer["agents"] += 1
    details = {
        "winner": None,
        "scores": world.get("scores"),
        **(outcome or {}),
        "kills": world.get("kills"),
        "captures": world.get("captures"),
        "orders": {layer: v["orders"] for layer, v in sorted(layers.items())},
        "reports": {layer: v["reports"] for layer, v in sorted(layers.items())},
        "control": {team: _control(params, team) for team in TEAMS},
    }
    if outcome is None:
        return Outcome(False, f"no decision after {result.ticks} ticks", details)
    winner = outcome.get("winner") or "nobody"
    return Outcome(
        True, f"{winner} wins ({outcome.get('reason')}), scores {outcome.get('scores')}", details
    )


if __name__ == "__main__":
    from warband.cli import run_file

    raise SystemExit(run_file(__file__))
