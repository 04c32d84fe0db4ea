"""The agent layer's fact vocabulary, and the check that holds a role's domain to it.

The world declares every fact a Percept may hold (:data:`warband.world.FACTS`, ``EVENTS``). The
agent loop writes facts of its own into memory: the command queue, the order book, the reports
of subordinates, refused acts, departed peers. They are declared here the same way, as
:class:`~warband.world.FactKind` s with named fields, so Python reads them by name
(``ORDER.first(facts).task``) and a domain is checked against them when its role is made.

A role adds what it writes itself: its daemons declare their facts with :func:`declares`, its
tasks and reporters through ``Role.facts``, and an HTN domain the facts it remembers with
``(:fact name ?field...)``. :func:`check_domain_facts` then checks every query of every
precondition, every effect and every ``!remember`` / ``!forget`` of the domain: an unknown name
or a wrong number of fields is an error naming the file, line and column, and the closest known
name. A misspelt fact therefore fails when the role is made, instead of loading quietly and never
matching.
"""

from __future__ import annotations

import difflib
from collections import namedtuple
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final, NamedTuple, NoReturn, TypeVar

from ..exceptions import ConfigurationError, DomainSyntaxError
from ..planning import FactDecl, HtnDomain, Query, Task
from ..planning.htn.planner import And, HtnCondition, Not, Or
from ..values import Value
from ..world import EVENTS, FACTS, FactKind

# --- the loop's facts ------------------------------------------------------------------------


class OrderFact(NamedTuple):
    id: str
    sender: str
    task: str
    args: tuple[Value, ...]
    """The order's arguments, in order (a list argument is one tuple value)."""


class QueuedOrder(NamedTuple):
    position: int
    id: str
    task: str


class OrderOpen(NamedTuple):
    id: str
    recipient: str
    task: str


class OrderEnded(NamedTuple):
    recipient: str
    task: str
    state: str
    """``done``, ``failed``, ``withdrawn`` or ``lost``."""


class Status(NamedTuple):
    sender: str
    status: str
    details: tuple[Value, ...]
    """The report's detail values in the order the sender wrote them."""


class ThreatReportFact(NamedTuple):
    sender: str
    threat: str
    position: str
    tick: int


class GoalBiasFact(NamedTuple):
    goal: str
    bias: float


class ActRefused(NamedTuple):
    verb: str
    ago: int
    """Ticks since the act was sent."""
    reason: str
    about: tuple[Value, ...]
    """What the plan meant by the act (by default its argument values)."""


class Departed(NamedTuple):
    agent: str
    reason: str


class Undelivered(NamedTuple):
    recipient: str
    type: str


ORDER: Final = FactKind("order", OrderFact, "the order at the head of the command queue", rest=True)
QUEUED_ORDER: Final = FactKind("queued_order", QueuedOrder, "an order queued behind the current")
ORDER_OPEN: Final = FactKind("order_open", OrderOpen, "an order this agent gave, not ended yet")
ORDER_ENDED: Final = FactKind(
    "order_ended", OrderEnded, "how the last order this agent gave a subordinate ended"
)
STATUS: Final = FactKind(
    "status", Status, "the last StatusReport from a sender, details as sent", rest=True
)
THREAT_REPORT: Final = FactKind(
    "threat_report", ThreatReportFact, "a ThreatReport from a subordinate"
)
GOAL_BIAS: Final = FactKind("goal_bias", GoalBiasFact, "a superior's bias for one of our goals")
ACT_REFUSED: Final = FactKind(
    "act_refused", ActRefused, "an act the world refused, for a few ticks", rest=True
)
DEPARTED: Final = FactKind("departed", Departed, "a subordinate left the run")
UNDELIVERED: Final = FactKind(
    "undelivered", Undelivered, "a reliable message of ours was never acknowledged"
)

LOOP_FACTS: Final[Mapping[str, FactKind[Any]]] = {
    kind.name: kind
    for kind in (
        ORDER,
        QUEUED_ORDER,
        ORDER_OPEN,
        ORDER_ENDED,
        STATUS,
        THREAT_REPORT,
        GOAL_BIAS,
        ACT_REFUSED,
        DEPARTED,
        UNDELIVERED,
    )
}
"""Every fact the agent loop itself writes into an agent's memory, by name."""


# --- what a role's parts declare -------------------------------------------------------------

F = TypeVar("F", bound=Callable[..., Any])

_DECLARED = "__warband_facts__"


def declares(*kinds: FactKind[Any]) -> Callable[[F], F]:
    """Mark a daemon (or a reporter) with the facts it writes::

    @declares(NOW)
    def now_daemon(memory, tick): return [NOW.fact(tick)]
    """

    def mark(writer: F) -> F:
        setattr(writer, _DECLARED, (*getattr(writer, _DECLARED, ()), *kinds))
        return writer

    return mark


def declared_by(writer: object) -> tuple[FactKind[Any], ...]:
    """The facts ``writer`` declares with :func:`declares` (none if it declares nothing)."""
    return tuple(getattr(writer, _DECLARED, ()))


def kind_of(decl: FactDecl) -> FactKind[Any]:
    """A domain's ``(:fact ...)`` declaration as a fact kind."""
    shape = namedtuple(f"{decl.name}_fact", decl.fields)  # type: ignore[misc]  # dynamic
    return FactKind(decl.name, shape, decl.doc)


# --- the check -------------------------------------------------------------------------------


