"""The log -> timeline model of `warband view`: what the page shows at a tick, no browser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import read_log_events
from tests.view.conftest import RECORDED_TICKS, overlay_snapshot, write_log
from warband.agents.explain import explain
from warband.exceptions import ConfigurationError
from warband.view import load_timeline
from warband.world.replay import load_snapshots


def _send(
    msg_id: str, msg_type: str, sender: str, recipient: str, tick: int, reply_to: str | None = None
) -> dict[str, Any]:
    event = {
        "event": "msg.send",
        "msg_id": msg_id,
        "msg_type": msg_type,
        "sender": sender,
        "recipient": recipient,
        "conversation": None,
        "tick": tick,
        "pid": 1,
    }
    if reply_to is not None:
        event["reply_to"] = reply_to
    return event


def test_every_tick_of_the_recorded_run_is_on_the_timeline(recorded_run: Path) -> None:
    timeline = load_timeline(recorded_run)
    assert list(range(RECORDED_TICKS + 1)) == timeline.ticks
    assert {"red-1", "red-2", "blue-1", "blue-2", "red-squad-1", "red-commander"} <= set(
        timeline.agents
    )


def test_a_frame_puts_each_agent_where_the_worlds_snapshot_of_that_tick_has_it(
    recorded_run: Path,
) -> None:
    snapshot = load_snapshots(recorded_run)[12]
    frame = load_timeline(recorded_run).frame(12)
    for name, body in snapshot["agents"].items():
        shown = frame["agents"][name]
        assert (body["x"], body["y"], body["health"], body["heading"], body["team"]) == (
            shown["x"],
            shown["y"],
            shown["health"],
            shown["heading"],
            shown["team"],
        )
        assert body["class"] == shown["class"]


def test_an_agents_task_is_the_step_of_its_plan_it_was_on_at_that_tick(recorded_run: Path) -> None:
    decisions = [
        e
        for e in read_log_events(recorded_run)
        if e.get("event") == "agent.plan" and e.get("agent") == "red-1"
    ]
    timeline = load_timeline(recorded_run)
    checked = 0
    for tick in range(20, 41):
        last = [e for e in decisions if e["tick"] <= tick][-1]
        frame = timeline.frame(tick)["agents"]["red-1"]
        assert last["plan"] == frame["plan"]
        # The step it was on, or none once it had done every step of that plan.
        plan, step = last["plan"] or [], last["step"]
        on_a_step = isinstance(step, int) and step < len(plan)
        assert (plan[step] if on_a_step else None) == frame["task"]
        checked += on_a_step
    assert checked, "red-1 was on no step of a plan in ticks 20-40"


def test_a_completion_report_is_linked_to_the_order_it_answers(recorded_run: Path) -> None:
    timeline = load_timeline(recorded_run)
    by_id = {m["id"]: m for m in timeline.messages}
    reports = [m for m in timeline.messages if m["type"] == "CompletionReport"]
    assert reports
    for report in reports:
        order = by_id[report["reply_to"]]
        assert ("Order", report["sender"], report["recipient"]) == (
            order["type"],
            order["recipient"],
            order["sender"],
        )
        assert report["id"] in order["replies"]


def test_messages_around_a_tick_keep_to_the_window_and_every_filter(recorded_run: Path) -> None:
    timeline = load_timeline(recorded_run)
    window = timeline.messages_around(10, before=2, after=1)
    assert {8, 9, 10, 11} == {m["tick"] for m in window}
    orders = timeline.messages_around(5, before=5, agent="red-squad-1", msg_types=["Order"])
    assert orders
    assert all(m["type"] == "Order" for m in orders)
    assert all("red-squad-1" in (m["sender"], m["recipient"]) for m in orders)


def test_the_inspector_shows_what_warband_explain_prints(recorded_run: Path) -> None:
    timeline = load_timeline(recorded_run)
    for agent, tick in [("red-1", 15), ("blue-squad-1", 9), ("red-commander", RECORDED_TICKS)]:
        assert explain(recorded_run, agent, tick).text() == timeline.inspect(agent, tick)["text"]


def test_an_unknown_agent_is_refused_naming_the_agents_there_are(recorded_run: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"no agent 'nobody'.*red-1"):
        load_timeline(recorded_run).inspect("nobody", 3)


def test_the_commanders_tables_give_each_squad_its_objective_and_members(
    recorded_run: Path,
) -> None:
    tables = load_timeline(recorded_run).frame(10)["commanders"]
    assert ["blue-commander", "red-commander"] == sorted(tables)
    red = tables["red-commander"]
    assert ("capture:cp-centre", "advance_to_waypoint") in [tuple(o) for o in red["objectives"]]
    (squad,) = red["squads"]
    assert ("red-squad-1", ["red-1", "red-2"]) == (squad["squad"], squad["members"])
    assert squad["objective"] in {o[0] for o in red["objectives"]}


def test_the_map_geometry_comes_from_the_map_the_run_was_played_on(recorded_run: Path) -> None:
    game_map = load_timeline(recorded_run).map
    assert game_map is not None
    assert "warzone" == game_map["name"]
    ids = {w["id"] for w in game_map["waypoints"]}
    assert all(a in ids and b in ids for a, b in game_map["links"])
    assert {"cp-north", "cp-centre", "cp-south"} <= {m["id"] for m in game_map["markers"]}


def test_a_run_without_a_world_has_a_timeline_without_a_map(tmp_path: Path) -> None:
    logs = write_log(
        tmp_path / "logs",
        [
            _send("a:1", "Order", "a", "b", 1),
            _send("b:1", "CompletionReport", "b", "a", 3, reply_to="a:1"),
            _send("b:2", "_Ping", "b", "broker", 3),
            {
                "event": "agent.plan",
                "agent": "b",
                "tick": 2,
                "decision": "new",
                "reason": "no current plan",
                "plan": ["(!go w1)", "(!report)"],
                "step": 1,
                "memory": {"memory": []},
                "tree": None,
            },
        ],
    )
    timeline = load_timeline(logs)
    assert (None, [1, 2, 3]) == (timeline.map, timeline.ticks)
    assert ["b:1"] == timeline.messages[0]["replies"]
    assert "(!report)" == timeline.frame(3)["plans"]["b"]["task"]
    assert ["a:1", "b:1"] == [m["id"] for m in timeline.messages_around(3, before=3)]
    assert ["b:2"] == [m["id"] for m in timeline.messages_around(3, msg_types=["_Ping"])]


def test_a_directory_without_logs_is_refused_with_how_to_make_them(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="--log"):
        load_timeline(tmp_path)


def test_a_frame_carries_the_influence_and_corridors_over_the_maps_areas(tmp_path: Path) -> None:
    timeline = load_timeline(write_log(tmp_path / "logs", [overlay_snapshot(0)]))
    assert timeline.map is not None
    areas = timeline.map["areas"]
    assert [a["id"] for a in areas] == list(range(len(areas)))
    assert {w["id"] for w in timeline.map["waypoints"]} == {
        wp for area in areas for wp in area["waypoints"]
    }
    frame = timeline.frame(0)
    assert {"red": {"0": 1.0, "3": -0.5}} == frame["influence"]
    assert {"red-squad-1": ["0", "1", "2"]} == frame["corridors"]


def test_a_goap_characters_inspector_shows_its_search_tree_as_warband_explain_does(
    recorded_cooperation: Path,
) -> None:
    found = load_timeline(recorded_cooperation).inspect("alice", 1)
    assert explain(recorded_cooperation, "alice", 1).text() == found["text"]
    assert str(found["tree"]).startswith("GOAP search tree")
    assert "search tree:" in found["text"]


def test_a_conversation_filter_keeps_that_conversations_turns_only(
    recorded_cooperation: Path,
) -> None:
    timeline = load_timeline(recorded_cooperation)
    (conversation, *_) = sorted({m["conversation"] for m in timeline.messages if m["conversation"]})
    talk = timeline.messages_around(
        timeline.ticks[-1], before=len(timeline.ticks), conversation=conversation
    )
    assert {"RequestTalk", "EndTalk"} <= {m["type"] for m in talk}
    assert {conversation} == {m["conversation"] for m in talk}


def test_a_directory_named_like_a_log_and_a_plan_with_a_bad_tick_are_skipped_and_said(
    tmp_path: Path,
) -> None:
    plan = {"event": "agent.plan", "agent": "b", "decision": "new", "plan": [], "memory": {}}
    logs = write_log(
        tmp_path / "logs",
        [_send("a:1", "Order", "a", "b", 1), {**plan, "tick": "x"}, {**plan, "tick": 2}],
    )
    (logs / "x.jsonl").mkdir()
    timeline = load_timeline(logs)  # was IsADirectoryError, then ValueError
    assert [1, 2] == timeline.ticks
    assert ["x.jsonl: not a file", "a agent.plan event whose tick 'x' is not an integer"] == (
        timeline.problems
    )
    assert "b at tick 2" in timeline.inspect("b", 2)["text"]
    explanation = explain(logs, "b", 2)  # warband explain reads the same directory
    assert "b at tick 2" in explanation.text()
    assert "skipped as malformed: 2 (x.jsonl: not a file; main.1.jsonl:2: tick 'x' is not an " \
        "integer)" in explanation.text()  # fmt: skip
