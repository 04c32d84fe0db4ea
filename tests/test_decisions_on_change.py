"""Deciding again only when something changed is deciding every tick, run for run: every
bundled scenario, and Warzone matches of every mode with other seeds, send the same messages and
make the same decisions (kind, plan, reason, step, tick by tick) as their roles do when they
plan every tick (``replan_every`` 1).

Where they can, the bundled roles take decisions again: each layer of the Warzone hierarchy
does in every match, and the room-clearing squad leader (asserted: the comparison is not between
two runs that both plan every tick). The other GOAP characters read every fact (their world
state projects them all), and in their scenarios one changes nearly every tick (the prisoners'
``tick``, the F.E.A.R. characters' and the pirate's beliefs and the steps of their short plans),
so they plan at nearly every tick either way.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest

from warband.agents import Agent, Role
from warband.launcher import RunOptions, build_clock, run_actors_in_process
from warband.messaging import event_loop
from warband.scenario import load_scenario
from warband.testing import capture_log_events, capture_messages

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"

Run = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], Counter[str]]


def _plan_every_tick(actors: list[Any]) -> None:
    roles: dict[int, Role] = {}
    for actor in actors:
        if isinstance(actor, Agent):
            role = actor.role
            actor.role = roles.setdefault(id(role), dataclasses.replace(role, replan_every=1))


def _run(path: Path, params: dict[str, str], seed: int, ticks: int, every_tick: bool) -> Run:
    """The messages sent (in tick, sender, sequence order) and the decisions made (agent by
    agent, in order) by one in-process run, and per role how many decisions were reused."""
    scenario = load_scenario(path)
    resolved = scenario.resolve_params(params)
    actors = scenario.build(resolved, seed)
    if every_tick:
        _plan_every_tick(actors)
    options = RunOptions(seed=seed, ticks=ticks, params=params)
    clock = build_clock(scenario, actors, options, resolved)
    with capture_messages() as sent, capture_log_events() as events:
        result = event_loop.run(run_actors_in_process(actors, clock))
    assert result.clean and not result.departed, result
    messages = sorted((_comparable(message) for message in sent), key=lambda m: (m[0], m[1], m[2]))
    decisions = sorted(
        (
            (e["agent"], n, e["tick"], e["decision"], e["label"], e["reason"], e["step"], e["plan"])
            for n, e in enumerate(events)
            if e["event"] == "agent.plan"
        ),
        key=lambda d: (d[0], d[1]),
    )
    reused: Counter[str] = Counter()
    for actor in actors:
        if isinstance(actor, Agent):
            reused[actor.role.name] += actor.decisions_reused
    return messages, [d[:1] + d[2:] for d in decisions], reused


def _comparable(message: Any) -> tuple[Any, ...]:
    # The acknowledgement token is drawn at random for each reliable message; the rest is the
    # run's own.
    fields = msgspec.structs.asdict(message)
    fields.pop("ack_token", None)
    return (
        fields.pop("tick"),
        fields.pop("sender"),
        fields.pop("seq"),
        type(message).__name__,
        repr(sorted(fields.items())),
    )


def _same_as_every_tick(path: Path, params: dict[str, str], seed: int, ticks: int) -> Counter[str]:
    messages, decisions, reused = _run(path, params, seed, ticks, every_tick=False)
    every_messages, every_decisions, none = _run(path, params, seed, ticks, every_tick=True)
    assert not +none  # planning every tick reuses nothing
    assert every_messages == messages
    assert every_decisions == decisions
    return reused


@pytest.mark.parametrize("name", sorted(p.stem for p in SCENARIOS.glob("*.py")))
def test_every_bundled_scenario_runs_as_it_does_planning_every_tick(name: str) -> None:
    params, ticks = ({"bots": "2"}, 40) if name == "warzone" else ({}, 200)
    reused = _same_as_every_tick(SCENARIOS / f"{name}.py", params, 1, ticks)
    expected = {"warzone": {"bot", "squad", "commander"}, "room_clearing": {"squad_leader"}}
    assert expected.get(name, set()) <= set(+reused), reused


def test_room_clearing_with_a_stuck_member_runs_as_it_does_planning_every_tick() -> None:
    # The leader drops the member that let its commands time out: every member replans.
    reused = _same_as_every_tick(SCENARIOS / "room_clearing.py", {"stuck": "charlie"}, 1, 200)
    assert {"squad_leader", "squad_member"} <= set(+reused), reused


@pytest.mark.parametrize(
    ("mode", "seed"),
    [
        ("capture_and_hold", 7),
        ("body_count", 2),
        ("search_and_retrieve", 3),
        ("assassination", 4),
        ("search_and_destroy", 5),
    ],
)
def test_warzone_matches_run_as_they_do_planning_every_tick(mode: str, seed: int) -> None:
    params = {"bots": "3", "mode": mode}
    reused = _same_as_every_tick(SCENARIOS / "warzone.py", params, seed, 50)
    assert {"bot", "squad", "commander"} <= set(+reused), reused
