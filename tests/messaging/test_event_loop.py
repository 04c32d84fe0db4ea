"""Choosing the event loop actors run on: uvloop where installed, asyncio's own on request."""

from __future__ import annotations

import asyncio
import gc
import importlib.util

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warband.exceptions import ConfigurationError
from warband.messaging import event_loop

HAS_UVLOOP = importlib.util.find_spec("uvloop") is not None


async def _loop_class_name() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_asyncio_is_used_when_the_environment_asks_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(event_loop.EVENT_LOOP_ENV, "asyncio")
    assert "asyncio" == event_loop.event_loop_name()
    assert event_loop.run(_loop_class_name()).startswith("asyncio")


@pytest.mark.skipif(not HAS_UVLOOP, reason="uvloop is not installed here")
def test_uvloop_is_the_default_where_it_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(event_loop.EVENT_LOOP_ENV, raising=False)
    assert "uvloop" == event_loop.event_loop_name()
    assert event_loop.run(_loop_class_name()).startswith("uvloop")


def test_an_unknown_loop_name_is_an_error_naming_the_choices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(event_loop.EVENT_LOOP_ENV, "trio")
    coroutine = _loop_class_name()
    with pytest.raises(ConfigurationError, match=r"'trio'.*uvloop, asyncio"):
        event_loop.run(coroutine)
    assert coroutine.cr_frame is None  # closed, not left to warn "never awaited"


async def _thresholds() -> tuple[int, ...]:
    return gc.get_threshold()


def test_actors_run_with_the_collector_run_less_often_and_the_thresholds_come_back() -> None:
    before = gc.get_threshold()
    during = event_loop.run(_thresholds())
    assert (event_loop.YOUNG_THRESHOLD, *before[1:]) == during
    assert before == gc.get_threshold()


def test_fewer_collections_never_lowers_a_threshold_raised_already() -> None:
    before = gc.get_threshold()
    gc.set_threshold(10 * event_loop.YOUNG_THRESHOLD, *before[1:])
    try:
        with event_loop.fewer_collections():
            assert 10 * event_loop.YOUNG_THRESHOLD == gc.get_threshold()[0]
    finally:
        gc.set_threshold(*before)


@settings(max_examples=200, deadline=None)
@given(st.permutations(range(4)), st.lists(st.integers(0, 3), max_size=4))
def test_holds_released_in_any_order_leave_the_thresholds_as_they_were(
    order: list[int], released_twice: list[int]
) -> None:
    """Holders opened one after another and released in any order (some twice): raised while
    any holds, and back to the process's own once the last one let go."""
    own = gc.get_threshold()
    gc.set_threshold(900, *own[1:])
    try:
        releases = [event_loop.hold_fewer_collections() for _ in range(4)]
        for done, index in enumerate(order, start=1):
            releases[index]()
            if index in released_twice:
                releases[index]()  # nothing more
            still_held = done < len(order)
            expected = event_loop.YOUNG_THRESHOLD if still_held else 900
            assert (expected, *own[1:]) == gc.get_threshold()
    finally:
        gc.set_threshold(*own)


def test_a_hold_inside_a_run_gives_the_run_its_thresholds_back() -> None:
    before = gc.get_threshold()

    async def hold_and_release() -> tuple[int, ...]:
        release = event_loop.hold_fewer_collections()
        release()
        return gc.get_threshold()

    assert (event_loop.YOUNG_THRESHOLD, *before[1:]) == event_loop.run(hold_and_release())
    assert before == gc.get_threshold()
