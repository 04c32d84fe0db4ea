"""Loading scenario files: one module per file, the running script not imported twice."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from warband import Scenario, load_scenario

from .conftest import REPO

SCENARIO_TEXT = """\
import sys

from warband import Actor, Scenario

print("importing", __name__, file=sys.stderr)
scenario = Scenario({name!r}, ticks=2)


class Idle(Actor):
    pass


@scenario.actors
def build(params, seed):
    return [Idle("idle")]


if __name__ == "__main__":
    from warband.cli import run_file

    raise SystemExit(run_file(__file__))
"""


def _write_scenario(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "scenario_file.py"
    file.write_text(SCENARIO_TEXT.format(name=name))
    return file


def test_two_scenario_files_with_the_same_name_keep_their_own_modules(tmp_path: Path) -> None:
    first = load_scenario(_write_scenario(tmp_path / "a", "first"))
    second = load_scenario(_write_scenario(tmp_path / "b", "second"))
    first_module = type(first.build({}, 0)[0]).__module__
    second_module = type(second.build({}, 0)[0]).__module__
    assert first_module != second_module
    scenario_of_first = sys.modules[first_module].scenario
    assert isinstance(scenario_of_first, Scenario)
    assert "first" == scenario_of_first.name


def test_a_scenario_run_as_a_script_is_imported_once(tmp_path: Path) -> None:
    file = _write_scenario(tmp_path, "script")
    result = subprocess.run(
        [sys.executable, str(file), "--quiet", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert 0 == result.returncode, result.stderr
    assert ["importing __main__"] == [
        line for line in result.stderr.splitlines() if line.startswith("importing")
    ]


def test_the_scenario_module_does_not_import_the_command_line() -> None:
    code = "import sys, warband.scenario; print('warband.cli' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert "False" == result.stdout.strip(), result.stderr
