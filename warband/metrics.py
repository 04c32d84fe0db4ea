"""``warband metrics``: how a Killzone match *played*, measured from its logs alone.

A win count says who won, not whether the bots looked right. These measures count, per team,
what a player watching the match would notice. They read a run's ``--log`` directory: the
world's ``world.snapshot`` events (where every body is, alive or not, its health), the agents'
``agent.plan`` events (what each decided, with the names of the HTN branches it took), the
``order.received`` / ``order.finished`` / ``order.withdrawn`` events and the commander's
``commander.assignment``. Every measure is over the *alive bot-ticks* of a team (one bot alive
at one tick) unless it says otherwise:

``stuck``
    Episodes of a bot alive and standing on one waypoint (not walking a link) for
    :data:`STUCK_TICKS` ticks or more, by what it was doing most of that time (the first branch
    of its plans, e.g. ``close combat``); ``stuck_firing_full_health`` counts those
    spent firing at every tick of it at full health.
``order_starved``
    Bot-ticks spent fighting in place (the plan fires, the bot is not walking) away from the
    place of the first order in the bot's command queue that has one (its waypoint, or its
    marker's waypoint; an order without a place, as a corridor, sends the bot nowhere). A bot
    that fires as it walks is carrying its order out, in the tick it reaches a waypoint on its
    way too (it walked in that tick: the snapshot at its end shows it there).
``crowded``
    Bot-ticks standing on a waypoint with :data:`CROWD` or more team mates alive standing on it,
    the bot included. A bot walking a link is on neither end (the world names the waypoint it
    left until it arrives: four bots leaving a junction four ways were counted a crowd there).
``oscillations``
    A-B-A-B-A walks: a bot back and forth between two waypoints, five visits within
    :data:`OSCILLATION_TICKS` ticks.
``plan_churn``
    New or replaced plans per 100 alive bot-ticks.
``enemies_ignored``
    Bot-ticks with a living enemy within the range of the bot's weapon and in its line of sight
    (walls only: the view cone is not in the logs) while its plan fires at nobody.
``regroups``
    Squad regroups before an attack, ended ``by_arrival`` (3/4 of the living members reported
    their arrival) or ``by_timeout``, and ``three_quarters``: ended with at least 3/4 of the
    squad's living members within :data:`RALLY_LINKS` links of the rally point.
``orders``
    Orders the team's agents received, by how they ended: ``completed``, ``failed``,
    ``overwritten`` (a newer order replaced them), ``withdrawn``, or still ``open`` at the end.
``first_capture``
    The tick the team first held each capture point or TSP (Capture and Hold, Body Count...).
``attack_positions``
    New plans that walk to a position picked for the attack (position picking, §29.4; the
    branches in :data:`ATTACK_POSITION_BRANCHES`).
``sniping``
    New plans that hold a sniping spot (a scout overlooking the spot it was ordered to hold
    from a sniping marker; :data:`SNIPING_BRANCHES`).
``turrets``
    The team's turrets ``placed`` and ``damaged`` (their health fell below what they were
    placed with, or they were destroyed): how often the enemy attacked them.

Counts come with their share of the alive bot-ticks (``*_share``), so matches of different
lengths compare. The JSON form (``--json``) has one object per match with the same keys.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .exceptions import ConfigurationError, WarbandError
from .world import Map, get_weapon, snapshot_map, waypoint_path

STUCK_TICKS = 20
"""A bot on one waypoint this long is stuck."""
CROWD = 4
"""Team mates on one waypoint (the bot included) that make a crowd."""
ON_WAYPOINT = 1.0
"""How near (in map units) a body is to a waypoint's position to stand on it, for ``crowded``: a
body walking a link is between two waypoints (a step takes it 2 to 5 units along)."""
TICK_MEASURES: Final = ("stuck", "order_starved", "crowded", "enemies_ignored")
"""The measures :func:`tick_flags` gives per tick (``warband view`` shows them)."""
OSCILLATION_TICKS = 30
"""The window of an A-B-A-B-A oscillation."""
RALLY_LINKS = 2
"""How far from the rally point a member counts as regrouped: a squad deals its members
places on the rally waypoint and the waypoints up to two links around it."""
REGROUP_ARRIVAL = "attack: the squad regrouped, go"
REGROUP_TIMEOUT = "attack: the wait for stragglers is over, go"
ATTACK_POSITION_BRANCHES = frozenset(
    {
        "move to a position picked for the attack",
        "fire on the way to a position picked for the attack",
        "close combat in a crowd: spread out, firing",
    }
)
"""The bot domain's branches that walk to a position picked for the attack (``bot.htn``)."""

