"""The tutorial's role of one's own (docs/tutorial/own-role.md), as a user meets it: its three
files, copied out as the page shows them, run in a Warzone-style match on the tutorial's own map,
and its test passes; a map without a marker the mode needs is refused before the match, naming
both."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO, CommandResult, last_json_line

TUTORIAL = REPO / "docs" / "tutorial" / "files"
ROLE_FILES = ("sentry.htn", "sentries.py", "test_sentries.py")
ARENA = (TUTORIAL / "arena.toml").read_text(encoding="utf-8")


def _tutorial_files(folder: Path) -> dict[str, Path]:
    """Copy the tutorial's three files of the role to ``folder``, as a user would; return them
    by name."""
    files = {}
    for name in ROLE_FILES:
        files[name] = folder / name
        shutil.copyfile(TUTORIAL / name, files[name])
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


def test_the_tutorial_page_shows_the_three_files_and_they_are_under_a_hundred_lines() -> None:
    page = (REPO / "docs" / "tutorial" / "own-role.md").read_text(encoding="utf-8")
    for name in ROLE_FILES:
        assert f'--8<-- "docs/tutorial/files/{name}"' in page
    lines = sum(len((TUTORIAL / name).read_text().strip().splitlines()) for name in ROLE_FILES)
    assert lines < 100


def test_the_tutorial_sentries_play_a_match_on_a_map_file_the_user_wrote(tmp_path: Path) -> None:
    _tutorial_files(tmp_path)
    (tmp_path / "arena.toml").write_text(ARENA, encoding="utf-8")
    result = _run(
        ["-m", "warband", "run", "sentries.py", "--param", "map=arena.toml", "--json", "-q",
         "--param", "bots=2", "--log", "logs"],
        tmp_path,
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    report = last_json_line(result.stdout)
    assert report["completed"] and report["clean"], report
    # Played to its end: the scenario's length, or a side's 100 points (the hierarchy's at 109
    # since bots fire missiles at groups; the sentries held it off for all 200 ticks before).
    assert 200 == report["ticks"] or report["finish_reason"].startswith("game over"), report
    logged = "".join(log.read_text() for log in (tmp_path / "logs").glob("*.jsonl"))
    acts = [
        line
        for line in logged.splitlines()
        if '"msg_type":"Act"' in line and '"sender":"red-1"' in line
    ]
    assert acts, "the sentry red-1 never acted"


def test_the_tutorial_test_of_the_sentry_passes(tmp_path: Path) -> None:
    _tutorial_files(tmp_path)
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
