"""HTN planning as in Killzone 3 (after SHOP): domain model, planner, plans and their priority.

A :class:`HtnDomain` holds constants, primitive tasks (``!fire``), registered Python functions and
one :class:`Method` per compound task. A method lists :class:`Branch` es in priority order; each
has a precondition (a :data:`Condition` over the agent's :class:`~warband.planning.facts.FactDB`)
and a list of subtasks. Planning a root task tries the branches of its method in order, for each
branch every binding of its precondition, and for each binding decomposes the subtasks left to
right; it backtracks over branches, bindings and sub-decompositions and returns the first plan
made only of primitive tasks (SHOP's ordered semantics).

Primitive tasks may declare effects (facts they add and delete); the planner applies them to a
snapshot of the facts while planning so that later preconditions see them. Registered functions
run as ``fn(facts, *args)`` and may assert facts into that snapshot (Killzone's
``request_line_of_attack``); such facts live only as long as the branch that made them.

Each :class:`HtnPlan` records its branch path: the index of the branch chosen at every compound
task, in decomposition order. :meth:`HtnPlan.outranks` compares paths the way the agent decides
whether a freshly planned behaviour should replace the running one; :func:`choose_plan` is that
decision, including continuation branches (a branch whose only subtask is ``!continue``: when it
is reached while a plan made by the same method is active, planning stops and the current plan
stays).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, NamedTuple, NoReturn, TypeAlias

from ..exceptions import PlanningError
from .facts import (
    Bindings,
    ConstRef,
    Fact,
    FactDB,
    FactValue,
    Term,
    Var,
    _constant,
    format_value,
    parse_term,
)

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

    items: tuple[Condition, ...] = ()


@dataclass(frozen=True, slots=True)
class Or:
    """``(or c...)``: the answers of each alternative in turn."""

    items: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class Not:
    """``(not c)``: holds (once, binding nothing) when ``c`` has no answer."""

    item: Condition


@dataclass(frozen=True, slots=True)
class Bind:
    """``(?var = expr)``: binds ``?var`` to the value of a term or call (fails on ``None``).

    If ``?var`` is already bound, it holds when the values are equal.
    """

    var: Var
    expr: ArgTerm


Condition: TypeAlias = Query | And | Or | Not | Call | Bind
"""A branch precondition."""

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


def task(name: str, *args: FactValue | Var | ConstRef | Call) -> Task:
    """Build a task, reading ``"?x"`` as a variable and ``"@x"`` as a constant."""
    return Task(name, tuple(a if isinstance(a, Call) else parse_term(a) for a in args))


def query(name: str, *args: FactValue | Var | ConstRef) -> Query:
    """Build a fact query, reading ``"?x"`` as a variable and ``"@x"`` as a constant."""
    return Query(name, tuple(parse_term(a) for a in args))


def call(function: str, *args: FactValue | Var | ConstRef | Call) -> Call:
    """Build a function call, reading ``"?x"`` as a variable and ``"@x"`` as a constant."""
    return Call(function, tuple(a if isinstance(a, Call) else parse_term(a) for a in args))


def bind(var: str, expr: FactValue | Var | ConstRef | Call) -> Bind:
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
    condition: Condition = TRUE
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


BUILTIN_FUNCTIONS: Mapping[str, HtnFunction] = {
    "lt": lambda facts, a, b: a < b,
    "le": lambda facts, a, b: a <= b,
    "gt": lambda facts, a, b: a > b,
    "ge": lambda facts, a, b: a >= b,
    "eq": lambda facts, a, b: a == b,
    "ne": lambda facts, a, b: a != b,
    "add": lambda facts, a, b: a + b,
    "sub": lambda facts, a, b: a - b,
    "mul": lambda facts, a, b: a * b,
}
"""Functions every domain knows: comparisons (``lt le gt ge eq ne``) and ``add sub mul``."""


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
    constants: Mapping[str, FactValue | None] = field(default_factory=dict)
    functions: Mapping[str, HtnFunction] = field(default_factory=dict, compare=False)

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
    cond: Condition,
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

    Strings in patterns and tasks follow :func:`~warband.planning.facts.parse_term`
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
        self._constants: dict[str, FactValue | None] = {}
        self._functions: dict[str, HtnFunction] = {}

    def constant(self, name: str, value: FactValue | None = None) -> DomainBuilder:
        """Declare ``@name`` with a default value, or None when the agent must supply it."""
        self._constants[name.removeprefix("@")] = value
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
        self, name: str, condition: Condition = TRUE, subtasks: Sequence[Task] = ()
    ) -> MethodBuilder:
        """Add the next (lower-priority) branch."""
        self._branches.append(Branch(name, condition, tuple(subtasks)))
        return self

    def continuation(self, name: str, condition: Condition) -> MethodBuilder:
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


# --- plans ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BranchFailure:
    """A branch tried before the chosen one, and why it failed (only with ``explain=True``)."""

    index: int
    name: str
    reason: str
    """``precondition failed``, ``no active plan`` (continuation branch), or
    ``decomposition failed`` (the precondition held for ``bindings_tried`` bindings but the
    subtasks could not be decomposed for any of them)."""
    bindings_tried: int = 0


@dataclass(frozen=True, slots=True)
class Choice:
    """How one compound task of a plan was decomposed."""

    task: Task
    """The ground compound task."""
    index: int
    """Index of the chosen branch in its method."""
    branch: str
    bindings: tuple[tuple[str, FactValue], ...]
    """Variables the branch's precondition bound (the method parameters excluded)."""
    subtasks: tuple[Task, ...]
    """The ground subtasks; ``(!continue)`` alone for a continuation branch."""
    failures: tuple[BranchFailure, ...] | None
    """Branches tried before, with reasons; None when the plan was made without ``explain``
    (the branches before ``index`` then all failed for unrecorded reasons)."""


