"""``warband gateway`` between a real run and JSON WebSocket clients: a client that only sends
and receives messages takes part in every tick, gets a reliable Order once and answers it, and
the gateway refuses, rejects and drops what PROTOCOL.md section 15 says, never the run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import last_json_line

from .conftest import JsonClient, Started, aiohttp, read_events

pytestmark = pytest.mark.processes

SCENARIO = """
from warband import Actor, Order, CompletionReport, Outcome, Scenario, StatusReport, handles

scenario = Scenario("with_nora", ticks=12, outside=["nora"])


class Host(Actor):
    def __init__(self) -> None:
        super().__init__("host")
        self.heard: list[list[object]] = []

    @handles(StatusReport)
    def on_status(self, report: StatusReport) -> None:
        self.heard.append([report.sender, report.status, report.tick, report.details])

    @handles(CompletionReport)
    def on_done(self, report: CompletionReport) -> None:
        self.heard.append([report.sender, report.task, report.success, report.reply_to])

    def on_tick(self, tick: int) -> None:
        if tick == 2:
            self.send(StatusReport(recipient="nora", status="hello", details={"n": 1.0}))
        if tick == 3:
            order = self.send(Order(recipient="nora", task="wave", args=["left", 2]))
            self.heard.append(["order", order.id])

    def final_state(self) -> dict[str, object]:
        return {"heard": self.heard}


@scenario.actors
def actors(params, seed):
    return [Host()]


@scenario.outcome
def judge(result, params):
    heard = result.final_states.get("host", {}).get("heard", [])
    return Outcome(bool(heard), f"host heard {heard}", {"heard": heard})
"""


async def _connect(url: str) -> tuple[Any, JsonClient]:
    session = aiohttp.ClientSession()
    ws = await session.ws_connect(url)
    return session, JsonClient(ws)


async def _play_nora(url: str, token: str | None) -> tuple[JsonClient, list[int]]:
    """nora as a thin client: register, answer every Tick with TickDone, greet back, do what
    it is ordered; until the run is over."""
    session, nora = await _connect(url)
    ticks: list[int] = []
    try:
        hello: dict[str, Any] = {"type": "_Register", "sender": "nora", "groups": ["ticks"]}
        if token is not None:
            hello["token"] = token
        await nora.send(**hello)
        registered = await nora.until("_Registered")
        assert "host" in registered["peers"]
        while (message := await nora.receive(60)) is not None:
            if message["type"] == "Tick":
                ticks.append(message["tick"])
                if message["tick"] == 4:
                    await nora.send(type="StatusReport", recipient="host", status="hello back",
                                    details={"x": 1.5, "n": 2})  # fmt: skip
                await nora.send(type="TickDone")
            elif message["type"] == "Order":
                await nora.send(type="CompletionReport", recipient="host", id="my-own-id",
                                reply_to=message["id"], conversation=message["conversation"],
                                task=message["task"], success=True)  # fmt: skip
        return nora, ticks
    finally:
        await session.close()


def test_a_thin_json_client_plays_every_tick_and_answers_a_reliable_order_once(
    start_run: Callable[..., Started],
) -> None:
    started = start_run(SCENARIO, tokens=["nora"])
    nora, ticks = asyncio.run(_play_nora(started.url, started.token("nora")))
    out, err = started.finish()
    assert 0 == started.run.returncode, err
    summary = started.stop_gateway()
    heard = last_json_line(out)["outcome_details"]["heard"]
    assert list(range(1, 13)) == ticks
    kinds = [m["type"] for m in nora.received]
    assert 1 == kinds.count("Order")  # acknowledged by the gateway: never sent twice
    assert "_Shutdown" == kinds[-1]  # the run is over: said before the goodbye
    assert 1000 == nora.ws.close_code
    order = next(m for m in nora.received if m["type"] == "Order")
    assert ["left", 2] == order["args"] and order["ack_token"]
    status = next(m for m in nora.received if m["type"] == "StatusReport")
    assert {"n": 1.0} == status["details"] and isinstance(status["details"]["n"], float)
    assert ["nora", "hello back", 4, {"x": 1.5, "n": 2}] in heard
    order_id = next(h[1] for h in heard if h[0] == "order")
    assert ["nora", "wave", True, order_id] in heard
    assert [] == read_events(started.logs, "msg.abandoned")
    assert [] == read_events(started.logs, "msg.resend")
    assert "served 1 clients (0 refused, 0 dropped)" in summary
