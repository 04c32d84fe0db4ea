"""Character classes: health, speed, weapons and abilities of each kind of character.

Warzone (Killzone 3) lets players pick a class that gives weapons and abilities. The built-in
classes:

| class | weapons | abilities |
|---|---|---|
| ``assault`` | machine gun, rocket launcher | ``boost`` (faster for a few ticks), more health |
| ``medic`` | rifle, pistol | ``revive`` a downed team mate, ``heal`` a wounded one |
| ``engineer`` | rifle, pistol | ``place_turret`` (one at a time), ``repair`` a turret |
| ``tactician`` | rifle, pistol | ``capture_tsp`` (tactical spawn points) |
| ``scout`` | sniper rifle, pistol | ``cloak`` (toggle) |
| ``saboteur`` | rifle, knife | ``disguise`` (toggle: enemies see a team mate) |
| ``civilian`` | none | none (the prisoners of the cooperation scenarios) |

Every character can move, capture capture points, use doors, plates, bars and items.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from ..exceptions import ConfigurationError
from .combat import WEAPONS, Weapon

REVIVE: Final = "revive"
HEAL: Final = "heal"
PLACE_TURRET: Final = "place_turret"
REPAIR: Final = "repair"
CAPTURE_TSP: Final = "capture_tsp"
BOOST: Final = "boost"
CLOAK: Final = "cloak"
DISGUISE: Final = "disguise"
ABILITIES: Final = (REVIVE, HEAL, PLACE_TURRET, REPAIR, CAPTURE_TSP, BOOST, CLOAK, DISGUISE)
"""Every ability a class may grant."""

BOOST_TICKS: Final = 3
"""How long a boost lasts."""
BOOST_FACTOR: Final = 1.5
"""Speed multiplier while boosted."""
HEAL_AMOUNT: Final = 30
"""Hit points a medic's heal gives back."""
REPAIR_AMOUNT: Final = 40
"""Hit points an engineer's repair gives a turret."""


@dataclass(frozen=True, slots=True)
class CharacterClass:
    """A class: its name, maximum health, speed (map units per tick), weapons and abilities.

    The first weapon is the one selected at spawn.
    """

    name: str
    max_health: int
    speed: float
    weapons: tuple[str, ...]
    abilities: frozenset[str]

    def __post_init__(self) -> None:
        for weapon in self.weapons:
            if weapon not in WEAPONS:
                known = ", ".join(sorted(WEAPONS))
                raise ConfigurationError(
                    f"class {self.name!r}: unknown weapon {weapon!r}; known weapons: {known}"
                )
        for ability in sorted(self.abilities):
            if ability not in ABILITIES:
                raise ConfigurationError(
                    f"class {self.name!r}: unknown ability {ability!r}; known abilities: "
                    + ", ".join(ABILITIES)
                )

    def can(self, ability: str) -> bool:
        """True when this class has ``ability``."""
        return ability in self.abilities

    def weapon_specs(self) -> tuple[Weapon, ...]:
        """The class's weapons, first one selected at spawn."""
        return tuple(WEAPONS[w] for w in self.weapons)


CLASSES: Final[Mapping[str, CharacterClass]] = {
    c.name: c
    for c in (
        CharacterClass("assault", 150, 4.0, ("machine_gun", "rocket_launcher"), frozenset({BOOST})),
        CharacterClass("medic", 100, 5.0, ("rifle", "pistol"), frozenset({REVIVE, HEAL})),
        CharacterClass(
            "engineer", 100, 5.0, ("rifle", "pistol"), frozenset({PLACE_TURRET, REPAIR})
        ),
        CharacterClass("tactician", 100, 5.0, ("rifle", "pistol"), frozenset({CAPTURE_TSP})),
        CharacterClass("scout", 80, 5.5, ("sniper_rifle", "pistol"), frozenset({CLOAK})),
        CharacterClass("saboteur", 100, 5.0, ("rifle", "knife"), frozenset({DISGUISE})),
        CharacterClass("civilian", 100, 4.0, (), frozenset()),
    )
}
"""The built-in classes by name."""


@dataclass(frozen=True, slots=True)
class TurretSpec:
    """An automated turret an engineer places: health and weapon; it fires on its own."""

    max_health: int = 120
    weapon: str = "turret_gun"
    view_distance: float = 30.0


TURRET: Final = TurretSpec()


def get_class(name: str) -> CharacterClass:
    """The built-in class called ``name``; raises ConfigurationError listing the known ones."""
    try:
        return CLASSES[name]
    except KeyError:
        known = ", ".join(CLASSES)
        raise ConfigurationError(f"unknown class {name!r}; known classes: {known}") from None


PLAYABLE: Final = tuple(sorted(c for c in CLASSES if c != "civilian"))
"""The classes a bot may play (and choose when it respawns): all but the civilian."""


def pick_classes(count: int, rng: random.Random) -> list[str]:
    """Classes for ``count`` spawning bots, Killzone style: the objectives need tacticians and
    engineers, so the first two are a tactician and an engineer (then a medic), the rest are
    drawn at random from the fighting classes with ``rng``."""
    fixed = ["tactician", "engineer", "medic"][:count]
    return fixed + [rng.choice(PLAYABLE) for _ in range(count - len(fixed))]