SNIPING_BRANCHES = frozenset(
    {"class ability: a scout holds the sniping spot overlooking the spot it defends"}
)
"""The bot domain's branches that hold a sniping spot (``bot.htn``)."""


@dataclass
class _Bot:
    team: str
    waypoint: str | None
    moving: bool
    alive: bool
    full_health: bool
    weapon: str
    x: float
    y: float


@dataclass
class Match:
    """What the measures read from one run's logs."""

    name: str
    game_map: Map | None
    snapshots: dict[int, dict[str, _Bot]] = field(default_factory=dict)
    plans: dict[str, dict[int, list[str]]] = field(default_factory=dict)
    """agent -> tick -> the plan's steps (as text) at that tick."""
    branches: dict[str, dict[int, list[str]]] = field(default_factory=dict)
    """agent -> tick -> the branch names of the plan it ran (carried over kept decisions)."""
    new_plans: Counter[str] = field(default_factory=Counter)
    orders: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """agent -> the orders it received, each with ``tick``, ``ended`` (tick) and ``how``."""
    squads: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    """squad -> (team, members), as the commanders last assigned them."""
    squad_history: list[tuple[int, str, list[str]]] = field(default_factory=list)
    rallies: dict[str, str] = field(default_factory=dict)
    """squad -> the rally waypoint of its latest regroup (so far, while reading)."""
    regroup_ends: list[tuple[str, int, str, str | None]] = field(default_factory=list)
    """(squad, tick, how, rally waypoint)."""
    captures: dict[str, dict[str, int]] = field(default_factory=dict)
    """team -> point -> the tick it first held it."""
    turrets: dict[str, tuple[str, bool]] = field(default_factory=dict)
    """turret -> (team, damaged: its health fell below what it was placed with, or the world
    destroyed it)."""
    turret_health: dict[str, Any] = field(default_factory=dict)
    """turret -> its health when first seen (placed)."""
    attack_positions: Counter[str] = field(default_factory=Counter)
    """bot -> new plans that walk to a position picked for the attack."""
    sniping: Counter[str] = field(default_factory=Counter)
    """bot -> new plans that hold a sniping spot."""
    problems: list[str] = field(default_factory=list)
    map_tried: bool = False
    """Whether the map named by the snapshots was loaded (or failed to) already."""

    @property
    def teams(self) -> list[str]:
        return sorted({bot.team for bots in self.snapshots.values() for bot in bots.values()})


