"""The world's vocabulary: its verbs and their arguments, and the names of its facts and events.

This is the contract between the world and the agents that act in it, as typed constants an
agent's domain can be checked against when it loads (:func:`check_act`), and readers that take
a fact apart by field name instead of by list index (:class:`FactKind`).

Verbs
=====

An act is a verb and a flat dict of arguments (:data:`VERBS` holds each :class:`VerbSpec`). Each
agent has two queues per tick: **movement** (``move``, ``wait``; a move persists until the target
waypoint is reached) and **one action** (every other verb, except ``look`` and ``respawn``
which are free). The dead may act only to choose their spawn (``respawn``).

==================  =============================================================================
``move``            ``{"waypoint": id}``: walk to a waypoint linked to the current one (not through
                    a wall, not across a closed door or bars)
``wait``            ``{}``: stop moving
``fire``            ``{"target": agent or turret id}``: shoot with the selected weapon (needs ammo,
                    range, line of sight; not at a team mate)
``use``             ``{"object": id}``: open or close a door (from either side; a locked one with
                    its key item), lift or lower bars (from the outside only: for another), a lever
                    (toggle), a plate (stand on it), an item (pick it up), a turret (``repair``,
                    engineers). Doors and bars worked by a plate or lever are not moved by hand;
                    ``{"target": agent id}``: ``revive`` a downed / ``heal`` a wounded team mate
                    (medics); ``{"ability": "turret"}``: place a turret here (engineers);
                    ``{"ability": "cloak" | "disguise" | "boost"}``
``reload``          ``{}``: reload the selected weapon
``select_weapon``   ``{"weapon": name}``
``crouch``          ``{}``; ``stand`` ``{}``
``capture``         ``{"point": marker id}``: work on a capture point or TSP (TSPs: tacticians);
                    owned after ``CAPTURE_TICKS`` uncontested ticks
``look``            ``{"waypoint": id}``: turn towards a waypoint (free, not an action)
``pickup``          ``{"object": id}``: pick up the mode's retrieval object (Search and Retrieve)
                    or an item lying at your waypoint
``drop``            ``{"object": id}``: put down what you carry, where you stand
``plant``           ``{"target": marker id}``: work on an enemy destroy target (Search and Destroy,
                    attackers); armed after ``plant_ticks`` ticks of planting in a row, destroyed
                    when its fuse burns down
``defuse``          ``{"target": marker id}``: work on an armed target of your team (defenders);
                    safe again after ``defuse_ticks`` ticks of defusing in a row
``respawn``         ``{"waypoint": id}``: the dead only, one of its ``spawn_option`` facts: where
                    it comes back when its time is up (free; the last choice counts; a choice no
                    longer open then, or none, leaves it to the world's random pick)
==================  =============================================================================

Game modes
==========

The mode's state is common knowledge in every percept (see :mod:`warband.world.modes`):
``game_mode``; ``objective`` for each marker the mode plays on (capture points, the retrieval
object's spawn, return points, destroy targets, the VIP's hiding spots); ``role`` of each team
in the attack / defence modes; in Search and Retrieve ``object_at`` (where the object is, with
its carrier if carried) and ``carrier``; in Assassination ``vip`` and ``vip_at`` (always for
the agent's own team; the enemy's VIP is named to the attackers, and located when the mode
reveals it); in Search and Destroy ``target_state`` and, while a charge burns, ``fuse``.

Facts and events
================

A fact is a flat tuple ``(name, *fields)`` (:data:`warband.values.Fact`). :data:`FACTS` lists
what ``World.percepts_for`` reports: the agent's own body, what it senses, and common knowledge.
:data:`EVENTS` lists what happened in a step: public events go to everyone, private ones
(:data:`PRIVATE_EVENTS`) only to the agent concerned. Read one by name::

    for seen in SEES.all(percept.facts):
        if seen.team != my_team:
            target = seen.id
    ammo = AMMO.first(percept.facts)          # an Ammo(weapon, clip), or None
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, Generic, NamedTuple, TypeVar

from ..exceptions import ConfigurationError
from ..values import Fact, Value

ALIVE: Final = "alive"
"""The value of the ``state`` fact of a character that can act."""
DOWNED: Final = "downed"
"""The value of the ``state`` fact of a character bleeding out (a medic can revive it)."""
DEAD: Final = "dead"
"""The value of the ``state`` fact of a character waiting to respawn."""

ATTACK: Final = "attack"
"""The ``role`` of the attacking team (Assassination, Search and Destroy)."""
DEFEND: Final = "defend"
"""The ``role`` of the defending team (Assassination, Search and Destroy)."""
TARGET_INTACT: Final = "intact"
"""A destroy target's ``target_state`` before a charge is planted (or after it is defused)."""
TARGET_ARMED: Final = "armed"
"""A destroy target's ``target_state`` while a planted charge burns (see ``fuse``)."""
TARGET_DESTROYED: Final = "destroyed"
"""A destroy target's ``target_state`` once its charge went off."""


