"""The agent loop keeps lockstep exact: a Warzone match with planners at every layer sends the
same messages in one process and with every actor in its own process."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CommandResult
from tests.test_cli import _agent_sends

Cli = Callable[..., CommandResult]


@pytest.mark.processes
def test_a_hierarchy_match_sends_the_same_messages_in_one_process_and_in_many(
    warband_cli: Cli, tmp_path: Path
) -> None:
    one, many = tmp_path / "one", tmp_path / "many"
    common = ("run", "scenarios/warzone.py", "--param", "bots=2", "--ticks", "40", "--seed", "3")
    first = warband_cli(*common, "--log", str(one), "-q")
    second = warband_cli(*common, "--log", str(many), "--processes", "-q")
    assert 0 == first.returncode, first.stderr
    assert 0 == second.returncode, second.stderr
    in_one = _agent_sends(one)
    assert len(in_one) > 300
    assert in_one == _agent_sends(many)
