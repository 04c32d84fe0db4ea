"""The ground truth agents live in: maps, tactical services, the simulation and its vocabulary.

Pure, deterministic, synchronous code; :class:`WorldActor` wraps a :class:`World` for the
message runtime. Where to start:

- a world: ``World.create(load_map("warzone"), seed=1, roster={...})``, then ``submit`` acts,
  ``step`` and read ``percepts_for(agent)``;
- what an agent may say and will hear: :data:`VERBS` (check a domain's acts with
  :func:`check_act`), :data:`FACTS` and :data:`EVENTS` (read a fact by field name with its
  kind, e.g. ``SEES.all(percept.facts)``), all in :mod:`warband.world.vocabulary`;
- squad services: :func:`build_strategic_graph`, :class:`InfluenceMap`, :func:`plan_routes`,
  :func:`waypoint_path`, :func:`pick_positions`.

Helpers not listed here (the spatial grid, the all-pairs perception reference, weapon state,
area clustering) stay in their modules: ``warband.world.perception``, ``.combat``,
``.strategic``...
"""

import typing as _typing

from ._acts import REACH as REACH
from ._acts import needs_no_help as needs_no_help
from ._bodies import Member as Member
from ._bodies import RosterEntry as RosterEntry
from ._deltas import PerceptChange as PerceptChange
from ._deltas import PerceptDeltas as PerceptDeltas
from ._map_file import bundled_maps as bundled_maps
from ._map_file import load_map as load_map
from ._map_file import map_from_data as map_from_data
from ._map_file import parse_map as parse_map
from ._map_generator import grid_map as grid_map
from ._rules import CAPTURE_TICKS as CAPTURE_TICKS
from ._snapshot import SNAPSHOT_EVENT as SNAPSHOT_EVENT
from ._snapshot import snapshot_map as snapshot_map
from ._state import TickReport as TickReport
from .classes import CLASSES as CLASSES
from .classes import PLAYABLE as PLAYABLE
from .classes import CharacterClass as CharacterClass
from .classes import get_class as get_class
from .classes import pick_classes as pick_classes
from .combat import WEAPONS as WEAPONS
from .combat import Weapon as Weapon
from .combat import get_weapon as get_weapon
from .combat import hit_chance as hit_chance
from .geometry import DIRECTIONS as DIRECTIONS
from .geometry import BoundingBox as BoundingBox
from .geometry import Point as Point
from .geometry import Segment as Segment
from .geometry import line_of_sight as line_of_sight
from .influence import InfluenceMap as InfluenceMap
from .influence import InfluenceSettings as InfluenceSettings
from .maps import MARKER_KINDS as MARKER_KINDS
from .maps import OBJECT_KINDS as OBJECT_KINDS
from .maps import Link as Link
from .maps import Map as Map
from .maps import MapObject as MapObject
from .maps import Marker as Marker
from .maps import Waypoint as Waypoint
from .modes import MODES as MODES
from .modes import Assassination as Assassination
from .modes import BodyCount as BodyCount
from .modes import CaptureAndHold as CaptureAndHold
from .modes import GameMode as GameMode
from .modes import GameResult as GameResult
from .modes import ModeView as ModeView
from .modes import SearchAndDestroy as SearchAndDestroy
from .modes import SearchAndRetrieve as SearchAndRetrieve
from .modes import make_mode as make_mode
from .pathfinding import RouteSettings as RouteSettings
from .pathfinding import RouteTree as RouteTree
from .pathfinding import SquadClaims as SquadClaims
from .pathfinding import choose_regroup_marker as choose_regroup_marker
from .pathfinding import plan_routes as plan_routes
from .pathfinding import waypoint_path as waypoint_path
from .perception import Body as Body
from .perception import Hearing as Hearing
from .perception import Noise as Noise
from .perception import Observer as Observer
from .perception import Senses as Senses
from .perception import Sighting as Sighting
from .perception import hear as hear
from .perception import perceive as perceive
from .positions import BEHAVIOURS as BEHAVIOURS
from .positions import PositionWeights as PositionWeights
from .positions import ScoredPosition as ScoredPosition
from .positions import best_position as best_position
from .positions import pick_positions as pick_positions
from .render import render as render
from .round import ATTACK_DEFEND_MODES as ATTACK_DEFEND_MODES
from .round import Mission as Mission
from .round import WarzoneRound as WarzoneRound
from .round import round_missions as round_missions
from .simulation import ActVerdict as ActVerdict
from .simulation import World as World
from .strategic import Area as Area
from .strategic import StrategicGraph as StrategicGraph
from .strategic import build_strategic_graph as build_strategic_graph
from .vocabulary import ACT_FAILED as ACT_FAILED
from .vocabulary import ALIVE as ALIVE
from .vocabulary import AMMO as AMMO
from .vocabulary import ARRIVED as ARRIVED
from .vocabulary import AT as AT
from .vocabulary import ATTACK as ATTACK
from .vocabulary import BLEEDING_OUT as BLEEDING_OUT
from .vocabulary import BLOCKED as BLOCKED
from .vocabulary import BOOSTED as BOOSTED
from .vocabulary import CAPTURED as CAPTURED
from .vocabulary import CARRIER as CARRIER
from .vocabulary import CARRYING as CARRYING
from .vocabulary import CLOAKED as CLOAKED
from .vocabulary import CLOSED as CLOSED
from .vocabulary import CONTESTED as CONTESTED
from .vocabulary import CROUCHED as CROUCHED
from .vocabulary import DAMAGED as DAMAGED
from .vocabulary import DEAD as DEAD
from .vocabulary import DEFEND as DEFEND
from .vocabulary import DEFUSED as DEFUSED
from .vocabulary import DESTROYED as DESTROYED
from .vocabulary import DIED as DIED
from .vocabulary import DISGUISED as DISGUISED
from .vocabulary import DOWNED as DOWNED
from .vocabulary import DROPPED as DROPPED
from .vocabulary import EVENTS as EVENTS
from .vocabulary import FACTS as FACTS
from .vocabulary import FUSE as FUSE
from .vocabulary import GAME_MODE as GAME_MODE
from .vocabulary import GAME_OVER as GAME_OVER
from .vocabulary import HEALED as HEALED
from .vocabulary import HEALTH as HEALTH
from .vocabulary import HEARD as HEARD
from .vocabulary import HIT as HIT
from .vocabulary import INFLUENCE as INFLUENCE
from .vocabulary import ITEM_AT as ITEM_AT
from .vocabulary import KILLED as KILLED
from .vocabulary import MAX_HEALTH as MAX_HEALTH
from .vocabulary import MISSED as MISSED
from .vocabulary import MOVING as MOVING
from .vocabulary import OBJECT_AT as OBJECT_AT
from .vocabulary import OBJECT_RESET as OBJECT_RESET
from .vocabulary import OBJECTIVE as OBJECTIVE
from .vocabulary import OPEN as OPEN
from .vocabulary import OPENED as OPENED
from .vocabulary import PICKED_UP as PICKED_UP
from .vocabulary import PLANTED as PLANTED
from .vocabulary import POSITION as POSITION
from .vocabulary import PRESSED as PRESSED
from .vocabulary import PRIVATE_EVENTS as PRIVATE_EVENTS
from .vocabulary import PUBLIC_EVENTS as PUBLIC_EVENTS
from .vocabulary import RELOADING as RELOADING
from .vocabulary import REPAIRED as REPAIRED
from .vocabulary import RESPAWN_IN as RESPAWN_IN
from .vocabulary import RESPAWNED as RESPAWNED
from .vocabulary import RETURNED as RETURNED
from .vocabulary import REVIVED as REVIVED
from .vocabulary import ROLE as ROLE
from .vocabulary import SCORE as SCORE
from .vocabulary import SEES as SEES
from .vocabulary import SEES_DOWNED as SEES_DOWNED
from .vocabulary import SEES_TURRET as SEES_TURRET
from .vocabulary import SELF as SELF
from .vocabulary import SPARE_AMMO as SPARE_AMMO
from .vocabulary import SPAWN_OPTION as SPAWN_OPTION
from .vocabulary import STATE as STATE
from .vocabulary import TARGET_ARMED as TARGET_ARMED
from .vocabulary import TARGET_DESTROYED as TARGET_DESTROYED
from .vocabulary import TARGET_INTACT as TARGET_INTACT
from .vocabulary import TARGET_STATE as TARGET_STATE
from .vocabulary import TEAM_CLASS as TEAM_CLASS
from .vocabulary import TICK as TICK
from .vocabulary import TIME_LEFT as TIME_LEFT
from .vocabulary import TURRET as TURRET
from .vocabulary import TURRET_PLACED as TURRET_PLACED
from .vocabulary import VERBS as VERBS
from .vocabulary import VIP as VIP
from .vocabulary import VIP_AT as VIP_AT
from .vocabulary import WEAPON as WEAPON
from .vocabulary import ArgSpec as ArgSpec
from .vocabulary import FactKind as FactKind
from .vocabulary import Queue as Queue
from .vocabulary import Verb as Verb
from .vocabulary import VerbSpec as VerbSpec
from .vocabulary import VocabularyError as VocabularyError
from .vocabulary import act_problem as act_problem
from .vocabulary import check_act as check_act
from .vocabulary import check_fact_name as check_fact_name

