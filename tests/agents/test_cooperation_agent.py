"""Boeda's conversation component: a cooperative GOAP agent asks the agents it knows, one by
one, and a responder answers by how busy it is, whom it likes, and whether it can plan for it."""

from __future__ import annotations

from typing import Any

import msgspec

from warband.agents import Agent
from warband.agents.cooperation import CooperativeAgent, cooperative_role, from_wire, to_wire
from warband.agents.execute import TaskStatus
from warband.messaging import Actor, RequestCooperation, RequestTalk, TalkReply, handles
from warband.messaging.codec import Codec
from warband.planning import Action, Brain, Goal, Task, eq
from warband.planning.goap.state import Condition, Key
from warband.testing import capture_log_events, run_actors


def _remember(*fact: Any) -> Any:
    def run(agent: Agent, task: Task) -> TaskStatus:
        agent.memory.remember(*fact)
        return "done"

    return run


def _requester(actor_id: str, acquaintances: list[str], **options: Any) -> CooperativeAgent:
    brain = Brain(
        "requester",
        goals=[
            Goal("Finish", [eq(f"done({actor_id})", True)], relevancy=1.0),
            Goal("Rest", [eq(f"rested({actor_id})", True)], relevancy=0.2),
        ],
        actions=[
            Action(
                "Finish",
                preconditions=[eq("lit(lamp)", True, any_agent=True)],
                effects={f"done({actor_id})": True},
            ),
            Action("Rest", effects={f"rested({actor_id})": True}),
        ],
    )
    tasks = {"Finish": _remember("done", actor_id, True), "Rest": _remember("rested", actor_id)}
    role = cooperative_role("requester", brain, tasks)
    return CooperativeAgent(actor_id, role, acquaintances=acquaintances, **options)


def _helper(actor_id: str, *, able: bool = True, **options: Any) -> CooperativeAgent:
    light = Action("Light", effects={"lit(lamp)": True})
    idle = Action("Idle", effects={"idle": True})
    brain = Brain("helper", actions=[light] if able else [idle])
    tasks = {"Light": _remember("lit", "lamp", True), "Idle": _remember("idle")}
    return CooperativeAgent(actor_id, cooperative_role("helper", brain, tasks), **options)


class Silent(Actor):
    """Takes RequestTalk and never answers (a peer stuck elsewhere)."""

    @handles(RequestTalk)
    def on_request_talk(self, request: RequestTalk) -> None:
        pass


class Talker(Actor):
    """At tick ``at`` opens a conversation with ``peer``; with ``vanish`` it then stops without
    another word, as a requester that died mid-conversation."""

    def __init__(self, actor_id: str, peer: str, *, at: int, vanish: bool = False) -> None:
        super().__init__(actor_id)
        self.peer, self.at, self.vanish = peer, at, vanish
        self.answers: list[bool] = []

    async def on_tick(self, tick: int) -> None:
        if tick != self.at:
            return
        reply = await self.request(RequestTalk(recipient=self.peer), timeout=5)
        assert isinstance(reply, TalkReply)
        self.answers.append(reply.accepted)
        if self.vanish:
            self.stop("died mid-conversation")

    def final_state(self) -> dict[str, Any]:
        return {"answers": self.answers}


def test_the_planners_conditions_cross_the_wire_unchanged() -> None:
    conditions = [
        Condition(Key("open", "bars-a"), True, False, True),
        Condition(Key("at", "alice"), "cell-a", True, False),
        Condition(Key("alarm", None), 2),
    ]
    codec = Codec()
    sent = RequestCooperation(
        recipient="bob", sender="alice", conditions=[to_wire(c) for c in conditions]
    )
    received = codec.decode(codec.encode(sent))
    assert isinstance(received, RequestCooperation)
    assert conditions == [from_wire(c) for c in received.conditions]


def test_a_wire_condition_without_the_new_flags_means_a_plain_untagged_equality() -> None:
    old_peer = {
        "type": "RequestCooperation",
        "sender": "alice",
        "recipient": "bob",
        "conditions": [{"key": "open", "subject": "bars-a", "value": True}],
    }
    received = Codec().decode(msgspec.msgpack.encode(old_peer))
    assert isinstance(received, RequestCooperation)
    assert Condition(Key("open", "bars-a"), True) == from_wire(received.conditions[0])


