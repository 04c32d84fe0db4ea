"""The Killzone 3 hierarchy playing Warzone: commanders, squads and bots as actors, orders down,
reports up, the world deciding the match."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CommandResult, last_json_line, read_log_events
from warband.world import World, load_map

WARZONE = "scenarios/warzone.py"
Cli = Callable[..., CommandResult]


def _chain(events: list[dict[str, object]], kind: str, sender: str, recipient: str) -> bool:
    return any(
        e.get("event") == "msg.recv"
        and e.get("msg_type") == kind
        and str(e.get("sender", "")).startswith(sender)
        and str(e.get("recipient", "")).startswith(recipient)
        for e in events
    )


def test_a_hierarchy_match_sends_orders_down_and_reports_up_across_three_layers(
    warband_cli: Cli, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    result = warband_cli(
        "run", WARZONE, "--param", "bots=3", "--ticks", "120", "--log", str(logs), "--json", "-q"
    )
    assert 0 == result.returncode, result.stderr
    report = last_json_line(result.stdout)
    details = report["outcome_details"]
    assert {"winner", "scores", "kills", "captures", "orders", "reports"} <= set(details)
    assert details["orders"]["commander"] > 0
    assert details["orders"]["squad"] > 0
    assert details["reports"]["bot"] > 0
    events = read_log_events(logs)
    assert _chain(events, "Order", "red-commander", "red-squad-")
    assert _chain(events, "Order", "red-squad-", "red-")
    assert _chain(events, "CompletionReport", "red-", "red-squad-")
    assert _chain(events, "CompletionReport", "red-squad-", "red-commander")
    assert any(e.get("event") == "agent.plan" and e.get("agent") == "blue-squad-1" for e in events)


def test_a_freelance_faction_has_no_commander_and_no_squads(warband_cli: Cli) -> None:
    result = warband_cli(
        "run", WARZONE, "--param", "bots=2", "--param", "blue=freelance", "--ticks", "40",
        "--json", "-q",
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    report = last_json_line(result.stdout)
    assert {"red": "hierarchy", "blue": "freelance"} == report["outcome_details"]["control"]
    assert "blue-commander" not in report["pids"] or report["processes"] == 1
    assert report["messages_sent"] > 0


@pytest.mark.parametrize(
    ("param", "message"),
    [
        ("bots=13", "bots must be 1..12 per faction"),
        ("red=robots", "a faction is controlled by one of hierarchy, freelance"),
    ],
)
def test_bad_warzone_parameters_are_one_clear_line(
    warband_cli: Cli, param: str, message: str
) -> None:
    result = warband_cli("run", WARZONE, "--param", param)
    assert 2 == result.returncode
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_a_commander_perceives_what_its_team_knows_without_a_body() -> None:
    world = World.create(
        load_map("warzone"),
        seed=1,
        mode="capture_and_hold",
        roster={"red-1": {"team": "red", "class": "assault"}},
    )
    facts = world.team_facts("red")
    assert ("tick", 0) == facts[0]
    assert {("score", "red", 0), ("score", "blue", 0)} <= set(facts)
    with pytest.raises(KeyError, match="unknown team 'green'"):
        world.team_facts("green")