class VocabularyError(ConfigurationError):
    """An act does not fit the world's verbs (unknown verb, missing or unexpected argument)."""


# --- verbs ------------------------------------------------------------------------------------


class Verb(StrEnum):
    """Every verb the world accepts; a member is the verb's string (``Verb.MOVE == "move"``)."""

    MOVE = "move"
    WAIT = "wait"
    FIRE = "fire"
    USE = "use"
    RELOAD = "reload"
    SELECT_WEAPON = "select_weapon"
    CROUCH = "crouch"
    STAND = "stand"
    CAPTURE = "capture"
    LOOK = "look"
    PICKUP = "pickup"
    DROP = "drop"
    PLANT = "plant"
    DEFUSE = "defuse"
    RESPAWN = "respawn"


class Queue(StrEnum):
    """Which of an agent's per-tick queues a verb goes to."""

    MOVEMENT = "movement"
    """At most one movement per tick; a move persists until its waypoint is reached."""
    ACTION = "action"
    """At most one action per tick."""
    FREE = "free"
    """Applied at once; any number per tick."""


@dataclass(frozen=True, slots=True)
class ArgSpec:
    """One argument of a verb: its name, the type its value must have, and what it names."""

    name: str
    type: type[str]
    doc: str
    hint: str = "id"
    """How error messages show the value: ``{"target": agent id}``."""


@dataclass(frozen=True, slots=True)
class VerbSpec:
    """A verb's contract: its queue and the argument sets it accepts.

    ``forms`` lists the accepted argument sets; an act must give exactly the arguments of one
    form (``use`` has three forms, every other verb one). ``optional`` arguments may be added to
    any form and are ignored by the world.
    """

    verb: Verb
    queue: Queue
    forms: tuple[tuple[ArgSpec, ...], ...]
    doc: str
    optional: tuple[ArgSpec, ...] = ()

    @property
    def arg_names(self) -> tuple[str, ...]:
        """Every argument name this verb knows, in form order."""
        names = [a.name for form in self.forms for a in form]
        return tuple(dict.fromkeys([*names, *(a.name for a in self.optional)]))


_WAYPOINT = ArgSpec("waypoint", str, "a waypoint id of the map")
_TARGET_MARKER = ArgSpec("target", str, "a destroy target's marker id", "marker id")
_NONE: tuple[tuple[ArgSpec, ...], ...] = ((),)
_SPAWN = ArgSpec("waypoint", str, "one of your spawn_option waypoints")

