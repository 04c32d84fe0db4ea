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

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, NoReturn, TypeAlias

from ..exceptions import PlanningError
from .facts import Bindings, ConstRef, FactDB, FactValue, Term, Var, format_value, parse_term

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


@dataclass(frozen=True, slots=True)
class _Node:
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
        # Branches whose functions may write facts get their own snapshot of the state, so
        # that backtracking out of the branch also undoes those writes.
        self._calls = {
            id(branch): _mentions_call(branch.condition)
            or any(isinstance(arg, Call) for sub in branch.subtasks for arg in sub.args)
            for method in domain.methods.values()
            for branch in method.branches
        }

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
        while tasks is not None and tasks[0].is_primitive:
            head = tasks[0]
            state = self._apply(head, state)
            steps = (head, steps)
            tasks = tasks[1]  # type: ignore[assignment]
        if tasks is node.tasks:
            return node
        return _Node(tasks, state, steps, node.choices)

    def _apply(self, step: Task, state: FactDB) -> FactDB:
        primitive = self.planner._primitives.get(step.name)
        if primitive is None:
            raise PlanningError(f"unknown primitive task '{step.name}'")
        if not primitive.add and not primitive.delete:
            return state
        bindings: Bindings = {p.name: a for p, a in zip(primitive.params, step.args, strict=True)}  # type: ignore[misc]
        after = state.copy()
        for effect in primitive.delete:
            after.retract(effect.name, *(self._value(t, bindings, after) for t in effect.args))
        for effect in primitive.add:
            after.assert_fact(effect.name, *(self._value(t, bindings, after) for t in effect.args))
        return after

    def _expand(self, node: _Node, *, is_root: bool) -> Iterator[_Node | _ContinueSignal]:
        """Yield one child node per (branch, binding) of the head task, in priority order."""
        assert node.tasks is not None
        head, rest = node.tasks
        method = self.planner._methods[head.name]
        start = _head_bindings(method, head)
        if start is None:
            return
        record: list[BranchFailure] | None
        record = self.root_failures if is_root else ([] if self.explain else None)
        for index, branch in enumerate(method.branches):
            if branch.continuation and (
                self.current_methods is None or method.task not in self.current_methods
            ):
                if record is not None:
                    record.append(BranchFailure(index, branch.name, "no active plan"))
                continue
            state = node.state.copy() if self.planner._calls[id(branch)] else node.state
            tried = 0
            for bindings in self._solve(branch.condition, start, state):
                tried += 1
                self.expansions += 1
                failures = tuple(record) if record is not None else None
                new_bindings = tuple((k, v) for k, v in bindings.items() if k not in start)
                if branch.continuation:
                    choice = Choice(
                        head, index, branch.name, new_bindings, (Task(CONTINUE),), failures
                    )
                    yield _ContinueSignal((choice, node.choices))
                    return
                subtasks = tuple(self._ground(t, bindings, state) for t in branch.subtasks)
                choice = Choice(head, index, branch.name, new_bindings, subtasks, failures)
                tasks: _Cons = rest
                for sub in reversed(subtasks):
                    tasks = (sub, tasks)
                yield _Node(tasks, state, node.steps, (choice, node.choices))  # type: ignore[arg-type]
            if record is not None:
                reason = "decomposition failed" if tried else "precondition failed"
                record.append(BranchFailure(index, branch.name, reason, tried))

    # --- conditions and terms ---

    def _solve(self, cond: Condition, bindings: Bindings, state: FactDB) -> Iterator[Bindings]:
        if isinstance(cond, Query):
            yield from state.query_terms(cond.name, cond.args, bindings, self.constants)
        elif isinstance(cond, And):
            yield from self._solve_all(cond.items, 0, bindings, state)
        elif isinstance(cond, Call):
            if self._call(cond, bindings, state):
                yield bindings
        elif isinstance(cond, Bind):
            value = self._value(cond.expr, bindings, state)
            if value is None:
                return
            name = cond.var.name
            if name in bindings:
                if bindings[name] == value:
                    yield bindings
            else:
                extended = dict(bindings)
                extended[name] = value
                yield extended
        elif isinstance(cond, Not):
            for _ in self._solve(cond.item, bindings, state):
                return
            yield bindings
        else:
            for item in cond.items:
                yield from self._solve(item, bindings, state)

    def _solve_all(
        self, items: tuple[Condition, ...], i: int, bindings: Bindings, state: FactDB
    ) -> Iterator[Bindings]:
        if i == len(items):
            yield bindings
            return
        for extended in self._solve(items[i], bindings, state):
            yield from self._solve_all(items, i + 1, extended, state)

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
                raise PlanningError(
                    f"variable ?{term.name} is unbound when it is used; bind it earlier in "
                    "the precondition or make it a method parameter"
                ) from None
        if isinstance(term, ConstRef):
            try:
                return self.constants[term.name]
            except KeyError:
                raise PlanningError(f"unknown constant @{term.name}") from None
        if isinstance(term, Call):
            return self._call(term, bindings, state)  # type: ignore[return-value]
        return term

    def _ground(self, sub: Task, bindings: Bindings, state: FactDB) -> Task:
        args = tuple(self._value(a, bindings, state) for a in sub.args)
        for arg, term in zip(args, sub.args, strict=True):
            if not isinstance(arg, str | int | float):
                raise PlanningError(
                    f"argument {term} of task {sub} evaluated to {arg!r}; task arguments must "
                    "be str, int, float or bool"
                )
        return Task(sub.name, args)


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