__all__ = [
    "ACT_FAILED",
    "ALIVE",
    "AMMO",
    "ARRIVED",
    "AT",
    "ATTACK",
    "ATTACK_DEFEND_MODES",
    "BEHAVIOURS",
    "BLEEDING_OUT",
    "BLOCKED",
    "BOOSTED",
    "CAPTURED",
    "CAPTURE_TICKS",
    "CARRIER",
    "CARRYING",
    "CLASSES",
    "CLOAKED",
    "CLOSED",
    "CONTESTED",
    "CROUCHED",
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
    "GAME_MODE",
    "GAME_OVER",
    "HEALED",
    "HEALTH",
    "HEARD",
    "HIT",
    "INFLUENCE",
    "ITEM_AT",
    "KILLED",
    "MARKER_KINDS",
    "MAX_HEALTH",
    "MISSED",
    "MODES",
    "MOVING",
    "OBJECTIVE",
    "OBJECT_AT",
    "OBJECT_KINDS",
    "OBJECT_RESET",
    "OPEN",
    "OPENED",
    "PICKED_UP",
    "PLANTED",
    "PLAYABLE",
    "POSITION",
    "PRESSED",
    "PRIVATE_EVENTS",
    "PUBLIC_EVENTS",
    "REACH",
    "RELOADING",
    "REPAIRED",
    "RESPAWNED",
    "RESPAWN_IN",
    "RETURNED",
    "REVIVED",
    "ROLE",
    "SCORE",
    "SEES",
    "SEES_DOWNED",
    "SEES_TURRET",
    "SELF",
    "SNAPSHOT_EVENT",
    "SPARE_AMMO",
    "SPAWN_OPTION",
    "STATE",
    "TARGET_ARMED",
    "TARGET_DESTROYED",
    "TARGET_INTACT",
    "TARGET_STATE",
    "TEAM_CLASS",
    "TICK",
    "TIME_LEFT",
    "TURRET",
    "TURRET_PLACED",
    "VERBS",
    "VIP",
    "VIP_AT",
    "WEAPON",
    "WEAPONS",
    "WORLD_ID",
    "ActVerdict",
    "Area",
    "ArgSpec",
    "Assassination",
    "Body",
    "BodyCount",
    "BoundingBox",
    "CaptureAndHold",
    "CharacterClass",
    "FactKind",
    "GameMode",
    "GameResult",
    "Hearing",
    "InfluenceMap",
    "InfluenceSettings",
    "Link",
    "Map",
    "MapObject",
    "Marker",
    "Member",
    "Mission",
    "ModeView",
    "Noise",
    "Observer",
    "PerceptChange",
    "PerceptDeltas",
    "Point",
    "PositionWeights",
    "Queue",
    "RosterEntry",
    "RouteSettings",
    "RouteTree",
    "ScoredPosition",
    "SearchAndDestroy",
    "SearchAndRetrieve",
    "Segment",
    "Senses",
    "Sighting",
    "SquadClaims",
    "StrategicGraph",
    "TickReport",
    "Verb",
    "VerbSpec",
    "VocabularyError",
    "WarzoneRound",
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
    "pick_positions",
    "plan_routes",
    "render",
    "round_missions",
    "snapshot_map",
    "waypoint_path",
]

if _typing.TYPE_CHECKING:
    from .actor import WORLD_ID as WORLD_ID
    from .actor import WorldActor as WorldActor
    from .actor import WorldModel as WorldModel

_ACTOR_NAMES = frozenset({"WORLD_ID", "WorldActor", "WorldModel"})


def __getattr__(name: str) -> _typing.Any:
    # The world actor needs the message runtime (zmq, asyncio); the simulation does not, so
    # `import warband.world` stays pure until someone asks for the actor.
    if name in _ACTOR_NAMES:
        from . import actor

        return getattr(actor, name)
    raise AttributeError(f"module 'warband.world' has no attribute {name!r}")