async def test_a_helper_that_agrees_does_its_part_and_the_requester_finishes_its_goal() -> None:
    requester = _requester("req", ["helper"])
    helper = _helper("helper")
    result = await run_actors([requester, helper], ticks=12)
    req = result.final_states["req"]
    assert ["helper"] == req["helped_by"]
    assert ["req"] == result.final_states["helper"]["helped"]
    assert ("done", "req", True) in set(requester.memory.facts)
    assert ["goal:Finish: Cooperate Finish"] == req["plans_chosen"][:1]


async def test_a_busy_peer_and_one_who_dislikes_the_requester_refuse_and_the_next_helps() -> None:
    requester = _requester("req", ["busy", "grumpy", "helper"])
    actors = [
        requester,
        _helper("busy", busy=True),
        _helper("grumpy", affinity={"req": 0.0}),
        _helper("helper"),
    ]
    result = await run_actors(actors, ticks=20)
    req = result.final_states["req"]
    assert [["busy", "busy"], ["grumpy", "dislikes req"]] == req["refusals"]
    assert ["helper"] == req["helped_by"]
    assert [] == req["cancelled"]


async def test_every_cooperation_log_event_says_its_tick() -> None:
    requester = _requester("req", ["busy", "helper"])
    with capture_log_events() as events:
        await run_actors([requester, _helper("busy", busy=True), _helper("helper")], ticks=20)
    said = [e for e in events if str(e.get("event", "")).startswith("cooperation.")]
    assert {"cooperation.refused", "cooperation.agreed"} <= {e["event"] for e in said}
    assert all(isinstance(e.get("tick"), int) and e["tick"] > 0 for e in said), said


async def test_a_peer_that_never_answers_times_out_and_the_next_is_asked() -> None:
    requester = _requester("req", ["silent", "helper"], talk_timeout=3)
    result = await run_actors([requester, Silent("silent"), _helper("helper")], ticks=20)
    req = result.final_states["req"]
    assert [["silent", "timeout"]] == req["refusals"]
    assert ["helper"] == req["helped_by"]


async def test_with_nobody_able_to_help_the_goal_is_cancelled_and_the_next_goal_pursued() -> None:
    requester = _requester("req", ["a", "b"])
    actors = [requester, _helper("a", able=False), _helper("b", able=False)]
    result = await run_actors(actors, ticks=20)
    req = result.final_states["req"]
    assert [["a", "cannot plan for it"], ["b", "cannot plan for it"]] == req["refusals"]
    assert ["Finish"] == req["cancelled"]
    assert "goal:Rest: Rest" == req["plans_chosen"][-1]
    assert ("rested", "req") in set(requester.memory.facts)


async def test_a_responder_in_one_conversation_refuses_a_second() -> None:
    actors = [_requester("req-1", ["helper"]), _requester("req-2", ["helper"]), _helper("helper")]
    result = await run_actors(actors, ticks=20)
    states = result.final_states
    outcomes = sorted((states[r]["helped_by"], states[r]["refusals"]) for r in ("req-1", "req-2"))
    assert [([], [["helper", "busy"]]), (["helper"], [])] == outcomes
    refused_by_helper = states["helper"]["refused"]
    assert 1 == len(refused_by_helper)
    assert "busy" == refused_by_helper[0][1]


async def test_a_requester_that_dies_mid_conversation_does_not_leave_the_responder_stuck() -> None:
    ghost = Talker("ghost", "helper", at=1, vanish=True)
    late = Talker("late", "helper", at=25)
    result = await run_actors(
        [ghost, late, _helper("helper", talk_timeout=4)], ticks=30, raise_on_failure=False
    )
    assert [True] == ghost.answers  # it left: no final state, but the run was in-process
    assert [True] == result.final_states["late"]["answers"]
    assert "ghost" in result.departed


def test_the_cooperation_docs_say_a_walk_needs_a_precondition_that_holds_mid_walk() -> None:
    # Issue 24, item 14: only a comment in prison_escape.py said it.
    import warband.agents.cooperation as cooperation

    doc = " ".join((cooperation.__doc__ or "").split())
    assert "Walks need a precondition that still holds mid-walk" in doc
    assert 'ne("at(alice)", "cell-a")' in doc