@dataclass(frozen=True)
class HtnPlan:
    """A fully primitive plan and how it was found.

    Plans compare equal when their root, steps and path are equal.
    """

    root: Task
    steps: tuple[Task, ...]
    """Ground primitive tasks in execution order."""
    path: tuple[int, ...]
    """Branch index chosen at each compound task, in decomposition order (root first)."""
    methods: tuple[str, ...] = field(compare=False)
    """The compound task decomposed at each position of ``path``."""
    continuable: bool = field(compare=False)
    """True if a method used has a continuation branch: the plan lapses when none fires."""
    choices: tuple[Choice, ...] = field(compare=False, repr=False)
    """The decomposition, for explanations (:mod:`warband.planning.htn_explain`)."""

    def outranks(self, other: HtnPlan) -> bool:
        """True if this plan should replace ``other``: at the first position where the two
        branch paths differ, this one took a branch higher up the list (a lower index).

        Equal paths, or one path a prefix of the other, do not outrank: no branch farther up
        the list was taken, so replacing would only restart the same behaviour.
        """
        for mine, theirs in zip(self.path, other.path, strict=False):
            if mine != theirs:
                return mine < theirs
        return False


HtnStatus: TypeAlias = Literal["plan", "continue", "failed", "exhausted"]


@dataclass(frozen=True)
class HtnResult:
    """What one planning run produced.

    ``plan``: a plan was found (``plan`` is set). ``continue``: a continuation branch fired
    and the current plan stays (``choices`` lead down to that branch). ``failed``: no branch
    of the root works (``root_failures`` says why when planned with ``explain``).
    ``exhausted``: the expansion budget ran out first.
    """

    status: HtnStatus
    root: Task
    plan: HtnPlan | None = None
    choices: tuple[Choice, ...] = ()
    root_failures: tuple[BranchFailure, ...] = ()
    expansions: int = 0
    """How many branch bindings the planner tried (a measure of its work)."""


@dataclass(frozen=True)
class Replan:
    """The agent's decision after replanning: the plan to run and why."""

    plan: HtnPlan | None
    replaced: bool
    reason: str


def choose_plan(current: HtnPlan | None, result: HtnResult) -> Replan:
    """Decide whether the outcome of a periodic replan replaces the running plan.

    - ``continue``: keep the current plan; so does ``exhausted`` (the search was cut short).
    - a new plan and no current plan: take it.
    - a new plan that :meth:`~HtnPlan.outranks` the current one: replace (the grenade beats the
      heal).
    - otherwise, if the current plan is continuable, its continuation conditions did not hold,
      so it has lapsed: replace it with the new plan (or drop it if nothing was found).
    - otherwise keep the current plan; an equal path is never a replacement.
    """
    if result.status == "continue":
        return Replan(current, False, "continuation conditions hold")
    if result.status == "exhausted" and current is not None:
        # The search was cut short, so it says nothing about the current plan's relevance.
        return Replan(current, False, "kept: replanning ran out of budget")
    new = result.plan
    if current is None:
        if new is None:
            return Replan(None, False, f"no plan ({result.status})")
        return Replan(new, True, "no current plan")
    if new is not None and new.outranks(current):
        return Replan(new, True, "new plan takes a higher-priority branch")
    if current.continuable:
        return Replan(new, True, "current plan lapsed: its continuation conditions failed")
    if new is None:
        return Replan(current, False, f"kept: replanning found no plan ({result.status})")
    return Replan(current, False, "kept: new plan does not outrank the current one")


# --- the planner ---------------------------------------------------------------------------

_Cons: TypeAlias = tuple[object, object] | None


class _Node(NamedTuple):  # a tuple: built once per expansion, cheaper than a dataclass
    tasks: tuple[Task, _Cons] | None
    state: FactDB
    steps: _Cons
    choices: _Cons


@dataclass(frozen=True, slots=True)
class _ContinueSignal:
    choices: _Cons


def _unwind(cons: _Cons) -> list[object]:
    out: list[object] = []
    while cons is not None:
        out.append(cons[0])
        cons = cons[1]  # type: ignore[assignment]
    out.reverse()
    return out