def read_events(log_dir: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every JSON event of the run's log files, with ``file:line`` for errors; a line that is
    not a JSON object is skipped (a file cut short by a crash)."""
    if not log_dir.is_dir():
        raise ConfigurationError(f"{log_dir} is not a directory; pass a run's --log DIR")
    files = sorted(log_dir.glob("*.jsonl"))
    if not files:
        raise ConfigurationError(f"no *.jsonl log files in {log_dir}; pass a run's --log DIR")
    for file in files:
        with file.open(encoding="utf-8", errors="replace") as lines:
            for number, line in enumerate(lines, 1):
                try:
                    event = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(event, dict):
                    yield f"{file.name}:{number}", event


def load_match(log_dir: Path) -> Match:
    """The facts of one match from its log directory (see the module docstring)."""
    match = Match(log_dir.name, None)
    last_branches: dict[str, list[str]] = {}
    plan_events: list[dict[str, Any]] = []
    for _, event in read_events(log_dir):
        kind = event.get("event")
        if kind == "world.snapshot":
            _read_snapshot(match, event)
        elif kind == "agent.plan":
            plan_events.append(event)
        elif kind == "order.received":
            match.orders.setdefault(str(event.get("agent")), []).append(
                {**event, "ended": None, "how": "open"}
            )
        elif kind in ("order.finished", "order.withdrawn"):
            _end_order(match, event)
        elif kind == "commander.assignment":
            _read_assignment(match, event)
    if not match.snapshots:
        raise WarbandError(
            f"{log_dir}: no world.snapshot events; warband metrics measures a run with a world "
            "(a Warzone match) logged with --log"
        )
    plan_events.sort(key=lambda e: (int(e.get("tick", 0)), str(e.get("agent"))))
    for event in plan_events:
        agent, tick = str(event.get("agent")), int(event.get("tick", 0))
        steps = event.get("plan") or []
        match.plans.setdefault(agent, {})[tick] = [str(step) for step in steps]
        # A squad may decide several times in a tick: its rally is read from every plan.
        rally = _rally_of(match.plans[agent][tick])
        if rally is not None:
            match.rallies[agent] = rally
        decision = event.get("decision")
        if decision in ("new", "replaced"):
            match.new_plans[agent] += 1
        if "branches" in event:
            last_branches[agent] = [str(b) for b in event["branches"] or []]
        elif decision not in ("kept",):
            last_branches[agent] = []
        match.branches.setdefault(agent, {})[tick] = last_branches.get(agent, [])
        if decision in ("new", "replaced") and event.get("branches"):
            _regroup_end(match, agent, tick, event)
            if ATTACK_POSITION_BRANCHES & set(event["branches"]):
                match.attack_positions[agent] += 1
            if SNIPING_BRANCHES & set(event["branches"]):
                match.sniping[agent] += 1
    return match


def _read_snapshot(match: Match, event: dict[str, Any]) -> None:
    snapshot = event.get("snapshot") or {}
    tick = int(snapshot.get("tick", event.get("tick", 0)))
    if match.game_map is None and not match.map_tried and snapshot.get("map"):
        match.map_tried = True  # once: every snapshot names the same map
        try:
            match.game_map = snapshot_map(snapshot)
        except WarbandError as error:
            match.problems.append(f"map not loaded ({error}): places of markers unknown")
    bots = {}
    for agent, body in (snapshot.get("agents") or {}).items():
        health, most = body.get("health", 0), body.get("max_health", 0)
        bots[str(agent)] = _Bot(
            team=str(body.get("team", "")),
            waypoint=body.get("waypoint"),
            moving=body.get("target") is not None,
            alive=body.get("state") == "alive",
            full_health=bool(most) and health >= most,
            weapon=str(body.get("weapon", "")),
            x=float(body.get("x", 0.0)),
            y=float(body.get("y", 0.0)),
        )
    match.snapshots[tick] = bots
    for fact in snapshot.get("events") or []:
        if isinstance(fact, list) and len(fact) == 3 and fact[0] == "captured":
            match.captures.setdefault(str(fact[2]), {}).setdefault(str(fact[1]), tick)
        if isinstance(fact, list) and len(fact) >= 2 and fact[0] == "destroyed":
            turret = match.turrets.get(str(fact[1]))
            if turret is not None:
                match.turrets[str(fact[1])] = (turret[0], True)
    for turret_id, turret in (snapshot.get("turrets") or {}).items():
        _read_turret(match, str(turret_id), turret)


def _read_turret(match: Match, turret_id: str, turret: Mapping[str, Any]) -> None:
    health = turret.get("health")
    placed = match.turret_health.setdefault(turret_id, health)
    team, damaged = match.turrets.get(turret_id, (str(turret.get("team", "")), False))
    hurt = isinstance(health, int | float) and isinstance(placed, int | float) and health < placed
    match.turrets[turret_id] = (team, damaged or hurt)


def _end_order(match: Match, event: dict[str, Any]) -> None:
    for order in match.orders.get(str(event.get("agent")), []):
        if order.get("order") == event.get("order") and order["ended"] is None:
            order["ended"] = int(event.get("tick", 0))
            if event.get("event") == "order.withdrawn":
                order["how"] = "withdrawn"
            elif event.get("success"):
                order["how"] = "completed"
            elif str(event.get("reason", "")).startswith("overwritten"):
                order["how"] = "overwritten"
            else:
                order["how"] = "failed"


def _read_assignment(match: Match, event: dict[str, Any]) -> None:
    team = str(event.get("agent", "")).removesuffix("-commander")
    for squad, _objective, members in event.get("squads") or []:
        match.squads[str(squad)] = (team, [str(m) for m in members])
        match.squad_history.append((int(event.get("tick", 0)), str(squad), list(members)))


def _regroup_end(match: Match, squad: str, tick: int, event: dict[str, Any]) -> None:
    first = (event.get("branches") or [""])[0]
    if first not in (REGROUP_ARRIVAL, REGROUP_TIMEOUT):
        return
    rally = match.rallies.get(squad)
    how = "arrival" if first == REGROUP_ARRIVAL else "timeout"
    match.regroup_ends.append((squad, tick, how, rally))


def _rally_of(steps: Sequence[str]) -> str | None:
    for step in steps:
        if step.startswith("(!remember rally "):
            return step.rstrip(")").split()[-1]
    return None


# --- the measures ------------------------------------------------------------------------------


def measure(match: Match) -> dict[str, Any]:
    """The measures of one match: ``{"match", "ticks", "teams": {team: {...}}}``."""
    teams = {team: _team(match, team) for team in match.teams}
    return {
        "match": match.name,
        "ticks": max(match.snapshots),
        "teams": teams,
        "problems": match.problems,
    }


def _team(match: Match, team: str) -> dict[str, Any]:
    ticks = sorted(match.snapshots)
    bots = _bots(match, team)
    alive = sum(1 for t in ticks for a in bots if _alive(match, a, t))
    stuck = _stuck(match, bots, ticks)
    counts = {
        "order_starved": _count(_order_starved(match, bots, ticks)),
        "crowded": _count(_crowded(match, team, ticks)),
        "enemies_ignored": _count(_enemies_ignored(match, team, bots, ticks)),
    }
    result: dict[str, Any] = {"bots": len(bots), "alive_bot_ticks": alive}
    for name, count in counts.items():
        result[name] = count
        result[f"{name}_share"] = round(count / alive, 4) if alive else 0.0
    result["stuck"] = stuck
    result["oscillations"] = sum(_oscillations(match, bot, ticks) for bot in bots)
    churn = sum(match.new_plans[bot] for bot in bots)
    result["plan_churn"] = round(100 * churn / alive, 2) if alive else 0.0
    result["regroups"] = _regroups(match, team)
    result["orders"] = _orders(match, team)
    result["first_capture"] = dict(sorted(match.captures.get(team, {}).items()))
    result["attack_positions"] = sum(match.attack_positions[bot] for bot in bots)
    result["sniping"] = sum(match.sniping[bot] for bot in bots)
    own = [damaged for own_team, damaged in match.turrets.values() if own_team == team]
    result["turrets"] = {"placed": len(own), "damaged": sum(own)}
    return result


def _alive(match: Match, bot: str, tick: int) -> bool:
    body = match.snapshots[tick].get(bot)
    return body is not None and body.alive


def _plan_at(match: Match, agent: str, tick: int) -> list[str]:
    return match.plans.get(agent, {}).get(tick, [])


def _fires(steps: Iterable[str]) -> bool:
    return any(step.startswith("(!fire ") for step in steps)


def _count(flags: Iterable[tuple[int, str]]) -> int:
    return sum(1 for _ in flags)


def tick_flags(match: Match, team: str) -> dict[int, dict[str, list[str]]]:
    """Per tick, the team's bots each per-tick measure counts there: ``stuck`` (standing on one
    waypoint for :data:`STUCK_TICKS` ticks by then), ``order_starved``, ``crowded`` and
    ``enemies_ignored``, each a sorted list of bot ids (``warband view`` marks them). A
    measure's count over the match is the number of its flags (``stuck`` counts episodes)."""
    ticks = sorted(match.snapshots)
    bots = _bots(match, team)
    flags: dict[int, dict[str, list[str]]] = {
        tick: {measure: [] for measure in TICK_MEASURES} for tick in ticks
    }
    found = {
        "stuck": (
            (tick, bot)
            for bot in bots
            for run in _still_runs(match, bot, ticks)
            for tick in run[STUCK_TICKS - 1 :]
        ),
        "order_starved": _order_starved(match, bots, ticks),
        "crowded": _crowded(match, team, ticks),
        "enemies_ignored": _enemies_ignored(match, team, bots, ticks),
    }
    for measure, pairs in found.items():
        for tick, bot in pairs:
            flags[tick][measure].append(bot)
    for measures in flags.values():
        for bots_flagged in measures.values():
            bots_flagged.sort()
    return flags


