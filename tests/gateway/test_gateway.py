"""``warband gateway`` between a real run and JSON WebSocket clients: a client that only sends
and receives messages takes part in every tick, gets a reliable Order once and answers it, and
the gateway refuses, rejects and drops what PROTOCOL.md section 15 says, never the run."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.conftest import last_json_line

from .conftest import JsonClient, Started, aiohttp, read_events

pytestmark = pytest.mark.processes

SCENARIO = """
from warband import Actor, Order, CompletionReport, Outcome, Scenario, StatusReport, handles

scenario = Scenario("with_nora", ticks=12, outside=["nora"], params={"flood": 0})


class Host(Actor):
    def __init__(self, flood: int) -> None:
        super().__init__("host")
        self.flood = flood
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
            for _ in range(self.flood):
                self.send(StatusReport(recipient="nora", status="flood", details={"x": "x" * 1000}))
        if tick == 3:
            order = self.send(Order(recipient="nora", task="wave", args=["left", 2]))
            self.heard.append(["order", order.id])

    def final_state(self) -> dict[str, object]:
        return {"heard": self.heard}


@scenario.actors
def actors(params, seed):
    return [Host(int(params["flood"]))]


@scenario.outcome
def judge(result, params):
    heard = result.final_states.get("host", {}).get("heard", [])
    return Outcome(bool(heard), f"host heard {heard}", {"heard": heard})