class HtnPlanner:
    """Plans root tasks in one domain. Pure: the facts passed in are never changed."""

    def __init__(self, domain: HtnDomain) -> None:
        self.domain = domain
        self._methods = domain.methods
        self._primitives = domain.primitives
        self._functions = {**BUILTIN_FUNCTIONS, **domain.functions}
        cache = _COMPILED.get(id(domain))
        if cache is None or cache.domain() is not domain or cache.functions != self._functions:
            cache = _DomainCache(domain, self._functions)
        self._compiled = cache.methods
        self._effects = cache.primitives

    def plan(
        self,
        facts: FactDB,
        root: Task | str,
        *,
        constants: Mapping[str, FactValue] | None = None,
        current: HtnPlan | None = None,
        explain: bool = False,
        max_expansions: int = 1_000_000,
    ) -> HtnResult:
        """Plan ``root`` (a ground task, or a bare task name) against ``facts``.

        ``constants`` supplies ``@constants`` (overriding the domain's defaults; those declared
        without a default are required). ``current`` is the agent's running plan, which
        enables continuation branches. ``explain`` records why each earlier branch failed.
        Raises PlanningError for a malformed problem (unknown root task, missing constant,
        unbound variable at run time, a function that raised).
        """
        root_task = Task(root) if isinstance(root, str) else root
        run = _Run(self, facts, root_task, constants or {}, current, explain, max_expansions)
        return run.search()

    def _method(self, name: str) -> _CompiledMethod:
        compiled = self._compiled.get(name)
        method = self._methods[name]
        if compiled is None or compiled.method is not method:
            compiled = self._compiled[name] = _compile_method(self._methods[name], self._functions)
        return compiled

    def _primitive(self, name: str) -> _CompiledPrimitive | None:
        compiled = self._effects.get(name)
        primitive = self._primitives.get(name)
        if primitive is None:
            return None
        if compiled is None or compiled.primitive is not primitive:
            compiled = self._effects[name] = _CompiledPrimitive(primitive)
        return compiled


class _DomainCache:
    """The compiled methods and primitives of one domain, shared by the planners built on it.

    A planner is often built for a single run (the benchmark does so), and compiling costs about
    as much as planning a small problem. Methods and primitives compile on first use and are
    checked against the domain's current ones (its mappings may have changed); a change of
    functions starts a new cache. The entry goes when the domain is garbage collected.
    """

    __slots__ = ("__weakref__", "domain", "functions", "methods", "primitives")

    def __init__(self, domain: HtnDomain, functions: dict[str, HtnFunction]) -> None:
        self.domain = weakref.ref(domain)
        self.functions = functions
        self.methods: dict[str, _CompiledMethod] = {}
        self.primitives: dict[str, _CompiledPrimitive] = {}
        key = id(domain)
        if key not in _COMPILED:
            weakref.finalize(domain, _COMPILED.pop, key, None)
        _COMPILED[key] = self


_COMPILED: dict[int, _DomainCache] = {}
"""``id(domain)`` to its cache; :class:`_DomainCache` checks the id still means that domain."""


def _mentions_call(cond: Condition) -> bool:
    if isinstance(cond, Call):
        return True
    if isinstance(cond, Bind):
        return isinstance(cond.expr, Call)
    if isinstance(cond, Not):
        return _mentions_call(cond.item)
    if isinstance(cond, And | Or):
        return any(_mentions_call(c) for c in cond.items)
    return False


# --- compiled conditions ---------------------------------------------------------------------
#
# Interpreting the condition tree (isinstance dispatch, a new bindings dict per answer) was most
# of the planner's time, so every method is compiled once into closures. A method's variables
# live in numbered slots of a list, the environment: a solver binds a slot, yields, and unbinds
# it when resumed, so one list serves a branch's whole backtracking search. The trail lists the
# slots bound so far in binding order, the order the dict bindings had (Choice.bindings keeps
# it). A condition that binds nothing and answers at most once (a call, a negation, a query
# whose variables are all bound) compiles to a plain test instead of a generator.

_UNBOUND: Final = object()
"""An empty slot; never a fact value."""

_Env: TypeAlias = list[object]
_Trail: TypeAlias = list[int]
_Solver: TypeAlias = Callable[[_Env, _Trail, FactDB, "_Run"], Iterator[None]]
_Test: TypeAlias = Callable[[_Env, FactDB, "_Run"], object]
_Getter: TypeAlias = Callable[[_Env, FactDB, "_Run"], object]
_Grounder: TypeAlias = Callable[[_Env, FactDB, "_Run"], Task]
_Step: TypeAlias = tuple[bool, Callable[..., object]]
"""``(True, test)`` or ``(False, solver)``: one conjunct of a compiled ``and``."""

_TASK_ARG_TYPES: Final = (str, int, float)  # bool is an int


class _CompiledBranch:
    __slots__ = ("branch", "copies", "solve", "subtasks")

    def __init__(
        self,
        branch: Branch,
        solve: _Solver,
        subtasks: tuple[_Grounder, ...],
    ) -> None:
        self.branch = branch
        self.solve = solve
        self.subtasks = subtasks
        # Branches whose functions may write facts get their own snapshot of the state, so
        # that backtracking out of the branch also undoes those writes.
        self.copies = _mentions_call(branch.condition) or any(
            isinstance(arg, Call) for sub in branch.subtasks for arg in sub.args
        )


class _CompiledMethod:
    __slots__ = ("branches", "method", "names", "simple_head", "width")

    def __init__(
        self, method: Method, names: list[str], branches: tuple[_CompiledBranch, ...]
    ) -> None:
        self.method = method
        self.names = tuple(names)
        self.width = len(names)
        self.branches = branches
        # Distinct parameter names fill slots 0..n-1 straight from the task's arguments.
        self.simple_head = len({p.name for p in method.params}) == len(method.params)

    def head_env(self, head: Task) -> _Env | None:
        """The environment with the parameters bound to ``head``'s arguments (None: the head
        repeats a parameter and the task gives it two different values)."""
        params = self.method.params
        if self.simple_head and len(head.args) == len(params):
            for arg in head.args:
                if isinstance(arg, Var | ConstRef | Call):
                    break
            else:
                env: _Env = list(head.args)
                env.extend([_UNBOUND] * (self.width - len(params)))
                return env
        start = _head_bindings(self.method, head)  # the general case, and its errors
        if start is None:
            return None
        return [start.get(name, _UNBOUND) for name in self.names]