def _bots(match: Match, team: str) -> list[str]:
    return sorted(
        {a for snap in match.snapshots.values() for a, b in snap.items() if b.team == team}
    )


def _still_runs(match: Match, bot: str, ticks: Sequence[int]) -> Iterator[list[int]]:
    """The bot's runs of ticks alive and standing on one waypoint, :data:`STUCK_TICKS` long or
    longer."""
    run: list[int] = []
    place = None
    for tick in [*ticks, None]:
        body = match.snapshots[tick].get(bot) if tick is not None else None
        still = body is not None and body.alive and not body.moving
        here = body.waypoint if body is not None else None
        if tick is not None and still and (not run or here == place):
            run.append(tick)
            place = here
            continue
        if len(run) >= STUCK_TICKS:
            yield run
        run = [tick] if tick is not None and still else []
        place = here


def _stuck(match: Match, bots: Sequence[str], ticks: Sequence[int]) -> dict[str, Any]:
    episodes: Counter[str] = Counter()
    firing_full = 0
    longest = 0
    for bot in bots:
        for run in _still_runs(match, bot, ticks):
            doing = _main_branch(match, bot, run)
            episodes[doing] += 1
            longest = max(longest, len(run))
            full = all(match.snapshots[t][bot].full_health for t in run)
            if full and all(_fires(_plan_at(match, bot, t)) for t in run):
                firing_full += 1
    return {
        "episodes": sum(episodes.values()),
        "longest": longest,
        "by_doing": dict(episodes.most_common()),
        "stuck_firing_full_health": firing_full,
    }


