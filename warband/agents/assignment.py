"""The commander's objectives, and how it shares its bots and squads among them (pure).

A commander plays a game mode by turning the game state into a list of :class:`Objective`
values (:mod:`warband.agents.objectives`), then deciding which squad works on which
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

The ``objectives_for_<mode>`` functions that make the objectives of each Warzone mode, and the
choices of where a bot respawns and the VIP hides, are :mod:`warband.agents.objectives`
(still importable from here).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from typing import TYPE_CHECKING

from ..exceptions import ConfigurationError

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


if TYPE_CHECKING:  # for type checkers; at run time __getattr__ imports them when first used
    from .objectives import choose_hiding_spot as choose_hiding_spot
    from .objectives import choose_spawn as choose_spawn
    from .objectives import objectives_for_assassination as objectives_for_assassination
    from .objectives import objectives_for_body_count as objectives_for_body_count
    from .objectives import objectives_for_capture_and_hold as objectives_for_capture_and_hold
    from .objectives import objectives_for_search_and_destroy as objectives_for_search_and_destroy
    from .objectives import (
        objectives_for_search_and_retrieve as objectives_for_search_and_retrieve,
    )
    from .objectives import objectives_for_tsps as objectives_for_tsps

_MOVED = frozenset(
    {
        "choose_hiding_spot",
        "choose_spawn",
        "objectives_for_assassination",
        "objectives_for_body_count",
        "objectives_for_capture_and_hold",
        "objectives_for_search_and_destroy",
        "objectives_for_search_and_retrieve",
        "objectives_for_tsps",
    }
)


def __getattr__(name: str) -> object:
    # The mode objectives moved to warband.agents.objectives; old imports from here still work
    # (lazily: objectives imports this module's Objective).
    if name in _MOVED:
        from . import objectives

        return getattr(objectives, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