class Vocabulary(Mapping[str, FactKind[Any]]):
    """Every fact name an agent's domain may use, with its fields: the world's facts and events,
    the loop's and those a role declares. Two declarations of one name must agree."""

    def __init__(self, kinds: Iterable[FactKind[Any]] = ()) -> None:
        self._kinds: dict[str, FactKind[Any]] = {}
        for kind in (*FACTS.values(), *EVENTS.values(), *LOOP_FACTS.values(), *kinds):
            self._add(kind)

    def _add(self, kind: FactKind[Any]) -> None:
        known = self._kinds.get(kind.name)
        if known is not None and known is not kind and _form(known) != _form(kind):
            raise ConfigurationError(
                f"fact {kind.name!r} is declared twice with different fields: "
                f"{known.form()} and {kind.form()}; use one declaration"
            )
        self._kinds.setdefault(kind.name, kind)

    def __getitem__(self, name: str) -> FactKind[Any]:
        return self._kinds[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)

    def unknown(self, name: str, where: str) -> str:
        """The error text for a fact name nobody declared, with the closest known names."""
        close = difflib.get_close_matches(name, self._kinds, n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        return (
            f"unknown fact {name!r} in {where}{hint} A fact the domain writes is declared with "
            f"(:fact {name} ?field...); one the role's Python writes with Role(facts=...) or "
            "@declares on its daemon"
        )


def _form(kind: FactKind[Any]) -> tuple[int, bool]:
    return len(kind.fields), kind.rest


Fail = Callable[[str, object], NoReturn]


def check_domain_facts(domain: HtnDomain, vocabulary: Vocabulary, fail: Fail) -> None:
    """Call ``fail(message, node)`` for the first fact ``domain`` uses that ``vocabulary``
    (plus the domain's own ``(:fact ...)`` and primitive ``:add`` facts) does not declare, or
    uses with a wrong number of fields."""
    own = [kind_of(decl) for decl in domain.facts.values()]
    for primitive in domain.primitives.values():
        own += [kind_of(FactDecl(q.name, _field_names(q))) for q in primitive.add]
    known = Vocabulary([*vocabulary.values(), *own])
    for primitive in domain.primitives.values():
        for effect in primitive.delete:
            _check_query(effect, known, f"effect of primitive {primitive.name}", fail)
    for method in domain.methods.values():
        for branch in method.branches:
            where = f"branch {branch.name!r} of method {method.task!r}"
            for query in _queries(branch.condition):
                _check_query(query, known, where, fail)
            for sub in branch.subtasks:
                _check_memory_task(sub, known, where, fail)


def _field_names(query: Query) -> tuple[str, ...]:
    return tuple(f"a{index}" for index in range(len(query.args)))


def _queries(condition: HtnCondition) -> Iterator[Query]:
    if isinstance(condition, Query):
        yield condition
    elif isinstance(condition, And | Or):
        for item in condition.items:
            yield from _queries(item)
    elif isinstance(condition, Not):
        yield from _queries(condition.item)


def _check_query(query: Query, known: Vocabulary, where: str, fail: Fail) -> None:
    kind = known.get(query.name)
    if kind is None:
        fail(known.unknown(query.name, where), query)
    problem = kind.arity_problem(len(query.args))
    if problem is not None:
        fail(f"wrong number of fields in the query {query} of {where}: {problem}", query)


WILDCARD = "**"


def _check_memory_task(task: Task, known: Vocabulary, where: str, fail: Fail) -> None:
    if task.name not in ("!remember", "!forget") or not task.args:
        return
    name = task.args[0]
    if not isinstance(name, str):
        return  # a fact name bound at planning time cannot be checked here
    kind = known.get(name)
    if kind is None:
        fail(known.unknown(name, f"{task} of {where}"), task)
    fields = list(task.args[1:])
    forgetting = task.name == "!forget"
    if forgetting and fields and fields[-1] == WILDCARD:
        fields.pop()
    problem = kind.arity_problem(len(fields), prefix=forgetting)
    if problem is not None:
        fail(f"wrong number of fields in {task} of {where}: {problem}", task)


def check_role_domain(domain: HtnDomain, vocabulary: Vocabulary, role: str) -> None:
    """:func:`check_domain_facts` for the domain of ``role``: the error is a
    :class:`~warband.exceptions.DomainSyntaxError` with the file, line and column when the
    domain was parsed from text, else a :class:`~warband.exceptions.ConfigurationError`."""

    def fail(message: str, node: object) -> NoReturn:
        place = domain.locate(node) if domain.locate is not None else None
        if place is not None:
            path, line, column = place
            raise DomainSyntaxError(message, path=path, line=line, column=column)
        raise ConfigurationError(f"role {role!r}, domain {domain.name!r}: {message}")

    check_domain_facts(domain, vocabulary, fail)


__all__ = [
    "ACT_REFUSED",
    "DEPARTED",
    "GOAL_BIAS",
    "LOOP_FACTS",
    "ORDER",
    "ORDER_ENDED",
    "ORDER_OPEN",
    "QUEUED_ORDER",
    "STATUS",
    "THREAT_REPORT",
    "UNDELIVERED",
    "ActRefused",
    "Departed",
    "GoalBiasFact",
    "OrderEnded",
    "OrderFact",
    "OrderOpen",
    "QueuedOrder",
    "Status",
    "ThreatReportFact",
    "Undelivered",
    "Vocabulary",
    "check_domain_facts",
    "check_role_domain",
    "declared_by",
    "declares",
    "kind_of",
]
