"""Character classes: the built-in classes, their abilities, and the spawn class heuristic."""

from __future__ import annotations

import random

import pytest

from warband.exceptions import ConfigurationError
from warband.world.classes import (
    CAPTURE_TSP,
    CLASSES,
    PLACE_TURRET,
    REVIVE,
    CharacterClass,
    get_class,
    pick_classes,
)


def test_each_objective_class_has_its_ability() -> None:
    assert get_class("medic").can(REVIVE)
    assert get_class("engineer").can(PLACE_TURRET)
    assert get_class("tactician").can(CAPTURE_TSP)
    assert not get_class("assault").can(REVIVE)


def test_assault_is_tougher_and_carries_a_missile_launcher() -> None:
    assault = get_class("assault")

    assert assault.max_health > get_class("medic").max_health
    assert "rocket_launcher" in assault.weapons


def test_civilian_carries_no_weapon() -> None:
    assert () == get_class("civilian").weapon_specs()


def test_unknown_class_lists_the_known_ones() -> None:
    with pytest.raises(ConfigurationError, match="unknown class 'wizard'; known classes: assault"):
        get_class("wizard")


def test_class_with_unknown_weapon_or_ability_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="unknown weapon 'bow'"):
        CharacterClass("archer", 100, 5.0, ("bow",), frozenset())
    with pytest.raises(ConfigurationError, match="unknown ability 'fly'"):
        CharacterClass("bird", 100, 5.0, (), frozenset({"fly"}))


def test_spawn_heuristic_always_brings_a_tactician_and_an_engineer() -> None:
    picked = pick_classes(8, random.Random(3))

    assert ["tactician", "engineer", "medic"] == picked[:3]
    assert 8 == len(picked)
    assert set(picked) <= set(CLASSES) - {"civilian"}
    assert picked == pick_classes(8, random.Random(3))
