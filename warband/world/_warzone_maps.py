"""The bigger bundled Warzone maps: copies of warzone's own layout stacked north to south.

``warzone-x2`` and ``warzone-x4`` are twice and four times warzone's area and waypoints, for
battles of up to 24 and 48 bots a side at warzone's density (12 a side on 45 waypoints). Each is
warzone's 9 x 5 field repeated northwards (copy 1 on rows 1-5, copy 2 on rows 6-10, ...), so
every copy keeps warzone's mirror symmetry across the e column: red still spawns on the west
edge, blue on the east, and neither side's half is the better one. Waypoints, walls and markers
are derived from ``warzone.toml`` itself, so that a change to warzone carries over when the
files are written again:

- grid waypoints keep warzone's chess names, the rows counting on (copy 2's ``a1`` is ``a6``);
  copy ``k``'s other waypoints (the houses and their yards) and every marker id and group get
  the suffix ``-k`` (grid names inside a marker id are renamed as their waypoints are:
  copy 2's ``hide-a1`` is ``hide-a6-2``);
- every column links a copy's row 5 to the next copy's row 1, ten units north (warzone's row
  spacing), through no wall; the outer wall is one rectangle around all copies;
- each copy has its spawns, capture points, defend markers, TSPs, regroup, sniping and hiding
  spots and Search and Destroy targets; Search and Retrieve needs exactly one object spawn and
  one return point per team (:func:`~warband.world.make_mode`), so only the middle copy
  (``(copies + 1) // 2``) keeps warzone's ``retrieval`` and ``return`` markers.

The files in ``warband/world/maps`` are what :func:`stacked_warzone_toml` writes (a test checks
it); after changing warzone.toml or this module, write them again with
``python -m warband.world._warzone_maps``.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from warband.exceptions import ConfigurationError
from warband.world._map_file import BUNDLED_MAP_DIR

STACKED: Final = {"warzone-x2": 2, "warzone-x4": 4}
"""The bundled stacked maps: name -> copies of warzone."""

_ROWS: Final = 5
"""Rows of waypoints in one copy of warzone."""
_GRID_ID: Final = re.compile(r"^([a-z])([0-9]+)$")
_SINGLE_COPY_KINDS: Final = frozenset({"retrieval", "return"})
"""Marker kinds the middle copy alone keeps (Search and Retrieve has one object, one return
point a team)."""


def stacked_warzone_toml(copies: int, source: Path | None = None) -> str:
    """The TOML text of ``copies`` copies of warzone (``source``: its file) stacked north.

    Raises ConfigurationError for fewer than 2 copies (one copy is warzone itself).
    """
    if copies < 2:
        raise ConfigurationError(f"a stacked Warzone map needs 2 copies or more, got {copies}")
    path = source if source is not None else BUNDLED_MAP_DIR / "warzone.toml"
    base = tomllib.loads(path.read_text(encoding="utf-8"))
    height = _height(base)
    return _render(_stack(base, copies, height), copies, height)


def _height(base: dict[str, Any]) -> float:
    """Warzone's height: the top of its outer wall (the first wall, a closed rectangle)."""
    outer = base["walls"][0]
    if outer[0] != outer[-1] or len(outer) != 5 or min(y for _, y in outer) != 0:
        raise ConfigurationError("warzone.toml's first wall must be its outer rectangle")
    return float(max(y for _, y in outer))


def _stack(base: dict[str, Any], copies: int, height: float) -> dict[str, Any]:
    """The map data of ``copies`` copies of ``base``, each ``height`` north of the last."""
    width = max(x for x, _ in base["walls"][0])
    middle = (copies + 1) // 2
    data: dict[str, Any] = {
        "links": [],
        "walls": [[[0, 0], [width, 0], [width, height * copies], [0, height * copies], [0, 0]]],
        "waypoints": [],
        "markers": [],
    }
    for copy in range(1, copies + 1):
        rename = _Renamer(copy)
        shift = height * (copy - 1)
        data["links"] += [sorted((rename(a), rename(b))) for a, b in base["links"]]
        data["walls"] += [[[x, y + shift] for x, y in wall] for wall in base["walls"][1:]]
        data["waypoints"] += [
            {"id": rename(w["id"]), "pos": [w["pos"][0], w["pos"][1] + shift]}
            for w in base["waypoints"]
        ]
        for marker in base["markers"]:
            if marker["kind"] in _SINGLE_COPY_KINDS and copy != middle:
                continue
            data["markers"].append(rename.marker(marker))
        if copy > 1:  # each column links the last copy's top row to this copy's bottom row
            columns = sorted({m[1] for w in base["waypoints"] if (m := _GRID_ID.match(w["id"]))})
            below = _Renamer(copy - 1)
            data["links"] += [
                [below(f"{column}{_ROWS}"), rename(f"{column}1")] for column in columns
            ]
    data["links"].sort()
    return data


