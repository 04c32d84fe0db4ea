"""The F.E.A.R. GOAP character (Orkin, "Three States and a Plan"): plan, fail, remember, replan.

A character is an :class:`~warband.agents.Agent` whose role (:func:`character_role`) has a GOAP
:class:`~warband.planning.Brain` (a goal set and an action set per character type), keeps a
:class:`WorkingMemory` that its goals and actions share, and a :class:`Recollection` component:

- every fact the character perceives becomes a :class:`Belief` with a confidence (1 when just
  perceived) and an age (ticks since it was last perceived); the ``working_memory`` daemon of its
  role feeds the Percept in and ages the beliefs every tick: a belief not perceived again loses
  ``decay`` confidence a tick and is forgotten below ``forget_below`` (the player's last known
  position fades instead of vanishing the tick he leaves view);
- when a task of its plan fails (the world refused the act), the character remembers
  ``("failed", action)`` for ``failure_ticks`` ticks; the planning context (``context`` of the
  role) reads it so the procedural preconditions rule that action out, and the plan made next
  takes another way (Orkin's blocked door: open it, else kick it, else dive through the window).

The daemon gives the planner the believed facts (``state`` projects them), plus
``("confidence", name, subject, value, age)`` and ``("failed", action)`` facts. Build a role with
:func:`character_role`; each character needs its own role (its working memory is the daemon's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from ..exceptions import ConfigurationError
from ..planning import Brain, FactDB, Task, WorldState
from ..values import Fact, Value
from ..world import FactKind
from .agent import Agent
from .component import Component
from .decide import Decision, world_state
from .execute import TaskHandler
from .memory import Memory
from .role import FIXED_RATE, Role

FAILED = "failed"
"""``("failed", action)``: the action failed lately; planning rules it out until forgotten."""
CONFIDENCE = "confidence"
"""``("confidence", name, subject, value, age)``: how sure the character is of a belief (0 to
1) and how many ticks ago it was last perceived."""


@dataclass
class Belief:
    """One fact of working memory, how sure the character is of it, and when it was seen."""

    fact: Fact
    confidence: float
    seen: int
    lifetime: int | None = None
    """Ticks it lasts whatever its confidence (a remembered failure), or None: it decays."""

    def age(self, tick: int) -> int:
        """Ticks since it was last perceived or noted."""
        return tick - self.seen


@dataclass
class WorkingMemory:
    """A character's beliefs, keyed by fact name and subject (``("at", "player", ...)``)."""

    decay: float = 0.1
    """Confidence a belief loses per tick it is not perceived again."""
    forget_below: float = 0.35
    """A belief whose confidence falls below this is forgotten."""
    failure_ticks: int = 12
    """Ticks a failed action stays remembered (then the character may try it again); 0: a
    failure is not remembered at all, and the next plan may take the same action."""
    beliefs: dict[tuple[Value, ...], Belief] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0 <= self.decay <= 1 or not 0 <= self.forget_below <= 1 or self.failure_ticks < 0:
            raise ConfigurationError(
                f"working memory: decay and forget_below must lie in [0, 1] and failure_ticks "
                f"be at least 0, got {self.decay}, {self.forget_below}, {self.failure_ticks}"
            )

    @staticmethod
    def _key(fact: Fact) -> tuple[Value, ...]:
        return tuple(fact[:2])

    def perceive(self, facts: Iterable[Fact], tick: int) -> None:
        """What the senses say now: each fact is believed fully and is new (age 0)."""
        for fact in facts:
            self.beliefs[self._key(fact)] = Belief(tuple(fact), 1.0, tick)

    def note_failure(self, action: str, tick: int) -> None:
        """``action`` failed at ``tick``: rule it out for :attr:`failure_ticks` ticks."""
        if self.failure_ticks == 0:
            return
        fact: Fact = (FAILED, action)
        self.beliefs[self._key(fact)] = Belief(fact, 1.0, tick, self.failure_ticks)

    def age(self, tick: int) -> None:
        """Lower the confidence of beliefs not perceived this tick; forget the faded ones and
        the failures older than their lifetime."""
        for key, belief in list(self.beliefs.items()):
            age = belief.age(tick)
            if belief.lifetime is not None:
                if age >= belief.lifetime:
                    del self.beliefs[key]
                continue
            belief.confidence = max(0.0, 1.0 - self.decay * age)
            if belief.confidence < self.forget_below:
                del self.beliefs[key]

    def failed(self) -> frozenset[str]:
        """The actions remembered as failed."""
        return failed_actions(b.fact for b in self.beliefs.values())

    def facts(self, tick: int) -> list[Fact]:
        """The believed facts at ``tick``, with a confidence fact for each decaying one."""
        out: list[Fact] = []
        for belief in self.beliefs.values():
            out.append(belief.fact)
            if belief.lifetime is None and len(belief.fact) >= 2:
                name, subject, *_ = belief.fact
                out.append((CONFIDENCE, name, subject, belief.confidence, belief.age(tick)))
        return out


