"""Ping pong: a commander orders bots around; bots report back and chat with each other.

The smallest run that exercises the whole messaging layer: orders go down (``Order``, awaited
with ``request``), completion, threat and status reports come up, and bots hold a short peer
conversation (RequestTalk, TalkReply, EndTalk) after each order. The run ends when the
commander has a CompletionReport for every order, and succeeds only then.

    warband run scenarios/ping_pong.py
    warband run scenarios/ping_pong.py --processes --log runs/pp --param bots=4
    python scenarios/ping_pong.py --json

Parameters: ``bots`` (how many, at least 1), ``rounds`` (orders per bot, at least 1),
``crash`` (``bot-1@5`` makes bot-1's process die at tick 5 the first time it runs, to watch the
supervisor restart it; ignored in a single-process run). A value the scenario cannot use is a
:class:`~warband.ConfigurationError`, which ``warband run`` reports as one line (exit 2).
"""

from __future__ import annotations

import os

from warband import (
    Actor,
    CompletionReport,
    ConfigurationError,
    DeliveryError,
    EndTalk,
    Order,
    Outcome,
    Params,
    RequestTalk,
    RequestTimeout,
    RunResult,
    Scenario,
    StatusReport,
    TalkReply,
    ThreatReport,
    handles,
    incarnation,
)
from warband.messaging import REALTIME_TICK_S

scenario = Scenario(
    "ping_pong",
    ticks=60,
    params={"bots": 2, "rounds": 3, "crash": ""},
    description="A commander orders bots; bots report back and talk to each other.",
)

ORDER_TIMEOUT_TICKS = 12


def ticks(actor: Actor, count: float) -> float:
    """``count`` ticks as the actor's waits count them: ticks in lockstep, seconds in realtime
    (where a wait of 12 would be 240 ticks, longer than the whole run)."""
    return count if actor.mode == "lockstep" else count * REALTIME_TICK_S


class Commander(Actor):
    """Gives every bot ``rounds`` patrol orders, one after another, and waits for each report."""

    def __init__(self, actor_id: str, *, bots: list[str], rounds: int, seed: int) -> None:
        super().__init__(actor_id, seed=seed)
        self.bots = bots
        self.rounds = rounds
        self.completed = 0
        self.retries = 0
        self.threats: list[str] = []

    def on_tick(self, tick: int) -> None:
        if tick == 1:
            for bot in self.bots:
                self.start_task(self._command(bot))

    async def _command(self, bot: str) -> None:
        for round_number in range(1, self.rounds + 1):
            order = Order(recipient=bot, task="patrol", args=[f"wp-{round_number}"])
            while True:
                try:
                    report = await self.request(order, timeout=ticks(self, ORDER_TIMEOUT_TICKS))
                except (RequestTimeout, DeliveryError) as error:
                    self.retries += 1
                    self.log.warning("order.retry", bot=bot, reason=str(error))
                    continue
                break
            if isinstance(report, CompletionReport) and report.success:
                self.completed += 1
        if self.completed == len(self.bots) * self.rounds:
            self.finish_run("every order completed")

    @handles(ThreatReport)
    def on_threat(self, report: ThreatReport) -> None:
        self.threats.append(report.threat)

    @handles(StatusReport)
    def on_status(self, report: StatusReport) -> None:
        self.log.debug("bot.status", bot=report.sender, status=report.status)

    def final_state(self) -> dict[str, object]:
        return {
            "completed": self.completed,
            "expected": len(self.bots) * self.rounds,
            "retries": self.retries,
            "threats": len(self.threats),
        }


class Bot(Actor):
    """Patrols for a few (seeded random) ticks per order, then reports and greets a peer."""

    def __init__(
        self, actor_id: str, *, commander: str, peer: str, crash_at: int | None, seed: int
    ) -> None:
        super().__init__(actor_id, seed=seed)
        self.commander = commander
        self.peer = peer
        self.crash_at = crash_at
        self.patrols = 0
        self.talks = 0

    async def on_start(self) -> None:
        self.every(ticks(self, 5), self._report_status)

    def on_tick(self, tick: int) -> None:
        # Only a supervised process crashes, and only on its first run: the restart must live.
        if tick == self.crash_at and "WARBAND_INCARNATION" in os.environ and incarnation() == 0:
            self.log.warning("bot.crashing_on_purpose", tick=tick)
            os._exit(3)

    def _report_status(self) -> None:
        self.send(StatusReport(recipient=self.commander, status="patrolling"))

    @handles(Order)
    async def on_order(self, order: Order) -> None:
        await self.sleep(ticks(self, self.random.randint(1, 3)))
        if self.random.random() < 0.3:
            self.send(ThreatReport(recipient=self.commander, threat=f"enemy-{self.tick}"))
        self.patrols += 1
        self.reply(order, CompletionReport(task=order.task, success=True))
        await self._chat()

    async def _chat(self) -> None:
        try:
            talk = RequestTalk(recipient=self.peer, topic="patrol")
            answer = await self.request(talk, timeout=ticks(self, 6))
        except (RequestTimeout, DeliveryError):
            return
        if isinstance(answer, TalkReply) and answer.accepted:
            self.talks += 1
            self.send(EndTalk(recipient=self.peer, conversation=answer.conversation, reason="done"))

    @handles(RequestTalk)
    def on_talk(self, request: RequestTalk) -> None:
        self.reply(request, TalkReply(accepted=True))

    def final_state(self) -> dict[str, object]:
        return {"patrols": self.patrols, "talks": self.talks}


@scenario.actors
def build(params: Params, seed: int) -> list[Actor]:
    count, rounds = int(params["bots"]), int(params["rounds"])
    if count < 1:
        raise ConfigurationError(f"ping_pong needs at least one bot (--param bots=N), got {count}")
    if rounds < 1:
        raise ConfigurationError(f"rounds must be at least 1 (--param rounds=N), got {rounds}")
    bots = [f"bot-{i}" for i in range(1, count + 1)]
    crash_agent, crash_tick = _crash(str(params["crash"]), bots)
    actors: list[Actor] = [Commander("commander", bots=bots, rounds=rounds, seed=seed)]
    for index, bot in enumerate(bots):
        actors.append(
            Bot(
                bot,
                commander="commander",
                peer=bots[(index + 1) % len(bots)],
                crash_at=crash_tick if crash_agent == bot else None,
                seed=seed,
            )
        )
    return actors


def _crash(text: str, bots: list[str]) -> tuple[str | None, int | None]:
    """The ``crash`` parameter ``AGENT@TICK`` (or empty: no crash) as (agent, tick)."""
    if not text:
        return None, None
    agent, _, tick = text.partition("@")
    if agent not in bots or not tick.isdigit() or int(tick) < 1:
        raise ConfigurationError(
            f"crash expects AGENT@TICK with AGENT one of {', '.join(bots)} and TICK a tick "
            f"number from 1, e.g. {bots[0]}@5; got {text!r}"
        )
    return agent, int(tick)


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    state = result.final_states.get("commander", {})
    completed, expected = state.get("completed"), state.get("expected")
    return Outcome(
        success=completed == expected and expected is not None,
        summary=f"{completed}/{expected} orders completed, {state.get('retries')} retried",
        details=dict(state),
    )


if __name__ == "__main__":
    from warband.cli import run_file

    raise SystemExit(run_file(__file__))
