"""Map loading: the bundled maps, the TOML format, every validation error, generated grids."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from warband.exceptions import ConfigurationError, MapError, UnknownIdError
from warband.world import (
    MARKER_KINDS,
    OBJECT_KINDS,
    Map,
    bundled_maps,
    grid_map,
    load_map,
    parse_map,
)
from warband.world._map_file import BUNDLED_MAP_DIR
from warband.world.geometry import segments_intersect

HEADER = """
name = "bad"
links = [["a", "b"]]
walls = [[[5, -5], [5, -1]]]

[[waypoints]]
id = "a"
pos = [0, 0]

[[waypoints]]
id = "b"
pos = [10, 0]
"""


def test_the_bundled_maps_include_the_four_the_issue_asks_for() -> None:
    assert {"test", "warzone", "prison", "rooms"} <= set(bundled_maps())


@pytest.mark.parametrize("name", bundled_maps())
def test_every_bundled_map_loads_and_has_a_documented_header(name: str) -> None:
    game_map = load_map(name)
    assert name == game_map.name
    assert (BUNDLED_MAP_DIR / f"{name}.toml").read_text().startswith("#")


@pytest.mark.parametrize("name", bundled_maps())
def test_no_link_of_a_bundled_map_crosses_a_wall(name: str) -> None:
    game_map = load_map(name)
    for a, b in game_map.links:
        pa, pb = game_map.position(a), game_map.position(b)
        assert [] == [w for w in game_map.walls if segments_intersect(pa, pb, w[0], w[1])]


def test_a_map_loads_by_path_as_well_as_by_name(tmp_path: Path) -> None:
    copy = tmp_path / "copy.toml"
    copy.write_text((BUNDLED_MAP_DIR / "test.toml").read_text())
    assert load_map("test").waypoint_ids == load_map(copy).waypoint_ids
    assert load_map("test").waypoint_ids == load_map(str(copy)).waypoint_ids


MODE_MARKER_KINDS = {"retrieval", "return", "target"}


def test_the_test_map_uses_every_killzone_marker_kind_and_most_object_kinds() -> None:
    game_map = load_map("test")
    assert set(MARKER_KINDS) - {"exit", "stack", "corner"} - MODE_MARKER_KINDS == {
        m.kind for m in game_map.markers
    }
    assert set(OBJECT_KINDS) - {"bars", "lever"} == {o.kind for o in game_map.objects}


def test_warzone_has_every_killzone_marker_kind_with_the_game_mode_annotations() -> None:
    game_map = load_map("warzone")
    assert set(MARKER_KINDS) - {"exit", "stack", "corner"} == {m.kind for m in game_map.markers}
    assert ["retrieval-centre"] == [m.id for m in game_map.markers_of("retrieval")]
    assert {"red": ["return-red"], "blue": ["return-blue"]} == {
        team: [m.id for m in game_map.markers_of("return", team)] for team in game_map.teams
    }
    for team in game_map.teams:
        targets = game_map.markers_of("target", team)
        assert 2 == len(targets)
        for target in targets:  # each target has defend markers around it
            assert 2 == len([m for m in game_map.markers_of("defend") if m.group == target.id])


@pytest.mark.parametrize("kind", ["return", "target"])
def test_a_return_or_target_marker_without_a_team_is_refused(kind: str) -> None:
    text = (
        'name = "t"\nlinks = [["a", "b"]]\n'
        '[[waypoints]]\nid = "a"\npos = [0, 0]\n[[waypoints]]\nid = "b"\npos = [5, 0]\n'
        f'[[markers]]\nid = "m"\nkind = "{kind}"\nwaypoint = "a"\n'
    )
    with pytest.raises(MapError, match=f"marker \"m\": a {kind} marker needs a 'team'"):
        parse_map(text, source="t.toml")


def test_links_are_symmetric_and_neighbours_sorted() -> None:
    game_map = load_map("test")
    assert ("c", "m3", "r1") == game_map.neighbours("m1")
    assert game_map.has_link("m1", "c")
    assert game_map.has_link("c", "m1")
    assert not game_map.has_link("m1", "b1")


def test_spawns_are_per_team() -> None:
    game_map = load_map("test")
    assert ("r1", "r2") == tuple(m.waypoint for m in game_map.spawns("red"))
    assert ("b1", "b2") == tuple(m.waypoint for m in game_map.spawns("blue"))


def test_the_store_door_blocks_its_link_and_is_opened_by_the_plate() -> None:
    game_map = load_map("test")
    assert ("store-door",) == tuple(o.id for o in game_map.link_blockers("s", "d"))
    assert ("store-plate",) == tuple(o.id for o in game_map.controllers_of("store-door"))
    assert () == game_map.link_blockers("m1", "c")


def test_explicit_cover_overrides_and_walls_give_automatic_cover() -> None:
    game_map = load_map("test")
    m1 = game_map.waypoint("m1")
    assert 0.5 == m1.cover_from((30.0, 5.0))
    assert 0.0 == m1.cover_from((-30.0, 5.0))
    store = game_map.waypoint("s")
    assert 1.0 == store.cover_from((15.0, 40.0))


def test_walls_block_line_of_sight_on_the_map() -> None:
    game_map = load_map("test")
    assert not game_map.line_of_sight(game_map.position("c"), game_map.position("s"))
    assert game_map.line_of_sight(game_map.position("m1"), game_map.position("m3"))


def test_nearest_waypoint_and_bounds() -> None:
    game_map = load_map("test")
    assert "c" == game_map.nearest_waypoint((14.0, 11.0))
    assert (0.0, 0.0, 30.0, 24.0) == game_map.bounds


def test_unknown_map_name_lists_the_bundled_maps() -> None:
    with pytest.raises(MapError, match=r"unknown map 'nowhere'; bundled maps: .*warzone"):
        load_map("nowhere")


def test_missing_map_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(MapError, match="cannot read map file"):
        load_map(tmp_path / "missing.toml")


def test_a_binary_map_file_is_refused_naming_the_file(tmp_path: Path) -> None:
    binary = tmp_path / "photo.toml"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\x00")
    with pytest.raises(MapError, match=r"photo.toml: not a map file: byte 0 is not UTF-8 text"):
        load_map(binary)


@pytest.mark.parametrize(
    ("pos", "shown"),
    [
        ("[nan, 0]", r"\[nan, 0\]"),
        ("[inf, 0]", r"\[inf, 0\]"),
        ("[1e12, 0]", r"\[1000000000000.0, 0\]"),
    ],
)
def test_a_waypoint_off_the_sane_range_is_refused_when_the_map_loads(pos: str, shown: str) -> None:
    # 1e12 made `warband render` run for minutes; NaN crashed it.
    with pytest.raises(MapError, match=rf"bad.toml: waypoint \"b\": 'pos' {shown}.* out of range"):
        parse_map(HEADER.replace("pos = [10, 0]", f"pos = {pos}"), source="bad.toml")
    with pytest.raises(MapError, match=r"bad.toml: wall 1: each point .* between -10000 and"):
        parse_map(HEADER.replace("[5, -1]", "[1e308, -1e308]"), source="bad.toml")


def test_invalid_toml_names_the_file() -> None:
    with pytest.raises(MapError, match=r"^broken.toml: not valid TOML"):
        parse_map("name = ", source="broken.toml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            HEADER.replace('["a", "b"]', '["a", "zz"]'),
            r'bad.toml: link 1 .*: unknown waypoint "zz"',
        ),
        (HEADER.replace('["a", "b"]', '["a", "a"]'), r'link 1 .*: links waypoint "a" to itself'),
        (HEADER.replace('["a", "b"]', '["a"]'), r"link 1 .*: must be a list of at least 2"),
        (HEADER.replace("[5, -1]", "[5, 1]"), r'link 1 .*: link "a"-"b" crosses the wall piece'),
        (HEADER.replace('id = "b"', 'id = "a"'), r'waypoint "a": duplicate waypoint id'),
        (HEADER.replace("pos = [10, 0]", ""), r"waypoint \"b\": missing 'pos'"),
        (HEADER.replace("pos = [10, 0]", 'pos = ["x", 0]'), r"'pos' must be \[x, y\] numbers"),
        (HEADER.replace('id = "b"', "id = 7"), r"waypoint 2: 'id' must be a non-empty string"),
        (HEADER.replace('name = "bad"', ""), r"map: missing 'name'"),
        (HEADER.replace("links = [", "linkz = ["), r"unknown key 'linkz'; known keys: name"),
        (
            HEADER.replace("[[5, -5], [5, -1]]", "[[5, -5]]"),
            r"wall 1: must be a list of at least 2",
        ),
        (HEADER + "cover = { up = 1.0 }\n", r'waypoint "b": unknown cover direction \'up\''),
        (HEADER + "cover = { n = 2.0 }\n", r"cover 'n' must be a number in 0..1"),
    ],
)
def test_bad_map_files_say_which_element_is_wrong(text: str, message: str) -> None:
    with pytest.raises(MapError, match=message):
        parse_map(text, source="bad.toml")


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            '[[markers]]\nid = "m"\nkind = "flag"\nwaypoint = "a"\n',
            r'marker "m": unknown marker kind',
        ),
        ('[[markers]]\nid = "m"\nkind = "spawn"\nwaypoint = "a"\n', r"spawn marker needs a 'team'"),
        (
            '[[markers]]\nid = "m"\nkind = "spawn"\nwaypoint = "a"\nteam = "green"\n',
            r"unknown team 'green'; map teams: red, blue",
        ),
        (
            '[[markers]]\nid = "m"\nkind = "defend"\nwaypoint = "q"\n',
            r'marker "m": unknown waypoint "q"',
        ),
        ('[[objects]]\nid = "o"\nkind = "door"\nlink = ["a", "q"]\n', r"is not a link of this map"),
        ('[[objects]]\nid = "o"\nkind = "item"\nwaypoint = "a"\n', r"an item needs 'item'"),
        ('[[objects]]\nid = "o"\nkind = "plate"\nwaypoint = "a"\n', r"a plate needs 'controls'"),
        (
            '[[objects]]\nid = "o"\nkind = "plate"\nwaypoint = "a"\ncontrols = ["nope"]\n',
            r'object "o": controls "nope", which is not a door or bars',
        ),
        ('[[objects]]\nid = "o"\nkind = "crate"\nwaypoint = "a"\n', r"unknown object kind 'crate'"),
        (
            '[[markers]]\nid = "o"\nkind = "defend"\nwaypoint = "a"\n'
            '[[objects]]\nid = "o"\nkind = "item"\nwaypoint = "a"\nitem = "key"\n',
            r'object "o": duplicate id',
        ),
    ],
)
def test_bad_markers_and_objects_say_what_is_wrong(table: str, message: str) -> None:
    with pytest.raises(MapError, match=message):
        parse_map(HEADER + table, source="bad.toml")


def test_a_door_blocks_the_link_it_names() -> None:
    game_map = parse_map(HEADER + '[[objects]]\nid = "gate"\nkind = "door"\nlink = ["b", "a"]\n')
    assert ("gate",) == tuple(o.id for o in game_map.link_blockers("a", "b"))
    assert "a" == game_map.object("gate").waypoint


def _is_connected(game_map_links: tuple[tuple[str, str], ...], nodes: tuple[str, ...]) -> bool:
    adjacency: dict[str, set[str]] = {n: set() for n in nodes}
    for a, b in game_map_links:
        adjacency[a].add(b)
        adjacency[b].add(a)
    seen = {nodes[0]}
    stack = [nodes[0]]
    while stack:
        for nxt in adjacency[stack.pop()] - seen:
            seen.add(nxt)
            stack.append(nxt)
    return len(nodes) == len(seen)


def test_generated_grid_with_walls_stays_connected() -> None:
    game_map = grid_map(12, 8, wall_fraction=0.3, seed=4)
    assert 96 == len(game_map.waypoints)
    assert 0 < len(game_map.walls)
    assert _is_connected(game_map.links, game_map.waypoint_ids)
    assert 3 == len(game_map.markers_of("capture"))
    assert 8 == len(game_map.spawns("blue"))


def test_generated_grid_is_deterministic_per_seed() -> None:
    assert (
        grid_map(10, 6, wall_fraction=0.3, seed=1).links
        == grid_map(10, 6, wall_fraction=0.3, seed=1).links
    )
    assert (
        grid_map(10, 6, wall_fraction=0.3, seed=1).links
        != grid_map(10, 6, wall_fraction=0.3, seed=2).links
    )


@pytest.mark.parametrize(
    ("lookup", "message"),
    [
        (lambda m: m.position("nope"), "unknown waypoint 'nope' on map 'test'"),
        (lambda m: m.waypoint("nope"), "unknown waypoint 'nope' on map 'test'"),
        (lambda m: m.neighbours("nope"), "unknown waypoint 'nope' on map 'test'"),
        (lambda m: m.marker("nope"), "unknown marker 'nope' on map 'test'"),
        (lambda m: m.object("nope"), "unknown object 'nope' on map 'test'"),
    ],
)
def test_looking_up_an_unknown_id_names_the_id_and_the_map(
    lookup: Callable[[Map], object], message: str
) -> None:
    with pytest.raises(UnknownIdError) as caught:
        lookup(load_map("test"))
    assert str(caught.value).startswith(message)
    assert isinstance(caught.value, KeyError)  # callers catching KeyError still work


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"columns": 2, "rows": 1}, "grid_map needs columns >= 3 and rows >= 1, got 2x1"),
        ({"columns": 3, "rows": 1, "wall_fraction": 1.0}, "wall_fraction must be in [0, 1)"),
    ],
)
def test_grid_map_refuses_sizes_it_cannot_build(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        grid_map(**kwargs)


def test_the_map_format_is_documented_in_one_public_place_that_matches_the_loader() -> None:
    from warband.world import _map_file
    from warband.world.geometry import DIRECTIONS
    from warband.world.maps import MARKER_KINDS, OBJECT_KINDS

    docs = (REPO / "docs" / "maps.md").read_text()
    keys = (*_map_file._TOP_KEYS, *_map_file._WAYPOINT_KEYS, *_map_file._MARKER_KEYS)
    for word in (*keys, *_map_file._OBJECT_KEYS, *MARKER_KINDS, *OBJECT_KINDS, *DIRECTIONS):
        assert f"`{word}`" in docs, f"docs/maps.md does not document {word!r}"
    assert f"between -{_map_file.MAX_COORDINATE:g} and {_map_file.MAX_COORDINATE:g}" in docs
    example = re.search(r"```toml\n(.*?)```", docs, re.DOTALL)
    assert example is not None
    game_map = parse_map(example.group(1), source="docs/maps.md")  # the example is a real map
    assert {"spawn", "capture"} <= {m.kind for m in game_map.markers}
    assert "docs/maps.md" in (REPO / "README.md").read_text()
    for name in bundled_maps():
        assert "Format reference: docs/maps.md" in (BUNDLED_MAP_DIR / f"{name}.toml").read_text()