class _CompiledPrimitive:
    """A primitive's effects as argument positions, so applying one builds no bindings."""

    __slots__ = ("add", "delete", "fast", "primitive")

    def __init__(self, primitive: Primitive) -> None:
        self.primitive = primitive
        index = {p.name: i for i, p in enumerate(primitive.params)}  # a repeated name: the last
        self.fast = True
        self.delete = self._picks(primitive.delete, index)
        self.add = self._picks(primitive.add, index)

    def _picks(
        self, effects: tuple[Query, ...], index: dict[str, int]
    ) -> tuple[Callable[[tuple[ArgTerm, ...]], Fact], ...]:
        out = []
        for effect in effects:
            picks: list[tuple[int, object]] = []
            for term in effect.args:
                if isinstance(term, Var) and term.name in index:
                    picks.append((index[term.name], None))
                elif isinstance(term, Var | ConstRef | Call):
                    self.fast = False  # errors and constants: left to the general path
                else:
                    picks.append((-1, term))
            out.append(_effect(effect.name, tuple(picks)))
        return tuple(out)


def _effect(
    name: str, picks: tuple[tuple[int, object], ...]
) -> Callable[[tuple[ArgTerm, ...]], Fact]:
    """The fact an effect adds or deletes, from the primitive task's arguments: ``picks`` gives,
    per argument of the fact, the index of the task argument, or -1 and a literal value."""
    if all(i >= 0 for i, _ in picks):
        if not picks:
            fact: Fact = (name,)
            return lambda args: fact
        if len(picks) == 1:
            ((i, _),) = picks
            return lambda args: (name, args[i])  # type: ignore[return-value]
        if len(picks) == 2:
            (i, _), (j, _) = picks
            return lambda args: (name, args[i], args[j])  # type: ignore[return-value]
    return lambda args: (name, *[args[i] if i >= 0 else v for i, v in picks])  # type: ignore[arg-type]


def _compile_method(method: Method, functions: Mapping[str, HtnFunction]) -> _CompiledMethod:
    slots: dict[str, int] = {}
    for param in method.params:
        slots.setdefault(param.name, len(slots))
    params = len(slots)
    compiler = _Compiler(slots, functions)
    branches = []
    for branch in method.branches:
        bound = set(range(params))  # slots past the parameters start empty in every branch
        is_test, fn = compiler.condition(branch.condition, bound)
        solve: _Solver = _as_solver(fn) if is_test else fn  # type: ignore[assignment]
        subtasks = tuple(compiler.subtask(sub) for sub in branch.subtasks)
        branches.append(_CompiledBranch(branch, solve, subtasks))
    names = [""] * len(slots)
    for name, slot in slots.items():
        names[slot] = name
    return _CompiledMethod(method, names, tuple(branches))