VERBS: Final[Mapping[str, VerbSpec]] = {
    spec.verb.value: spec
    for spec in (
        VerbSpec(Verb.MOVE, Queue.MOVEMENT, ((_WAYPOINT,),), "walk to a linked waypoint"),
        VerbSpec(Verb.WAIT, Queue.MOVEMENT, _NONE, "stop moving"),
        VerbSpec(
            Verb.FIRE,
            Queue.ACTION,
            ((ArgSpec("target", str, "an agent or turret id"),),),
            "shoot with the selected weapon",
        ),
        VerbSpec(
            Verb.USE,
            Queue.ACTION,
            (
                (ArgSpec("object", str, "a door, bars, lever, plate, item or turret id"),),
                (ArgSpec("target", str, "a team mate to revive or heal", "agent id"),),
                (ArgSpec("ability", str, "turret, cloak, disguise or boost", "name"),),
            ),
            "work an object, revive or heal a team mate, or use an ability",
            optional=(_WAYPOINT,),
        ),
        VerbSpec(Verb.RELOAD, Queue.ACTION, _NONE, "reload the selected weapon"),
        VerbSpec(
            Verb.SELECT_WEAPON,
            Queue.ACTION,
            ((ArgSpec("weapon", str, "a weapon name the class carries"),),),
            "switch weapons",
        ),
        VerbSpec(Verb.CROUCH, Queue.ACTION, _NONE, "crouch (harder to hit, half speed)"),
        VerbSpec(Verb.STAND, Queue.ACTION, _NONE, "stand up"),
        VerbSpec(
            Verb.CAPTURE,
            Queue.ACTION,
            ((ArgSpec("point", str, "a capture point or TSP marker id"),),),
            "work on a capture point",
        ),
        VerbSpec(Verb.LOOK, Queue.FREE, ((_WAYPOINT,),), "turn towards a waypoint"),
        VerbSpec(
            Verb.PICKUP,
            Queue.ACTION,
            ((ArgSpec("object", str, "the retrieval object or an item at your waypoint"),),),
            "pick up an object lying where you stand",
        ),
        VerbSpec(
            Verb.DROP,
            Queue.ACTION,
            ((ArgSpec("object", str, "an object you carry"),),),
            "put down a carried object where you stand",
        ),
        VerbSpec(
            Verb.PLANT,
            Queue.ACTION,
            ((_TARGET_MARKER,),),
            "plant a charge on an enemy destroy target (attackers)",
        ),
        VerbSpec(
            Verb.DEFUSE,
            Queue.ACTION,
            ((_TARGET_MARKER,),),
            "defuse the charge on one of your team's destroy targets (defenders)",
        ),
        VerbSpec(
            Verb.RESPAWN,
            Queue.FREE,
            (
                (_SPAWN,),
                (_SPAWN, ArgSpec("class", str, "a playable class (team_class facts)", "class")),
            ),
            "the dead only: choose the spawn you come back at, and the class you come back as",
        ),
    )
}
"""Every verb the world accepts, by name, in the order the world lists them."""


def _form_text(form: Sequence[ArgSpec]) -> str:
    return "{" + ", ".join(f'"{a.name}": ...' for a in form) + "}"


def act_problem(verb: str, args: Mapping[str, object]) -> str | None:
    """Why ``verb`` with ``args`` does not fit the vocabulary, or None when it does.

    Checks the verb's name, the argument names against the verb's forms and the argument types;
    not the state of the world (whether the waypoint exists, the target is in range...).
    """
    spec = VERBS.get(verb)
    if spec is None:
        return f"unknown verb {verb!r}; known verbs: {', '.join(VERBS)}"
    for key, value in args.items():
        if not isinstance(value, str | int | float | bool):
            return f"{verb}: argument {key!r} must be a string or a number, got {value!r}"
    if len(spec.forms) > 1:
        optional = {a.name for a in spec.optional}
        if all(set(args) - optional != {a.name for a in form} for form in spec.forms):
            expected = "one of " + ", ".join(
                "{" + ", ".join(f'"{a.name}": {a.hint}' for a in form) + "}" for form in spec.forms
            )
            return f"{verb} needs {expected}; got {dict(args)}"
        return None
    (form,) = spec.forms
    wanted = [a.name for a in form]
    missing = [k for k in wanted if k not in args]
    extra = sorted(set(args) - set(wanted))
    if missing or extra:
        problem = f"missing {missing}" if missing else f"unexpected {extra}"
        return f"{verb} takes {_form_text(form)}; {problem}"
    for arg in form:
        if not isinstance(args[arg.name], arg.type):
            return f"{verb}: {arg.name!r} must be an id string, got {args[arg.name]!r}"
    return None


