"""Drawing a map or a world snapshot as SVG (always) or PNG (with Pillow).

The scene is first built as a list of plain shapes in map coordinates (walls, areas, links,
waypoints with their ids, influence, corridors, markers, objects, agents) and a legend in
pixels beside the map (what each marker letter, colour and line means), then written by one of
two small back ends: SVG text written by hand, or ``PIL.ImageDraw``. Both draw the same shapes,
so what a test checks in the SVG holds for the PNG. Agents on one spot (a squad on its spawn)
are spread on a small ring with their labels in a column, so none hides another.

A snapshot is the dict of :meth:`warband.world.simulation.World.snapshot`; its ``"map"`` names
the map to load (bundled name or path) and areas are rebuilt with the default clustering.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from warband.exceptions import ConfigurationError
from warband.world._map_file import load_map
from warband.world._snapshot import snapshot_map
from warband.world.geometry import Point
from warband.world.maps import Map
from warband.world.strategic import StrategicGraph, build_strategic_graph

SCALE = 12.0
"""Pixels per map unit (more for a small map, less for a large one: :data:`MIN_SIDE`,
:data:`MAX_SIDE`)."""

MIN_SIDE = 960.0
"""Pixels of the map's longer side at least: a small map (a building) is drawn larger, so its
waypoint ids and labels have room."""

MAX_SIDE = 4000.0
"""Pixels of the drawing's longer side at most: a larger map is drawn at a smaller scale, so
a map kilometres wide is a picture, not gigabytes of memory."""

MARGIN = 30.0
"""Pixels around the drawing (room for the title)."""

LEGEND_WIDTH = 190.0
"""Pixels right of the map for the legend."""

LINE = 13.0
"""Pixels from one line of the legend, or of a column of agent labels, to the next."""

TEAM_COLOURS: tuple[str, ...] = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e")
"""Colour of the first, second, ... team of the map."""

AREA_COLOURS: tuple[str, ...] = (
    "#8dd3c7",
    "#ffffb3",
    "#bebada",
    "#fb8072",
    "#80b1d3",
    "#fdb462",
    "#b3de69",
    "#fccde5",
    "#bc80bd",
    "#ccebc5",
)
"""Cycled per area id."""

MARKER_LETTERS: dict[str, str] = {
    "spawn": "S",
    "capture": "C",
    "tsp": "T",
    "regroup": "R",
    "sniping": "N",
    "defend": "D",
    "hiding": "H",
    "exit": "X",
    "stack": "K",
    "corner": "O",
    "retrieval": "Q",
    "return": "B",
    "target": "Y",
}
"""One-letter tag drawn next to each marker kind (the legend says which is which)."""

PNG_HINT = "PNG output needs Pillow: pip install 'warband[render]'"


# A shape's points are in map units, or with ``screen`` in pixels of the picture (the legend).


@dataclass(frozen=True)
class _Line:
    a: Point
    b: Point
    colour: str
    width: float
    opacity: float = 1.0
    dashed: bool = False
    screen: bool = False


@dataclass(frozen=True)
class _Circle:
    centre: Point
    radius: float  # pixels
    fill: str
    opacity: float = 1.0
    outline: str | None = None
    css_class: str = ""
    title: str = ""
    screen: bool = False


@dataclass(frozen=True)
class _Text:
    at: Point
    text: str
    colour: str = "#222222"
    size: float = 10.0
    screen: bool = False
    css_class: str = ""


_Shape = _Line | _Circle | _Text


def render(
    source: Map | Mapping[str, Any],
    *,
    out: Path,
    tick: int | None = None,
    graph: StrategicGraph | None = None,
) -> Path:
    """Draw a map or a snapshot to ``out`` (``.svg`` or ``.png``) and return ``out``.

    ``tick`` goes into the title (default: the snapshot's own tick). ``graph`` overrides the
    default area clustering. Raises :class:`ConfigurationError` for another suffix, a PNG
    without Pillow, a directory that does not exist or a file that cannot be written;
    :class:`warband.exceptions.MapError` when the snapshot's map cannot load.
    """
    suffix = out.suffix.lower()
    if suffix not in (".svg", ".png"):
        raise ConfigurationError(f"cannot render to {str(out)!r}: use a .svg or .png file name")
    if not out.parent.is_dir():
        raise ConfigurationError(
            f"cannot render to {str(out)!r}: {str(out.parent)!r} is not an existing directory; "
            "create it first"
        )
    if isinstance(source, Map):
        game_map, snapshot = source, None
    else:
        snapshot = source
        game_map = snapshot_map(snapshot)
        if tick is None and isinstance(snapshot.get("tick"), int):
            tick = snapshot["tick"]
    areas = graph or build_strategic_graph(game_map)
    shapes = _scene(game_map, areas, snapshot)
    shapes += _legend(game_map, snapshot, shapes)
    title = game_map.name if tick is None else f"{game_map.name} - tick {tick}"
    shapes.append(_Text((MARGIN, MARGIN * 0.7), title, size=14.0, screen=True))
    try:
        if suffix == ".svg":
            out.write_text(_to_svg(shapes, game_map), encoding="utf-8")
        else:
            _to_png(shapes, game_map, out)
    except OSError as error:
        raise ConfigurationError(
            f"cannot render to {str(out)!r}: {error.strerror or error}; pass a writable file"
        ) from None
    return out


def render_command(source: str, *, out: Path, tick: int | None = None) -> Path:
    """What ``warband render`` runs: ``source`` is a map name, a map file or a run's log dir."""
    path = Path(source)
    if path.is_dir():
        from warband.world.replay import snapshot_at

        found_tick, snapshot = snapshot_at(path, tick)
        return render(snapshot, out=out, tick=found_tick)
    return render(load_map(source), out=out, tick=tick)


# --- the scene --------------------------------------------------------------------------------


def _scene(
    game_map: Map, graph: StrategicGraph, snapshot: Mapping[str, Any] | None
) -> list[_Shape]:
    shapes: list[_Shape] = []
    unit = 1.0 / _canvas(game_map)[4]  # map units per pixel: offsets of labels are in pixels
    if snapshot is not None:
        shapes += _influence(game_map, graph, snapshot)
    for a, b in game_map.links:
        same = graph.area_of(a) == graph.area_of(b)
        shapes.append(
            _Line(game_map.position(a), game_map.position(b), "#999999", 2 if same else 1)
        )
    for p, q in game_map.walls:
        shapes.append(_Line(p, q, "#333333", 3))
    for area in graph.areas:
        colour = AREA_COLOURS[area.id % len(AREA_COLOURS)]
        for wp in area.waypoints:
            shapes.append(
                _Circle(
                    game_map.position(wp),
                    5,
                    colour,
                    outline="#555555",
                    title=f"{wp} (area {area.id})",
                )
            )
            x, y = game_map.position(wp)
            shapes.append(
                _Text((x - 8 * unit, y - 17 * unit), wp, "#777777", 7, css_class="waypoint-id")
            )
    if snapshot is not None:
        shapes += _corridors(graph, snapshot)
    shapes += _markers(game_map, unit)
    shapes += _objects(game_map, snapshot)
    if snapshot is not None:
        shapes += _mode_things(game_map, snapshot)
        shapes += _agents(game_map, snapshot, unit)
    return shapes


def _mode_things(game_map: Map, snapshot: Mapping[str, Any]) -> list[_Shape]:
    """The game mode's things: the retrieval object where it lies (a carrier lists it in its
    ``carrying``), each destroy target labelled with its state and fuse."""
    objectives = snapshot.get("objectives") or {}
    if not isinstance(objectives, Mapping):
        return []
    shapes: list[_Shape] = []
    retrieval = objectives.get("retrieval")
    if isinstance(retrieval, Mapping) and retrieval.get("carrier") is None:
        where = str(retrieval.get("waypoint"))
        if game_map.has_waypoint(where):
            x, y = game_map.position(where)
            shapes.append(_Circle((x + 0.8, y - 0.8), 3, "#ffbf00", title=str(retrieval["object"])))
    for target_id, target in sorted((objectives.get("targets") or {}).items()):
        where = str(target.get("waypoint"))
        if not game_map.has_waypoint(where):
            continue
        x, y = game_map.position(where)
        label = str(target.get("state", ""))
        if label == "armed":
            label += f" {target.get('fuse', '')}"
        shapes.append(_Text((x - 0.8, y + 2.0), f"{target_id}: {label}", "#d62728", 9))
    return shapes


def _team_colour(game_map: Map, team: object) -> str:
    if team in game_map.teams:
        return TEAM_COLOURS[game_map.teams.index(str(team)) % len(TEAM_COLOURS)]
    return "#7f7f7f"


def _influence(game_map: Map, graph: StrategicGraph, snapshot: Mapping[str, Any]) -> list[_Shape]:
    """Per-area discs for the first team that has an influence map: its colour where it holds
    the area, the other team's colour where enemies do, stronger with larger values."""
    per_team = snapshot.get("influence") or {}
    if not isinstance(per_team, Mapping) or not per_team:
        return []
    team = sorted(per_team, key=lambda t: (t not in game_map.teams, str(t)))[0]
    values = {int(k): float(v) for k, v in per_team[team].items() if _is_area(graph, k)}
    peak = max((abs(v) for v in values.values()), default=0.0)
    if peak == 0.0:
        return []
    others = [t for t in game_map.teams if t != team]
    shapes: list[_Shape] = []
    for area_id, value in sorted(values.items()):
        colour = _team_colour(game_map, team if value > 0 else (others[0] if others else None))
        for wp in graph.areas[area_id].waypoints:
            shapes.append(
                _Circle(
                    game_map.position(wp),
                    SCALE * 3,
                    colour,
                    opacity=0.45 * abs(value) / peak,
                    css_class="influence",
                    title=f"influence {value:.2f} ({team})",
                )
            )
    return shapes


def _is_area(graph: StrategicGraph, key: object) -> bool:
    try:
        return 0 <= int(str(key)) < len(graph.areas)
    except ValueError:
        return False


def _corridors(graph: StrategicGraph, snapshot: Mapping[str, Any]) -> list[_Shape]:
    corridors = snapshot.get("corridors") or {}
    shapes: list[_Shape] = []
    for index, (squad, areas) in enumerate(sorted(corridors.items())):
        ids = [int(a) for a in areas if _is_area(graph, a)]
        colour = TEAM_COLOURS[(index + 2) % len(TEAM_COLOURS)]
        centres = [graph.areas[a].centre for a in ids]
        for p, q in itertools.pairwise(centres):
            shapes.append(_Line(p, q, colour, 4, opacity=0.8, dashed=True))
        if centres:
            shapes.append(_Text(centres[0], f"corridor {squad}", colour))
    return shapes


def _markers(game_map: Map, unit: float) -> list[_Shape]:
    """Each marker's letter right of its waypoint (several on one waypoint side by side)."""
    shapes: list[_Shape] = []
    stacked: dict[str, int] = {}
    for marker in game_map.markers:
        x, y = game_map.position(marker.waypoint)
        slot = stacked.get(marker.waypoint, 0)
        stacked[marker.waypoint] = slot + 1
        colour = _team_colour(game_map, marker.team) if marker.team else "#444444"
        letter = MARKER_LETTERS.get(marker.kind, "?")
        shapes.append(
            _Text((x + (7 + slot * 8) * unit, y - 4 * unit), letter, colour, css_class="marker")
        )
    return shapes


def _objects(game_map: Map, snapshot: Mapping[str, Any] | None) -> list[_Shape]:
    states = (snapshot or {}).get("objects") or {}
    shapes: list[_Shape] = []
    for obj in game_map.objects:
        state = states.get(obj.id, {}) if isinstance(states, Mapping) else {}
        is_open = bool(state.get("open", obj.open))
        if obj.link is not None:
            (ax, ay), (bx, by) = game_map.position(obj.link[0]), game_map.position(obj.link[1])
            mx, my = (ax + bx) / 2, (ay + by) / 2
            length = math.hypot(bx - ax, by - ay) or 1.0
            nx, ny = -(by - ay) / length, (bx - ax) / length  # unit normal to the link
            colour = "#2ca02c" if is_open else "#8c564b"
            shapes.append(_Line((mx - nx, my - ny), (mx + nx, my + ny), colour, 5))
            shapes.append(_Text((mx + nx, my + ny), obj.id, colour, 9))
        else:
            where = state.get("waypoint", obj.waypoint) if obj.kind == "item" else obj.waypoint
            if where is None or not game_map.has_waypoint(str(where)):
                continue  # an item being carried is drawn with its carrier
            x, y = game_map.position(str(where))
            shapes.append(_Circle((x - 0.8, y - 0.8), 3, "#e377c2", title=obj.id))
            shapes.append(_Text((x - 0.8, y - 2.0), obj.id, "#8c1a6a", 9))
    return shapes


def _agents(game_map: Map, snapshot: Mapping[str, Any], unit: float) -> list[_Shape]:
    """Each agent a disc with its label; agents on one spot are spread on a ring around it,
    their labels one under the other beside it (else "red-6" is written over "red-2")."""
    spots: dict[Point, list[tuple[str, Mapping[str, Any]]]] = {}
    for agent_id, agent in sorted((snapshot.get("agents") or {}).items()):
        pos = _position(agent)
        if pos is not None:
            spots.setdefault(pos, []).append((str(agent_id), agent))
    shapes: list[_Shape] = []
    for (x, y), here in spots.items():
        ring = 10 * unit if len(here) > 1 else 0.0
        top = 10 * unit if len(here) == 1 else (len(here) - 1) * LINE / 2 * unit
        for slot, (agent_id, agent) in enumerate(here):
            angle = 2 * math.pi * slot / len(here)
            pos = (x + ring * math.cos(angle), y + ring * math.sin(angle))
            alive = agent.get("state", "alive") == "alive"
            fill = _team_colour(game_map, agent.get("team")) if alive else "#bbbbbb"
            title = f"{agent_id} {agent.get('team', '')} {agent.get('health', '')}"
            shapes.append(_Circle(pos, 7, fill, outline="#000000", css_class="agent", title=title))
            label = (x + ring + 10 * unit, y + top - slot * LINE * unit)
            shapes.append(_Text(label, agent_id, fill, 9, css_class="agent-label"))
    for turret_id, turret in sorted((snapshot.get("turrets") or {}).items()):
        turret_pos = _position(turret)
        if turret_pos is not None:
            colour = _team_colour(game_map, turret.get("team"))
            shapes.append(_Circle(turret_pos, 4, colour, outline="#000000", title=str(turret_id)))
    return shapes


def _position(body: object) -> Point | None:
    """A snapshot body's ``x``, ``y``; None without them or when not finite (not drawable)."""
    if not isinstance(body, Mapping):
        return None
    try:
        x, y = float(body["x"]), float(body["y"])
    except (KeyError, TypeError, ValueError):
        return None
    return (x, y) if math.isfinite(x) and math.isfinite(y) else None


def _legend(
    game_map: Map, snapshot: Mapping[str, Any] | None, scene: Sequence[_Shape]
) -> list[_Shape]:
    """What the picture's letters, colours and lines mean, right of the map, in pixels: only
    what this picture shows (its teams, its marker kinds, doors if it has any)."""
    left = _canvas(game_map)[0] - LEGEND_WIDTH + 10
    rows: list[tuple[_Shape | None, str]] = []
    for team in game_map.teams:
        rows.append((_Circle((0, 0), 5, _team_colour(game_map, team), outline="#000000"), team))
    if snapshot is not None and any(
        isinstance(shape, _Circle) and shape.css_class == "agent" and shape.fill == "#bbbbbb"
        for shape in scene
    ):
        rows.append((_Circle((0, 0), 5, "#bbbbbb", outline="#000000"), "dead"))
    rows.append((_Circle((0, 0), 4, AREA_COLOURS[0], outline="#555555"), "waypoint (colour: area)"))
    rows.append((_Line((0, 0), (14, 0), "#333333", 3), "wall"))
    rows.append((_Line((0, 0), (14, 0), "#999999", 1), "link"))
    kinds = sorted({m.kind for m in game_map.markers}, key=list(MARKER_LETTERS).index)
    for kind in kinds:
        rows.append((_Text((0, 4), MARKER_LETTERS[kind], "#444444"), f"{kind} marker"))
    if any(obj.link is not None for obj in game_map.objects):
        rows.append((_Line((7, -6), (7, 6), "#2ca02c", 5), "door/bars, open"))
        rows.append((_Line((7, -6), (7, 6), "#8c564b", 5), "door/bars, closed"))
    if any(obj.link is None for obj in game_map.objects):
        rows.append((_Circle((0, 0), 3, "#e377c2"), "plate, lever or item"))
    shapes: list[_Shape] = [_Text((left, MARGIN), "legend", size=11, screen=True)]
    for number, (sample, text) in enumerate(rows, start=1):
        y = MARGIN + number * LINE
        if isinstance(sample, _Circle):
            shapes.append(dataclasses.replace(sample, centre=(left + 5, y - 4), screen=True))
        elif isinstance(sample, _Line):
            a, b = (
                (left + sample.a[0], y - 4 + sample.a[1]),
                (left + sample.b[0], y - 4 + sample.b[1]),
            )
            shapes.append(dataclasses.replace(sample, a=a, b=b, screen=True))
        elif isinstance(sample, _Text):
            shapes.append(dataclasses.replace(sample, at=(left + 1, y), screen=True))
        shapes.append(_Text((left + 20, y), text, "#222222", 9, screen=True, css_class="legend"))
    return shapes


# --- back ends --------------------------------------------------------------------------------


def _canvas(game_map: Map) -> tuple[float, float, float, float, float]:
    """Pixel width and height (the map, and the legend right of it), the map's min x and max
    y (the top-left corner), and the scale (pixels per map unit)."""
    min_x, min_y, max_x, max_y = game_map.bounds
    extent = max(max_x - min_x, max_y - min_y, 1.0)
    scale = min(max(SCALE, MIN_SIDE / extent), MAX_SIDE / extent)
    width = (max_x - min_x) * scale + 2 * MARGIN + LEGEND_WIDTH
    legend_rows = 3 + len(game_map.teams) + len({m.kind for m in game_map.markers}) + 5
    height = max((max_y - min_y) * scale + 2 * MARGIN, MARGIN * 2 + legend_rows * LINE)
    return width, height, min_x, max_y, scale


def _to_svg(shapes: Sequence[_Shape], game_map: Map) -> str:
    width, height, min_x, max_y, scale = _canvas(game_map)

    def px(p: Point, screen: bool = False) -> tuple[float, float]:
        if screen:
            return (round(p[0], 1), round(p[1], 1))
        return (
            round((p[0] - min_x) * scale + MARGIN, 1),
            round((max_y - p[1]) * scale + MARGIN, 1),
        )

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}">',
        f'<rect width="{width:.0f}" height="{height:.0f}" fill="#ffffff"/>',
    ]
    for shape in shapes:
        if isinstance(shape, _Line):
            (x1, y1), (x2, y2) = px(shape.a, shape.screen), px(shape.b, shape.screen)
            dash = ' stroke-dasharray="6,4"' if shape.dashed else ""
            parts.append(
                f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{shape.colour}" '
                f'stroke-width="{shape.width}" stroke-opacity="{shape.opacity:.2f}"{dash}/>'
            )
        elif isinstance(shape, _Circle):
            cx, cy = px(shape.centre, shape.screen)
            css = f' class="{shape.css_class}"' if shape.css_class else ""
            stroke = f' stroke="{shape.outline}"' if shape.outline else ""
            title = f"<title>{escape(shape.title)}</title>" if shape.title else ""
            parts.append(
                f'<circle{css} cx="{cx}" cy="{cy}" r="{shape.radius}" fill="{shape.fill}" '
                f'fill-opacity="{shape.opacity:.2f}"{stroke}>{title}</circle>'
            )
        else:
            x, y = px(shape.at, shape.screen)
            css = f' class="{shape.css_class}"' if shape.css_class else ""
            parts.append(
                f'<text{css} x="{x}" y="{y}" font-family="sans-serif" font-size="{shape.size}" '
                f'fill="{shape.colour}">{escape(shape.text)}</text>'
            )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _to_png(shapes: Sequence[_Shape], game_map: Map, out: Path) -> None:
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        raise ConfigurationError(PNG_HINT) from None
    width, height, min_x, max_y, scale = _canvas(game_map)

    def px(p: Point, screen: bool = False) -> tuple[float, float]:
        if screen:
            return p
        return ((p[0] - min_x) * scale + MARGIN, (max_y - p[1]) * scale + MARGIN)

    image = Image.new("RGB", (int(width), int(height)), "#ffffff")
    draw = ImageDraw.Draw(image, "RGBA")  # RGBA mode blends translucent fills
    for shape in shapes:
        if isinstance(shape, _Line):
            colour = _rgba(shape.colour, shape.opacity)
            ends = [px(shape.a, shape.screen), px(shape.b, shape.screen)]
            draw.line(ends, fill=colour, width=max(1, round(shape.width)))
        elif isinstance(shape, _Circle):
            cx, cy = px(shape.centre, shape.screen)
            r = shape.radius
            outline = _rgba(shape.outline, 1.0) if shape.outline else None
            draw.ellipse(
                [cx - r, cy - r, cx + r, cy + r],
                fill=_rgba(shape.fill, shape.opacity),
                outline=outline,
            )
        else:
            x, y = px(shape.at, shape.screen)
            # SVG places text by its baseline, Pillow by its top: lift it to match.
            draw.text((x, y - shape.size), shape.text, fill=_rgba(shape.colour, 1.0))
    image.save(out, format="PNG")


def _rgba(colour: str, opacity: float) -> tuple[int, int, int, int]:
    value = colour.lstrip("#")
    return (
        int(value[0:2], 16),
        int(value[2:4], 16),
        int(value[4:6], 16),
        round(255 * max(0.0, min(1.0, opacity))),
    )
