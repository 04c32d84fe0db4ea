"""Roles are data: a domain, its root task, its daemons and its own primitive tasks.

DESIGN.md's rule: a bot, a squad and a commander differ in what they gather, their domain and
their primitive tasks, not in their class. A :class:`Role` holds exactly that, and one
:class:`~warband.agents.Agent` class runs any role. Who an agent's superior and subordinates are
is said per agent, not per role.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..exceptions import ConfigurationError
from ..planning import Brain, HtnDomain, load_domain_file
from ..planning.htn.domain import HtnFunction
from ..values import Value
from ..world import FactKind
from .component import ComponentFactory
from .decide import Decider, GoapDecider, HtnDecider
from .execute import BUILTIN_TASKS, ActTask, TaskHandler, act_tasks_of, check_acts, check_executable
from .facts import Vocabulary, check_role_domain, declared_by
from .memory import Daemon

if TYPE_CHECKING:
    from .agent import Agent

FIXED_RATE: Final = 10
"""The bundled roles' :attr:`Role.replan_every` (bot, squad, commander, the GOAP characters):
they plan at least every 10 ticks (a second at 10 ticks/s), and in between only when something
their last decision read has changed."""

Reporter = Callable[["Agent", int], None]
"""Called by the agent loop every tick, after gathering: sends reports up as it sees fit."""


@dataclass(frozen=True)
class Role:
    """What an agent is: how it decides (an HTN domain from ``root``), what it derives each
    tick (``daemons``), and how its own primitive tasks run (``tasks``).

    Every primitive of the domain must be executable: a built-in task, an act (named after a
    world verb) or a handler in ``tasks``; otherwise the role is refused when made.
    """

    name: str
    domain: HtnDomain | Brain
    """An HTN domain planned from ``root`` (Killzone), or a GOAP brain: goals and actions
    (F.E.A.R., Pittman), whose actions run as the role's ``tasks`` by action name."""
    root: str = "behave"
    daemons: Mapping[str, Daemon] = field(default_factory=dict)
    tasks: Mapping[str, TaskHandler] = field(default_factory=dict)
    constants: Mapping[str, Value] = field(default_factory=dict)
    """``@constants`` for the domain; each agent adds ``@self``, ``@team`` and ``@superior``."""
    replan_every: int = 1
    """Ticks between the decider's fixed-rate replans (Killzone replans "at a fixed rate").
    1: it plans every tick. More: in between, an agent whose decider can tell that nothing its
    last decision read has changed (:meth:`~warband.agents.Decider.reuse`: no fact it read, not
    the running plan) takes that decision again without planning, and plans only when
    something did change; the decisions, and so the messages, are those of planning every
    tick, as long as the domain's functions read nothing but their facts (a function that reads
    a clock, a global or a random source is seen again only at the fixed rate: keep 1)."""
    planning_budget: int = 20_000
    """Planner expansions one decision may use (per agent, whatever process it runs in)."""
    task_timeout: int = 60
    """Ticks a lasting task (a move, a wait) may run before it counts as failed."""
    reporter: Callable[[], Reporter] | None = None
    """Makes, for each agent, what it reports up every tick after gathering (a bot's status
    and threat reports); None: the agent reports only through its plan's tasks."""
    decide_again_after: frozenset[str] = frozenset()
    """Bookkeeping tasks (a bot's ``!restrict``): a plan with one of them is, once it ends,
    followed by a new decision in the same tick, with the orders as they are now and the daemons
    run again, so the work it
    prepares (the move the corridor restricts) starts this tick, not the next."""
    components: Sequence[ComponentFactory] = ()
    """Factories of the per-agent parts of the role (:mod:`warband.agents.component`): each
    agent of the role gets a fresh one of each, whose hooks and message handlers it runs."""
    make_decider: Callable[[Role, Mapping[str, Value]], Decider] | None = None
    """Makes the decider of one agent from the role and the agent's constants (``@self``,
    ``@team``...); None: an :class:`HtnDecider` for an HTN domain, a :class:`GoapDecider` for a
    GOAP brain (with :attr:`decider_options`)."""
    facts: Sequence[FactKind[Any]] = ()
    """Facts the role's tasks, reporter and functions write (its daemons declare theirs with
    :func:`~warband.agents.facts.declares`): with the world's and the loop's, the vocabulary
    its HTN domain is checked against when the role is made."""

    def __post_init__(self) -> None:
        if self.replan_every < 1 or self.planning_budget < 1 or self.task_timeout < 1:
            raise ConfigurationError(
                f"role {self.name!r}: replan_every, planning_budget and task_timeout must be "
                "at least 1"
            )
        clash = sorted(set(self.tasks) & set(BUILTIN_TASKS))
        if clash:
            raise ConfigurationError(
                f"role {self.name!r}: tasks {', '.join(clash)} are built in; rename yours"
            )
        check_executable(self.domain, self.executable, self.name)
        if isinstance(self.domain, HtnDomain):
            check_role_domain(self.domain, self.vocabulary, self.name)

    def with_components(self, *factories: ComponentFactory) -> Role:
        """This role with ``factories`` added to its components (those it lists already are
        not added twice)."""
        added = tuple(f for f in factories if f not in self.components)
        return dataclasses.replace(self, components=(*self.components, *added)) if added else self

    @property
    def vocabulary(self) -> Vocabulary:
        """Every fact this role's agents may know: the world's, the loop's, the role's own and
        its daemons' and reporter's (an HTN domain's ``(:fact ...)`` come on top)."""
        return Vocabulary(
            [
                *self.facts,
                *(kind for daemon in self.daemons.values() for kind in declared_by(daemon)),
                *declared_by(self.reporter),
            ]
        )

    decider_options: Mapping[str, Any] = field(default_factory=dict)
    """Further arguments of the decider (:class:`GoapDecider`'s ``state`` and ``context``)."""

    @property
    def acts(self) -> dict[str, ActTask]:
        """The domain's primitives that act in the world (an HTN domain's only)."""
        return act_tasks_of(self.domain) if isinstance(self.domain, HtnDomain) else {}

    @property
    def executable(self) -> dict[str, object]:
        """Every primitive name this role can run, and what runs it."""
        return {**BUILTIN_TASKS, **self.acts, **self.tasks}

    def decider(self, constants: Mapping[str, Value]) -> Decider:
        """A decider for one agent of this role (an HTN domain gets its constants added)."""
        if self.make_decider is not None:
            return self.make_decider(self, constants)
        # What a decider keeps for reuse() serves only between fixed-rate replans.
        options = {"remember": self.replan_every > 1, **self.decider_options}
        if isinstance(self.domain, Brain):
            return GoapDecider(self.domain, **options)
        return HtnDecider(
            self.domain, self.root, constants={**self.constants, **constants}, **options
        )

    @classmethod
    def from_file(
        cls,
        name: str,
        path: str | Path,
        *,
        functions: Mapping[str, HtnFunction] | None = None,
        **options: object,
    ) -> Role:
        """A role whose domain is the SHOP-like text file at ``path``.

        An act primitive whose parameters do not fit its verb is an error naming the file and
        line (``DomainSyntaxError``). ``options`` are the other fields of :class:`Role`.
        """
        domain = load_domain_file(path, functions, check=check_acts)
        return cls(name, domain, **options)  # type: ignore[arg-type]