def check_act(verb: str, args: Mapping[str, object] | Iterable[str] = ()) -> VerbSpec:
    """The spec of ``verb`` if ``args`` fit it; raises :class:`VocabularyError` otherwise.

    ``args`` is an act's argument dict, or only the argument names (a domain checked at load
    time may not know the values yet; names are then checked, not types). The error names the
    verb and the argument and lists the valid ones.
    """
    if not isinstance(args, Mapping):
        args = dict.fromkeys(args, "")
    problem = act_problem(verb, args)
    if problem is not None:
        raise VocabularyError(problem)
    return VERBS[verb]


# --- facts and events -------------------------------------------------------------------------

T = TypeVar("T", bound=tuple[Any, ...])


class FactKind(Generic[T]):
    """A fact or event name with its fields: reads a raw fact into a named tuple ``shape``.

    ``KIND.name`` is the fact's name (the constant a fact's first value is compared with);
    ``KIND.read(fact)`` gives the typed tuple; ``first`` and ``all`` pick facts of this kind out
    of a percept's list.

    With ``rest=True`` the shape's last field takes every value after the fixed ones, as a
    tuple: ``("order", id, sender, task, *args)`` reads as ``Order(id, sender, task, args)``.
    Such a fact has at least as many values as the fixed fields, and any number more.
    """

    __slots__ = ("_build", "_fixed", "doc", "name", "rest", "shape")

    def __init__(self, name: str, shape: type[T], doc: str, *, rest: bool = False) -> None:
        self.name = name
        self.shape = shape
        self.doc = doc
        self.rest = rest
        self._build: Callable[..., T] = shape
        self._fixed = len(self.fields) - 1 if rest else len(self.fields)

    @property
    def fields(self) -> tuple[str, ...]:
        """The field names after the fact's name, in order (with ``rest``, the last one holds
        the remaining values)."""
        return tuple(self.shape._fields)  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        rest = ", rest=True" if self.rest else ""
        return f"FactKind({self.name!r}, fields={self.fields}{rest})"

    def form(self) -> str:
        """The fact written as a pattern: ``(order id sender task args...)``."""
        return "(" + " ".join([self.name, *self._field_texts()]) + ")"

    def _field_texts(self) -> list[str]:
        fields = list(self.fields)
        if self.rest:
            fields[-1] += "..."
        return fields

    def arity_problem(self, count: int, *, prefix: bool = False) -> str | None:
        """Why a fact of this kind cannot have ``count`` values after its name, or None.

        ``prefix``: the values are a fact's leading ones (a ``forget`` pattern), so fewer is fine.
        """
        if count == self._fixed or (self.rest and count > self._fixed):
            return None
        if prefix and count < self._fixed:
            return None
        wanted = f"at least {self._fixed}" if self.rest else f"{self._fixed}"
        return f"{self.name!r} has {wanted} field(s) after its name, {self.form()}; got {count}"

    # The reader of facts by name is the one place that reads a fact's name by its index 0.

    def matches(self, fact: Sequence[Value]) -> bool:
        """True when ``fact`` is of this kind (its name and its length)."""
        if self.rest:
            return len(fact) > self._fixed and fact[0] == self.name  # by index: the name
        return len(fact) == self._fixed + 1 and fact[0] == self.name  # by index: the name

    def read(self, fact: Sequence[Value]) -> T:
        """The fields of ``fact`` by name; raises :class:`VocabularyError` for another kind."""
        if not self.matches(fact):
            raise VocabularyError(
                f"fact {list(fact)!r} is not a {self.name!r} fact; "
                f"expected ({', '.join([repr(self.name), *self._field_texts()])})"
            )
        if self.rest:
            fixed = self._fixed + 1
            return self._build(*fact[1:fixed], tuple(fact[fixed:]))
        return self._build(*fact[1:])

    def first(self, facts: Iterable[Sequence[Value]]) -> T | None:
        """The first fact of this kind in ``facts``, read; None when there is none."""
        for fact in facts:
            if fact and fact[0] == self.name:  # by index: the name
                return self.read(fact)
        return None

    def all(self, facts: Iterable[Sequence[Value]]) -> list[T]:
        """Every fact of this kind in ``facts``, read, in order."""
        named = [fact for fact in facts if fact and fact[0] == self.name]  # by index: the name
        if not self.rest:
            # read() without its checks, for facts of the right length: daemons read a bot's
            # sightings this way every tick, and there are more as the battle grows.
            size, build = self._fixed + 1, self._build
            shaped = [build(*fact[1:]) for fact in named if len(fact) == size]
            if len(shaped) == len(named):
                return shaped
        return [self.read(fact) for fact in named]  # read() says which fact is not of this kind

    def matching(self, facts: Iterable[Sequence[Value]]) -> list[T]:
        """Every fact of this kind and length in ``facts``, read, in order; facts of the same
        name with another shape are left out (a ``status`` fact is many reports' shape)."""
        return [self.read(fact) for fact in facts if fact and self.matches(fact)]

    def fact(self, *values: Value) -> Fact:
        """A fact of this kind from its field values in order (with ``rest``, the remaining
        values follow the fixed ones, not as one tuple); raises :class:`VocabularyError` when
        the count is wrong."""
        problem = self.arity_problem(len(values))
        if problem is not None:
            raise VocabularyError(problem)
        return (self.name, *values)


