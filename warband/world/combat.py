"""Combat: weapons, ammunition and reloading, seeded hit rolls, splash damage, health.

Everything random takes a ``random.Random`` the caller owns (the world has one, seeded), never
the global generator, so the same seed gives the same fight.

Weapon kinds:

- ``bullet``: hit chance falls with distance; a hit does ``damage``;
- ``missile``: slower fire (a cooldown between shots), a hit does ``damage`` to the target and
  a missile always explodes where it lands, doing ``splash_damage`` (falling linearly to 0 at
  ``splash_radius``) to every other body around the target, team mates included;
- ``melee``: short range, no ammunition, nearly always hits.

A :class:`WeaponState` tracks one carried weapon: rounds in the clip, spare rounds, reload and
cooldown timers counted in ticks. A :class:`Health` goes down with damage; at zero the owner
is *downed* (a medic may revive it for ``DOWNED_TICKS`` ticks), then dead until it respawns
``RESPAWN_TICKS`` ticks later.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from ..exceptions import ConfigurationError
from .geometry import Point, distance

DOWNED_TICKS: Final = 5
"""Ticks a downed character waits for a medic before it dies."""
RESPAWN_TICKS: Final = 5
"""Ticks between death and respawn."""
REVIVE_HEALTH: Final = 0.5
"""Fraction of its maximum health a revived character gets back."""

BULLET: Final = "bullet"
MISSILE: Final = "missile"
MELEE: Final = "melee"
WEAPON_KINDS: Final = (BULLET, MISSILE, MELEE)


@dataclass(frozen=True, slots=True)
class Weapon:
    """What a weapon does. Ranges in map units, times in ticks."""

    name: str
    kind: str
    """One of ``bullet``, ``missile``, ``melee``."""
    damage: int
    range: float
    clip_size: int
    """Rounds per clip; 0 means the weapon needs no ammunition (melee, turrets)."""
    spare_rounds: int
    """Rounds carried besides the clip at spawn."""
    reload_ticks: int
    cooldown_ticks: int
    """Ticks after a shot before the next one (0: fires every tick)."""
    accuracy: float
    """Hit chance at point blank, 0..1."""
    falloff: float
    """Fraction of the accuracy lost at full range (linear in between)."""
    splash_radius: float = 0.0
    splash_damage: int = 0

    def __post_init__(self) -> None:
        if self.kind not in WEAPON_KINDS:
            raise ConfigurationError(
                f"weapon {self.name!r}: unknown kind {self.kind!r}; known kinds: "
                + ", ".join(WEAPON_KINDS)
            )


WEAPONS: Final[Mapping[str, Weapon]] = {
    w.name: w
    for w in (
        Weapon("rifle", BULLET, 20, 40.0, 30, 90, 2, 0, 0.8, 0.5),
        Weapon("pistol", BULLET, 15, 25.0, 12, 36, 1, 0, 0.75, 0.6),
        Weapon("machine_gun", BULLET, 18, 40.0, 60, 120, 3, 0, 0.7, 0.5),
        Weapon("sniper_rifle", BULLET, 70, 90.0, 5, 20, 3, 2, 0.9, 0.1),
        Weapon("rocket_launcher", MISSILE, 80, 45.0, 1, 4, 3, 2, 0.75, 0.3, 5.0, 50),
        Weapon("knife", MELEE, 60, 2.0, 0, 0, 0, 1, 0.95, 0.0),
        Weapon("turret_gun", BULLET, 10, 30.0, 0, 0, 0, 0, 0.7, 0.5),
    )
}
"""The built-in weapons by name."""


def get_weapon(name: str) -> Weapon:
    """The built-in weapon called ``name``; raises ConfigurationError listing the known ones."""
    try:
        return WEAPONS[name]
    except KeyError:
        known = ", ".join(sorted(WEAPONS))
        raise ConfigurationError(f"unknown weapon {name!r}; known weapons: {known}") from None


class WeaponState:
    """One carried weapon: clip, spare rounds, and the reload and cooldown timers."""

    __slots__ = ("clip", "cooldown_left", "reload_left", "spare", "weapon")

    def __init__(self, weapon: Weapon) -> None:
        self.weapon = weapon
        self.clip = weapon.clip_size
        self.spare = weapon.spare_rounds
        self.reload_left = 0
        self.cooldown_left = 0

    @property
    def rounds(self) -> int:
        """Rounds left in all (clip + spare); weapons without ammunition report 0."""
        return self.clip + self.spare

    def why_cannot_fire(self) -> str | None:
        """None when a shot is possible now, else why not (``reloading``, ``no ammo``...)."""
        if self.reload_left > 0:
            return f"{self.weapon.name} is reloading ({self.reload_left} ticks left)"
        if self.weapon.clip_size > 0 and self.clip == 0:
            hint = "reload first" if self.spare > 0 else "no spare rounds either"
            return f"no ammo in {self.weapon.name} clip ({hint})"
        if self.cooldown_left > 0:
            return f"{self.weapon.name} is cooling down ({self.cooldown_left} ticks left)"
        return None

    def fire(self) -> None:
        """Spend one round and start the cooldown; call only after :meth:`why_cannot_fire`."""
        if self.weapon.clip_size > 0:
            self.clip -= 1
        self.cooldown_left = self.weapon.cooldown_ticks

    def why_cannot_reload(self) -> str | None:
        """None when a reload can start now, else why not."""
        if self.weapon.clip_size == 0:
            return f"{self.weapon.name} needs no ammunition"
        if self.reload_left > 0:
            return f"{self.weapon.name} is already reloading"
        if self.clip == self.weapon.clip_size:
            return f"{self.weapon.name} clip is already full"
        if self.spare == 0:
            return f"no spare rounds for {self.weapon.name}"
        return None

    def start_reload(self) -> None:
        """Begin reloading; the clip refills when the timer runs out (see :meth:`tick`)."""
        self.reload_left = max(self.weapon.reload_ticks, 1)

    def tick(self) -> None:
        """Advance the timers by one tick; a finished reload moves spare rounds to the clip."""
        if self.cooldown_left > 0:
            self.cooldown_left -= 1
        if self.reload_left > 0:
            self.reload_left -= 1
            if self.reload_left == 0:
                moved = min(self.weapon.clip_size - self.clip, self.spare)
                self.clip += moved
                self.spare -= moved


def hit_chance(weapon: Weapon, dist: float, *, crouched: bool = False, cover: float = 0.0) -> float:
    """Probability that a shot at distance ``dist`` hits; 0 beyond the weapon's range.

    A crouching target is smaller (x0.8); ``cover`` (0..1, from the map's cover data towards
    the shooter) hides up to 60% more.
    """
    if dist > weapon.range:
        return 0.0
    chance = weapon.accuracy * (1.0 - weapon.falloff * dist / weapon.range)
    if crouched:
        chance *= 0.8
    chance *= 1.0 - 0.6 * min(max(cover, 0.0), 1.0)
    return min(max(chance, 0.0), 1.0)


@dataclass(frozen=True, slots=True)
class Shot:
    """The outcome of one shot: whether it hit, and damage per body id (target and splash)."""

    hit: bool
    damage: Mapping[str, int]


def resolve_shot(
    rng: random.Random,
    weapon: Weapon,
    target: str,
    target_position: Point,
    dist: float,
    *,
    crouched: bool = False,
    cover: float = 0.0,
    bystanders: Mapping[str, Point] | None = None,
) -> Shot:
    """Roll one shot at ``target`` with ``rng`` (exactly one draw per shot).

    ``bystanders`` are the other bodies a missile's splash may reach (by id and position).
    """
    hit = rng.random() < hit_chance(weapon, dist, crouched=crouched, cover=cover)
    damage: dict[str, int] = {target: weapon.damage} if hit else {}
    if weapon.kind == MISSILE and weapon.splash_radius > 0:
        around = {k: p for k, p in (bystanders or {}).items() if k != target}
        if not hit:
            around[target] = target_position
        for body, amount in splash(
            target_position, weapon.splash_radius, weapon.splash_damage, around
        ).items():
            damage[body] = damage.get(body, 0) + amount
    return Shot(hit, damage)


def splash(
    center: Point, radius: float, damage: int, bodies: Mapping[str, Point]
) -> dict[str, int]:
    """Damage of an explosion at ``center`` on each body, falling linearly to 0 at ``radius``.

    Bodies out of reach (or taking less than 1 point) are left out; the result is keyed in
    sorted id order.
    """
    hurt = {}
    for body in sorted(bodies):
        d = distance(center, bodies[body])
        if d < radius:
            amount = int(damage * (1.0 - d / radius))
            if amount > 0:
                hurt[body] = amount
    return hurt


class Health:
    """Hit points between 0 and ``maximum``."""

    __slots__ = ("current", "maximum")

    def __init__(self, maximum: int) -> None:
        if maximum <= 0:
            raise ConfigurationError(f"maximum health must be positive, got {maximum}")
        self.maximum = maximum
        self.current = maximum

    @property
    def depleted(self) -> bool:
        """True at zero health."""
        return self.current == 0

    def damage(self, amount: int) -> bool:
        """Take ``amount`` damage; True when this brought health to zero (was above it)."""
        was_up = self.current > 0
        self.current = max(self.current - max(amount, 0), 0)
        return was_up and self.current == 0

    def heal(self, amount: int) -> None:
        """Regain ``amount`` hit points, up to the maximum."""
        self.current = min(self.current + max(amount, 0), self.maximum)

    def restore(self, fraction: float = 1.0) -> None:
        """Set health to ``fraction`` of the maximum (at least 1)."""
        self.current = max(1, min(self.maximum, round(self.maximum * fraction)))