class _Compiler:
    """Compiles one method's conditions and terms; ``slots`` grows with every new variable."""

    def __init__(self, slots: dict[str, int], functions: Mapping[str, HtnFunction]) -> None:
        self.slots = slots
        self.functions = functions

    def slot(self, var: Var) -> int:
        return self.slots.setdefault(var.name, len(self.slots))

    def condition(self, cond: Condition, bound: set[int]) -> _Step:
        """Compile ``cond``; ``bound`` (the slots surely bound before it) gains those it binds."""
        if isinstance(cond, Query):
            return self.query(cond, bound)
        if isinstance(cond, Call):
            return True, self.call(cond)
        if isinstance(cond, Bind):
            return self.bind(cond, bound)
        if isinstance(cond, Not):
            return True, self.negation(cond, bound)
        if isinstance(cond, And):
            return self.conjunction(cond, bound)
        alternatives = []
        outs = []
        for item in cond.items:
            inner = set(bound)
            is_test, fn = self.condition(item, inner)
            alternatives.append(_as_solver(fn) if is_test else fn)
            outs.append(inner)
        if outs:
            bound |= set.intersection(*outs)
        return False, _either(tuple(alternatives))  # type: ignore[arg-type]

    def conjunction(self, cond: And, bound: set[int]) -> _Step:
        steps: list[_Step] = []
        pending = list(cond.items)
        while pending:
            item = pending.pop(0)
            if isinstance(item, And):  # a nested and is the same conjunction
                pending[:0] = item.items
                continue
            steps.append(self.condition(item, bound))
        if all(is_test for is_test, _ in steps):
            return True, _all_tests(tuple(fn for _, fn in steps))
        return False, _chain(steps)

    def negation(self, cond: Not, bound: set[int]) -> _Test:
        is_test, fn = self.condition(cond.item, set(bound))
        if is_test:
            test: _Test = fn
            return lambda env, state, run: not test(env, state, run)
        solve: _Solver = fn  # type: ignore[assignment]

        def holds_not(env: _Env, state: FactDB, run: _Run) -> bool:
            # A copy: the abandoned inner search would leave its bindings in the slots.
            for _ in solve(env.copy(), [], state, run):
                return False
            return True

        return holds_not

    def bind(self, cond: Bind, bound: set[int]) -> _Step:
        slot = self.slot(cond.var)
        get = self.term(cond.expr)
        if slot in bound:

            def equals(env: _Env, state: FactDB, run: _Run) -> bool:
                value = get(env, state, run)
                return value is not None and env[slot] == value

            return True, equals
        bound.add(slot)

        def solve(env: _Env, trail: _Trail, state: FactDB, run: _Run) -> Iterator[None]:
            value = get(env, state, run)
            if value is None:
                return
            seen = env[slot]
            if seen is _UNBOUND:
                env[slot] = value
                trail.append(slot)
                yield
                trail.pop()
                env[slot] = _UNBOUND
            elif seen == value:
                yield

        return False, solve

    def query(self, cond: Query, bound: set[int]) -> _Step:
        name = cond.name
        arity = len(cond.args) + 1
        template: list[object] = [name]
        var_pos: list[tuple[int, int]] = []
        const_pos: list[tuple[int, str]] = []
        for position, term in enumerate(cond.args, start=1):
            if isinstance(term, Var):
                template.append(_UNBOUND)
                var_pos.append((position, self.slot(term)))
            elif isinstance(term, ConstRef):
                template.append(_UNBOUND)
                const_pos.append((position, term.name))
            else:
                template.append(term)
        if all(slot in bound for _, slot in var_pos):
            return True, _ground_query(name, template, tuple(var_pos), tuple(const_pos))
        bound.update(slot for _, slot in var_pos)
        slots = [slot for _, slot in var_pos]
        if arity in (2, 3) and len(slots) == arity - 1 == len(set(slots)):
            return False, _open_query_of_vars(name, tuple(slots))
        return False, _open_query(name, arity, template, tuple(var_pos), tuple(const_pos))

    def subtask(self, sub: Task) -> _Grounder:
        """The subtask with its arguments evaluated (and checked to be fact values)."""
        if not sub.args:
            return lambda env, state, run: sub  # already ground: no need for a new Task
        name = sub.name
        if all(isinstance(arg, Var) for arg in sub.args):
            slots = tuple(self.slot(arg) for arg in sub.args)  # type: ignore[arg-type]

            def ground_vars(env: _Env, state: FactDB, run: _Run) -> Task:
                args = tuple([env[slot] for slot in slots])
                for arg in args:
                    if not isinstance(arg, _TASK_ARG_TYPES):  # an empty slot is not either
                        _bad_task_arguments(sub, args)
                return Task(name, args)  # type: ignore[arg-type]

            return ground_vars
        getters = tuple(self.term(arg) for arg in sub.args)

        def ground(env: _Env, state: FactDB, run: _Run) -> Task:
            args = tuple([get(env, state, run) for get in getters])
            for arg in args:
                if not isinstance(arg, _TASK_ARG_TYPES):
                    _bad_task_arguments(sub, args)
            return Task(name, args)  # type: ignore[arg-type]

        return ground

    def term(self, term: ArgTerm) -> _Getter:
        if isinstance(term, Var):
            slot = self.slot(term)
            name = term.name

            def variable(env: _Env, state: FactDB, run: _Run) -> object:
                value = env[slot]
                if value is _UNBOUND:
                    _unbound(name)
                return value

            return variable
        if isinstance(term, ConstRef):
            const = term.name
            return lambda env, state, run: run.term_constant(const)
        if isinstance(term, Call):
            return self.call(term)
        return lambda env, state, run: term

    def call(self, expr: Call) -> _Getter:
        fn = self.functions.get(expr.function)
        if fn is None:

            def unknown(env: _Env, state: FactDB, run: _Run) -> object:
                raise PlanningError(f"unknown function '{expr.function}'")

            return unknown
        known: HtnFunction = fn
        if len(expr.args) == 1 and isinstance(expr.args[0], Var):
            # One variable argument (``(call done ?x)``): no getter, no argument list.
            slot = self.slot(expr.args[0])
            var = expr.args[0].name

            def invoke1(env: _Env, state: FactDB, run: _Run) -> object:
                arg = env[slot]
                if arg is _UNBOUND:
                    _unbound(var)
                try:
                    return known(state, arg)
                except PlanningError:
                    raise
                except Exception as exc:
                    raise PlanningError(
                        f"function '{expr.function}' raised {type(exc).__name__}: {exc} "
                        f"(called as {expr} with {arg!r})"
                    ) from exc

            return invoke1
        getters = tuple(self.term(arg) for arg in expr.args)

        def invoke(env: _Env, state: FactDB, run: _Run) -> object:
            args = [get(env, state, run) for get in getters]
            try:
                return known(state, *args)
            except PlanningError:
                raise
            except Exception as exc:
                raise PlanningError(
                    f"function '{expr.function}' raised {type(exc).__name__}: {exc} "
                    f"(called as {expr} with {', '.join(map(repr, args)) or 'no arguments'})"
                ) from exc

        return invoke


def _unbound(name: str) -> NoReturn:
    raise PlanningError(
        f"variable ?{name} is unbound when it is used; bind it earlier in "
        "the precondition or make it a method parameter"
    )