def _main_branch(match: Match, bot: str, ticks: Sequence[int]) -> str:
    """What the bot did most over ``ticks``: the first branch of its plans, the commonest."""
    plans = match.branches.get(bot, {})
    doing = Counter((plans.get(t) or ["(no plan)"])[0] for t in ticks)
    return doing.most_common(1)[0][0]


def _order_starved(
    match: Match, bots: Sequence[str], ticks: Sequence[int]
) -> Iterator[tuple[int, str]]:
    for bot in bots:
        orders = match.orders.get(bot, [])
        walked = False
        for tick in ticks:
            body = match.snapshots[tick].get(bot)
            # A bot that ends the tick on a waypoint it walked to in that tick walked too.
            walked, was_walking = body is not None and body.moving, walked
            if body is None or not body.alive or body.moving or was_walking:
                continue  # firing as it walks is the order obeyed, not starved
            if not _fires(_plan_at(match, bot, tick)):
                continue
            place = _order_place(match, orders, tick)
            if place is not None and body.waypoint != place:
                yield tick, bot


def _order_place(match: Match, orders: list[dict[str, Any]], tick: int) -> str | None:
    """The place the bot's orders send it to at ``tick``: that of the oldest order held that
    has one (an order without a place, as a corridor to keep to, sends it nowhere, and the
    order behind it waits for it)."""
    held = [
        o for o in orders if int(o["tick"]) <= tick and (o["ended"] is None or o["ended"] > tick)
    ]
    for order in held:
        place = _place(match.game_map, order.get("args") or [])
        if place is not None:
            return place
    return None