"""


async def _connect(url: str) -> tuple[Any, JsonClient]:
    session = aiohttp.ClientSession()
    ws = await session.ws_connect(url)
    return session, JsonClient(ws)


async def _play_nora(
    url: str, token: str | None, at_tick_3: Callable[[], Awaitable[object]] | None = None
) -> tuple[JsonClient, list[int]]:
    """nora as a thin client: register, answer every Tick with TickDone, greet back, do what
    it is ordered; until the run is over. ``at_tick_3`` runs before its TickDone of tick 3."""
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
                if message["tick"] == 5:  # three bad messages: each refused, nothing else
                    await nora.ws.send_str("not json")
                    await nora.send(type="Nope", recipient="host")
                    await nora.send(type="StatusReport", sender="host", recipient="host",
                                    status="spoofed", id="spoof")  # fmt: skip
                if message["tick"] == 4:
                    await nora.send(type="StatusReport", recipient="host", status="hello back",
                                    details={"x": 1.5, "n": 2})  # fmt: skip
                if message["tick"] == 3 and at_tick_3 is not None:
                    await at_tick_3()
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
    assert 1000 == nora.close_code
    order = next(m for m in nora.received if m["type"] == "Order")
    assert ["left", 2] == order["args"] and order["ack_token"]
    status = next(m for m in nora.received if m["type"] == "StatusReport")
    assert {"n": 1.0} == status["details"] and isinstance(status["details"]["n"], float)
    assert ["nora", "hello back", 4, {"x": 1.5, "n": 2}] in heard
    order_id = next(h[1] for h in heard if h[0] == "order")
    assert ["nora", "wave", True, order_id] in heard
    notices = [m for m in nora.received if m["type"] == "_Undeliverable"]
    assert 3 == len(notices), notices
    assert all(n["sender"] == "gateway" for n in notices)
    assert notices[0]["reason"].startswith("rejected by gateway: not JSON")
    assert "unknown message type 'Nope'" in notices[1]["reason"]
    assert "sender 'host' is not your agent id 'nora'" in notices[2]["reason"]
    assert "spoof" == notices[2]["message_id"]
    assert not any(h[1] == "spoofed" for h in heard)
    assert 3 == len(read_events(started.logs / "gateway", "gateway.rejected"))
    assert [] == read_events(started.logs, "msg.abandoned")
    assert [] == read_events(started.logs, "msg.resend")
    assert "served 1 clients (0 refused, 0 dropped)" in summary


async def _attempt(url: str, *frames: str, wait: float = 30) -> JsonClient:
    """Connect, send ``frames`` as they are, and read until the gateway closes."""
    session, client = await _connect(url)
    try:
        for frame in frames:
            await client.ws.send_str(frame)
        await client.until_closed(wait)
        return client
    finally:
        await session.close()


async def _refusals_then_nora(started: Started) -> dict[str, JsonClient]:
    url, token = started.url, started.token("nora")
    register = {"type": "_Register", "sender": "nora", "groups": ["ticks"]}
    tried = {
        "wrong token": await _attempt(url, json.dumps({**register, "token": "x" * 64})),
        "no token": await _attempt(url, json.dumps(register)),
        "not json": await _attempt(url, "{oops"),
        "not a register": await _attempt(url, json.dumps({"type": "TickDone"})),
        "silent": await _attempt(url),
    }

    async def second_nora() -> None:
        assert ["nora"] == await _status(started)  # nora plays now: a second one is refused
        tried["second nora"] = await _attempt(url, json.dumps({**register, "token": token}))

    tried["nora"], _ = await _play_nora(url, token, second_nora)
    return tried


async def _status(started: Started) -> list[str]:
    async with aiohttp.ClientSession() as session, session.get(started.http("/status")) as got:
        agents: list[str] = (await got.json())["agents"]
        return agents


def test_clients_without_the_right_token_or_a_register_are_refused_and_logged(
    start_run: Callable[..., Started],
) -> None:
    started = start_run(SCENARIO, tokens=["nora"], gateway_options=("--register-timeout", "1"))
    tried = asyncio.run(_refusals_then_nora(started))
    _, err = started.finish()
    assert 0 == started.run.returncode, err
    summary = started.stop_gateway()
    codes = {what: client.close_code for what, client in tried.items()}
    assert {
        "wrong token": 4001,
        "no token": 4001,
        "not json": 4000,
        "not a register": 4000,
        "silent": 4000,
        "second nora": 4001,
        "nora": 1000,
    } == codes
    reasons = {
        what: client.received[0]["reason"] for what, client in tried.items() if what != "nora"
    }
    assert "rejected by gateway: wrong token for agent 'nora'" == reasons["wrong token"]
    assert "no token given for agent 'nora'" in reasons["no token"]
    assert "not JSON" in reasons["not json"]
    assert "the first message must be a _Register (got TickDone)" in reasons["not a register"]
    assert "you did not register within 1 s" in reasons["silent"]
    assert "is played by another client of this gateway" in reasons["second nora"]
    refused = read_events(started.logs / "gateway", "gateway.refused")
    assert 6 == len(refused)
    assert {"peer": "nora", "reason": "wrong token for agent 'nora'"}.items() <= refused[0].items()
    assert refused[0]["address"].startswith("127.0.0.1:")
    assert "served 1 clients (6 refused, 0 dropped)" in summary


async def _slow_nora(url: str, token: str, finishes_ticks: bool) -> JsonClient:
    """nora reads one message every 0.05 s and answers each Tick (``finishes_ticks``), or reads
    at once and never sends TickDone."""
    session, nora = await _connect(url)
    try:
        await nora.send(type="_Register", sender="nora", groups=["ticks"], token=token)
        while (message := await nora.receive(60)) is not None:
            if finishes_ticks:
                await asyncio.sleep(0.05)
                if message["type"] == "Tick":
                    await nora.send(type="TickDone")
        return nora
    finally:
        await session.close()


@pytest.mark.parametrize("reads", [True, False], ids=["reads-slowly", "never-finishes-a-tick"])
def test_a_slow_client_is_dropped_with_a_reason_and_the_run_goes_on(
    start_run: Callable[..., Started], reads: bool
) -> None:
    options = ("--queue", "50", "--tick-timeout", "1" if not reads else "5")
    flood = "1000" if reads else "0"
    started = start_run(SCENARIO, "--param", f"flood={flood}", tokens=["nora"],
                        gateway_options=options)  # fmt: skip
    nora = asyncio.run(_slow_nora(started.url, started.token("nora"), reads))
    out, err = started.finish()
    summary = started.stop_gateway()
    assert 0 == started.run.returncode, err
    report = last_json_line(out)
    assert report["completed"] and 12 == report["ticks"]
    assert "nora" in report["departed"]
    assert 4002 == nora.close_code
    why = "messages were waiting" if reads else "did not send TickDone for tick 1 within 1 s"
    assert why in nora.close_reason
    dropped = read_events(started.logs / "gateway", "gateway.dropped")
    assert 1 == len(dropped) and why in dropped[0]["reason"]
    assert "(0 refused, 1 dropped)" in summary


def test_the_gateway_serves_bundled_maps_for_clients_to_find_their_way(
    start_run: Callable[..., Started],
) -> None:
    started = start_run(SCENARIO)

    async def get(path: str) -> tuple[int, dict[str, Any], str]:
        async with aiohttp.ClientSession() as session, session.get(started.http(path)) as got:
            cors = got.headers.get("Access-Control-Allow-Origin", "")
            return got.status, await got.json(), cors

    status, warzone, cors = asyncio.run(get("/maps/warzone"))
    assert (200, "*") == (status, cors)
    assert "warzone" == warzone["name"]
    ids = {w["id"] for w in warzone["waypoints"]}
    assert all(a in ids and b in ids for a, b in warzone["links"])
    status, error, _ = asyncio.run(get("/maps/nowhere"))
    assert 404 == status and "no bundled map 'nowhere'" in error["error"]