def _bad_task_arguments(sub: Task, args: tuple[object, ...]) -> NoReturn:
    """Raise the error for the first bad argument, as evaluating them in order would."""
    for term, arg in zip(sub.args, args, strict=True):
        if arg is _UNBOUND:
            _unbound(term.name)  # type: ignore[union-attr]  # only a variable leaves a slot empty
    for term, arg in zip(sub.args, args, strict=True):
        if not isinstance(arg, _TASK_ARG_TYPES):
            raise PlanningError(
                f"argument {term} of task {sub} evaluated to {arg!r}; task "
                "arguments must be str, int, float or bool"
            )
    raise AssertionError("no bad argument")  # pragma: no cover


def _as_solver(test: _Test) -> _Solver:
    def solve(env: _Env, trail: _Trail, state: FactDB, run: _Run) -> Iterator[None]:
        if test(env, state, run):
            yield

    return solve


def _all_tests(tests: tuple[_Test, ...]) -> _Test:
    if len(tests) == 1:
        return tests[0]

    def holds(env: _Env, state: FactDB, run: _Run) -> bool:
        return all(test(env, state, run) for test in tests)

    return holds


def _either(alternatives: tuple[_Solver, ...]) -> _Solver:
    def solve(env: _Env, trail: _Trail, state: FactDB, run: _Run) -> Iterator[None]:
        for alternative in alternatives:
            yield from alternative(env, trail, state, run)

    return solve


def _chain(steps: list[_Step]) -> _Solver:
    """The conjunction of ``steps`` (at least one a solver), left to right: the tests before
    the first solver, that solver, the tests right after it, then the rest recursively."""
    first = next(i for i, (is_test, _) in enumerate(steps) if not is_test)
    after = first + 1
    while after < len(steps) and steps[after][0]:
        after += 1
    before: tuple[_Test, ...] = tuple(fn for _, fn in steps[:first])
    solver: _Solver = steps[first][1]  # type: ignore[assignment]
    checks: tuple[_Test, ...] = tuple(fn for _, fn in steps[first + 1 : after])
    if after == len(steps):
        if not before and not checks:
            return solver

        def last(env: _Env, trail: _Trail, state: FactDB, run: _Run) -> Iterator[None]:
            for test in before:
                if not test(env, state, run):
                    return
            for _ in solver(env, trail, state, run):
                for test in checks:
                    if not test(env, state, run):
                        break
                else:
                    yield

        return last
    rest = _chain(steps[after:])

    def solve(env: _Env, trail: _Trail, state: FactDB, run: _Run) -> Iterator[None]:
        for test in before:
            if not test(env, state, run):
                return
        for _ in solver(env, trail, state, run):
            for test in checks:
                if not test(env, state, run):
                    break
            else:
                yield from rest(env, trail, state, run)

    return solve


def _ground_query(
    name: str,
    template: list[object],
    var_pos: tuple[tuple[int, int], ...],
    const_pos: tuple[tuple[int, str], ...],
) -> _Test:
    """A query whose variables are all bound: one membership test, as FactDB answers it."""
    if not const_pos and len(var_pos) == len(template) - 1:
        slots = tuple(slot for _, slot in var_pos)
        if len(slots) == 1:
            (only,) = slots
            return lambda env, state, run: state._holds((name, env[only]))
        return lambda env, state, run: state._holds((name, *[env[slot] for slot in slots]))

    def holds(env: _Env, state: FactDB, run: _Run) -> bool:
        want = template.copy()
        for position, const in const_pos:
            want[position] = run.query_constant(const)
        for position, slot in var_pos:
            want[position] = env[slot]
        return state._holds(tuple(want))

    return holds


def _open_query_of_vars(name: str, slots: tuple[int, ...]) -> _Solver:
    """``(name ?a)`` or ``(name ?a ?b)`` with distinct variables, the queries most conditions
    are made of: the general solver below, unrolled for them."""
    if len(slots) == 1:
        (only,) = slots

        def solve1(env: _Env, trail: _Trail, state: FactDB, run: _Run) -> Iterator[None]:
            value = env[only]
            if value is not _UNBOUND:
                if state._holds((name, value)):
                    yield
                return
            for fact in state._snapshot(name):
                if len(fact) == 2:
                    env[only] = fact[1]
                    trail.append(only)
                    yield
                    trail.pop()
            env[only] = _UNBOUND

        return solve1
    first, second = slots

    def solve2(env: _Env, trail: _Trail, state: FactDB, run: _Run) -> Iterator[None]:
        a = env[first]
        b = env[second]
        if a is not _UNBOUND:
            if b is not _UNBOUND:
                if state._holds((name, a, b)):
                    yield
                return
            for fact in state._snapshot_first(name, a):
                if len(fact) == 3 and fact[1] == a:
                    env[second] = fact[2]
                    trail.append(second)
                    yield
                    trail.pop()
            env[second] = _UNBOUND
            return
        if b is not _UNBOUND:
            for fact in state._snapshot(name):
                if len(fact) == 3 and fact[2] == b:
                    env[first] = fact[1]
                    trail.append(first)
                    yield
                    trail.pop()
            env[first] = _UNBOUND
            return
        for fact in state._snapshot(name):
            if len(fact) == 3:
                env[first] = fact[1]
                env[second] = fact[2]
                trail.append(first)
                trail.append(second)
                yield
                del trail[-2:]
        env[first] = env[second] = _UNBOUND

    return solve2


