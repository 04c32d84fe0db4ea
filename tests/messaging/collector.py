"""An actor tests use to see which orders arrived, waking the test at each one."""

from __future__ import annotations

import asyncio

from warband.messaging import Actor, Order, handles


class Collector(Actor):
    """Collects the tasks of the orders it receives and wakes the test at each one."""

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id)
        self.tasks: list[str] = []
        self.arrived = asyncio.Event()

    @handles(Order)
    def on_order(self, order: Order) -> None:
        self.tasks.append(order.task)
        self.arrived.set()

    async def wait_for(self, count: int) -> None:
        while len(self.tasks) < count:
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), timeout=10)