# Shapes of the facts: one named tuple per distinct field list.


class Tick(NamedTuple):
    tick: int


class Self(NamedTuple):
    id: str
    team: str
    cls: str


class State(NamedTuple):
    life: str
    """:data:`ALIVE`, :data:`DOWNED` or :data:`DEAD`."""


class At(NamedTuple):
    id: str
    waypoint: str


class Moving(NamedTuple):
    id: str
    origin: str
    target: str


class Position(NamedTuple):
    x: float
    y: float


class Amount(NamedTuple):
    value: int


class Name(NamedTuple):
    name: str


class WeaponCount(NamedTuple):
    weapon: str
    amount: int
    """Rounds (``ammo``, ``spare_ammo``) or ticks (``reloading``)."""


class Flag(NamedTuple):
    pass


class Ticks(NamedTuple):
    ticks: int


class Carrying(NamedTuple):
    item: str
    kind: str


class Seen(NamedTuple):
    id: str
    waypoint: str
    distance: float
    team: str
    """The team it appears to be on (a disguised saboteur looks friendly)."""


class Heard(NamedTuple):
    kind: str
    waypoint: str


class Owned(NamedTuple):
    point: str
    team: str


class Switch(NamedTuple):
    object: str
    on: bool


class ItemAt(NamedTuple):
    item: str
    waypoint: str


class OwnTurret(NamedTuple):
    id: str
    team: str
    waypoint: str
    health: int


class Influence(NamedTuple):
    area: int
    """The area's id in the map's strategic graph (:func:`build_strategic_graph`)."""
    friendly: float
    enemy: float


class Score(NamedTuple):
    team: str
    points: int


class Killed(NamedTuple):
    victim: str
    victim_team: str
    killer: str
    killer_team: str
    weapon: str


class Agent(NamedTuple):
    agent: str


class AgentBy(NamedTuple):
    agent: str
    by: str


class AgentAt(NamedTuple):
    agent: str
    waypoint: str


class CapturePoint(NamedTuple):
    point: str


class Thing(NamedTuple):
    object: str


class PickedUp(NamedTuple):
    item: str
    agent: str
    team: str


class TurretPlaced(NamedTuple):
    turret: str
    team: str
    waypoint: str


class Destroyed(NamedTuple):
    object: str
    """A turret, or a destroy target's marker id."""
    team: str
    """The team that owned it (a target's defenders)."""
    attacker: str
    """Who shot the turret, or who planted the charge."""


class GameOver(NamedTuple):
    winner: str
    """The winning team, or ``""`` for a draw."""
    reason: str


