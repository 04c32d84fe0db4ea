"""The HTN domain model: tasks, conditions, branches, methods, primitives, the domain itself,
its validation and the Python builder.

A :class:`HtnDomain` holds constants, primitive tasks (``!fire``), registered Python functions and
one :class:`Method` per compound task. A method lists :class:`Branch` es in priority order; each
has a precondition (a :data:`HtnCondition` over the agent's :class:`~warband.planning.FactDB`)
and a list of subtasks. :mod:`warband.planning.htn.planner` plans with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NoReturn, TypeAlias

from ...exceptions import PlanningError
from ...values import Value, format_value, values_equal
from .facts import ConstRef, Term, Var, parse_term

HtnFunction: TypeAlias = Callable[..., object]
"""A registered function, called as ``fn(facts, *args)``; ``facts`` is the planning snapshot."""

CONTINUE = "!continue"
"""The task name that marks a continuation branch (written ``((!continue))`` as its subtasks)."""


@dataclass(frozen=True, slots=True)
class Call:
    """``(call fn arg...)``: a registered function applied to terms (which may be calls too).

    As a condition it holds when the result is truthy; as a term its result is the value.
    """

    function: str
    args: tuple[Term | Call, ...] = ()

    def __str__(self) -> str:
        return "(call " + " ".join([self.function, *(_term_text(a) for a in self.args)]) + ")"


ArgTerm: TypeAlias = Term | Call
"""What a task or call argument may be: a value, ``?var``, ``@constant`` or a nested call."""


@dataclass(frozen=True, slots=True)
class Query:
    """``(name term...)``: holds for every fact that matches; binds the pattern's new variables."""

    name: str
    args: tuple[Term, ...] = ()

    def __str__(self) -> str:
        return "(" + " ".join([self.name, *(_term_text(a) for a in self.args)]) + ")"


@dataclass(frozen=True, slots=True)
class And:
    """``(and c...)``: every condition, left to right; ``(and)`` always holds once."""

    items: tuple[HtnCondition, ...] = ()


@dataclass(frozen=True, slots=True)
class Or:
    """``(or c...)``: the answers of each alternative in turn."""

    items: tuple[HtnCondition, ...]


@dataclass(frozen=True, slots=True)
class Not:
    """``(not c)``: holds (once, binding nothing) when ``c`` has no answer."""

    item: HtnCondition


@dataclass(frozen=True, slots=True)
class Bind:
    """``(?var = expr)``: binds ``?var`` to the value of a term or call (fails on ``None``).

    If ``?var`` is already bound, it holds when the values are equal.
    """

    var: Var
    expr: ArgTerm


HtnCondition: TypeAlias = Query | And | Or | Not | Call | Bind
"""A branch precondition: a query over the facts, or a connective of them (GOAP's
:class:`~warband.planning.goap.state.Condition` is a property test, another thing)."""

TRUE = And()
"""The empty precondition."""


@dataclass(frozen=True, slots=True)
class Task:
    """A task with arguments; primitive when the name starts with ``!``.

    In a domain the arguments may be variables, constants and calls; in a plan they are values.
    """

    name: str
    args: tuple[ArgTerm, ...] = ()

    @property
    def is_primitive(self) -> bool:
        """True for ``!name`` tasks, which the agent executes directly."""
        return self.name.startswith("!")

    def __str__(self) -> str:
        return "(" + " ".join([self.name, *(_term_text(a) for a in self.args)]) + ")"


def task(name: str, *args: Value | Var | ConstRef | Call) -> Task:
    """Build a task, reading ``"?x"`` as a variable and ``"@x"`` as a constant."""
    return Task(name, tuple(a if isinstance(a, Call) else parse_term(a) for a in args))


def query(name: str, *args: Value | Var | ConstRef) -> Query:
    """Build a fact query, reading ``"?x"`` as a variable and ``"@x"`` as a constant."""
    return Query(name, tuple(parse_term(a) for a in args))


def call(function: str, *args: Value | Var | ConstRef | Call) -> Call:
    """Build a function call, reading ``"?x"`` as a variable and ``"@x"`` as a constant."""
    return Call(function, tuple(a if isinstance(a, Call) else parse_term(a) for a in args))


def bind(var: str, expr: Value | Var | ConstRef | Call) -> Bind:
    """Build ``(?var = expr)``; ``var`` is written with its ``?``."""
    target = parse_term(var)
    if not isinstance(target, Var):
        raise PlanningError(f"bind target {var!r} must be a variable such as '?d'")
    return Bind(target, expr if isinstance(expr, Call) else parse_term(expr))


