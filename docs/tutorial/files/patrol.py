"""Patrol: a sergeant sends a scout to three waypoints, one order at a time."""

from warband import (
    Actor,
    CompletionReport,
    DeliveryError,
    Order,
    Outcome,
    Params,
    RequestTimeout,
    RunResult,
    Scenario,
    handles,
)

scenario = Scenario("patrol", ticks=30, params={"waypoints": 3})


class Sergeant(Actor):
    """Orders the scout to each waypoint of the route in turn and waits for its report."""

    def __init__(self, waypoints: int) -> None:
        super().__init__("sergeant")
        self.route = [f"wp-{n}" for n in range(1, waypoints + 1)]
        self.reached: list[str] = []

    def on_tick(self, tick: int) -> None:
        if tick == 1:
            self.start_task(self.patrol())

    async def patrol(self) -> None:
        for waypoint in self.route:
            order = Order(recipient="scout", task="go", args=[waypoint])
            try:
                report = await self.request(order, timeout=10)  # ticks, in a lockstep run
            except (RequestTimeout, DeliveryError):  # no answer in time, or the scout is gone
                self.finish_run(f"no report for {waypoint}")
                return
            if isinstance(report, CompletionReport) and report.success:
                self.reached.append(waypoint)
        self.finish_run("route walked")

    def final_state(self) -> dict[str, object]:
        return {"route": self.route, "reached": self.reached}


class Scout(Actor):
    """Takes two ticks to walk to any waypoint, then says it is there."""

    @handles(Order)
    async def on_order(self, order: Order) -> None:
        await self.sleep(2)
        self.reply(order, CompletionReport(task=order.task, success=True))


@scenario.actors
def actors(params: Params, seed: int) -> list[Actor]:
    return [Sergeant(int(params["waypoints"])), Scout("scout")]


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    state = result.final_states["sergeant"]
    walked = state["reached"] == state["route"]
    return Outcome(walked, f"reached {len(state['reached'])} of {len(state['route'])} waypoints")