def _place(game_map: Map | None, args: Sequence[Any]) -> str | None:
    if game_map is None:
        return None
    for arg in args:
        if isinstance(arg, str):
            if game_map.has_waypoint(arg):
                return arg
            if game_map.has_marker(arg):
                return game_map.marker(arg).waypoint
    return None


def _crowded(match: Match, team: str, ticks: Sequence[int]) -> Iterator[tuple[int, str]]:
    for tick in ticks:
        standing = {
            bot: here
            for bot, body in match.snapshots[tick].items()
            if body.team == team and body.alive and (here := _standing_on(match, body))
        }
        places = Counter(standing.values())
        yield from ((tick, bot) for bot, here in standing.items() if places[here] >= CROWD)


def _standing_on(match: Match, body: _Bot) -> str | None:
    """The waypoint ``body`` stands on: its own, when it is within :data:`ON_WAYPOINT` of it
    (the world names the waypoint a walker left until it arrives, half a link behind it);
    without the map, the one the world names."""
    if body.waypoint is None or match.game_map is None:
        return body.waypoint
    if not match.game_map.has_waypoint(body.waypoint):
        return None
    x, y = match.game_map.position(body.waypoint)
    return body.waypoint if math.dist((x, y), (body.x, body.y)) <= ON_WAYPOINT else None


def _enemies_ignored(
    match: Match, team: str, bots: Sequence[str], ticks: Sequence[int]
) -> Iterator[tuple[int, str]]:
    game_map = match.game_map
    if game_map is None:
        return
    for tick in ticks:
        snap = match.snapshots[tick]
        enemies = [b for b in snap.values() if b.team != team and b.alive]
        for bot in bots:
            body = snap.get(bot)
            if body is None or not body.alive or _fires(_plan_at(match, bot, tick)):
                continue
            reach = _reach(body.weapon)
            if any(
                math.dist((body.x, body.y), (e.x, e.y)) <= reach
                and game_map.line_of_sight((body.x, body.y), (e.x, e.y))
                for e in enemies
            ):
                yield tick, bot


def _reach(weapon: str) -> float:
    try:
        return float(get_weapon(weapon).range)
    except WarbandError:
        return 0.0


def _oscillations(match: Match, bot: str, ticks: Sequence[int]) -> int:
    visits: list[tuple[int, str]] = []
    for tick in ticks:
        body = match.snapshots[tick].get(bot)
        if body is None or not body.alive or body.waypoint is None:
            continue
        if not visits or visits[-1][1] != body.waypoint:
            visits.append((tick, body.waypoint))
    count = 0
    index = 0
    while index + 4 < len(visits):
        a, b, c, d, e = (w for _, w in visits[index : index + 5])
        if (
            a == c == e
            and b == d
            and a != b
            and visits[index + 4][0] - visits[index][0] <= (OSCILLATION_TICKS)
        ):
            count += 1
            index += 4
        else:
            index += 1
    return count


def _links_within(game_map: Map, a: str, b: str, most: int) -> bool:
    path = waypoint_path(game_map, a, b) if game_map.has_waypoint(a) else None
    return path is not None and len(path) - 1 <= most


def _regroups(match: Match, team: str) -> dict[str, int]:
    ended = [r for r in match.regroup_ends if match.squads.get(r[0], ("",))[0] == team]
    three_quarters = 0
    for squad, tick, _how, rally in ended:
        members = _members_at(match, squad, tick)
        living = [m for m in members if _alive(match, m, tick)] if tick in match.snapshots else []
        if rally is None or not living or match.game_map is None:
            continue
        near = [
            m
            for m in living
            if (here := match.snapshots[tick][m].waypoint) is not None
            and _links_within(match.game_map, here, rally, RALLY_LINKS)
        ]
        if 4 * len(near) >= 3 * len(living):
            three_quarters += 1
    return {
        "ended": len(ended),
        "by_arrival": sum(1 for r in ended if r[2] == "arrival"),
        "by_timeout": sum(1 for r in ended if r[2] == "timeout"),
        "three_quarters": three_quarters,
    }