@dataclass(frozen=True, slots=True)
class Branch:
    """One way to achieve a compound task: name, precondition, subtasks.

    A continuation branch has no subtasks of its own (its text form is ``((!continue))``).
    """

    name: str
    condition: HtnCondition = TRUE
    subtasks: tuple[Task, ...] = ()
    continuation: bool = False


@dataclass(frozen=True, slots=True)
class Method:
    """The branches, in priority order, for the compound task ``(task param...)``."""

    task: str
    params: tuple[Var, ...]
    branches: tuple[Branch, ...]

    @property
    def has_continuation(self) -> bool:
        """True if one of the branches is a continuation branch."""
        return any(branch.continuation for branch in self.branches)


@dataclass(frozen=True, slots=True)
class Primitive:
    """A primitive task's declaration: its parameters and the facts it adds and deletes.

    Effects are applied to the planner's snapshot of the facts; the agent performs the real
    action when it executes the task. Every variable of an effect must be a parameter.
    """

    name: str
    params: tuple[Var, ...] = ()
    add: tuple[Query, ...] = ()
    delete: tuple[Query, ...] = ()


@dataclass(frozen=True, slots=True)
class FactDecl:
    """A fact the domain itself writes (``!remember``) and reads, declared with its fields:
    ``(:fact rally ?order ?waypoint "where the squad regroups for an order")``.

    The planner does not need it; an agent's role checks the domain's queries and memory tasks
    against every declared fact (the world's, the agent loop's, the role's and these) when the
    role is made, so a misspelt fact name fails there instead of never matching.
    """

    name: str
    fields: tuple[str, ...] = ()
    doc: str = ""

    def __str__(self) -> str:
        return "(" + " ".join([self.name, *(f"?{f}" for f in self.fields)]) + ")"


Locate: TypeAlias = Callable[[object], tuple[str, int, int] | None]
"""Where a node of a parsed domain is written: ``(path, line, column)``, or None."""

BUILTIN_FUNCTIONS: Mapping[str, HtnFunction] = {
    "lt": lambda facts, a, b: a < b,
    "le": lambda facts, a, b: a <= b,
    "gt": lambda facts, a, b: a > b,
    "ge": lambda facts, a, b: a >= b,
    "eq": lambda facts, a, b: values_equal(a, b),
    "ne": lambda facts, a, b: not values_equal(a, b),
    "add": lambda facts, a, b: a + b,
    "sub": lambda facts, a, b: a - b,
    "mul": lambda facts, a, b: a * b,
}
"""Functions every domain knows: comparisons (``lt le gt ge eq ne``; ``eq`` is
:func:`warband.values.values_equal`, so ``true`` is not ``1``) and ``add sub mul``."""


@dataclass(frozen=True)
class HtnDomain:
    """An HTN domain. Build it with :class:`DomainBuilder` or parse it from text.

    ``constants`` maps names to default values, or to ``None`` for a constant the agent must
    supply when planning (``@self``). ``functions`` excludes :data:`BUILTIN_FUNCTIONS`, which are
    always available.
    """

    name: str
    methods: Mapping[str, Method]
    primitives: Mapping[str, Primitive]
    constants: Mapping[str, Value] = field(default_factory=dict)
    functions: Mapping[str, HtnFunction] = field(default_factory=dict, compare=False)
    facts: Mapping[str, FactDecl] = field(default_factory=dict)
    """The facts the domain declares it writes (``(:fact ...)``, :meth:`DomainBuilder.fact`)."""
    locate: Locate | None = field(default=None, compare=False, repr=False)
    """For a domain parsed from text: where each of its nodes is written, so that a check made
    later (a role's fact check) names the file, line and column."""

    def where(self, node: object) -> str:
        """``path:line:column: `` for a node of a parsed domain, or ``""``."""
        place = self.locate(node) if self.locate is not None else None
        return f"{place[0]}:{place[1]}:{place[2]}: " if place is not None else ""

    def function(self, name: str) -> HtnFunction:
        """The registered or built-in function called ``name``."""
        found = self.functions.get(name) or BUILTIN_FUNCTIONS.get(name)
        if found is None:
            raise PlanningError(
                f"unknown function '{name}' in domain '{self.name}'; known functions: "
                + ", ".join(sorted({*self.functions, *BUILTIN_FUNCTIONS}))
            )
        return found


# --- validation ----------------------------------------------------------------------------

Fail: TypeAlias = Callable[[str, object], NoReturn]
"""Reports a domain error about a node (the parser turns the node into a file position)."""