class Target(NamedTuple):
    target: str


class ByAmount(NamedTuple):
    by: str
    amount: int


class Reached(NamedTuple):
    waypoint: str


class ClassCount(NamedTuple):
    cls: str
    players: int


class Blocked(NamedTuple):
    object: str
    origin: str
    target: str


class ActFailed(NamedTuple):
    verb: str
    reason: str


class GameModeName(NamedTuple):
    name: str
    """A name of :data:`warband.world.modes.MODES`."""


class Objective(NamedTuple):
    id: str
    """The marker's id."""
    kind: str
    """``capture``, ``retrieval`` (where the retrieval object spawns), ``return`` (a team's
    return point), ``target`` (a destroy target) or ``hiding`` (where a VIP may hide)."""
    waypoint: str
    team: str
    """The team it belongs to (a return point's; a target's defenders; a capture point's
    first owner, see ``captured`` for the current one), ``""`` for none."""


class Role(NamedTuple):
    team: str
    role: str
    """:data:`ATTACK` or :data:`DEFEND`."""


class ObjectAt(NamedTuple):
    object: str
    waypoint: str
    """Where it lies, or where its carrier is."""


class Carrier(NamedTuple):
    object: str
    agent: str
    team: str


class Vip(NamedTuple):
    agent: str
    team: str
    """The team that must keep it alive."""


class TargetState(NamedTuple):
    target: str
    state: str
    """:data:`TARGET_INTACT`, :data:`TARGET_ARMED` or :data:`TARGET_DESTROYED`."""


class Fuse(NamedTuple):
    target: str
    ticks: int
    """Ticks until the charge goes off."""


class ObjectBy(NamedTuple):
    object: str
    agent: str
    team: str


# The agent's own body.
TICK: Final = FactKind("tick", Tick, "the current tick")
SELF: Final = FactKind("self", Self, "who the agent is: id, team, class")
STATE: Final = FactKind("state", State, "alive, downed or dead")
AT: Final = FactKind("at", At, "the waypoint the agent is at (or walking from)")
MOVING: Final = FactKind("moving", Moving, "walking a link from origin to target")
POSITION: Final = FactKind("position", Position, "map coordinates, rounded to 0.01")
HEALTH: Final = FactKind("health", Amount, "current health points")
MAX_HEALTH: Final = FactKind("max_health", Amount, "the class's maximum health")
WEAPON: Final = FactKind("weapon", Name, "the selected weapon")
AMMO: Final = FactKind("ammo", WeaponCount, "rounds in the clip of a weapon")
SPARE_AMMO: Final = FactKind("spare_ammo", WeaponCount, "rounds left to reload a weapon with")
RELOADING: Final = FactKind("reloading", WeaponCount, "ticks until a weapon's reload ends")
CROUCHED: Final = FactKind("crouched", Flag, "the agent is crouching")
CLOAKED: Final = FactKind("cloaked", Flag, "the agent is cloaked (scouts)")
DISGUISED: Final = FactKind("disguised", Flag, "the agent is disguised (saboteurs)")
BOOSTED: Final = FactKind("boosted", Ticks, "ticks of boost left")
CARRYING: Final = FactKind("carrying", Carrying, "an item the agent carries, and its kind")
BLEEDING_OUT: Final = FactKind("bleeding_out", Ticks, "downed: ticks until death")
RESPAWN_IN: Final = FactKind("respawn_in", Ticks, "dead: ticks until respawn")
SPAWN_OPTION: Final = FactKind(
    "spawn_option", Reached, "dead: a waypoint it may respawn at (the verb respawn chooses)"
)
TEAM_CLASS: Final = FactKind(
    "team_class", ClassCount, "dead: how many of the team's other members play a class"
)
# What the agent senses (only while alive).
SEES: Final = FactKind("sees", Seen, "a standing character in sight")
SEES_DOWNED: Final = FactKind("sees_downed", Seen, "a downed character in sight")
SEES_TURRET: Final = FactKind("sees_turret", Seen, "a turret in sight")
HEARD: Final = FactKind("heard", Heard, "a noise (gunfire, explosion, footsteps) and where")
# Common knowledge.
CAPTURED: Final = FactKind("captured", Owned, "a point and the team owning it (also an event)")
OPEN: Final = FactKind("open", Switch, "whether a door or bars is open, or a lever on")
PRESSED: Final = FactKind("pressed", Switch, "whether someone stands on a plate")
ITEM_AT: Final = FactKind("item_at", ItemAt, "an item lying at a waypoint")
TURRET: Final = FactKind("turret", OwnTurret, "a turret of the agent's own team")
INFLUENCE: Final = FactKind(
    "influence",
    Influence,
    "the team's influence map in an area where the enemy has some (World.track_influence)",
)
SCORE: Final = FactKind("score", Score, "a team's points (with a game mode)")
TIME_LEFT: Final = FactKind("time_left", Ticks, "ticks until the time limit (with a game mode)")
# The game mode's state (common knowledge, with a game mode).
GAME_MODE: Final = FactKind("game_mode", GameModeName, "the game mode being played")
OBJECTIVE: Final = FactKind(
    "objective", Objective, "a marker the mode plays on: its kind, waypoint and team"
)
ROLE: Final = FactKind("role", Role, "a team attacks or defends (assassination, destroy)")
OBJECT_AT: Final = FactKind(
    "object_at", ObjectAt, "where the retrieval object is (lying, or with its carrier)"
)
CARRIER: Final = FactKind("carrier", Carrier, "who carries the retrieval object, and their team")
VIP: Final = FactKind("vip", Vip, "the assassination target of a team")
VIP_AT: Final = FactKind("vip_at", AgentAt, "where a VIP is (own team's; enemy's if revealed)")
TARGET_STATE: Final = FactKind("target_state", TargetState, "a destroy target's state")
FUSE: Final = FactKind("fuse", Fuse, "ticks until the charge on an armed target goes off")