class WorkingMemoryDaemon:
    """The ``working_memory`` daemon: feeds the Percept into its :class:`WorkingMemory`, ages
    the beliefs, and gives the agent's memory the believed facts."""

    def __init__(self, working: WorkingMemory) -> None:
        self.working = working

    def __call__(self, memory: Memory, tick: int) -> list[Fact]:
        self.working.perceive(memory.source("percept"), tick)
        self.working.age(tick)
        return self.working.facts(tick)


def belief_state(facts: FactDB) -> WorldState:
    """The GOAP state of a character: the projection of its believed and perceived facts
    (bookkeeping facts, ``confidence`` and ``failed``, have no projection and are left out)."""
    return world_state(f for f in facts if f and f[:1] not in ((CONFIDENCE,), (FAILED,)))


def failed_actions(facts: Iterable[Fact]) -> frozenset[str]:
    """The actions ``facts`` hold as failed lately (``("failed", action)``)."""
    if isinstance(facts, FactDB):
        facts = facts.facts(FAILED)
    return frozenset(str(failed.action) for failed in FAILED_FACT.matching(facts))


class _Failed(NamedTuple):
    action: str
    more: tuple[Value, ...]


FAILED_FACT: Final = FactKind(FAILED, _Failed, "an action that failed lately", rest=True)


def character_role(
    name: str,
    brain: Brain,
    tasks: Mapping[str, TaskHandler],
    *,
    context: Callable[[FactDB], Any] | None = None,
    working_memory: WorkingMemory | None = None,
    **options: Any,
) -> Role:
    """A role for one GOAP character (with the :class:`Recollection` component): ``brain``'s
    actions run as ``tasks``; its
    ``working_memory`` daemon feeds and ages a fresh :class:`WorkingMemory` (pass one to tune
    decay and failure memory); ``context`` turns the facts into what the brain's relevancy
    functions and procedural checks read. ``options`` are the other fields of :class:`Role`."""
    daemon = WorkingMemoryDaemon(working_memory if working_memory is not None else WorkingMemory())
    decider = {"state": belief_state, **({"context": context} if context else {})}
    return Role(
        name,
        brain,
        daemons={"working_memory": daemon},
        tasks=dict(tasks),
        decider_options=decider,
        components=[Recollection],
        **{"replan_every": FIXED_RATE, **options},
    )


class Recollection(Component):
    """A GOAP character's part: notes each failed action in its working memory, so the plan it
    makes next takes another way, and keeps the plans it chose and the failures for its
    outcome (``plans_chosen``, ``failures``, ``drops`` in its final state)."""

    def __init__(self, working: WorkingMemory | None = None) -> None:
        self._working = working
        self.plans_chosen: list[str] = []
        """Each plan chosen, as ``label: step step(arg) ...``."""
        self.failures: list[tuple[str, str]] = []
        """Each failed action and why, in order."""
        self.drops: list[str] = []
        """Why each plan was dropped (a failed task, or the world changed under it)."""

    def attach(self, agent: Agent) -> None:
        super().attach(agent)
        if self._working is None:
            if "working_memory" not in agent.role.daemons:
                raise ConfigurationError(
                    f"character {agent.id!r}: role {agent.role.name!r} has no working_memory "
                    "daemon; build it with warband.agents.character.character_role"
                )
            self._working = _working_of(agent.role)

    @property
    def working(self) -> WorkingMemory:
        """The character's working memory (its role's ``working_memory`` daemon's)."""
        assert self._working is not None, "attached to an agent"
        return self._working

    def on_task_failed(self, task: Task, reason: str) -> None:
        self.working.note_failure(task.name, self.agent.tick)
        self.failures.append((task.name, reason))
        self.agent.log.info(
            "character.failed", action=task.name, reason=reason, tick=self.agent.tick
        )

    def on_decision(self, decision: Decision) -> None:
        if decision.kind == "dropped":
            self.drops.append(decision.reason)
        if decision.kind in ("new", "replaced") and decision.plan is not None:
            steps = " ".join(_step_text(step) for step in decision.plan.steps)
            self.plans_chosen.append(f"{decision.plan.label}: {steps}")

    def final_state(self) -> dict[str, Any]:
        return {
            "plans_chosen": list(self.plans_chosen),
            "failures": [list(failure) for failure in self.failures],
            "drops": list(self.drops),
        }


def Character(actor_id: str, role: Role, **options: Any) -> Agent:  # was a class
    """An :class:`Agent` of ``role`` with the :class:`Recollection` component (a role made by
    :func:`character_role` lists it already)."""
    return Agent(actor_id, role.with_components(Recollection), **options)


def _step_text(step: Task) -> str:
    args = ",".join(str(arg) for arg in step.args)
    return f"{step.name}({args})" if args else step.name


def _working_of(role: Role) -> WorkingMemory:
    daemon = role.daemons["working_memory"]
    if isinstance(daemon, WorkingMemoryDaemon):
        return daemon.working
    raise ConfigurationError(
        f"role {role.name!r}: its working_memory daemon holds no WorkingMemory; build the role "
        "with character_role"
    )


__all__ = [
    "CONFIDENCE",
    "FAILED",
    "Belief",
    "Character",
    "Recollection",
    "WorkingMemory",
    "WorkingMemoryDaemon",
    "belief_state",
    "character_role",
    "failed_actions",
]
