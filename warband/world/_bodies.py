"""Bodies: the roster a world is built from, and the mutable characters and turrets in it.

The world changes these; agents only ever read facts about them (see :mod:`._senses`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, TypeAlias

from ..exceptions import ConfigurationError
from .classes import BOOST_FACTOR, TURRET, CharacterClass
from .combat import WEAPONS, Health, WeaponState
from .geometry import Point
from .vocabulary import ALIVE

CROUCH_FACTOR: Final = 0.5
"""Speed multiplier while crouched."""


@dataclass(frozen=True, slots=True)
class Member:
    """One roster entry: the agent's team, class, and optionally the waypoint it starts at."""

    team: str
    cls: str = "assault"
    start: str | None = None


RosterEntry: TypeAlias = Member | tuple[str, str] | Mapping[str, str]
"""A roster value: a :class:`Member`, ``(team, class)`` or ``{"team": ..., "class": ...,
"start": ...}``."""


def member_of(agent_id: str, entry: RosterEntry) -> Member:
    """``entry`` as a :class:`Member`; raises ConfigurationError for a malformed dict."""
    if isinstance(entry, Member):
        return entry
    if isinstance(entry, tuple):
        return Member(entry[0], entry[1])
    unknown = sorted(set(entry) - {"team", "class", "start"})
    if "team" not in entry or unknown:
        raise ConfigurationError(
            f"roster entry for {agent_id!r} must have 'team' and may have 'class' and 'start'; "
            f"got keys {sorted(entry)}"
        )
    return Member(entry["team"], entry.get("class", "assault"), entry.get("start"))


class Character:
    """The mutable body of one agent: where it is, its health, weapons, stance and items."""

    __slots__ = (
        "boost_left",
        "carrying",
        "cloaked",
        "cls",
        "crouched",
        "deaths",
        "disguised",
        "heading",
        "health",
        "id",
        "kills",
        "life",
        "position",
        "progress",
        "selected",
        "spawn_choice",
        "spawn_class",
        "target",
        "team",
        "timer",
        "waypoint",
        "weapons",
    )

    def __init__(
        self,
        agent_id: str,
        team: str,
        cls: CharacterClass,
        waypoint: str,
        pos: Point,
        heading: float = 0.0,
    ) -> None:
        self.id = agent_id
        self.team = team
        self.cls = cls
        self.waypoint = waypoint
        """The waypoint it stands at, or walks from while ``progress > 0``."""
        self.target: str | None = None
        """The waypoint it walks to, if any."""
        self.progress = 0.0
        """Distance walked from ``waypoint`` towards ``target``."""
        self.position = pos
        self.heading = heading
        """Where it faces: radians counter-clockwise from east."""
        self.health = Health(cls.max_health)
        self.life = ALIVE
        self.timer = 0
        """Ticks until a downed character dies or a dead one respawns."""
        self.weapons = {w.name: WeaponState(w) for w in cls.weapon_specs()}
        self.selected: str | None = cls.weapons[0] if cls.weapons else None
        self.crouched = False
        self.cloaked = False
        self.disguised = False
        self.boost_left = 0
        self.carrying: list[str] = []
        self.kills = 0
        self.deaths = 0
        self.spawn_choice: str | None = None
        self.spawn_class: str | None = None
        """The class it chose to come back as (the verb respawn); None: its own."""
        """Dead: the spawn it chose (``respawn``), taken if still open when its time is up."""

    @property
    def speed(self) -> float:
        """Map units walked per tick: the class speed, boosted or crouched."""
        factor = (BOOST_FACTOR if self.boost_left > 0 else 1.0) * (
            CROUCH_FACTOR if self.crouched else 1.0
        )
        return self.cls.speed * factor


class Turret:
    """An engineer's automated turret: fires at enemies it sees, can be repaired or destroyed."""

    __slots__ = ("health", "id", "owner", "position", "team", "waypoint", "weapon")

    def __init__(self, turret_id: str, owner: Character, waypoint: str, pos: Point) -> None:
        self.id = turret_id
        self.team = owner.team
        self.owner = owner.id
        self.waypoint = waypoint
        self.position = pos
        self.health = Health(TURRET.max_health)
        self.weapon = WeaponState(WEAPONS[TURRET.weapon])