def _raise_planning_error(message: str, node: object) -> NoReturn:
    raise PlanningError(message)


def validate_domain(domain: HtnDomain, fail: Fail = _raise_planning_error) -> None:
    """Check every reference of ``domain``; call ``fail(message, node)`` on the first error.

    Checked: every compound task has a method and every primitive a declaration, with the right
    number of arguments; every function and ``@constant`` exists; every variable a call or a
    subtask uses is bound by the method's parameters or earlier in the precondition; primitive
    effects use only parameters; a continuation branch has no other subtasks.
    """
    known_functions = {*domain.functions, *BUILTIN_FUNCTIONS}
    for primitive in domain.primitives.values():
        params = {p.name for p in primitive.params}
        for effect in (*primitive.add, *primitive.delete):
            for term in effect.args:
                where = f"effect {effect} of primitive '{primitive.name}'"
                _check_term(term, params, domain, known_functions, where, fail)
    for method in domain.methods.values():
        for branch in method.branches:
            where = f"branch '{branch.name}' of method '{method.task}'"
            bound = _check_condition(
                branch.condition,
                {p.name for p in method.params},
                domain,
                known_functions,
                where,
                fail,
            )
            for sub in branch.subtasks:
                _check_task(sub, bound, domain, known_functions, where, fail)


def _check_task(
    sub: Task,
    bound: set[str],
    domain: HtnDomain,
    functions: set[str],
    where: str,
    fail: Fail,
) -> None:
    if sub.is_primitive:
        declared = domain.primitives.get(sub.name)
        if declared is None:
            fail(
                f"unknown primitive task '{sub.name}' in {where}; declare it with "
                f"(:primitive {sub.name} ...). Known primitives: "
                + (", ".join(sorted(domain.primitives)) or "none"),
                sub,
            )
        expected = len(declared.params)
    else:
        method = domain.methods.get(sub.name)
        if method is None:
            fail(
                f"unknown compound task '{sub.name}' in {where}: no method decomposes it. "
                "Known methods: " + (", ".join(sorted(domain.methods)) or "none"),
                sub,
            )
        expected = len(method.params)
    if len(sub.args) != expected:
        fail(
            f"task '{sub.name}' takes {expected} argument(s) but {where} gives {len(sub.args)}",
            sub,
        )
    for arg in sub.args:
        _check_term(arg, bound, domain, functions, f"task {sub} in {where}", fail)


def _check_term(
    term: ArgTerm,
    bound: set[str],
    domain: HtnDomain,
    functions: set[str],
    where: str,
    fail: Fail,
) -> None:
    if isinstance(term, Var) and term.name not in bound:
        fail(
            f"unbound variable ?{term.name} in {where}; bind it in the precondition "
            "(a query or (?var = ...)) or make it a method parameter",
            term,
        )
    elif isinstance(term, ConstRef) and term.name not in domain.constants:
        fail(
            f"unknown constant @{term.name} in {where}; declare it with "
            f"(:constant @{term.name} value). Known constants: "
            + (", ".join("@" + c for c in sorted(domain.constants)) or "none"),
            term,
        )
    elif isinstance(term, Call):
        _check_call(term, bound, domain, functions, where, fail)


def _check_call(
    expr: Call, bound: set[str], domain: HtnDomain, functions: set[str], where: str, fail: Fail
) -> None:
    if expr.function not in functions:
        fail(
            f"unknown function '{expr.function}' in {where}; register it with the domain. "
            "Known functions: " + ", ".join(sorted(functions)),
            expr,
        )
    for arg in expr.args:
        _check_term(arg, bound, domain, functions, where, fail)


def _check_condition(
    cond: HtnCondition,
    bound: set[str],
    domain: HtnDomain,
    functions: set[str],
    where: str,
    fail: Fail,
) -> set[str]:
    """Return the variables bound after ``cond`` holds."""
    if isinstance(cond, Query):
        out = set(bound)
        for term in cond.args:
            if isinstance(term, Var):
                out.add(term.name)
            elif isinstance(term, ConstRef):
                _check_term(term, bound, domain, functions, where, fail)
        return out
    if isinstance(cond, Call):
        _check_call(cond, bound, domain, functions, where, fail)
        return bound
    if isinstance(cond, Bind):
        _check_term(cond.expr, bound, domain, functions, where, fail)
        return bound | {cond.var.name}
    if isinstance(cond, Not):
        _check_condition(cond.item, bound, domain, functions, where, fail)
        return bound
    if isinstance(cond, Or):
        outs = [_check_condition(c, bound, domain, functions, where, fail) for c in cond.items]
        return set.intersection(*outs) if outs else set(bound)
    out = bound
    for item in cond.items:
        out = _check_condition(item, out, domain, functions, where, fail)
    return out


