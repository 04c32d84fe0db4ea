"""The observation encoder reads each Percept's facts grouped by name (observations._by_name):
a kind read from its group must be what it is read from the whole list, fact for fact and in
order, whatever else the Percept holds (other kinds, facts of the wrong shape, empty ones)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("numpy", reason="warband.env needs the env extra: pip install '.[env]'")

from warband.env import observations as O
from warband.values import Value
from warband.world.vocabulary import FactKind

KINDS: tuple[FactKind[Any], ...] = (
    O.SELF,
    O.STATE,
    O.HEALTH,
    O.MAX_HEALTH,
    O.POSITION,
    O.AT,
    O.MOVING,
    O.SEES,
    O.SEES_DOWNED,
    O.SEES_TURRET,
    O.OBJECTIVE,
    O.CAPTURED,
    O.SCORE,
    O.AMMO,
    O.SPARE_AMMO,
    O.WEAPON,
    O.RELOADING,
)
NAMES = [kind.name for kind in KINDS] + ["tick", "heard"]
values = st.one_of(
    st.sampled_from(["red", "blue", "w1", "w2", "bot-1", "bot-2", "rifle"]),
    st.integers(-3, 50),
    st.floats(0, 100, allow_nan=False),
    st.booleans(),
)
facts = st.lists(
    st.one_of(
        st.just(()),
        st.tuples(st.sampled_from(NAMES)).flatmap(
            lambda name: st.lists(values, max_size=7).map(lambda rest: (*name, *rest))
        ),
    ),
    max_size=40,
)


def _read(read: Any, facts: Any) -> tuple[str, object]:
    """What a reader gives, or the error it raises (a wrong-shaped fact first)."""
    try:
        return "value", read(facts)
    except Exception as error:  # the same error either way is the point
        return "error", (type(error), str(error))


@settings(max_examples=150, deadline=None)
@given(facts)
def test_a_kind_read_from_its_group_is_the_kind_read_from_the_whole_percept(
    percept: list[tuple[Value, ...]],
) -> None:
    named = O._by_name(percept)
    assert {fact[0] for fact in percept if fact} == set(named)
    for name, group in named.items():
        assert [fact for fact in percept if fact and fact[0] == name] == group
    for kind in KINDS:
        group = named.get(kind.name, [])
        assert _read(kind.first, percept) == _read(kind.first, group)
        assert _read(kind.all, percept) == _read(kind.all, group)
