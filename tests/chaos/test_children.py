"""The benchmark's child processes (tests/chaoslib/children.py and roles.py): a role runs as
``python -m tests.chaoslib.roles ROLE`` from the repository root and reports in JSON lines."""

from __future__ import annotations

import pytest

from tests.chaoslib.children import children, role_argv
from tests.chaoslib.processes import scratch_dir

pytestmark = pytest.mark.processes


def test_a_raw_receiver_child_reports_ready_then_the_frames_it_received() -> None:
    with scratch_dir() as tmp, children() as start:
        child = start(role_argv("raw-receiver", f"ipc://{tmp}/raw.sock", 0.5), "raw")

        assert "ready" in child.wait_for("ready", 30)
        assert [] == child.wait_for("received", 30)["received"]


def test_children_are_reaped_on_the_way_out_even_when_the_block_fails() -> None:
    with pytest.raises(RuntimeError), scratch_dir() as tmp, children() as start:
        child = start(role_argv("raw-receiver", f"ipc://{tmp}/raw.sock", 60), "raw")
        child.wait_for("ready", 30)
        raise RuntimeError("the fault's harness broke")

    assert child.process.returncode is not None
