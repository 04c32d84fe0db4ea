"""Issue 12, test 2: a silent partition between two hosts (network namespaces joined by a veth
pair), 3 s at a time, while a warband actor and a raw DEALER send 100 msg/s across it."""

from __future__ import annotations

import pytest

from tests.chaoslib.netns import hosts_of_this_process, netns_available
from tests.chaoslib.partition import partition
from tests.chaoslib.timing import BLACKHOLE_S

pytestmark = pytest.mark.processes


@pytest.fixture(scope="module")
def hosts_allowed() -> None:
    reason = netns_available()
    if reason is not None:
        pytest.skip(f"network namespaces are not available here: {reason}")


@pytest.mark.usefixtures("hosts_allowed")
def test_a_silent_partition_is_detected_during_each_blackhole_and_loses_nothing() -> None:
    result = partition(blackholes=2, gap_s=1.5)
    figures = result.figures

    assert result.passed is not None, result.note
    assert (0, 0) == (result.lost, result.duplicated), figures
    # Each blackhole was noticed while it lasted (not only by the next one), and the flow
    # resumed after each heal. How fast is `warband bench chaos`'s figure (about 1 s, 0.5 s).
    # A blackhole lasts BLACKHOLE_S, longer only until it is noticed: a starved sender does
    # not count its own stall as its broker's silence (tests/chaoslib/timing.py).
    assert None not in figures["detect_each_s"], figures
    lasted = figures["blackhole_each_s"]
    assert all(BLACKHOLE_S <= each for each in lasted), figures
    assert all(
        detect <= each for detect, each in zip(figures["detect_each_s"], lasted, strict=True)
    ), figures
    assert None not in figures["recover_each_s"], figures


@pytest.mark.usefixtures("hosts_allowed")
def test_the_hosts_are_gone_after_a_partition() -> None:
    # This process's hosts only: another test run on the machine may have its own up now.
    assert [] == hosts_of_this_process()
