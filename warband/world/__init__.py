"""The ground truth agents live in: maps, the strategic graph, tactical services, the simulation.

Pure, deterministic, synchronous code; the world actor wraps it for the message runtime.
"""

# --- MAP block: maps, geometry, strategic graph, influence, pathfinding, positions, render ---
from .geometry import DIRECTIONS as DIRECTIONS
from .geometry import BoundingBox as BoundingBox
from .geometry import Point as Point
from .geometry import Segment as Segment
from .geometry import WallIndex as WallIndex
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
from .maps import bundled_maps as bundled_maps
from .maps import grid_map as grid_map
from .maps import load_map as load_map
from .maps import map_from_data as map_from_data
from .maps import parse_map as parse_map
from .pathfinding import RouteSettings as RouteSettings
from .pathfinding import RouteTree as RouteTree
from .pathfinding import SquadClaims as SquadClaims
from .pathfinding import choose_regroup_marker as choose_regroup_marker
from .pathfinding import plan_routes as plan_routes
from .pathfinding import waypoint_path as waypoint_path
from .positions import BEHAVIOURS as BEHAVIOURS
from .positions import PositionWeights as PositionWeights
from .positions import ScoredPosition as ScoredPosition
from .positions import best_position as best_position
from .positions import pick_positions as pick_positions
from .render import render as render
from .strategic import Area as Area
from .strategic import StrategicGraph as StrategicGraph
from .strategic import build_strategic_graph as build_strategic_graph
from .strategic import cluster_waypoints as cluster_waypoints

# isort: split
# --- end MAP block ---

# --- SIM block: perception, combat, classes, modes, simulation ---
from .classes import CLASSES as CLASSES
from .classes import CharacterClass as CharacterClass
from .classes import get_class as get_class
from .classes import pick_classes as pick_classes
from .combat import WEAPONS as WEAPONS
from .combat import Health as Health
from .combat import Shot as Shot
from .combat import Weapon as Weapon
from .combat import WeaponState as WeaponState
from .combat import get_weapon as get_weapon
from .combat import hit_chance as hit_chance
from .combat import resolve_shot as resolve_shot
from .combat import splash as splash
from .modes import BodyCount as BodyCount
from .modes import CaptureAndHold as CaptureAndHold
from .modes import Fact as Fact
from .modes import GameMode as GameMode
from .modes import ModeView as ModeView
from .modes import Outcome as Outcome
from .modes import make_mode as make_mode
from .perception import Body as Body
from .perception import Hearing as Hearing
from .perception import Noise as Noise
from .perception import Observer as Observer
from .perception import Senses as Senses
from .perception import SightIndex as SightIndex
from .perception import Sighting as Sighting
from .perception import SpatialGrid as SpatialGrid
from .perception import hear as hear
from .perception import hear_all as hear_all
from .perception import perceive as perceive
from .perception import perceive_all_pairs as perceive_all_pairs
from .simulation import VERBS as VERBS
from .simulation import ActResult as ActResult
from .simulation import Member as Member
from .simulation import TickReport as TickReport
from .simulation import World as World

# isort: split
# --- end SIM block ---

__all__: list[str] = []
# MAP __all__ entries are added below this line
__all__ += [
    "BEHAVIOURS",
    "DIRECTIONS",
    "MARKER_KINDS",
    "OBJECT_KINDS",
    "Area",
    "BoundingBox",
    "InfluenceMap",
    "InfluenceSettings",
    "Link",
    "Map",
    "MapObject",
    "Marker",
    "Point",
    "PositionWeights",
    "RouteSettings",
    "RouteTree",
    "ScoredPosition",
    "Segment",
    "SquadClaims",
    "StrategicGraph",
    "WallIndex",
    "Waypoint",
    "best_position",
    "build_strategic_graph",
    "bundled_maps",
    "choose_regroup_marker",
    "cluster_waypoints",
    "grid_map",
    "line_of_sight",
    "load_map",
    "map_from_data",
    "parse_map",
    "pick_positions",
    "plan_routes",
    "render",
    "waypoint_path",
]
# SIM __all__ entries are added below this line
__all__ += [
    "CLASSES",
    "VERBS",
    "WEAPONS",
    "ActResult",
    "Body",
    "BodyCount",
    "CaptureAndHold",
    "CharacterClass",
    "Fact",
    "GameMode",
    "Health",
    "Hearing",
    "Member",
    "ModeView",
    "Noise",
    "Observer",
    "Outcome",
    "Senses",
    "Shot",
    "SightIndex",
    "Sighting",
    "SpatialGrid",
    "TickReport",
    "Weapon",
    "WeaponState",
    "World",
    "get_class",
    "get_weapon",
    "hear",
    "hear_all",
    "hit_chance",
    "make_mode",
    "perceive",
    "perceive_all_pairs",
    "pick_classes",
    "resolve_shot",
    "splash",
]