def _open_query(
    name: str,
    arity: int,
    template: list[object],
    var_pos: tuple[tuple[int, int], ...],
    const_pos: tuple[tuple[int, str], ...],
) -> _Solver:
    """A query that may bind variables; answers in the order FactDB.query_terms gives them."""

    def solve(env: _Env, trail: _Trail, state: FactDB, run: _Run) -> Iterator[None]:
        want = template.copy()
        for position, const in const_pos:
            want[position] = run.query_constant(const)
        new: list[tuple[int, int]] = []
        for position, slot in var_pos:
            value = env[slot]
            if value is _UNBOUND:
                new.append((position, slot))
            else:
                want[position] = value
        if not new:  # the variables were bound on this path after all
            if state._holds(tuple(want)):
                yield
            return
        first = want[1]
        candidates = (
            state._snapshot(name) if first is _UNBOUND else state._snapshot_first(name, first)
        )
        checks = [(p, want[p]) for p in range(1, arity) if want[p] is not _UNBOUND]
        if len(new) == 1:
            position, slot = new[0]
            for fact in candidates:
                if len(fact) != arity:
                    continue
                for where, value in checks:
                    if fact[where] != value:
                        break
                else:
                    env[slot] = fact[position]
                    trail.append(slot)
                    yield
                    trail.pop()
            env[slot] = _UNBOUND
            return
        for fact in candidates:
            if len(fact) != arity:
                continue
            for where, value in checks:
                if fact[where] != value:
                    break
            else:
                bound = 0
                for position, slot in new:
                    seen = env[slot]
                    if seen is _UNBOUND:
                        env[slot] = fact[position]
                        trail.append(slot)
                        bound += 1
                    elif seen != fact[position]:
                        break  # the pattern repeats ?var with two different values
                else:
                    yield
                for _ in range(bound):
                    env[trail.pop()] = _UNBOUND

    return solve


