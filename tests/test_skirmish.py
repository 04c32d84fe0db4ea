"""The skirmish scenario end to end: a world actor, scripted bots, a game decided by the world."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import CommandResult, last_json_line, read_log_events


def test_skirmish_is_decided_by_the_world_and_renders_from_its_logs(
    warband_cli: Callable[..., CommandResult], tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    run = warband_cli(
        "run", "scenarios/skirmish.py", "--param", "bots=2", "--log", str(logs), "--json"
    )
    assert 0 == run.returncode, run.stderr
    report = last_json_line(run.stdout)
    outcome = report["outcome_details"]["outcome"]
    assert outcome["winner"] in ("red", "blue")
    assert 100 == max(outcome["scores"].values())  # capture and hold's target score
    assert report["outcome_details"]["acts_accepted"] > 0
    snapshots = [e for e in read_log_events(logs) if e["event"] == "world.snapshot"]
    assert [0, 1, 2] == [e["tick"] for e in snapshots[:3]]
    assert outcome == snapshots[-1]["snapshot"]["outcome"]

    picture = tmp_path / "tick5.svg"
    drawn = warband_cli("render", str(logs), "--tick", "5", "--out", str(picture))
    assert 0 == drawn.returncode, drawn.stderr
    svg = ET.parse(picture).getroot().itertext()
    assert any("red-0" in text for text in svg)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tick", "99999"], "no snapshot for tick 99999"),
        ([], "no world.snapshot events"),
    ],
)
def test_render_of_a_log_dir_without_that_tick_says_what_is_there(
    warband_cli: Callable[..., CommandResult], tmp_path: Path, args: list[str], message: str
) -> None:
    logs = tmp_path / "logs"
    if args:
        warband_cli(
            "run", "scenarios/skirmish.py", "--param", "bots=1", "--ticks", "3", "--log", str(logs)
        )
    else:
        logs.mkdir()
    drawn = warband_cli("render", str(logs), *args, "--out", str(tmp_path / "x.svg"))
    assert 2 == drawn.returncode
    assert message in drawn.stderr
