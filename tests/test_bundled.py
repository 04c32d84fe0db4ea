"""The scenarios that ship with warband run by name, list and copy out (warband/_bundled.py):
what a user of the wheel, who has no checkout, has instead of scenarios/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from warband._bundled import bundled_file, bundled_scenarios

from .conftest import REPO, last_json_line


def _warband(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "warband", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_every_scenario_of_the_checkout_is_bundled_under_its_stem() -> None:
    expected = sorted(file.stem for file in (REPO / "scenarios").glob("*.py"))
    assert expected == sorted(bundled_scenarios())


def test_a_bare_name_is_the_bundled_file_and_a_path_is_taken_as_given() -> None:
    assert REPO / "scenarios" / "ping_pong.py" == bundled_file("ping_pong")
    assert REPO / "scenarios" / "ping_pong.py" == bundled_file("ping_pong.py")
    assert None is bundled_file("elsewhere/ping_pong.py")
    assert None is bundled_file("no_such_scenario")


def test_warband_scenarios_lists_each_name_with_its_first_docstring_line(tmp_path: Path) -> None:
    listed = _warband("scenarios", cwd=tmp_path)
    assert 0 == listed.returncode, listed.stderr
    lines = {line.split()[0]: line for line in listed.stdout.splitlines()}
    assert sorted(bundled_scenarios()) == sorted(lines)
    assert "Ping pong: a commander orders bots around" in lines["ping_pong"]


def test_a_bundled_scenario_runs_by_name_from_any_directory(tmp_path: Path) -> None:
    done = _warband("run", "ping_pong", "--json", "-q", cwd=tmp_path)
    assert 0 == done.returncode, done.stderr
    assert ("ping_pong", "success") == (
        last_json_line(done.stdout)["scenario"],
        last_json_line(done.stdout)["outcome"],
    )


def test_a_scenario_path_that_is_not_there_is_refused_naming_the_bundled_ones(
    tmp_path: Path,
) -> None:
    done = _warband("run", "scenarios/ping_pong.py", cwd=tmp_path)
    assert 2 == done.returncode
    assert 1 == len(done.stderr.strip().splitlines()), done.stderr
    assert "scenario file 'scenarios/ping_pong.py' does not exist" in done.stderr
    assert "warband run ping_pong" in done.stderr
    assert "warband scenarios --copy DIR" in done.stderr


def test_copy_writes_every_scenario_and_then_refuses_to_overwrite_them(tmp_path: Path) -> None:
    target = tmp_path / "mine"
    first = _warband("scenarios", "--copy", str(target), cwd=tmp_path)
    assert 0 == first.returncode, first.stderr
    assert sorted(f"{name}.py" for name in bundled_scenarios()) == sorted(
        file.name for file in target.iterdir()
    )
    assert (REPO / "scenarios" / "warzone.py").read_bytes() == (target / "warzone.py").read_bytes()
    again = _warband("scenarios", "--copy", str(target), cwd=tmp_path)
    assert 2 == again.returncode
    assert "already holds fear.py, ping_pong.py" in again.stderr
    assert "remove them first" in again.stderr


def test_copy_into_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("")
    done = _warband("scenarios", "--copy", "taken", cwd=tmp_path)
    assert 2 == done.returncode
    assert "--copy 'taken' is a file, not a directory" in done.stderr
