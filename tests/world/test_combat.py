"""Combat: hit chances, seeded shots, splash damage, ammunition and reloading, health."""

from __future__ import annotations

import random

import pytest

from warband.exceptions import ConfigurationError
from warband.world.combat import (
    WEAPONS,
    Health,
    Weapon,
    WeaponState,
    get_weapon,
    hit_chance,
    resolve_shot,
    splash,
)


def _volley(seed: int, shots: int = 40) -> list[bool]:
    rng = random.Random(seed)
    rifle = WEAPONS["rifle"]
    return [resolve_shot(rng, rifle, "t", (20.0, 0.0), 20.0).hit for _ in range(shots)]


def test_same_seed_gives_the_same_shots() -> None:
    assert _volley(7) == _volley(7)


def test_different_seeds_give_different_shots() -> None:
    assert _volley(7) != _volley(8)


def test_hit_chance_falls_with_distance_and_is_zero_out_of_range() -> None:
    rifle = WEAPONS["rifle"]

    assert hit_chance(rifle, 0.0) > hit_chance(rifle, 20.0) > hit_chance(rifle, 40.0) > 0.0
    assert 0.0 == hit_chance(rifle, 40.1)


def test_crouching_and_cover_make_a_target_harder_to_hit() -> None:
    rifle = WEAPONS["rifle"]
    open_chance = hit_chance(rifle, 10.0)

    assert hit_chance(rifle, 10.0, crouched=True) < open_chance
    assert hit_chance(rifle, 10.0, cover=1.0) < hit_chance(rifle, 10.0, cover=0.5) < open_chance


def test_missile_hit_damages_the_target_and_splashes_bystanders() -> None:
    rocket = WEAPONS["rocket_launcher"]
    rng = random.Random(0)
    shots = [
        resolve_shot(
            rng,
            rocket,
            "t",
            (10.0, 0.0),
            10.0,
            bystanders={"near": (11.0, 0.0), "far": (30.0, 0.0), "t": (10.0, 0.0)},
        )
        for _ in range(30)
    ]
    hit = next(s for s in shots if s.hit)
    miss = next(s for s in shots if not s.hit)

    assert {"t": rocket.damage, "near": int(rocket.splash_damage * 0.8)} == dict(hit.damage)
    assert rocket.splash_damage == miss.damage["t"]
    assert "far" not in miss.damage


def test_splash_falls_linearly_to_zero_at_its_radius() -> None:
    hurt = splash((0.0, 0.0), 10.0, 100, {"a": (0.0, 0.0), "b": (5.0, 0.0), "c": (10.0, 0.0)})

    assert {"a": 100, "b": 50} == hurt


def test_firing_spends_rounds_until_the_clip_is_empty() -> None:
    state = WeaponState(WEAPONS["pistol"])
    for _ in range(12):
        assert state.why_cannot_fire() is None
        state.fire()

    assert "no ammo in pistol clip (reload first)" == state.why_cannot_fire()


def test_reload_takes_its_ticks_and_moves_spare_rounds_into_the_clip() -> None:
    state = WeaponState(WEAPONS["rifle"])
    for _ in range(10):
        state.fire()
    state.start_reload()
    state.tick()

    assert "rifle is reloading (1 ticks left)" == state.why_cannot_fire()
    state.tick()
    assert (30, 80) == (state.clip, state.spare)
    assert "rifle clip is already full" == state.why_cannot_reload()


def test_reload_without_spare_rounds_is_refused() -> None:
    state = WeaponState(WEAPONS["rocket_launcher"])
    state.spare = 0
    state.fire()

    assert "no spare rounds for rocket_launcher" == state.why_cannot_reload()
    assert "no ammo in rocket_launcher clip (no spare rounds either)" == state.why_cannot_fire()


def test_missile_launcher_fires_slower_than_a_rifle() -> None:
    state = WeaponState(WEAPONS["rocket_launcher"])
    state.spare = 10
    state.fire()
    state.start_reload()
    for _ in range(3):
        state.tick()

    assert state.why_cannot_fire() is None
    assert WEAPONS["rocket_launcher"].cooldown_ticks > WEAPONS["rifle"].cooldown_ticks


def test_melee_needs_no_ammunition() -> None:
    state = WeaponState(WEAPONS["knife"])
    for _ in range(50):
        state.fire()
        state.tick()

    assert state.why_cannot_fire() is None
    assert "knife needs no ammunition" == state.why_cannot_reload()


def test_health_reports_the_blow_that_brings_it_to_zero_once() -> None:
    health = Health(100)

    assert not health.damage(60)
    assert health.damage(60)
    assert not health.damage(10)
    assert 0 == health.current
    health.restore(0.5)
    assert 50 == health.current


def test_unknown_weapon_name_lists_the_known_ones() -> None:
    with pytest.raises(ConfigurationError, match="unknown weapon 'lazer'; known weapons: knife"):
        get_weapon("lazer")


def test_weapon_with_unknown_kind_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="unknown kind 'laser'"):
        Weapon("ray", "laser", 1, 1.0, 1, 1, 1, 1, 1.0, 0.0)