class DomainBuilder:
    """Build a :class:`HtnDomain` in Python; :meth:`build` validates it (raises PlanningError).

    Strings in patterns and tasks follow :func:`~warband.planning.htn.facts.parse_term`
    (``"?x"`` variable, ``"@x"`` constant)::

        b = DomainBuilder("turret")
        b.constant("bullet_rng", 30)
        b.primitive("!fire", "?target")
        b.method("attack", "?t").branch("shoot", query("visible", "?t"), [task("!fire", "?t")])
        domain = b.build()
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._methods: dict[str, MethodBuilder] = {}
        self._primitives: dict[str, Primitive] = {}
        self._constants: dict[str, Value] = {}
        self._functions: dict[str, HtnFunction] = {}
        self._facts: dict[str, FactDecl] = {}

    def constant(self, name: str, value: Value = None) -> DomainBuilder:
        """Declare ``@name`` with a default value, or None when the agent must supply it."""
        self._constants[name.removeprefix("@")] = value
        return self

    def fact(self, name: str, *fields: str, doc: str = "") -> DomainBuilder:
        """Declare a fact the domain writes and reads (see :class:`FactDecl`); ``fields`` are
        names, with or without their ``?``."""
        self._facts[name] = FactDecl(name, tuple(f.removeprefix("?") for f in fields), doc)
        return self

    def function(self, name: str, fn: HtnFunction) -> DomainBuilder:
        """Register ``fn`` (called as ``fn(facts, *args)``) under ``name``."""
        self._functions[name] = fn
        return self

    def primitive(
        self,
        name: str,
        *params: str,
        add: Iterable[Query] = (),
        delete: Iterable[Query] = (),
    ) -> DomainBuilder:
        """Declare the primitive task ``name`` (with its ``!``) and its planning effects."""
        if not name.startswith("!"):
            raise PlanningError(f"primitive task names start with '!': write '!{name}'")
        self._primitives[name] = Primitive(name, _vars(params, name), tuple(add), tuple(delete))
        return self

    def method(self, task_name: str, *params: str) -> MethodBuilder:
        """Start (or continue) the method for the compound task ``(task_name params...)``."""
        existing = self._methods.get(task_name)
        if existing is not None:
            return existing
        builder = MethodBuilder(task_name, _vars(params, task_name))
        self._methods[task_name] = builder
        return builder

    def build(self) -> HtnDomain:
        """The validated domain."""
        domain = HtnDomain(
            name=self.name,
            methods={name: mb.build() for name, mb in self._methods.items()},
            primitives=dict(self._primitives),
            constants=dict(self._constants),
            functions=dict(self._functions),
            facts=dict(self._facts),
        )
        validate_domain(domain)
        return domain


class MethodBuilder:
    """Adds branches, in priority order, to one method; see :class:`DomainBuilder`."""

    def __init__(self, task_name: str, params: tuple[Var, ...]) -> None:
        self.task_name = task_name
        self.params = params
        self._branches: list[Branch] = []

    def branch(
        self, name: str, condition: HtnCondition = TRUE, subtasks: Sequence[Task] = ()
    ) -> MethodBuilder:
        """Add the next (lower-priority) branch."""
        self._branches.append(Branch(name, condition, tuple(subtasks)))
        return self

    def continuation(self, name: str, condition: HtnCondition) -> MethodBuilder:
        """Add a continuation branch: while a plan from this method is active and
        ``condition`` holds, planning stops and keeps the current plan."""
        self._branches.append(Branch(name, condition, (), continuation=True))
        return self

    def build(self) -> Method:
        """The method."""
        return Method(self.task_name, self.params, tuple(self._branches))


def _vars(params: Iterable[str], owner: str) -> tuple[Var, ...]:
    out = []
    for param in params:
        term = parse_term(param)
        if not isinstance(term, Var):
            raise PlanningError(f"parameter {param!r} of '{owner}' must be a variable like '?x'")
        out.append(term)
    return tuple(out)


_TERMS = (Var, ConstRef, Call)
"""A tuple, not a union: ``Var | ConstRef | Call`` would be built anew at every call."""


def _term_text(term: ArgTerm) -> str:
    if isinstance(term, _TERMS):
        return str(term)
    return format_value(term)
