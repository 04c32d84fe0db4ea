"""A small run for the start-order test: the clock (``world``), a commander and N bots.

On tick 1 the commander gives each bot its first order (``report_in``) and waits for the
CompletionReport; its final state lists the bots that answered. Parameters: ``bots`` (3).
"""

from __future__ import annotations

from warband import Actor, Outcome, Params, RunResult, Scenario
from warband.exceptions import WarbandError
from warband.messaging import CompletionReport, Order, handles

scenario = Scenario("start_order", ticks=6, params={"bots": 3}, clock_id="world")


class Bot(Actor):
    @handles(Order)
    def on_order(self, order: Order) -> None:
        self.reply(order, CompletionReport(task=order.task, success=True))


class Commander(Actor):
    def __init__(self, bots: list[str], seed: int) -> None:
        super().__init__("commander", seed=seed)
        self.bots = bots
        self.answered: list[str] = []
        self.failed: dict[str, str] = {}

    def on_tick(self, tick: int) -> None:
        if tick == 1:
            for bot in self.bots:
                self.start_task(self._first_order(bot))

    async def _first_order(self, bot: str) -> None:
        try:
            answer = await self.request(Order(recipient=bot, task="report_in"), timeout=4)
        except WarbandError as error:
            self.failed[bot] = str(error)
            return
        if isinstance(answer, CompletionReport) and answer.success:
            self.answered.append(bot)
        else:
            self.failed[bot] = repr(answer)

    def final_state(self) -> dict[str, object]:
        return {"answered": sorted(self.answered), "failed": self.failed}


@scenario.actors
def build(params: Params, seed: int) -> list[Actor]:
    bots = [f"bot-{n}" for n in range(1, int(params["bots"]) + 1)]
    return [Commander(bots, seed), *(Bot(bot, seed=seed) for bot in bots)]


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    state = result.final_states.get("commander", {})
    answered = state.get("answered", [])
    return Outcome(len(answered) == int(params["bots"]), f"answered: {answered}", details=state)