# Public events.
KILLED: Final = FactKind("killed", Killed, "a character was downed (credits the killer)")
DIED: Final = FactKind("died", Agent, "a downed character bled out")
REVIVED: Final = FactKind("revived", AgentBy, "a medic revived a downed team mate")
RESPAWNED: Final = FactKind("respawned", AgentAt, "a dead character respawned at a waypoint")
CONTESTED: Final = FactKind("contested", CapturePoint, "an enemy blocks a capture")
OPENED: Final = FactKind("opened", Thing, "a door or bars opened")
CLOSED: Final = FactKind("closed", Thing, "a door or bars closed")
PICKED_UP: Final = FactKind("picked_up", PickedUp, "an item was picked up")
DROPPED: Final = FactKind("dropped", ItemAt, "a carrier dropped an object (downed, or drop)")
TURRET_PLACED: Final = FactKind("turret_placed", TurretPlaced, "an engineer placed a turret")
REPAIRED: Final = FactKind("repaired", AgentBy, "an engineer repaired a turret")
DESTROYED: Final = FactKind("destroyed", Destroyed, "a turret or a destroy target was destroyed")
RETURNED: Final = FactKind("returned", ObjectBy, "a carrier brought the object to its return point")
OBJECT_RESET: Final = FactKind(
    "object_reset", ItemAt, "the retrieval object, left lying too long, is back at its spawn"
)
PLANTED: Final = FactKind("planted", ObjectBy, "a charge was planted on a destroy target")
DEFUSED: Final = FactKind("defused", ObjectBy, "a charge was defused")
GAME_OVER: Final = FactKind("game_over", GameOver, "the game mode decided")
# Private events, told only to the agent concerned.
HIT: Final = FactKind("hit", Target, "your shot hit")
MISSED: Final = FactKind("missed", Target, "your shot missed")
DAMAGED: Final = FactKind("damaged", ByAmount, "you took damage from an attacker")
HEALED: Final = FactKind("healed", ByAmount, "a medic healed you")
ARRIVED: Final = FactKind("arrived", Reached, "you reached the waypoint of your move")
BLOCKED: Final = FactKind("blocked", Blocked, "a closed door or bars stopped your move")
ACT_FAILED: Final = FactKind("act_failed", ActFailed, "an accepted act could not be done")