def _members_at(match: Match, squad: str, tick: int) -> list[str]:
    members: list[str] = []
    for when, name, listed in match.squad_history:
        if name == squad and when <= tick:
            members = [str(m) for m in listed]
    return members


def _orders(match: Match, team: str) -> dict[str, int]:
    hows: Counter[str] = Counter()
    for agent, orders in match.orders.items():
        if _team_of(match, agent) == team:
            hows.update(order["how"] for order in orders)
    keys = ("completed", "failed", "overwritten", "withdrawn", "open")
    return {key: hows.get(key, 0) for key in keys}


def _team_of(match: Match, agent: str) -> str | None:
    for snap in match.snapshots.values():
        body = snap.get(agent)
        if body is not None:
            return body.team
    squad = match.squads.get(agent)
    if squad is not None:
        return squad[0]
    return agent.removesuffix("-commander") if agent.endswith("-commander") else None


# --- output ----------------------------------------------------------------------------------


def metrics_command(log_dirs: Sequence[Path], *, as_json: bool = False) -> str:
    """What ``warband metrics`` prints for the runs of ``log_dirs``."""
    results = [measure(load_match(Path(d))) for d in log_dirs]
    if as_json:
        return json.dumps(results if len(results) > 1 else results[0])
    return "\n\n".join(format_metrics(r) for r in results)


def format_metrics(result: Mapping[str, Any]) -> str:
    """One match's measures as a table a person reads."""
    lines = [f"match {result['match']}: {result['ticks']} ticks"]
    for team, m in result["teams"].items():
        stuck = m["stuck"]
        regroups = m["regroups"]
        orders = m["orders"]
        lines += [
            f"  {team}: {m['bots']} bots, {m['alive_bot_ticks']} alive bot-ticks",
            f"    order-starved   {m['order_starved']:6d}  ({100 * m['order_starved_share']:.1f}%)",
            f"    crowded         {m['crowded']:6d}  ({100 * m['crowded_share']:.1f}%)",
            f"    enemies ignored {m['enemies_ignored']:6d}  "
            f"({100 * m['enemies_ignored_share']:.1f}%)",
            f"    stuck           {stuck['episodes']:6d}  episodes of {STUCK_TICKS}+ ticks "
            f"(longest {stuck['longest']}; firing at full health: "
            f"{stuck['stuck_firing_full_health']})",
        ]
        lines += [f"      {n:3d}  {doing}" for doing, n in stuck["by_doing"].items()]
        lines += [
            f"    oscillations    {m['oscillations']:6d}",
            f"    plan churn      {m['plan_churn']:6.1f}  new plans per 100 alive bot-ticks",
            f"    regroups        {regroups['ended']:6d}  ended: {regroups['by_arrival']} by "
            f"arrival, {regroups['by_timeout']} by time-out, {regroups['three_quarters']} with "
            "3/4 of the living members at the rally",
            "    orders          " + ", ".join(f"{how} {n}" for how, n in orders.items()),
            f"    attack positions {m['attack_positions']:5d}  walks to a position picked for "
            "the attack",
            f"    sniping         {m['sniping']:6d}  scouts holding a sniping spot",
            f"    turrets         {m['turrets']['placed']:6d}  placed, "
            f"{m['turrets']['damaged']} damaged by the enemy",
        ]
        if m["first_capture"]:
            held = ", ".join(f"{p} at {t}" for p, t in m["first_capture"].items())
            lines.append(f"    first held      {held}")
    lines += [f"  note: {problem}" for problem in result.get("problems", [])]
    return "\n".join(lines)


__all__ = [
    "CROWD",
    "OSCILLATION_TICKS",
    "STUCK_TICKS",
    "TICK_MEASURES",
    "Match",
    "format_metrics",
    "load_match",
    "measure",
    "metrics_command",
    "read_events",
    "tick_flags",
]