class _Run:
    """One planning run: the depth-first search with its stack of choice points."""

    def __init__(
        self,
        planner: HtnPlanner,
        facts: FactDB,
        root: Task,
        constants: Mapping[str, FactValue],
        current: HtnPlan | None,
        explain: bool,
        budget: int,
    ) -> None:
        domain = planner.domain
        self.planner = planner
        self.root = root
        self.constants = _merge_constants(domain, constants)
        self.current_methods = frozenset(current.methods) if current is not None else None
        self.explain = explain
        self.budget = budget
        self.expansions = 0
        self.root_failures: list[BranchFailure] = []
        if root.is_primitive:
            if root.name not in planner._primitives:
                raise PlanningError(f"unknown primitive root task '{root.name}'")
        elif root.name not in planner._methods:
            raise PlanningError(
                f"unknown root task '{root.name}' in domain '{domain.name}'; known methods: "
                + ", ".join(sorted(planner._methods))
            )
        self.start = _Node((root, None), facts.copy(), None, None)

    def query_constant(self, name: str) -> FactValue:
        """A constant named in a query (FactDB's message when it is missing)."""
        return _constant(name, self.constants)

    def term_constant(self, name: str) -> FactValue:
        """A constant used as a call or task argument."""
        try:
            return self.constants[name]
        except KeyError:
            raise PlanningError(f"unknown constant @{name}") from None

    def search(self) -> HtnResult:
        stack: list[Iterator[_Node | _ContinueSignal]] = []
        node: _Node | None = self.start
        while True:
            if node is not None:
                node = self._run_primitives(node)
                if node.tasks is None:
                    return self._success(node)
                stack.append(self._expand(node, is_root=not stack))
            if not stack:
                return HtnResult(
                    "failed",
                    self.root,
                    root_failures=tuple(self.root_failures),
                    expansions=self.expansions,
                )
            if self.expansions >= self.budget:
                return HtnResult("exhausted", self.root, expansions=self.expansions)
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
                node = None
            elif isinstance(child, _ContinueSignal):
                choices = tuple(_unwind(child.choices))
                return HtnResult(
                    "continue",
                    self.root,
                    choices=choices,  # type: ignore[arg-type]
                    expansions=self.expansions,
                )
            else:
                node = child

    def _success(self, node: _Node) -> HtnResult:
        choices: list[Choice] = _unwind(node.choices)  # type: ignore[assignment]
        methods = self.planner._methods
        plan = HtnPlan(
            root=self.root,
            steps=tuple(_unwind(node.steps)),  # type: ignore[arg-type]
            path=tuple(c.index for c in choices),
            methods=tuple(c.task.name for c in choices),
            continuable=any(methods[c.task.name].has_continuation for c in choices),
            choices=tuple(choices),
        )
        return HtnResult(
            "plan", self.root, plan=plan, choices=plan.choices, expansions=self.expansions
        )

    def _run_primitives(self, node: _Node) -> _Node:
        """Consume the primitive tasks at the head of the task list (they need no choice)."""
        tasks, state, steps = node.tasks, node.state, node.steps
        private = False  # True once ``state`` is a copy made here, which no node shares yet
        while tasks is not None and tasks[0].name.startswith("!"):  # Task.is_primitive, inlined
            head = tasks[0]
            state, private = self._apply(head, state, private)
            steps = (head, steps)
            tasks = tasks[1]  # type: ignore[assignment]
        if tasks is node.tasks:
            return node
        return _Node(tasks, state, steps, node.choices)

    def _apply(self, step: Task, state: FactDB, private: bool) -> tuple[FactDB, bool]:
        """The state after ``step``, and whether it is private. A run of primitives copies the
        state once: the states between two of them belong to no node, so change in place."""
        compiled = self.planner._primitive(step.name)
        if compiled is None:
            raise PlanningError(f"unknown primitive task '{step.name}'")
        primitive = compiled.primitive
        if not primitive.add and not primitive.delete:
            return state, private
        args = step.args
        after = state if private else state.copy()
        if compiled.fast and len(args) == len(primitive.params):
            after._change(
                [effect(args) for effect in compiled.delete],
                [effect(args) for effect in compiled.add],
            )
            return after, True
        bindings: Bindings = {p.name: a for p, a in zip(primitive.params, args, strict=True)}  # type: ignore[misc]
        for effect in primitive.delete:
            after.retract(effect.name, *(self._value(t, bindings, after) for t in effect.args))
        for effect in primitive.add:
            after.assert_fact(effect.name, *(self._value(t, bindings, after) for t in effect.args))
        return after, True

    def _expand(self, node: _Node, *, is_root: bool) -> Iterator[_Node | _ContinueSignal]:
        """Yield one child node per (branch, binding) of the head task, in priority order."""
        assert node.tasks is not None
        head, rest = node.tasks
        compiled = self.planner._method(head.name)
        method = compiled.method
        start = compiled.head_env(head)
        if start is None:
            return
        names = compiled.names
        record: list[BranchFailure] | None
        record = self.root_failures if is_root else ([] if self.explain else None)
        for index, entry in enumerate(compiled.branches):
            branch = entry.branch
            if branch.continuation and (
                self.current_methods is None or method.task not in self.current_methods
            ):
                if record is not None:
                    record.append(BranchFailure(index, branch.name, "no active plan"))
                continue
            state = node.state.copy() if entry.copies else node.state
            tried = 0
            env = start.copy()
            trail: _Trail = []
            for _ in entry.solve(env, trail, state, self):
                tried += 1
                self.expansions += 1
                failures = tuple(record) if record is not None else None
                new_bindings = tuple([(names[slot], env[slot]) for slot in trail])
                if branch.continuation:
                    choice = Choice(
                        head,
                        index,
                        branch.name,
                        new_bindings,  # type: ignore[arg-type]
                        (Task(CONTINUE),),
                        failures,
                    )
                    yield _ContinueSignal((choice, node.choices))
                    return
                subtasks = tuple([ground(env, state, self) for ground in entry.subtasks])
                choice = Choice(head, index, branch.name, new_bindings, subtasks, failures)  # type: ignore[arg-type]
                tasks: _Cons = rest
                for sub in reversed(subtasks):
                    tasks = (sub, tasks)
                yield _Node(tasks, state, node.steps, (choice, node.choices))  # type: ignore[arg-type]
            if record is not None:
                reason = "decomposition failed" if tried else "precondition failed"
                record.append(BranchFailure(index, branch.name, reason, tried))

    # --- terms ---

    def _call(self, expr: Call, bindings: Bindings, state: FactDB) -> object:
        fn = self.planner._functions.get(expr.function)
        if fn is None:
            raise PlanningError(f"unknown function '{expr.function}'")
        args = [self._value(a, bindings, state) for a in expr.args]
        try:
            return fn(state, *args)
        except PlanningError:
            raise
        except Exception as exc:
            raise PlanningError(
                f"function '{expr.function}' raised {type(exc).__name__}: {exc} "
                f"(called as {expr} with {', '.join(map(repr, args)) or 'no arguments'})"
            ) from exc

    def _value(self, term: ArgTerm, bindings: Bindings, state: FactDB) -> FactValue:
        if isinstance(term, Var):
            try:
                return bindings[term.name]
            except KeyError:
                _unbound(term.name)
        if isinstance(term, ConstRef):
            return self.term_constant(term.name)
        if isinstance(term, Call):
            return self._call(term, bindings, state)  # type: ignore[return-value]
        return term


def _head_bindings(method: Method, head: Task) -> Bindings | None:
    if len(head.args) != len(method.params):
        raise PlanningError(
            f"task {head} has {len(head.args)} argument(s); method '{method.task}' takes "
            f"{len(method.params)}"
        )
    bindings: Bindings = {}
    for param, arg in zip(method.params, head.args, strict=True):
        if isinstance(arg, Var | ConstRef | Call):
            raise PlanningError(f"task {head} must be ground (its arguments values) to plan")
        seen = bindings.get(param.name, _NOTHING)
        if seen is _NOTHING:
            bindings[param.name] = arg
        elif seen != arg:
            return None  # the head repeats ?param and the task gives two different values
    return bindings


_NOTHING = object()


def _merge_constants(domain: HtnDomain, supplied: Mapping[str, FactValue]) -> dict[str, FactValue]:
    merged: dict[str, FactValue] = {}
    missing = []
    for name, default in domain.constants.items():
        value = supplied.get(name, default)
        if value is None:
            missing.append(name)
        else:
            merged[name] = value
    if missing:
        raise PlanningError(
            f"domain '{domain.name}' needs the constant(s) "
            + ", ".join("@" + m for m in missing)
            + " from the agent: pass them as constants={...} when planning"
        )
    for name, value in supplied.items():
        merged.setdefault(name, value)
    return merged


def _term_text(term: ArgTerm) -> str:
    if isinstance(term, Var | ConstRef | Call):
        return str(term)
    return format_value(term)