def _by_name(*kinds: FactKind[Any]) -> Mapping[str, FactKind[Any]]:
    return {kind.name: kind for kind in kinds}


FACTS: Final[Mapping[str, FactKind[Any]]] = _by_name(
    TICK, SELF, STATE, AT, MOVING, POSITION, HEALTH, MAX_HEALTH, WEAPON, AMMO, SPARE_AMMO,
    RELOADING, CROUCHED, CLOAKED, DISGUISED, BOOSTED, CARRYING, BLEEDING_OUT, RESPAWN_IN,
    SPAWN_OPTION, TEAM_CLASS, SEES, SEES_DOWNED, SEES_TURRET, HEARD,
    CAPTURED, OPEN, PRESSED, ITEM_AT, TURRET, INFLUENCE, SCORE, TIME_LEFT,
    GAME_MODE, OBJECTIVE, ROLE, OBJECT_AT, CARRIER, VIP, VIP_AT, TARGET_STATE, FUSE,
)  # fmt: skip
"""Every fact name a percept may hold, with its fields."""

PUBLIC_EVENTS: Final[Mapping[str, FactKind[Any]]] = _by_name(
    KILLED, DIED, REVIVED, RESPAWNED, CAPTURED, CONTESTED, OPENED, CLOSED, PICKED_UP, DROPPED,
    TURRET_PLACED, REPAIRED, DESTROYED, RETURNED, OBJECT_RESET, PLANTED, DEFUSED, GAME_OVER,
)  # fmt: skip
"""Events every agent is told."""

PRIVATE_EVENTS: Final[Mapping[str, FactKind[Any]]] = _by_name(
    HIT, MISSED, DAMAGED, HEALED, ARRIVED, BLOCKED, ACT_FAILED
)
"""Events told only to the agent they concern."""

EVENTS: Final[Mapping[str, FactKind[Any]]] = {**PUBLIC_EVENTS, **PRIVATE_EVENTS}
"""Every event name a step may report, with its fields."""


def check_fact_name(name: str) -> FactKind[Any]:
    """The kind of fact or event called ``name``; raises :class:`VocabularyError` naming the
    known ones otherwise (for domains that test percept facts, checked when they load)."""
    kind = FACTS.get(name) or EVENTS.get(name)
    if kind is None:
        raise VocabularyError(
            f"unknown fact or event {name!r}; facts: {', '.join(FACTS)}; "
            f"events: {', '.join(EVENTS)}"
        )
    return kind


def markdown_tables() -> str:
    """The verbs, facts and events as the Markdown tables of PROTOCOL.md's section on the world
    (a test keeps the two the same)."""
    lines = ["| verb | queue | arguments (one of the forms) | what it does |", "|---|---|---|---|"]
    for name, spec in VERBS.items():
        forms = " or ".join(_form_markdown(form) for form in spec.forms)
        if spec.optional:
            forms += " (optional: " + ", ".join(f'"{a.name}"' for a in spec.optional) + ")"
        lines.append(f"| `{name}` | {spec.queue.value} | {forms} | {spec.doc} |")
    for title, kinds in (
        ("Percept facts", FACTS),
        ("Public events (every agent)", PUBLIC_EVENTS),
        ("Private events (the agent concerned)", PRIVATE_EVENTS),
    ):
        lines += ["", f"{title}:", "", "| name | fields | meaning |", "|---|---|---|"]
        for name, kind in kinds.items():
            lines.append(f"| `{name}` | {', '.join(kind.fields) or '—'} | {kind.doc} |")
    return "\n".join(lines) + "\n"


def _form_markdown(form: tuple[ArgSpec, ...]) -> str:
    return "{" + ", ".join(f'"{a.name}": {a.doc}' for a in form) + "}"
