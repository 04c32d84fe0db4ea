"""warband.world's public names are pinned: nothing leaks or vanishes by accident, and importing
the pure world does not pull in the message runtime."""

from __future__ import annotations

import subprocess
import sys

import warband.world
from warband.world import modes

PUBLIC = sorted(
    [
        "ACT_FAILED",
        "ALIVE",
        "AMMO",
        "ARRIVED",
        "AT",
        "ATTACK",
        "ActVerdict",
        "Area",
        "ArgSpec",
        "Assassination",
        "BEHAVIOURS",
        "BLEEDING_OUT",
        "BLOCKED",
        "BOOSTED",
        "Body",
        "BodyCount",
        "BoundingBox",
        "CAPTURED",
        "CAPTURE_TICKS",
        "CARRIER",
        "CARRYING",
        "CLASSES",
        "CLOAKED",
        "CLOSED",
        "CONTESTED",
        "CROUCHED",
        "CaptureAndHold",
        "CharacterClass",
        "DAMAGED",
        "DEAD",
        "DEFEND",
        "DEFUSED",
        "DESTROYED",
        "DIED",
        "DIRECTIONS",
        "DISGUISED",
        "DOWNED",
        "DROPPED",
        "EVENTS",
        "FACTS",
        "FUSE",
        "FactKind",
        "GAME_MODE",
        "GAME_OVER",
        "GameMode",
        "GameResult",
        "HEALED",
        "HEALTH",
        "HEARD",
        "HIT",
        "INFLUENCE",
        "Hearing",
        "ITEM_AT",
        "InfluenceMap",
        "InfluenceSettings",
        "KILLED",
        "Link",
        "MARKER_KINDS",
        "MAX_HEALTH",
        "MISSED",
        "MODES",
        "MOVING",
        "Map",
        "MapObject",
        "Marker",
        "Member",
        "ModeView",
        "Noise",
        "OBJECTIVE",
        "OBJECT_AT",
        "OBJECT_KINDS",
        "OBJECT_RESET",
        "OPEN",
        "OPENED",
        "Observer",
        "PICKED_UP",
        "PLANTED",
        "POSITION",
        "PRESSED",
        "PRIVATE_EVENTS",
        "PUBLIC_EVENTS",
        "PerceptChange",
        "PerceptDeltas",
        "Point",
        "PositionWeights",
        "Queue",
        "REACH",
        "RELOADING",
        "REPAIRED",
        "RESPAWNED",
        "RESPAWN_IN",
        "RETURNED",
        "REVIVED",
        "ROLE",
        "RosterEntry",
        "RouteSettings",
        "RouteTree",
        "SCORE",
        "SEES",
        "SEES_DOWNED",
        "SEES_TURRET",
        "SELF",
        "SNAPSHOT_EVENT",
        "snapshot_map",
        "SPARE_AMMO",
        "SPAWN_OPTION",
        "round_missions",
        "WarzoneRound",
        "Mission",
        "ATTACK_DEFEND_MODES",
        "TEAM_CLASS",
        "STATE",
        "ScoredPosition",
        "SearchAndDestroy",
        "SearchAndRetrieve",
        "Segment",
        "Senses",
        "Sighting",
        "SquadClaims",
        "StrategicGraph",
        "TARGET_ARMED",
        "TARGET_DESTROYED",
        "TARGET_INTACT",
        "TARGET_STATE",
        "TICK",
        "TIME_LEFT",
        "TURRET",
        "TURRET_PLACED",
        "TickReport",
        "VERBS",
        "VIP",
        "VIP_AT",
        "Verb",
        "VerbSpec",
        "VocabularyError",
        "WEAPON",
        "WEAPONS",
        "WORLD_ID",
        "Waypoint",
        "Weapon",
        "World",
        "WorldActor",
        "WorldModel",
        "act_problem",
        "best_position",
        "build_strategic_graph",
        "bundled_maps",
        "check_act",
        "check_fact_name",
        "choose_regroup_marker",
        "get_class",
        "get_weapon",
        "grid_map",
        "hear",
        "hit_chance",
        "line_of_sight",
        "load_map",
        "make_mode",
        "map_from_data",
        "needs_no_help",
        "parse_map",
        "perceive",
        "pick_classes",
        "PLAYABLE",
        "pick_positions",
        "plan_routes",
        "render",
        "waypoint_path",
    ]
)


def test_the_public_names_are_exactly_the_curated_list() -> None:
    assert PUBLIC == sorted(warband.world.__all__)


def test_every_public_name_resolves() -> None:
    missing = [name for name in PUBLIC if not hasattr(warband.world, name)]
    assert [] == missing


def test_names_that_mean_something_else_elsewhere_are_not_exported() -> None:
    # ActResult is the catalog's message, Outcome the scenario's verdict, Fact the value model's.
    assert set() == {"ActResult", "Outcome", "Fact", "FactValue"} & set(dir(warband.world))


def test_game_modes_use_the_one_fact_type() -> None:
    assert not hasattr(modes, "FactValue")
    assert "Fact" in modes.GameMode.on_event.__annotations__["event"]


def test_importing_the_world_does_not_load_the_message_runtime() -> None:
    probe = (
        "import sys, warband.world; "
        "print(sorted(m for m in ('zmq', 'asyncio', 'warband.messaging') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert "[]" == done.stdout.strip()
