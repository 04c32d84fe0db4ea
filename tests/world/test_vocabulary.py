"""The world's vocabulary: verbs checked as a domain would check them at load time, facts read
by field name, and every fact and event a real game produces fitting the published names."""

from __future__ import annotations

import random

import pytest

from warband.exceptions import ConfigurationError
from warband.values import Fact
from warband.world import (
    AMMO,
    EVENTS,
    FACTS,
    PRIVATE_EVENTS,
    PUBLIC_EVENTS,
    SEES,
    VERBS,
    Queue,
    Verb,
    VocabularyError,
    World,
    act_problem,
    check_act,
    check_fact_name,
    load_map,
)
from warband.world._acts import _RULES


def test_every_verb_is_a_verb_member_and_has_one_rule_in_the_acts_table() -> None:
    assert [v.value for v in Verb] == list(VERBS)
    assert set(VERBS) == set(_RULES)
    assert {"move", "wait"} == {v for v, s in VERBS.items() if s.queue is Queue.MOVEMENT}
    assert {"look", "respawn"} == {v for v, s in VERBS.items() if s.queue is Queue.FREE}


def test_check_act_accepts_each_documented_form() -> None:
    assert Verb.MOVE == check_act("move", {"waypoint": "a1"}).verb
    assert Verb.WAIT == check_act("wait").verb
    for form in (["object"], ["target"], ["ability"], ["object", "waypoint"]):
        assert Verb.USE == check_act("use", form).verb
    assert ("object", "target", "ability", "waypoint") == VERBS["use"].arg_names


def test_check_act_names_an_unknown_verb_and_lists_the_known_ones() -> None:
    with pytest.raises(
        VocabularyError, match="unknown verb 'shoot'; known verbs: move, wait, fire"
    ):
        check_act("shoot", {"target": "bot-2"})


@pytest.mark.parametrize(
    ("verb", "args", "message"),
    [
        ("fire", ["tgt"], "fire takes {\"target\": ...}; missing ['target']"),
        ("reload", ["fast"], "reload takes {}; unexpected ['fast']"),
        ("capture", {"point": 3}, "capture: 'point' must be an id string, got 3"),
        ("use", ["object", "target"], 'use needs one of {"object": id}, {"target": agent id}'),
    ],
)
def test_check_act_names_the_argument_that_does_not_fit(
    verb: str, args: object, message: str
) -> None:
    with pytest.raises(VocabularyError) as caught:
        check_act(verb, args)  # type: ignore[arg-type]
    assert str(caught.value).startswith(message)
    assert isinstance(caught.value, ConfigurationError)


def test_the_world_rejects_acts_with_the_vocabularys_own_reason() -> None:
    world = World.create(load_map("test"), seed=1, roster={"r": ("red", "assault")})
    verdict = world.submit("r", "fire", {"tgt": "b"})
    assert (False, act_problem("fire", {"tgt": "b"})) == (verdict.accepted, verdict.reason)


def test_a_fact_kind_reads_fields_by_name() -> None:
    facts = [("tick", 3), ("sees", "b", "m3", 10.0, "blue"), ("ammo", "rifle", 0)]
    seen = SEES.first(facts)
    assert seen is not None
    assert ("b", "m3", 10.0, "blue") == (seen.id, seen.waypoint, seen.distance, seen.team)
    assert [seen] == SEES.all(facts)
    assert 0 == AMMO.read(["ammo", "rifle", 0]).amount
    assert AMMO.first([("tick", 3)]) is None


def test_reading_a_fact_of_another_kind_names_the_expected_fields() -> None:
    with pytest.raises(VocabularyError, match=r"expected \('sees', id, waypoint, distance, team\)"):
        SEES.read(("sees", "b", "m3"))
    with pytest.raises(VocabularyError, match=r"expected \('sees', id, waypoint, distance, team\)"):
        SEES.all([("sees", "b", "m3", 10.0, "blue"), ("sees", "b", "m3")])  # all() as read()


def test_check_fact_name_knows_facts_and_events_and_lists_them_otherwise() -> None:
    assert SEES is check_fact_name("sees")
    assert "killed" == check_fact_name("killed").name
    with pytest.raises(VocabularyError, match="unknown fact or event 'seen'; facts: tick, self"):
        check_fact_name("seen")


def _random_game(map_name: str, seed: int) -> tuple[list[Fact], World]:
    """A short game of agents acting at random; returns every percept fact and the world."""
    game_map = load_map(map_name)
    rng = random.Random(seed)
    classes = ("assault", "medic", "engineer", "tactician", "scout", "saboteur")
    roster = {
        f"a{i}": {
            "team": game_map.teams[i % 2],
            "class": classes[i % len(classes)],
            "start": rng.choice(game_map.waypoint_ids),
        }
        for i in range(8)
    }
    world = World.create(game_map, seed=seed, roster=roster, mode=None)
    objects = [o.id for o in game_map.objects] or ["none"]
    facts: list[Fact] = []
    for _ in range(40):
        for agent in world.agent_ids:
            percepts = world.percepts_for(agent)
            facts.extend(percepts)
            here = next(str(f[2]) for f in percepts if f[0] == "at")
            world.submit(agent, "move", {"waypoint": rng.choice(game_map.neighbours(here))})
            seen = [str(f[1]) for f in percepts if f[0] == "sees"]
            choice = rng.choice(["fire", "object", "ability", "reload", "crouch"])
            if choice == "fire" and seen:
                world.submit(agent, "fire", {"target": rng.choice(seen)})
            elif choice == "object":
                world.submit(agent, "use", {"object": rng.choice(objects)})
            elif choice == "ability":
                world.submit(agent, "use", {"ability": rng.choice(["turret", "cloak", "boost"])})
            else:
                world.submit(agent, choice)
        report = world.step()
        for event in report.events:
            assert event[0] in PUBLIC_EVENTS and PUBLIC_EVENTS[str(event[0])].matches(event), event
        for events in report.private.values():
            for event in events:
                assert event[0] in PRIVATE_EVENTS, event
                assert PRIVATE_EVENTS[str(event[0])].matches(event), event
    return facts, world


@pytest.mark.parametrize(("map_name", "seed"), [("warzone", 1), ("prison", 2), ("rooms", 3)])
def test_every_fact_a_game_produces_fits_the_vocabulary(map_name: str, seed: int) -> None:
    facts, _ = _random_game(map_name, seed)
    misfits = [f for f in facts if f[0] not in FACTS or not FACTS[str(f[0])].matches(f)]
    assert [] == misfits
    assert {"tick", "self", "state", "at", "position", "health"} <= {f[0] for f in facts}


def test_events_are_public_or_private_never_both_except_captured_which_is_also_a_fact() -> None:
    assert set() == set(PUBLIC_EVENTS) & set(PRIVATE_EVENTS)
    assert {"captured"} == set(FACTS) & set(EVENTS)


def test_protocol_md_shows_every_verb_fact_and_event_as_the_vocabulary_declares_them() -> None:
    from pathlib import Path

    from warband.world.vocabulary import markdown_tables

    protocol = (Path(__file__).parents[2] / "PROTOCOL.md").read_text(encoding="utf-8")
    world = protocol[protocol.index("## 14. The world") :]
    assert markdown_tables() in world
    for verb in VERBS:
        assert f"| `{verb}` |" in world
