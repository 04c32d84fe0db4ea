"""The README's "Write your own role" section, as a user meets it: its three files, written out
as the README shows them, run in a Warzone-style match on a map the test writes, and its test
passes; a map without a marker the mode needs is refused before the match, naming both."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO, CommandResult, last_json_line

ARENA = """
name = "arena"
description = "Two bases and three capture points between them."
teams = ["red", "blue"]
links = [["r", "w", "c", "e", "b"], ["w", "n", "e"], ["w", "s", "e"]]
walls = [[[0, 0], [60, 0], [60, 30], [0, 30], [0, 0]]]

[[waypoints]]
id = "r"
pos = [4, 15]
[[waypoints]]
id = "w"
pos = [18, 15]
[[waypoints]]
id = "c"
pos = [30, 15]
[[waypoints]]
id = "e"
pos = [42, 15]
[[waypoints]]
id = "b"
pos = [56, 15]
[[waypoints]]
id = "n"
pos = [30, 26]
[[waypoints]]
id = "s"
pos = [30, 4]

[[markers]]
id = "spawn-red"
kind = "spawn"
waypoint = "r"
team = "red"
[[markers]]
id = "spawn-blue"
kind = "spawn"
waypoint = "b"
team = "blue"
[[markers]]
id = "cp-west"
kind = "capture"
waypoint = "w"
[[markers]]
id = "cp-centre"
kind = "capture"
waypoint = "c"
[[markers]]
id = "cp-east"
kind = "capture"
waypoint = "e"
"""


def _own_role_section(readme: str) -> str:
    """The README's "Write your own role" section, up to the next section."""
    start = readme.index("## Write your own role")
    end = readme.find("\n## ", start + 1)
    return readme[start : end if end != -1 else len(readme)]


def _readme_files(folder: Path) -> dict[str, Path]:
    """Write the code blocks of the README's section to ``folder``, each under the file name
    its first line gives; return them by name."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = _own_role_section(text)
    files = {}
    for block in re.findall(r"```(?:lisp|python)\n(.*?)```", section, re.S):
        name = re.match(r"[;#] (\S+)", block).group(1)  # type: ignore[union-attr]
        files[name] = folder / name
        files[name].write_text(block, encoding="utf-8")
    return files


def _run(args: list[str], cwd: Path) -> CommandResult:
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def test_the_readme_section_is_under_a_hundred_lines_and_has_its_three_files(
    tmp_path: Path,
) -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = _own_role_section(text)
    assert len(section.strip().splitlines()) < 100
    assert {"sentry.htn", "sentries.py", "test_sentries.py"} == set(_readme_files(tmp_path))


def test_the_readme_sentries_play_a_match_on_a_map_file_the_user_wrote(tmp_path: Path) -> None:
    _readme_files(tmp_path)
    (tmp_path / "arena.toml").write_text(ARENA, encoding="utf-8")
    result = _run(
        ["-m", "warband", "run", "sentries.py", "--param", "map=arena.toml", "--json", "-q",
         "--param", "bots=2", "--log", "logs"],
        tmp_path,
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    report = last_json_line(result.stdout)
    assert report["completed"] and report["clean"], report
    assert 200 == report["ticks"]  # the scenario's length: nobody reached 100 points
    logged = "".join(log.read_text() for log in (tmp_path / "logs").glob("*.jsonl"))
    acts = [
        line
        for line in logged.splitlines()
        if '"msg_type":"Act"' in line and '"sender":"red-1"' in line
    ]
    assert acts, "the sentry red-1 never acted"


def test_the_readme_test_of_the_sentry_passes(tmp_path: Path) -> None:
    _readme_files(tmp_path)
    result = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_sentries.py"], tmp_path)
    assert 0 == result.returncode, result.stdout + result.stderr
    assert "1 passed" in result.stdout


@pytest.mark.parametrize(
    ("old", "new", "mode", "named"),
    [
        ('kind = "capture"', 'kind = "regroup"', "capture_and_hold", "capture point"),
        ('kind = "spawn"\nwaypoint = "b"', 'kind = "regroup"\nwaypoint = "b"', "body_count",
         "team 'blue' has no 'spawn' marker"),
    ],
)  # fmt: skip
def test_a_map_without_a_marker_the_mode_needs_is_refused_before_the_match(
    tmp_path: Path, old: str, new: str, mode: str, named: str
) -> None:
    lacking = ARENA.replace(old, new)
    assert lacking != ARENA
    (tmp_path / "lacking.toml").write_text(lacking, encoding="utf-8")
    warzone = str(REPO / "scenarios" / "warzone.py")
    map_param = f"map={tmp_path / 'lacking.toml'}"
    result = _run(
        ["-m", "warband", "run", warzone, "--param", map_param, "--param", f"mode={mode}"],
        tmp_path,
    )
    assert 2 == result.returncode, result.stdout + result.stderr
    assert f"cannot host {mode}" in result.stderr
    assert named in result.stderr