class _Renamer:
    """The names of copy ``copy``: grid rows counted on, every other name suffixed ``-copy``."""

    def __init__(self, copy: int) -> None:
        self.copy = copy

    def __call__(self, waypoint: str) -> str:
        grid = _GRID_ID.match(waypoint)
        if grid is None:
            return f"{waypoint}-{self.copy}"
        return f"{grid[1]}{int(grid[2]) + _ROWS * (self.copy - 1)}"

    def marker(self, marker: dict[str, Any]) -> dict[str, Any]:
        parts = [self(p) if _GRID_ID.match(p) else p for p in marker["id"].split("-")]
        renamed = {**marker, "id": f"{'-'.join(parts)}-{self.copy}"}
        renamed["waypoint"] = self(marker["waypoint"])
        if "group" in marker:
            renamed["group"] = f"{marker['group']}-{self.copy}"
        return renamed


def _render(data: dict[str, Any], copies: int, height: float) -> str:
    name = f"warzone-x{copies}"
    bots = 12 * copies
    top = _ROWS * copies
    lines = [
        f"# {name} -- {copies} warzone maps stacked north to south, for two teams of up to "
        f"{bots} bots each.",
        "#",
        "# GENERATED by warband/world/_warzone_maps.py from warzone.toml: do not edit by hand;",
        "# write it again with `python -m warband.world._warzone_maps`.",
        "#",
        f"# 80 x {_number(height * copies)} units, x east, y north. Copy k (1..{copies}) is "
        "warzone's 9 x 5 field moved",
        f"# {_number(height)} x (k - 1) units north: its rows are 5k-4 .. 5k (rows 1..{top}, "
        "columns a..i), its",
        "# houses, yards and every marker end in -k. Every column links row 5k to row 5k+1.",
        "# Each copy is mirror-symmetric across the e column, as warzone is: red spawns on the",
        "# west edge (column a), blue on the east (column i), five spawns a side per copy.",
        "# Each copy has warzone's three capture points with their defend markers, four TSPs,",
        "# regroup, sniping and hiding spots, and each team's two Search and Destroy targets with",
        "# their defend markers. Search and Retrieve has one object: its retrieval marker and the",
        f"# two return markers are in copy {(copies + 1) // 2} alone.",
        "#",
        "# Format reference: docs/maps.md in the warband repository (every key, marker and "
        "object kind).",
        "",
        f'name = "{name}"',
        f'description = "Warzone x{copies}: {copies} warzone fields stacked north to south, '
        f'for two teams of up to {bots}."',
        'teams = ["red", "blue"]',
        "",
        "links = [",
        *(f'  ["{a}", "{b}"],' for a, b in data["links"]),
        "]",
        "",
        "walls = [",
        *(f"  [{', '.join(_point(p) for p in wall)}]," for wall in data["walls"]),
        "]",
    ]
    for waypoint in data["waypoints"]:
        position = _point(waypoint["pos"])
        lines += ["", "[[waypoints]]", f'id = "{waypoint["id"]}"', f"pos = {position}"]
    for marker in data["markers"]:
        lines += ["", "[[markers]]"]
        lines += [f"{key} = {_value(marker[key])}" for key in _MARKER_ORDER if key in marker]
    return "\n".join(lines) + "\n"


_MARKER_ORDER: Final = ("id", "kind", "waypoint", "team", "radius", "group")


def _value(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else _number(value)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _point(point: Sequence[float]) -> str:
    return f"[{_number(point[0])}, {_number(point[1])}]"


def write_stacked_maps(folder: Path = BUNDLED_MAP_DIR) -> list[Path]:
    """Write every map of :data:`STACKED` into ``folder``; the paths written."""
    written = []
    for name, copies in STACKED.items():
        path = folder / f"{name}.toml"
        path.write_text(stacked_warzone_toml(copies), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for written_path in write_stacked_maps():
        print(f"wrote {written_path}", file=sys.stderr)
