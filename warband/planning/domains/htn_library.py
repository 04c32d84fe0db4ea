"""Loading HTN domains: the bundled ``.htn`` files by name, or any domain file by path.

``load_domain("turret")`` is Killzone 3's turret weapon selection (Listing 29.1),
``load_domain("medic")`` the multiplayer medic whose plan is Listing 29.2's revive.
:func:`turret_facts` and :func:`medic_facts` build start facts for them::

    domain = load_domain("turret")
    facts = turret_facts([("drone-1", 80.0, "vehicle")])
    result = HtnPlanner(domain).plan(facts, "behave")
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path

from ...exceptions import PlanningError
from ..htn.facts import FactDB
from ..htn.parser import load_domain_file, parse_domain
from ..htn.planner import HtnDomain, HtnFunction

BUNDLED_DOMAINS = ("medic", "turret")
"""Names :func:`load_domain` accepts besides file paths."""


def request_line_of_attack(facts: FactDB, threat: str, weapon: str) -> bool:
    """The turret's line-of-attack service (Listing 29.1): decide whether ``weapon`` can attack
    ``threat`` and put the answer in the facts as ``(line_of_attack threat weapon)``.

    There is a line of attack unless ``(obstructed threat weapon)`` holds, or the threat's
    kind (``(threat_kind threat kind)``) is one the weapon cannot hurt
    (``(ineffective weapon kind)``). The request itself always succeeds.
    """
    if facts.has("obstructed", threat, weapon):
        return True
    for answer in facts.query("threat_kind", threat, "?kind"):
        if facts.has("ineffective", weapon, answer["kind"]):
            return True
    facts.assert_fact("line_of_attack", threat, weapon)
    return True


_BUNDLED_FUNCTIONS: dict[str, dict[str, HtnFunction]] = {
    "turret": {"request_line_of_attack": request_line_of_attack},
    "medic": {},
}


def load_domain(
    name_or_path: str | Path, functions: Mapping[str, HtnFunction] | None = None
) -> HtnDomain:
    """A bundled domain by name (see :data:`BUNDLED_DOMAINS`) or a ``.htn`` file by path.

    Bundled domains come with their functions; ``functions`` adds to or overrides them.
    Raises DomainSyntaxError for a malformed file, PlanningError for an unknown name.
    """
    name = str(name_or_path)
    if name in _BUNDLED_FUNCTIONS:
        registered = {**_BUNDLED_FUNCTIONS[name], **(functions or {})}
        source = resources.files("warband.planning.domains").joinpath(f"{name}.htn")
        return parse_domain(
            source.read_text(encoding="utf-8"),
            path=f"warband/planning/domains/{name}.htn",
            functions=registered,
            name=name,
        )
    if name.endswith(".htn") or "/" in name or Path(name).exists():
        return load_domain_file(name, functions)
    raise PlanningError(
        f"unknown HTN domain {name!r}: give a path to a .htn file or one of the bundled "
        "domains: " + ", ".join(BUNDLED_DOMAINS)
    )


def turret_facts(
    threats: Iterable[tuple[str, float, str]],
    *,
    obstructed: Iterable[tuple[str, str]] = (),
    selected_weapon: str | None = None,
) -> FactDB:
    """Start facts for the turret: ``threats`` as (entity id, distance in m, kind).

    Missiles are ineffective against ``infantry``; ``obstructed`` lists (threat, weapon) pairs
    without a line of attack; ``selected_weapon`` is the weapon already in hand.
    """
    facts = FactDB([("ineffective", "missiles", "infantry")])
    for threat, distance, kind in threats:
        facts.assert_fact("threat", threat)
        facts.assert_fact("distance_to_threat", threat, distance)
        facts.assert_fact("threat_kind", threat, kind)
    for threat, weapon in obstructed:
        facts.assert_fact("obstructed", threat, weapon)
    if selected_weapon is not None:
        facts.assert_fact("selected_weapon", selected_weapon)
    return facts


def medic_facts(
    me: str = "medic-1",
    *,
    downed: Iterable[tuple[str, float, int]] = (),
    grenades: Iterable[str] = (),
    vehicle: str | None = None,
    wielding: str = "wp_mp_bot_rifle",
) -> FactDB:
    """Start facts for the medic ``me`` (pass ``constants={"self": me}`` when planning).

    ``downed`` lists teammates down as (entity id, distance in m, waypoint id); ``grenades``
    the grenades nearby; ``vehicle`` the vehicle the medic sits in, if any. The medic carries
    the revive gun (inventory name wp_online_mp_bot_revive_gun, wielded as wp_mp_bot_revive_gun).
    """
    facts = FactDB(
        [
            ("class", me, "medic"),
            ("wielding", me, wielding),
            ("inventory", me, "wp_online_mp_bot_revive_gun", "wp_mp_bot_revive_gun"),
        ]
    )
    for mate, distance, waypoint in downed:
        facts.assert_fact("downed", mate)
        facts.assert_fact("teammate", me, mate)
        facts.assert_fact("distance", me, mate, distance)
        facts.assert_fact("waypoint_of", mate, waypoint)
    for grenade in grenades:
        facts.assert_fact("grenade_nearby", grenade)
    if vehicle is not None:
        facts.assert_fact("in_vehicle", me, vehicle)
    return facts
