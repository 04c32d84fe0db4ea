"""Components: the per-agent parts of a role that keep state and answer messages.

A role is data (:class:`~warband.agents.Role`): a domain, daemons, tasks. Some roles also need
state of their own for each agent and their own messages: Boeda's conversation (who was asked,
who helps), Pittman's command tracking (who adopted and completed a recommended goal), a
F.E.A.R. character's failure memory. Such a part is a :class:`Component`: the role lists a
factory for it (``Role(components=[...])``), and the one :class:`~warband.agents.Agent` makes a
fresh one for each agent and runs its hooks:

- ``on_tick_start(tick)`` before the loop gathers, ``on_tick_end(tick)`` after it executed;
- ``on_decision(decision)`` with every decision before it takes effect, and
  ``on_task_failed(task, reason)`` when a task of the plan failed;
- message handlers: methods marked ``@handles(MessageType)``, called after the agent's own
  handler of that type, if it has one (a component adds to what the agent does, as a subclass's
  handler calling ``super()`` did);
- ``on_peer_left(agent, reason)``: a peer the agent watches left the run (the broker's
  ``_Left`` notice: it stopped, its process died, its host went silent); the agent watches the
  peers it awaited a reply from (a component's ``agent.request(...)`` included) and its
  subordinates;
- ``final_state()``: what it adds to the agent's final state.

A task handler reaches its component with ``agent.component(Conversation)``, which gives the
component typed, or fails the task with a message naming the role when the role lacks it.
A failure in a hook is the agent's failure: passed to ``on_failure``, the agent runs on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from ..messaging import Message
from ..planning import Task

if TYPE_CHECKING:
    from .agent import Agent
    from .decide import Decision


class Component:
    """A per-agent part of a role (module doc). Subclasses override the hooks they need."""

    message_handlers: ClassVar[dict[type[Message], str]] = {}
    """Message type -> name of the method marked ``@handles`` for it (collected per class)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found: dict[type[Message], str] = {}
        for klass in reversed(cls.__mro__):
            for name, member in vars(klass).items():
                for message_type in getattr(member, "__warband_handles__", ()):
                    found[message_type] = name
        cls.message_handlers = found

    _agent: Agent | None = None

    @property
    def agent(self) -> Agent:
        """The agent this component belongs to (set when the agent is made)."""
        if self._agent is None:
            raise RuntimeError(f"{type(self).__name__} is not attached to an agent yet")
        return self._agent

    def attach(self, agent: Agent) -> None:
        """Called once, when ``agent`` is made with a role that lists this component."""
        self._agent = agent

    def on_tick_start(self, tick: int) -> None:
        """Before the agent gathers, at every tick."""

    def on_tick_end(self, tick: int) -> None:
        """After the agent executed, at every tick."""

    def on_decision(self, decision: Decision) -> None:
        """With every decision of the agent, before it takes effect."""

    def on_task_failed(self, task: Task, reason: str) -> None:
        """When ``task`` of the agent's plan failed, before the plan is dropped."""

    def on_peer_left(self, agent: str, reason: str) -> None:
        """When ``agent``, a peer the agent watches, left the run; ``reason`` is the broker's
        (``left: ...``, ``disconnected``, ``silent``, ``gave_up: ...``)."""

    def final_state(self) -> dict[str, Any]:
        """What the component adds to the agent's final state (JSON-able)."""
        return {}

    def handler(self, message_type: type[Message]) -> Callable[[Any], Any] | None:
        """The bound handler of ``message_type``, or None."""
        name = self.message_handlers.get(message_type)
        return getattr(self, name) if name is not None else None


ComponentFactory = Callable[[], Component]
"""Makes a fresh component for each agent of a role."""


__all__ = ["Component", "ComponentFactory"]
