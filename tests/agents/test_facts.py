"""The agent layer's fact vocabulary (warband/agents/facts.py): a role's HTN domain is checked
against the world's, the loop's and the role's declared facts when the role is made, and reports
keep their shape (details in the order sent, lists as lists) from sender to reader."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

import msgpack
import pytest

from warband.agents import Agent, Role
from warband.agents.bot import BOT_DOMAIN, bot_role
from warband.agents.commander import COMMANDER_DOMAIN
from warband.agents.facts import (
    ORDER,
    STATUS,
    Vocabulary,
    check_domain_facts,
    declared_by,
    declares,
)
from warband.agents.squad import SQUAD_DOMAIN, squad_role
from warband.exceptions import ConfigurationError, DomainSyntaxError
from warband.launcher import RunOptions, run_scenario
from warband.messaging import Order, StatusReport
from warband.messaging.codec import Codec
from warband.planning import (
    DomainBuilder,
    format_domain,
    load_domain_file,
    parse_domain,
    query,
    task,
)
from warband.scenario import load_scenario
from warband.testing import run_actors
from warband.values import Value
from warband.world import FactKind, load_map

WARZONE = load_map("warzone")
SCENARIOS = Path(__file__).parents[2] / "scenarios"


def _copy(tmp_path: Path, domain: Path, old: str, new: str) -> Path:
    text = domain.read_text()
    assert old in text, old
    copy = tmp_path / domain.name
    copy.write_text(text.replace(old, new, 1))
    return copy


def _line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


# --- the check, one test per kind of mistake --------------------------------------------------


def test_a_misspelt_fact_in_a_condition_names_file_line_column_and_the_closest_name(
    tmp_path: Path,
) -> None:
    bad = _copy(tmp_path, SQUAD_DOMAIN, "(reported ?member captured", "(reportd ?member captured")
    line = _line_of(bad, "(reportd ?member captured")
    column = bad.read_text().splitlines()[line - 1].index("(reportd") + 1
    with pytest.raises(DomainSyntaxError) as raised:
        squad_role(WARZONE, domain=bad)
    message = str(raised.value)
    assert message.startswith(f"{bad}:{line}:{column}: unknown fact 'reportd'")
    assert "did you mean 'reported'" in message


def test_a_query_with_a_wrong_number_of_fields_names_the_fields_the_fact_has(
    tmp_path: Path,
) -> None:
    bad = _copy(tmp_path, BOT_DOMAIN, "(health_share ?health)", "(health_share ?health ?max)")
    with pytest.raises(DomainSyntaxError, match=r"bot\.htn:\d+:\d+: wrong number of fields") as e:
        bot_role(WARZONE, domain=bad)
    assert "'health_share' has 1 field(s) after its name, (health_share percent); got 2" in str(
        e.value
    )


def test_remembering_an_undeclared_fact_is_refused_and_a_declared_one_loads(
    tmp_path: Path,
) -> None:
    bad = _copy(
        tmp_path, BOT_DOMAIN, "(!remember retreating ?spot ?now)", "(!remember retreat ?spot ?now)"
    )
    with pytest.raises(DomainSyntaxError, match=r"unknown fact 'retreat' in \(!remember retreat"):
        bot_role(WARZONE, domain=bad)
    fixed = _copy(
        tmp_path, bad, "(:fact retreating", "(:fact retreat ?spot ?since)\n(:fact retreating"
    )
    assert "retreat" in bot_role(WARZONE, domain=fixed).domain.facts


def test_remembering_with_a_wrong_arity_is_refused() -> None:
    text = """
    (:domain watcher)
    (:fact seen ?who)
    (:primitive !remember ?fact ?a ?b)
    (:method (behave) (:branch "note" (at ?who ?where) ((!remember seen ?who ?where))))
    """
    with pytest.raises(DomainSyntaxError, match=r"<string>:5:57: wrong number of fields in"):
        Role("watcher", parse_domain(text))


def test_forget_takes_a_prefix_of_the_fields_with_or_without_the_wildcard() -> None:
    builder = DomainBuilder("forgetful").fact("seen", "?who", "?where")
    builder.primitive("!forget", "?fact", "?a", "?b", "?c")
    method = builder.method("behave")
    method.branch("all", query("seen", "?w", "?p"), [task("!forget", "seen", "?w", "**", "x")])
    domain = builder.build()
    with pytest.raises(ConfigurationError, match=r"wrong number of fields in \(!forget seen"):
        Role("forgetful", domain)  # "**" then one more field: not a prefix
    ok = DomainBuilder("forgetful").fact("seen", "?who", "?where")
    ok.primitive("!forget", "?fact", "?a", "?b")
    ok.method("behave").branch(
        "all", query("seen", "?w", "?p"), [task("!forget", "seen", "?w", "**")]
    )
    Role("forgetful", ok.build())


def test_a_python_domain_is_checked_too_and_the_error_names_the_role() -> None:
    builder = DomainBuilder("sentry")
    builder.primitive("!idle", "?ticks")
    builder.method("behave").branch("alarm", query("alarmm"), [task("!idle", 1)])
    with pytest.raises(ConfigurationError, match=r"role 'sentry', domain 'sentry': unknown fact"):
        Role("sentry", builder.build())


def test_facts_a_daemon_or_the_role_declares_are_known_to_its_domain() -> None:
    class Alarm(NamedTuple):
        level: int

    alarm = FactKind("alarm", Alarm, "how loud the alarm is")

    @declares(alarm)
    def alarm_daemon(memory: Any, tick: int) -> list[tuple[Value, ...]]:
        return [alarm.fact(3)]

    text = """
    (:domain sentry)
    (:primitive !idle ?ticks)
    (:method (behave) (:branch "alarm" (alarm ?level) ((!idle ?level))))
    """
    assert (alarm,) == declared_by(alarm_daemon)
    Role("sentry", parse_domain(text), daemons={"alarm": alarm_daemon})
    Role("sentry", parse_domain(text), facts=[alarm])
    with pytest.raises(DomainSyntaxError, match="unknown fact 'alarm'"):
        Role("sentry", parse_domain(text))


def test_two_declarations_of_one_fact_must_agree() -> None:
    class Pair(NamedTuple):
        a: str
        b: str

    with pytest.raises(ConfigurationError, match=r"'order' is declared twice with different"):
        Vocabulary([FactKind("order", Pair, "not the loop's order")])


def test_every_bundled_domain_loads_under_the_check_and_prints_its_fact_declarations() -> None:
    roles = [bot_role(WARZONE), squad_role(WARZONE), squad_role(WARZONE, corridors=False)]
    for role in roles:
        assert isinstance(role.vocabulary, Vocabulary)
    commander = load_domain_file(COMMANDER_DOMAIN)
    check_domain_facts(commander, Vocabulary(), _never)
    squad = roles[1].domain
    assert "rally" in squad.facts  # type: ignore[union-attr]
    printed = format_domain(squad)  # type: ignore[arg-type]
    assert '(:fact rally ?order ?waypoint "' in printed
    again = parse_domain(printed, functions=squad.functions)  # type: ignore[union-attr]
    assert squad.facts == again.facts  # type: ignore[union-attr]


def _never(message: str, node: object) -> Any:
    raise AssertionError(message)


def test_no_fact_of_the_agent_and_world_layers_is_read_by_index() -> None:
    pattern = re.compile(r"\bf\[[0-9-]+\]|fact\[[0-9-]+\]")
    package = Path(__file__).parents[2] / "warband"
    found = []
    for folder in ("agents", "world"):
        for file in sorted((package / folder).rglob("*.py")):
            for number, line in enumerate(file.read_text().splitlines(), 1):
                if pattern.search(line) and "# by index:" not in line:
                    found.append(f"{file.name}:{number}: {line.strip()}")
    assert [] == found


# --- reports keep their shape -----------------------------------------------------------------

TWELVE: dict[str, Value] = {
    "waypoint": "m3",
    "health": 80,
    "ammo": 12,
    "weapon": "rifle",
    "squad": "squad-1",
    "members": ("red-1", "red-2", "red-3"),
    "speed": 1.5,
    "crouched": False,
    "target": None,
    "corridor": ("a1", "a2", "b2,odd"),
    "kills": 0,
    "note": "two words",
}


class Reporter(Agent):
    def on_tick(self, tick: int) -> None:
        super().on_tick(tick)
        if tick == 1:
            self.send(StatusReport(recipient="squad-1", status="alive", details=dict(TWELVE)))


class Reader(Agent):
    def final_state(self) -> dict[str, Any]:
        statuses = STATUS.all(self.memory.facts.facts(STATUS.name))
        return {
            **super().final_state(),
            "statuses": [list(s.details) for s in statuses],
            "types": [[type(v).__name__ for v in s.details] for s in statuses],
        }


async def test_a_status_report_with_twelve_fields_and_lists_reads_back_in_order_in_a_squad() -> (
    None
):
    squad = Reader("squad-1", squad_role(WARZONE), team="red", subordinates=["red-1"])
    idle = parse_domain('(:primitive !idle ?t) (:method (behave) (:branch "idle" () ((!idle 1))))')
    member = Reporter("red-1", Role("member", idle), superior="squad-1", team="red")
    result = await run_actors([squad, member], ticks=4)
    state = result.final_states["squad-1"]
    as_json = [list(v) if isinstance(v, tuple) else v for v in TWELVE.values()]
    assert [as_json] == state["statuses"]  # final states are JSON: tuples read as lists
    assert [[type(v).__name__ for v in TWELVE.values()]] == state["types"]


def test_an_order_argument_that_is_a_list_is_a_messagepack_array() -> None:
    order = Order(recipient="squad-1", task="lead", args=[("red-1", "red-2"), 0])
    wire = msgpack.unpackb(Codec().encode(order))
    assert [["red-1", "red-2"], 0] == wire["args"]
    decoded = Codec().decode(msgpack.packb({**wire, "id": "c:1", "sender": "c", "seq": 1}))
    assert isinstance(decoded, Order)
    assert ("red-1", "red-2") == decoded.args[0]
    fact = ORDER.read(("order", "c:1", "c", "lead", *decoded.args))
    assert (("red-1", "red-2"), 0) == fact.args


def _joined_lists(value: object, ids: set[str], where: str) -> list[str]:
    """Strings that are comma-joined ids (agents, waypoints, markers) anywhere in ``value``."""
    if isinstance(value, str):
        parts = value.split(",")
        return [f"{where}: {value!r}"] if len(parts) > 1 and set(parts) <= ids else []
    if isinstance(value, dict):
        return [j for k, v in value.items() for j in _joined_lists(v, ids, f"{where}.{k}")]
    if isinstance(value, list):
        return [j for i, v in enumerate(value) for j in _joined_lists(v, ids, f"{where}[{i}]")]
    return []


def test_no_catalog_message_of_a_twelve_a_side_match_carries_a_comma_joined_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    frames: list[bytes] = []
    encode = Codec.encode

    def recording(self: Codec, message: Any) -> bytes:
        frame = encode(self, message)
        frames.append(frame)
        return frame

    monkeypatch.setattr(Codec, "encode", recording)
    scenario = load_scenario(SCENARIOS / "warzone.py")
    report = run_scenario(scenario, RunOptions(params={"bots": "12"}, ticks=60))
    assert report.completed
    ids = {w for w in WARZONE.waypoint_ids} | {m.id for m in WARZONE.markers}
    ids |= {f"{team}-{n}" for team in ("red", "blue") for n in range(1, 13)}
    decoded = [msgpack.unpackb(frame) for frame in frames]
    types = {message["type"] for message in decoded}
    assert {"Order", "StatusReport", "Percept", "ThreatReport"} <= types
    leads = [m for m in decoded if m["type"] == "Order" and m["task"] == "lead"]
    assert leads and all(isinstance(m["args"][0], list) for m in leads)
    joined = [j for m in decoded for j in _joined_lists(m, ids, m["type"])]
    assert [] == joined
