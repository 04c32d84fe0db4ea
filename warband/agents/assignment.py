"""The commander's objectives, and how it shares its bots and squads among them (pure).

A commander plays a game mode by turning the game state into a list of :class:`Objective`
values (the ``objectives_for_<mode>`` functions), then deciding which squad works on which
objective and which bot belongs to which squad (:func:`assign`). Everything here is a pure
function of its arguments: no I/O, no actors, no randomness, no clock. The commander actor
calls it every time it re-plans and turns the difference between two :class:`Assignment`
values (:meth:`Assignment.changes`) into orders.

Objectives
==========

An objective says *what* is wanted (one of the four :class:`ObjectiveKind`), *where* (a
waypoint, to measure distances), *how much it matters* relative to the others (``weight``) and
*how many bots* would do it well (``optimal_bots``). Its ``id`` names it across re-plans (e.g.
``"defend:cp-north"``): the assignment recognises last time's objective by its id, so a mode
function must give the same id to what is, for the team, the same job.

The assignment, step by step
============================

The squads come from a fixed pool of ids (their actors exist from the start of the run):
*creating* a squad activates an idle id, *deleting* one deactivates it. A bot that waits to
respawn (``BotInfo.waypoint`` None) is assigned like any other bot; :func:`choose_spawn` gives
the spawn point closest, in travel cost, to its squad.

1. **Ideal distribution.** The bots are dealt out one at a time, each to the objective whose
   weight divided by (bots already given + 1) is the highest (the D'Hondt rule of seat
   apportionment), as long as some objective still lacks its optimal number; after that, the
   bots left over are dealt out the same way among all objectives, so no bot idles while there
   is something to do. Weights 3:1 and 8 bots give 6:2; with fewer bots than objectives, the
   heaviest objectives get them. An objective's bots form ``ceil(bots / max_squad_size)``
   squads, sized as evenly as possible.
2. **Create squads.** If fewer squads are active than step 1 wants, idle ids of the pool are
   activated, in pool order.
3. **Remove excess squads.** A squad whose objective is gone, or one too many on an objective
   (the squads with the most bots, then the closest, keep it), loses its objective.
4. **Best objective per squad.** A squad that still has its objective keeps it. The others
   fill the squads objectives still lack, closest first: the distance from a squad to an
   objective is the mean over its located members of their distance to the objective's
   waypoint (a squad with none is infinitely far, so it takes what the closer ones leave,
   heaviest objective first). A squad left without an objective is deactivated and its bots
   freed.
5. **Unassign surplus bots.** Each squad gets its size from step 1 (the larger shares to the
   squads that hold more bots); a squad holding more lets go of the members farthest from its
   objective (respawning bots first).
6. **Free bots to squads in need.** Every bot without a squad joins the closest squad that
   still lacks bots: the distance from a bot to a squad is its mean distance to the squad's
   located members, or to the squad's objective when none is located. Bots waiting to respawn
   come last and go to the heaviest objectives' squads.

Ties are broken by ids everywhere (objectives and bots by their id, squads by their place in
the pool), so the same input always gives the same output whatever order the objectives and
bots come in. The assignment is *stable*: given the same objectives and bots as last time, it
returns last time's assignment (every squad keeps its objective and its members), so a
commander that re-plans often does not shuffle its team.

A pool too small for the squads step 1 wants is not an error: while the bots are dealt out, an
objective that would need a new squad when none is left gets no more bots; objectives are
served in the order of the deal, so the heaviest get the squads. Bots that fit in no squad stay
in :attr:`Assignment.free`, for the commander to use as it likes (e.g. freelancing).

Modes
=====

Each ``objectives_for_<mode>`` reads the state of one Warzone mode as plain values (what the
commander's memory knows from its percepts) and gives that mode's objectives, following
Killzone 3's commanders; the tactical spawn points (TSPs) are a lower-priority objective in
every mode (:func:`objectives_for_tsps`). Weights and optimal numbers are keyword arguments
with defaults, for a designer to tune.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction

from ..exceptions import ConfigurationError, UnknownIdError
from ..world.vocabulary import ATTACK, DEFEND, TARGET_ARMED, TARGET_DESTROYED, TARGET_INTACT

Distance = Callable[[str, str], float]
"""Travel cost between two waypoint ids (``math.inf`` when there is no way)."""


class ObjectiveKind(StrEnum):
    """The four kinds of commander objective of Killzone 3."""

    ADVANCE_TO_WAYPOINT = "advance_to_waypoint"
    """Go to a waypoint (and do there what the marker asks: capture a point, take the object)."""
    DEFEND_MARKER = "defend_marker"
    """Hold a marker: stand or patrol around it, keep the enemy off it."""
    ATTACK_ENTITY = "attack_entity"
    """Destroy or take down an entity: an enemy carrier or VIP, a destroy target."""
    ESCORT_ENTITY = "escort_entity"
    """Stay with a friendly entity and protect it: our carrier, our VIP."""


@dataclass(frozen=True, slots=True)
class Objective:
    """One job the commander wants done (see the module docstring)."""

    id: str
    """Names the job across re-plans, e.g. ``"defend:cp-north"``."""
    kind: ObjectiveKind
    target: str
    """What it is about: a marker or waypoint id, or an entity (agent, object) id."""
    waypoint: str
    """Where it is, for distances (a moving entity's current waypoint)."""
    weight: float
    """Importance relative to the other objectives (> 0)."""
    optimal_bots: int = 4
    """How many bots would do it well (>= 1)."""

    def __post_init__(self) -> None:
        if not self.id or not self.target or not self.waypoint:
            raise ConfigurationError(
                f"objective {self!r}: id, target and waypoint must be non-empty strings"
            )
        try:
            kind = ObjectiveKind(self.kind)
        except ValueError:
            known = ", ".join(k.value for k in ObjectiveKind)
            raise ConfigurationError(
                f"objective {self.id!r}: unknown kind {self.kind!r}; known kinds: {known}"
            ) from None
        object.__setattr__(self, "kind", kind)
        if not (math.isfinite(self.weight) and self.weight > 0):
            raise ConfigurationError(
                f"objective {self.id!r}: weight must be a finite number > 0, got {self.weight!r}"
            )
        if self.optimal_bots < 1:
            raise ConfigurationError(
                f"objective {self.id!r}: optimal_bots must be at least 1, got {self.optimal_bots}"
            )


@dataclass(frozen=True, slots=True)
class BotInfo:
    """What the assignment needs to know of one bot."""

    id: str
    waypoint: str | None
    """Where it is; None while it waits to respawn (it has no place yet)."""
    alive: bool = True
    """False while downed or dead; such a bot is assigned all the same."""


@dataclass(frozen=True, slots=True)
class SquadAssignment:
    """One active squad: its objective and its members (sorted by id)."""

    squad: str
    objective: str
    members: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AssignmentChanges:
    """What changed from one assignment to the next: what the commander must tell its squads."""

    activated: tuple[str, ...] = ()
    """Squads made active (in pool order)."""
    deactivated: tuple[str, ...] = ()
    """Squads made idle; their bots are elsewhere or free."""
    retasked: tuple[tuple[str, str], ...] = ()
    """``(squad, objective)`` for every active squad with a new objective (activated ones too)."""
    joined: tuple[tuple[str, str], ...] = ()
    """``(bot, squad)`` for every bot in a squad it was not in before."""
    left: tuple[tuple[str, str], ...] = ()
    """``(bot, squad)`` for every bot no longer in a squad it was in (whatever it does now)."""


@dataclass(frozen=True, slots=True)
class Assignment:
    """Who does what: the active squads (in pool order) and the bots in no squad."""

    squads: tuple[SquadAssignment, ...] = ()
    free: tuple[str, ...] = ()
    """Bots in no squad, sorted: only when the squad pool ran out (see the module docstring)."""
    ideal: tuple[tuple[str, int], ...] = field(default=())
    """Step 1's result: ``(objective id, bots)`` for every objective, sorted by id."""

    def squad(self, squad_id: str) -> SquadAssignment | None:
        """The active squad ``squad_id``, or None if it is idle."""
        return next((s for s in self.squads if s.squad == squad_id), None)

    def squad_of(self, bot: str) -> SquadAssignment | None:
        """The squad ``bot`` belongs to, or None."""
        return next((s for s in self.squads if bot in s.members), None)

    def squads_on(self, objective: str) -> tuple[SquadAssignment, ...]:
        """The squads working on ``objective``."""
        return tuple(s for s in self.squads if s.objective == objective)

    def wanted(self, objective: str) -> int:
        """The bots step 1 gave ``objective`` (0 for an unknown one)."""
        return dict(self.ideal).get(objective, 0)

    def changes(self, previous: Assignment | None) -> AssignmentChanges:
        """What changed since ``previous`` (None: since nothing was assigned)."""
        before = {s.squad: s for s in previous.squads} if previous is not None else {}
        now = {s.squad: s for s in self.squads}
        joined: list[tuple[str, str]] = []
        left: list[tuple[str, str]] = []
        for squad in self.squads:
            old = before.get(squad.squad)
            old_members = set(old.members) if old is not None else set()
            joined.extend((bot, squad.squad) for bot in squad.members if bot not in old_members)
        for old in before.values():
            new = now.get(old.squad)
            new_members = set(new.members) if new is not None else set()
            left.extend((bot, old.squad) for bot in old.members if bot not in new_members)
        return AssignmentChanges(
            activated=tuple(s.squad for s in self.squads if s.squad not in before),
            deactivated=tuple(s for s in before if s not in now),
            retasked=tuple(
                (s.squad, s.objective)
                for s in self.squads
                if s.squad not in before or before[s.squad].objective != s.objective
            ),
            joined=tuple(joined),
            left=tuple(left),
        )


# --- the assignment -------------------------------------------------------------------------


def ideal_distribution(
    objectives: Iterable[Objective],
    bots: int,
    *,
    max_squad_size: int = 4,
    max_squads: int | None = None,
) -> dict[str, int]:
    """Step 1: how many of ``bots`` each objective should get (every objective is a key).

    Bots are dealt one at a time by the D'Hondt rule (highest ``weight / (given + 1)``; ties to
    the heavier objective, then the smaller id), first only to objectives short of their optimal
    number, then to all. With ``max_squads``, an objective that would need a squad beyond that
    many gets no more bots; the bots that fit nowhere are left out of the total.
    """
    _check_squad_size(max_squad_size)
    ordered = sorted(_by_id(objectives).values(), key=lambda o: o.id)
    given = {o.id: 0 for o in ordered}
    squads = 0
    weights = {o.id: Fraction(o.weight) for o in ordered}
    for _ in range(max(bots, 0)):
        room = [
            o
            for o in ordered
            if given[o.id] % max_squad_size or max_squads is None or squads < max_squads
        ]
        short = [o for o in room if given[o.id] < o.optimal_bots]
        candidates = short or room
        if not candidates:
            break
        best = min(
            candidates,
            key=lambda o: (-weights[o.id] / (given[o.id] + 1), -weights[o.id], o.id),
        )
        if given[best.id] % max_squad_size == 0:
            squads += 1
        given[best.id] += 1
    return given


def assign(
    objectives: Iterable[Objective],
    bots: Iterable[BotInfo],
    previous: Assignment | None = None,
    *,
    distance: Distance,
    squad_ids: Iterable[str],
    max_squad_size: int = 4,
) -> Assignment:
    """Share ``bots`` among squads from ``squad_ids`` and the squads among ``objectives``.

    The six steps of the module docstring; ``previous`` is the last assignment (None at the
    start). ``squad_ids`` is the pool, in the order squads are activated. A squad of
    ``previous`` that is not in the pool, and a bot of ``previous`` not in ``bots`` (it left the
    run), are dropped silently.

    Raises ConfigurationError for duplicate ids (objectives, bots, pool) or a
    ``max_squad_size`` below 1.
    """
    _check_squad_size(max_squad_size)
    goals = dict(sorted(_by_id(objectives).items()))
    team = dict(sorted(_bots_by_id(bots).items()))
    pool = _pool(squad_ids)
    rank = {squad: index for index, squad in enumerate(pool)}
    ctx = _Context(goals, team, _memo(distance))

    # Step 1: bots per objective, then squads per objective.
    wanted = ideal_distribution(
        goals.values(), len(team), max_squad_size=max_squad_size, max_squads=len(pool)
    )
    squads_wanted = {o: -(-n // max_squad_size) for o, n in wanted.items() if n}

    # Last time's squads, as far as they still exist: members present, each bot in one squad.
    members: dict[str, list[str]] = {}
    tasks: dict[str, str | None] = {}
    placed: set[str] = set()
    for old in sorted(previous.squads if previous else (), key=lambda s: rank.get(s.squad, -1)):
        if old.squad not in rank or old.squad in members:
            continue
        members[old.squad] = [b for b in sorted(old.members) if b in team and b not in placed]
        placed.update(members[old.squad])
        tasks[old.squad] = old.objective if old.objective in squads_wanted else None

    # Step 2: activate idle squads, in pool order, until there are as many as wanted.
    idle = [s for s in pool if s not in members]
    for squad in idle[: max(0, sum(squads_wanted.values()) - len(members))]:
        members[squad] = []
        tasks[squad] = None

    # Step 3: an objective with too many squads keeps the fullest (then closest) ones.
    for goal, count in squads_wanted.items():
        on = [s for s in members if tasks[s] == goal]
        on.sort(key=lambda s: (-len(members[s]), ctx.squad_to_goal(members[s], goal), rank[s]))
        for squad in on[count:]:
            tasks[squad] = None

    # Step 4: squads without an objective fill the places still open, closest pairs first.
    open_places = {
        goal: count - sum(1 for s in members if tasks[s] == goal)
        for goal, count in squads_wanted.items()
    }
    loose = [s for s in members if tasks[s] is None]
    pairs = sorted(
        (ctx.squad_to_goal(members[s], goal), -goals[goal].weight, goal, rank[s], s)
        for s in loose
        for goal, count in open_places.items()
        if count > 0
    )
    for _, _, goal, _, squad in pairs:
        if tasks[squad] is None and open_places[goal] > 0:
            tasks[squad] = goal
            open_places[goal] -= 1
    for squad in loose:
        if tasks[squad] is None:
            del members[squad], tasks[squad]
    task_of = {s: g for s, g in tasks.items() if g is not None}

    # Step 5: sizes from step 1, larger shares to fuller squads; trim the farthest members.
    size: dict[str, int] = {}
    for goal, count in squads_wanted.items():
        on = sorted(
            (s for s in members if task_of[s] == goal), key=lambda s: (-len(members[s]), rank[s])
        )
        base, extra = divmod(wanted[goal], count)
        for index, squad in enumerate(on):
            size[squad] = base + (1 if index < extra else 0)
    for squad, held in members.items():
        if len(held) > size[squad]:
            target = goals[task_of[squad]].waypoint
            held.sort(key=lambda b: (ctx.between(team[b].waypoint, target), b))
            del held[size[squad] :]

    # Step 6: free bots join the closest squad in need (distances as the squads stood).
    in_squad = {b for held in members.values() for b in held}
    free = [b for b in team if b not in in_squad]
    need = {s: size[s] - len(held) for s, held in members.items()}
    offers = sorted(
        (
            ctx.bot_to_squad(team[b].waypoint, members[s], task_of[s]),
            -goals[task_of[s]].weight,
            rank[s],
            b,
            s,
        )
        for b in free
        for s in members
        if need[s] > 0
    )
    joined: set[str] = set()
    for _, _, _, bot, squad in offers:
        if bot not in joined and need[squad] > 0:
            members[squad].append(bot)
            need[squad] -= 1
            joined.add(bot)

    return Assignment(
        squads=tuple(
            SquadAssignment(s, task_of[s], tuple(sorted(members[s])))
            for s in sorted(members, key=rank.__getitem__)
        ),
        free=tuple(b for b in free if b not in joined),
        ideal=tuple(sorted(wanted.items())),
    )


class _Context:
    """The distances the assignment measures, each waypoint pair asked once."""

    def __init__(
        self, goals: Mapping[str, Objective], team: Mapping[str, BotInfo], distance: Distance
    ) -> None:
        self.goals = goals
        self.team = team
        self.distance = distance

    def between(self, a: str | None, b: str | None) -> float:
        """Travel cost from ``a`` to ``b``; infinite from or to nowhere (a respawning bot)."""
        if a is None or b is None:
            return math.inf
        return self.distance(a, b)

    def located(self, members: Sequence[str]) -> list[str]:
        return [w for b in members if (w := self.team[b].waypoint) is not None]

    def squad_to_goal(self, members: Sequence[str], goal: str) -> float:
        """Mean distance of the located members to the objective; infinite with none."""
        places = self.located(members)
        target = self.goals[goal].waypoint
        return _mean([self.between(p, target) for p in places])

    def bot_to_squad(self, waypoint: str | None, members: Sequence[str], goal: str) -> float:
        """Mean distance to the located members, or to the objective when none is located."""
        places = self.located(members) or [self.goals[goal].waypoint]
        return _mean([self.between(waypoint, p) for p in places])


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.inf


def _memo(distance: Distance) -> Distance:
    cache: dict[tuple[str, str], float] = {}

    def measured(a: str, b: str) -> float:
        key = (a, b)
        if key not in cache:
            cache[key] = float(distance(a, b))
        return cache[key]

    return measured


def _check_squad_size(max_squad_size: int) -> None:
    if max_squad_size < 1:
        raise ConfigurationError(f"max_squad_size must be at least 1, got {max_squad_size}")


def _by_id(objectives: Iterable[Objective]) -> dict[str, Objective]:
    found: dict[str, Objective] = {}
    for objective in objectives:
        if objective.id in found:
            raise ConfigurationError(
                f"two objectives have the id {objective.id!r}; objective ids must be unique"
            )
        found[objective.id] = objective
    return found


def _bots_by_id(bots: Iterable[BotInfo]) -> dict[str, BotInfo]:
    found: dict[str, BotInfo] = {}
    for bot in bots:
        if bot.id in found:
            raise ConfigurationError(f"the bot {bot.id!r} is listed twice; bot ids must be unique")
        found[bot.id] = bot
    return found


def _pool(squad_ids: Iterable[str]) -> tuple[str, ...]:
    pool = tuple(squad_ids)
    twice = sorted({s for s in pool if pool.count(s) > 1})
    if twice:
        raise ConfigurationError(
            f"the squad pool lists {', '.join(twice)} more than once; squad ids must be unique"
        )
    return pool


# --- objectives per game mode ---------------------------------------------------------------


def objectives_for_tsps(
    tsps: Mapping[str, str | None],
    marker_waypoints: Mapping[str, str],
    team: str,
    *,
    weight: float = 1.0,
    bots: int = 2,
) -> list[Objective]:
    """The TSP objectives of every mode: ``capture:<tsp>`` (AdvanceToWaypoint; a tactician
    captures it there) for each tactical spawn point ``team`` does not own.

    ``tsps``: TSP marker id -> owning team or None. Owned TSPs get no objective: the team's
    respawning bots keep them busy enough. The default weight is below every mode objective's.
    """
    return [
        Objective(
            f"capture:{tsp}",
            ObjectiveKind.ADVANCE_TO_WAYPOINT,
            tsp,
            _waypoint_of(tsp, marker_waypoints, "TSP"),
            weight,
            bots,
        )
        for tsp, owner in sorted(tsps.items())
        if owner != team
    ]


def objectives_for_capture_and_hold(
    points: Mapping[str, str | None],
    point_waypoints: Mapping[str, str],
    team: str,
    score: Mapping[str, int],
    tsps: Mapping[str, str | None] | None = None,
    *,
    capture_weight: float = 3.0,
    defend_weight: float = 2.0,
    squad_bots: int = 4,
    tsp_weight: float = 1.0,
    tsp_bots: int = 2,
) -> list[Objective]:
    """Capture and Hold: take the points ``team`` does not own, hold the ones it does.

    ``points``: capture point id -> owning team or None; ``point_waypoints``: marker id ->
    waypoint, for every capture point and TSP; ``score``: team -> points.

    - a point not owned (neutral or the enemy's): ``capture:<point>``, an AdvanceToWaypoint to
      the point's waypoint. Capturing is going there and staying: the bots capture the point
      they stand on, and once it is ours the next re-plan turns the objective into a defence.
      (A point is a marker, not an entity that can be attacked, hence not AttackEntity.)
    - a point owned: ``defend:<point>``, a DefendMarker.
    - when ``team`` leads on score and owns more than half the points, it plays safe: only the
      defence of its points (Killzone 3's commander ahead with two of three areas).
    - the TSPs (``tsps``: marker id -> owner) as :func:`objectives_for_tsps`.
    """
    owned = sorted(p for p, owner in points.items() if owner == team)
    others = [s for t, s in score.items() if t != team]
    ahead = score.get(team, 0) > max(others, default=0)
    safe = ahead and 2 * len(owned) > len(points)
    objectives: list[Objective] = []
    for point, owner in sorted(points.items()):
        waypoint = _waypoint_of(point, point_waypoints, "capture point")
        if owner == team:
            objectives.append(
                Objective(
                    f"defend:{point}",
                    ObjectiveKind.DEFEND_MARKER,
                    point,
                    waypoint,
                    defend_weight,
                    squad_bots,
                )
            )
        elif not safe:
            objectives.append(
                Objective(
                    f"capture:{point}",
                    ObjectiveKind.ADVANCE_TO_WAYPOINT,
                    point,
                    waypoint,
                    capture_weight,
                    squad_bots,
                )
            )
    objectives += objectives_for_tsps(
        tsps or {}, point_waypoints, team, weight=tsp_weight, bots=tsp_bots
    )
    return objectives


def objectives_for_search_and_retrieve(
    team: str,
    *,
    object_id: str,
    object_waypoint: str,
    carrier: str | None = None,
    carrier_team: str | None = None,
    return_points: Mapping[str, str],
    marker_waypoints: Mapping[str, str],
    tsps: Mapping[str, str | None] | None = None,
    retrieve_weight: float = 4.0,
    escort_weight: float = 4.0,
    attack_weight: float = 5.0,
    return_weight: float = 2.0,
    squad_bots: int = 4,
    tsp_weight: float = 1.0,
    tsp_bots: int = 2,
) -> list[Objective]:
    """Search and Retrieve: the one object both teams want at their own return point.

    ``object_waypoint``: where the object lies, or where its carrier is; ``carrier`` and
    ``carrier_team``: who holds it (both None while nobody does); ``return_points``: team ->
    return marker id; ``marker_waypoints``: marker id -> waypoint (return points, TSPs).

    - nobody holds it: ``retrieve:<object>``, AdvanceToWaypoint to it (whoever gets there picks
      it up);
    - ``team`` holds it: ``escort:<object>``, EscortEntity of the carrier, and
      ``return:<our return marker>``, AdvanceToWaypoint to clear the way home;
    - the enemy holds it: ``attack:<object>``, AttackEntity on the carrier (to take the object
      back), and ``block:<their return marker>``, DefendMarker where they must bring it.

    The ids name the object, not the carrier, so the squads keep the job when the carrier
    changes within a team; the objective's ``target`` is the current carrier.
    """
    if (carrier is None) != (carrier_team is None):
        raise ConfigurationError(
            f"search and retrieve: carrier {carrier!r} and carrier_team {carrier_team!r} must "
            "be given together (both None while nobody holds the object)"
        )
    objectives: list[Objective] = []
    if carrier is None or carrier_team is None:
        objectives.append(
            Objective(
                f"retrieve:{object_id}",
                ObjectiveKind.ADVANCE_TO_WAYPOINT,
                object_id,
                object_waypoint,
                retrieve_weight,
                squad_bots,
            )
        )
    elif carrier_team == team:
        objectives.append(
            Objective(
                f"escort:{object_id}",
                ObjectiveKind.ESCORT_ENTITY,
                carrier,
                object_waypoint,
                escort_weight,
                squad_bots,
            )
        )
        home = _return_point(return_points, team)
        objectives.append(
            Objective(
                f"return:{home}",
                ObjectiveKind.ADVANCE_TO_WAYPOINT,
                home,
                _waypoint_of(home, marker_waypoints, "return point"),
                return_weight,
                squad_bots,
            )
        )
    else:
        objectives.append(
            Objective(
                f"attack:{object_id}",
                ObjectiveKind.ATTACK_ENTITY,
                carrier,
                object_waypoint,
                attack_weight,
                squad_bots,
            )
        )
        theirs = _return_point(return_points, carrier_team)
        objectives.append(
            Objective(
                f"block:{theirs}",
                ObjectiveKind.DEFEND_MARKER,
                theirs,
                _waypoint_of(theirs, marker_waypoints, "return point"),
                return_weight,
                squad_bots,
            )
        )
    objectives += objectives_for_tsps(
        tsps or {}, marker_waypoints, team, weight=tsp_weight, bots=tsp_bots
    )
    return objectives


def objectives_for_search_and_destroy(
    team: str,
    *,
    role: str,
    targets: Mapping[str, str],
    marker_waypoints: Mapping[str, str],
    tsps: Mapping[str, str | None] | None = None,
    attack_weight: float = 3.0,
    guard_weight: float = 4.0,
    defend_weight: float = 3.0,
    defuse_weight: float = 5.0,
    squad_bots: int = 4,
    tsp_weight: float = 1.0,
    tsp_bots: int = 2,
) -> list[Objective]:
    """Search and Destroy: the defenders' targets, attacked or defended by ``role``.

    ``role``: :data:`~warband.world.vocabulary.ATTACK` or ``DEFEND`` (the team's ``role``
    fact); ``targets``: target marker id -> its ``target_state`` (intact, armed, destroyed).

    - attackers: ``destroy:<target>``, AttackEntity on each intact target (plant a charge);
      ``guard:<target>``, DefendMarker on an armed one, heavier (keep the defenders off the
      charge until it goes off);
    - defenders: ``defend:<target>``, DefendMarker on each target, heavier while armed (defuse
      it): the id stays, so the squads already there stay and more join them.

    A destroyed target gets no objective.
    """
    if role not in (ATTACK, DEFEND):
        raise ConfigurationError(
            f"search and destroy: role must be {ATTACK!r} or {DEFEND!r}, got {role!r}"
        )
    states = (TARGET_INTACT, TARGET_ARMED, TARGET_DESTROYED)
    objectives: list[Objective] = []
    for target, state in sorted(targets.items()):
        if state not in states:
            raise ConfigurationError(
                f"search and destroy: target {target!r} has state {state!r}; "
                f"known states: {', '.join(states)}"
            )
        if state == TARGET_DESTROYED:
            continue
        waypoint = _waypoint_of(target, marker_waypoints, "destroy target")
        armed = state == TARGET_ARMED
        if role == DEFEND:
            objectives.append(
                Objective(
                    f"defend:{target}",
                    ObjectiveKind.DEFEND_MARKER,
                    target,
                    waypoint,
                    defuse_weight if armed else defend_weight,
                    squad_bots,
                )
            )
        elif armed:
            objectives.append(
                Objective(
                    f"guard:{target}",
                    ObjectiveKind.DEFEND_MARKER,
                    target,
                    waypoint,
                    guard_weight,
                    squad_bots,
                )
            )
        else:
            objectives.append(
                Objective(
                    f"destroy:{target}",
                    ObjectiveKind.ATTACK_ENTITY,
                    target,
                    waypoint,
                    attack_weight,
                    squad_bots,
                )
            )
    objectives += objectives_for_tsps(
        tsps or {}, marker_waypoints, team, weight=tsp_weight, bots=tsp_bots
    )
    return objectives


def objectives_for_assassination(
    team: str,
    *,
    role: str,
    vip: str,
    vip_waypoint: str | None,
    marker_waypoints: Mapping[str, str],
    hiding_spot: str | None = None,
    search_spots: Sequence[str] = (),
    tsps: Mapping[str, str | None] | None = None,
    escort_weight: float = 5.0,
    hide_weight: float = 2.0,
    attack_weight: float = 5.0,
    search_weight: float = 2.0,
    squad_bots: int = 4,
    search_bots: int = 2,
    tsp_weight: float = 1.0,
    tsp_bots: int = 2,
) -> list[Objective]:
    """Assassination: keep our VIP alive, or hunt theirs.

    ``role``: :data:`~warband.world.vocabulary.ATTACK` or ``DEFEND``; ``vip``: the target's
    agent id; ``vip_waypoint``: where it is, None when unknown (the attackers are not always
    told); ``marker_waypoints``: marker id -> waypoint (hiding spots, TSPs).

    - defenders: ``escort:<vip>``, EscortEntity of the VIP, and, when the commander has chosen
      one (:func:`choose_hiding_spot`), ``hide:<spot>``, DefendMarker on the VIP's hiding spot,
      so a squad holds the place the VIP goes to. The VIP itself is best left out of the bots
      given to :func:`assign` and ordered to hide directly.
    - attackers: ``attack:<vip>``, AttackEntity on the VIP, when they know where it is; while
      they do not, ``search:<spot>``, AdvanceToWaypoint to each of ``search_spots`` (the map's
      hiding markers: where a VIP is likely to be).
    """
    if role not in (ATTACK, DEFEND):
        raise ConfigurationError(
            f"assassination: role must be {ATTACK!r} or {DEFEND!r}, got {role!r}"
        )
    objectives: list[Objective] = []
    if role == DEFEND:
        if vip_waypoint is not None:
            objectives.append(
                Objective(
                    f"escort:{vip}",
                    ObjectiveKind.ESCORT_ENTITY,
                    vip,
                    vip_waypoint,
                    escort_weight,
                    squad_bots,
                )
            )
        if hiding_spot is not None:
            objectives.append(
                Objective(
                    f"hide:{hiding_spot}",
                    ObjectiveKind.DEFEND_MARKER,
                    hiding_spot,
                    _waypoint_of(hiding_spot, marker_waypoints, "hiding spot"),
                    hide_weight,
                    squad_bots,
                )
            )
    elif vip_waypoint is not None:
        objectives.append(
            Objective(
                f"attack:{vip}",
                ObjectiveKind.ATTACK_ENTITY,
                vip,
                vip_waypoint,
                attack_weight,
                squad_bots,
            )
        )
    else:
        objectives += [
            Objective(
                f"search:{spot}",
                ObjectiveKind.ADVANCE_TO_WAYPOINT,
                spot,
                _waypoint_of(spot, marker_waypoints, "hiding spot"),
                search_weight,
                search_bots,
            )
            for spot in sorted(set(search_spots))
        ]
    objectives += objectives_for_tsps(
        tsps or {}, marker_waypoints, team, weight=tsp_weight, bots=tsp_bots
    )
    return objectives


def objectives_for_body_count(
    team: str,
    *,
    regroup_points: Iterable[str] = (),
    marker_waypoints: Mapping[str, str],
    tsps: Mapping[str, str | None] | None = None,
    hold_weight: float = 2.0,
    squad_bots: int = 4,
    tsp_weight: float = 1.0,
    tsp_bots: int = 2,
) -> list[Objective]:
    """Body Count has no objective of its own but kills: hold the regroup locations (the map's
    strategic places worth controlling, where the fights are) as ``hold:<marker>``
    DefendMarkers, and take the TSPs, so that the bots fight together, from good ground."""
    objectives = [
        Objective(
            f"hold:{marker}",
            ObjectiveKind.DEFEND_MARKER,
            marker,
            _waypoint_of(marker, marker_waypoints, "regroup location"),
            hold_weight,
            squad_bots,
        )
        for marker in sorted(set(regroup_points))
    ]
    objectives += objectives_for_tsps(
        tsps or {}, marker_waypoints, team, weight=tsp_weight, bots=tsp_bots
    )
    return objectives


def choose_spawn(
    options: Sequence[str],
    squad: Iterable[str],
    distance: Distance,
    *,
    objective: str | None = None,
) -> str | None:
    """Where a respawning bot should come back (§29.6.1): of the spawn waypoints ``options``
    (a team's base spawns, or the TSPs it holds), the one with the best travel cost to its
    squad, the mean ``distance`` to the waypoints of ``squad`` (its members' places); to the
    squad's ``objective`` waypoint while no member is located; None without ``options``. Ties
    go to the smaller waypoint id; a spawn from which the squad cannot be reached comes last.
    """
    if not options:
        return None
    targets = sorted(squad) or ([objective] if objective is not None else [])
    if not targets:
        return min(options)

    def cost(spawn: str) -> float:
        return sum(float(distance(spawn, target)) for target in targets) / len(targets)

    return min(sorted(options), key=cost)


def choose_hiding_spot(
    spots: Mapping[str, str],
    vip_waypoint: str,
    distance: Distance,
    *,
    current: str | None = None,
    danger: Mapping[str, float] | None = None,
    danger_weight: float = 1.0,
    switch_ratio: float = 0.8,
) -> str | None:
    """Where the VIP should hide (Assassination defenders): the hiding marker of ``spots``
    (marker id -> waypoint) with the lowest cost, None if there is none.

    The cost of a spot is the VIP's travel cost to it plus ``danger_weight`` times its
    ``danger`` (waypoint -> e.g. enemy influence; 0 where absent). The ``current`` spot is kept
    unless another costs less than ``switch_ratio`` times as much, so the VIP does not run back
    and forth between two spots of nearly equal cost. Ties go to the smaller marker id.
    """
    if not spots:
        return None
    risk = danger or {}

    def cost(marker: str) -> float:
        waypoint = spots[marker]
        return float(distance(vip_waypoint, waypoint)) + danger_weight * risk.get(waypoint, 0.0)

    best = min(sorted(spots), key=cost)
    if current is None or current not in spots:
        return best
    return best if cost(best) < switch_ratio * cost(current) else current


def _waypoint_of(marker: str, marker_waypoints: Mapping[str, str], what: str) -> str:
    try:
        return marker_waypoints[marker]
    except KeyError:
        known = ", ".join(sorted(marker_waypoints)) or "none"
        raise UnknownIdError(
            f"no waypoint given for the {what} {marker!r}; markers with a waypoint: {known}"
        ) from None


def _return_point(return_points: Mapping[str, str], team: str) -> str:
    try:
        return return_points[team]
    except KeyError:
        known = ", ".join(sorted(return_points)) or "none"
        raise UnknownIdError(
            f"search and retrieve: no return point given for team {team!r}; teams with one: {known}"
        ) from None
