"""Executing: what each primitive task of a plan does, and when it is finished.

A plan's primitive tasks run one after another. Starting a task returns its status: ``done``
(it took effect at once: the loop starts the next task in the same tick), ``running`` (it lasts:
the loop checks it again next tick) or ``failed`` (the plan is dropped and the agent replans).

Three kinds of task:

- **built-in** tasks every role has (:data:`BUILTIN_TASKS`): change memory (``!remember``,
  ``!forget``), talk up and down (``!order``, ``!withdraw_orders``, command sequences,
  ``!clear_order``, ``!fail_order``, ``!report``, ``!report_threat``), talk to a group
  (``!broadcast``: "nearby" is an area group), ``!log``, ``!idle ?ticks`` (do nothing for a
  while), and the debugging markers ``!begin_plan`` / ``!end_plan``;
- **acts**: a primitive named after one of the world's verbs (``!move ?waypoint``) sends an Act
  whose arguments are the primitive's parameters by name (``{"waypoint": ...}``). The names are
  checked against the world's vocabulary when the domain loads (:func:`check_acts`). An act is
  done when the world accepts it, except a move, which lasts until the ``arrived`` event; it
  fails when the world rejects it or an ``act_failed`` or ``blocked`` event comes;
- **role tasks**: whatever else a role declares (a Python function per primitive name).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, NoReturn

from ..exceptions import ConfigurationError
from ..messaging import Act, ThreatReport
from ..planning import Brain, HtnDomain, Task
from ..values import Value
from ..world import VERBS, Verb, VocabularyError, check_act

if TYPE_CHECKING:
    from .agent import Agent

TaskStatus = Literal["done", "running", "failed"]

TaskHandler = Callable[["Agent", Task], TaskStatus]
"""What a primitive task does when it starts: ``(agent, ground task) -> status``. A handler
that returns ``failed`` sets ``agent.task_failure`` to say why."""


@dataclass(frozen=True)
class ActTask:
    """A primitive that acts in the world: its verb and the Act argument each parameter fills."""

    verb: str
    args: tuple[str, ...]
    until: str | None = None
    """The private event that ends it (``arrived`` for a move); None: done once accepted."""


LASTING_VERBS: Mapping[str, str] = {Verb.MOVE: "arrived"}
"""Verbs whose act lasts past its acceptance, and the event that ends it."""


def act_tasks_of(domain: HtnDomain) -> dict[str, ActTask]:
    """The primitives of ``domain`` named after a world verb, as acts (see the module doc)."""
    acts: dict[str, ActTask] = {}
    for name, primitive in domain.primitives.items():
        verb = name.removeprefix("!")
        if verb in VERBS:
            names = tuple(param.name.removeprefix("?") for param in primitive.params)
            acts[name] = ActTask(verb, names, LASTING_VERBS.get(verb))
    return acts


def check_acts(domain: HtnDomain, fail: Callable[[str, object], NoReturn]) -> None:
    """Fail at the declaration of every act primitive whose parameters do not fit its verb.

    Used as the ``check`` of :func:`warband.planning.load_domain_file`, so the error names the
    domain file and line: ``bot.htn:12:1: fire: unknown argument 'threat' ...``.
    """
    for name, act in act_tasks_of(domain).items():
        try:
            check_act(act.verb, act.args)
        except VocabularyError as error:
            fail(
                f"primitive {name} acts in the world as the verb {act.verb!r}, and its "
                f"parameters must be the verb's arguments: {error}",
                domain.primitives[name],
            )


# --- built-in tasks -----------------------------------------------------------------------------


def _args(task: Task) -> tuple[Value, ...]:
    """The arguments of a ground task (a plan's tasks are ground: the planner bound them)."""
    args = task.args
    for arg in args:
        if arg is not None and not isinstance(arg, bool | int | float | str | tuple):
            raise ConfigurationError(f"{task} reached execution with an unbound argument {arg}")
    return args  # type: ignore[return-value]  # checked above


def _remember(agent: Agent, task: Task) -> TaskStatus:
    if not _args(task) or not isinstance(_args(task)[0], str):
        return agent.fail_task(f"{task}: !remember needs a fact name first")
    agent.memory.remember(*_args(task))
    return "done"


def _forget(agent: Agent, task: Task) -> TaskStatus:
    if not _args(task):
        return agent.fail_task(f"{task}: !forget needs a fact name first")
    agent.memory.forget(*_args(task))
    return "done"


def _log(agent: Agent, task: Task) -> TaskStatus:
    agent.log.info("agent.log", text=" ".join(str(a) for a in _args(task)), tick=agent.tick)
    return "done"


def _marker(agent: Agent, task: Task) -> TaskStatus:
    return "done"


def _idle(agent: Agent, task: Task) -> TaskStatus:
    args = _args(task)
    ticks = args[0] if args else 1
    if not isinstance(ticks, int) or isinstance(ticks, bool):
        return agent.fail_task(f"{task}: !idle takes a whole number of ticks")
    return agent.wait_task(ticks)


def _order(agent: Agent, task: Task) -> TaskStatus:
    if len(_args(task)) < 2:
        return agent.fail_task(f"{task}: !order needs a member and a task")
    member, order_task, *args = _args(task)
    agent.give_order(str(member), str(order_task), args)
    return "done"


def _withdraw_orders(agent: Agent, task: Task) -> TaskStatus:
    if len(_args(task)) != 1:
        return agent.fail_task(f"{task}: !withdraw_orders needs the member")
    agent.withdraw_orders(str(_args(task)[0]), "replanned")
    return "done"


def _start_sequence(agent: Agent, task: Task) -> TaskStatus:
    if not _args(task):
        return agent.fail_task(f"{task}: !start_command_sequence needs the member")
    agent.start_sequence(str(_args(task)[0]))
    return "done"


def _end_sequence(agent: Agent, task: Task) -> TaskStatus:
    if not _args(task):
        return agent.fail_task(f"{task}: !end_command_sequence needs the member")
    agent.end_sequence(str(_args(task)[0]))
    return "done"


def _clear_order(agent: Agent, task: Task) -> TaskStatus:
    agent.finish_order(success=True, reason=" ".join(str(a) for a in _args(task)))
    return "done"


def _fail_order(agent: Agent, task: Task) -> TaskStatus:
    agent.finish_order(success=False, reason=" ".join(str(a) for a in _args(task)) or "failed")
    return "done"


def _report(agent: Agent, task: Task) -> TaskStatus:
    if not _args(task):
        return agent.fail_task(f"{task}: !report needs a status")
    status, *rest = _args(task)
    agent.report_status(str(status), rest)
    return "done"


def _report_threat(agent: Agent, task: Task) -> TaskStatus:
    if not _args(task) or agent.superior is None:
        return "done" if _args(task) else agent.fail_task(f"{task}: !report_threat needs a threat")
    threat = str(_args(task)[0])
    position = str(_args(task)[1]) if len(_args(task)) > 1 else None
    agent.send(ThreatReport(recipient=agent.superior, threat=threat, position=position))
    return "done"


def _broadcast(agent: Agent, task: Task) -> TaskStatus:
    if len(_args(task)) < 2:
        return agent.fail_task(f"{task}: !broadcast needs a group and a topic")
    group, topic, *rest = _args(task)
    agent.broadcast_status(str(group), str(topic), rest)
    return "done"


BUILTIN_TASKS: Mapping[str, TaskHandler] = {
    "!remember": _remember,
    "!forget": _forget,
    "!log": _log,
    "!begin_plan": _marker,
    "!end_plan": _marker,
    "!idle": _idle,
    "!order": _order,
    "!withdraw_orders": _withdraw_orders,
    "!start_command_sequence": _start_sequence,
    "!end_command_sequence": _end_sequence,
    "!clear_order": _clear_order,
    "!fail_order": _fail_order,
    "!report": _report,
    "!report_threat": _report_threat,
    "!broadcast": _broadcast,
}
"""The tasks every role can use, by primitive name (see the module docstring)."""


def act_of(act: ActTask, task: Task, world: str) -> Act:
    """The Act message that ``task`` (a ground act primitive) sends to the world."""
    return Act(recipient=world, verb=act.verb, args=dict(zip(act.args, _args(task), strict=True)))


def unknown_tasks(domain: HtnDomain | Brain, known: Mapping[str, object]) -> list[str]:
    """The primitives of an HTN ``domain``, or the actions of a GOAP brain, that nothing
    executes (neither built in, act nor role task)."""
    if isinstance(domain, Brain):
        return sorted({a.name for a in domain.actions if not a.cooperation} - set(known))
    return sorted(name for name in domain.primitives if name not in known and name != "!continue")


def check_executable(domain: HtnDomain | Brain, known: Mapping[str, object], role: str) -> None:
    """Raise ConfigurationError naming every primitive of ``domain`` nothing executes."""
    missing = unknown_tasks(domain, known)
    if missing:
        raise ConfigurationError(
            f"role {role!r}: the domain {domain.name!r} declares primitive tasks that nothing "
            f"executes: {', '.join(missing)}; name them after a world verb "
            f"({', '.join(VERBS)}), use a built-in task ({', '.join(BUILTIN_TASKS)}), or give "
            "the role a Python handler for each (Role(tasks={...}))"
        )


__all__ = [
    "BUILTIN_TASKS",
    "LASTING_VERBS",
    "ActTask",
    "TaskHandler",
    "TaskStatus",
    "act_of",
    "act_tasks_of",
    "check_acts",
    "check_executable",
]
