"""Radio check: the base calls nora, a client in another language, and waits for her answer."""

from warband import Actor, Outcome, Params, RunResult, Scenario, StatusReport, handles

scenario = Scenario("radio", ticks=10, outside=["nora"])


class Base(Actor):
    def __init__(self) -> None:
        super().__init__("base")
        self.answers: list[str] = []

    def on_tick(self, tick: int) -> None:
        if tick == 2:
            self.send(StatusReport(recipient="nora", status="radio check"))

    @handles(StatusReport)
    def on_status(self, report: StatusReport) -> None:
        self.answers.append(f"{report.sender}: {report.status}")

    def final_state(self) -> dict[str, object]:
        return {"answers": self.answers}


@scenario.actors
def actors(params: Params, seed: int) -> list[Actor]:
    return [Base()]


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    answers = result.final_states.get("base", {}).get("answers", [])
    return Outcome(bool(answers), f"the base heard {answers}")
