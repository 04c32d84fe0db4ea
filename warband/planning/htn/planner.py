"""HTN planning as in Killzone 3 (after SHOP): the planner, its plans and their priority.

The domain it plans with (:class:`HtnDomain`, its methods, branches and conditions) is defined in
:mod:`warband.planning.htn.domain` and re-exported here; the planner runs the compiled form of it
from :mod:`warband.planning.htn.compile`.

Planning a root task tries the branches of its method in order, for each branch every binding of
its precondition, and for each binding decomposes the subtasks left to right; it backtracks over
branches, bindings and sub-decompositions and returns the first plan made only of primitive tasks
(SHOP's ordered semantics). The search is resumable: :meth:`HtnPlanner.search` returns an
:class:`HtnSearch` that plans a budget of expansions per ``step`` and may span ticks;
:meth:`HtnPlanner.plan` runs one to the end.

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

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, TypeAlias

from ...exceptions import PlanningError
from ...values import Value
from ..search import SearchStatus
from .compile import (
    _COMPILED,
    _compile_method,
    _CompiledMethod,
    _CompiledPrimitive,
    _DomainCache,
    _Trail,
    _unbound,
    function_error,
)
from .domain import BUILTIN_FUNCTIONS as BUILTIN_FUNCTIONS
from .domain import CONTINUE as CONTINUE
from .domain import TRUE as TRUE
from .domain import And as And
from .domain import ArgTerm as ArgTerm
from .domain import Bind as Bind
from .domain import Branch as Branch
from .domain import Call as Call
from .domain import DomainBuilder as DomainBuilder
from .domain import FactDecl as FactDecl
from .domain import Fail as Fail
from .domain import HtnCondition as HtnCondition
from .domain import HtnDomain as HtnDomain
from .domain import HtnFunction as HtnFunction
from .domain import Locate as Locate
from .domain import Method as Method
from .domain import MethodBuilder as MethodBuilder
from .domain import Not as Not
from .domain import Or as Or
from .domain import Primitive as Primitive
from .domain import Query as Query
from .domain import Task as Task
from .domain import bind as bind
from .domain import call as call
from .domain import query as query
from .domain import task as task
from .domain import validate_domain as validate_domain
from .facts import ConstRef, FactDB, HtnBindings, Var, _constant
from .memo import (
    BranchMemo,
    MemoKey,
    hand_over,
    listen,
    memo_args,
    merge,
    outer_reads,
    watch_branch,
)
from .reads import FactReads

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
    bindings: tuple[tuple[str, Value], ...]
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
    """The decomposition, for explanations (:mod:`warband.planning.htn.explain`)."""

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
        constants: Mapping[str, Value] | None = None,
        current: HtnPlan | None = None,
        explain: bool = False,
        max_expansions: int = 1_000_000,
    ) -> HtnResult:
        """Plan ``root`` (a ground task, or a bare task name) against ``facts``.

        ``constants`` supplies ``@constants`` (overriding the domain's defaults; those declared
        without a default are required). ``current`` is the agent's running plan, which
        enables continuation branches. ``explain`` records why each earlier branch failed.
        Raises PlanningError for a malformed problem (unknown root task, missing constant,
        unbound variable at run time, a function that raised). This is
        ``self.search(...).run()``: the interruptible search run to its end.
        """
        # Positional, not through search(): forwarding keywords costs a small plan a percent.
        return self._search(facts, root, constants, current, explain, max_expansions).run()

    def search(
        self,
        facts: FactDB,
        root: Task | str,
        *,
        constants: Mapping[str, Value] | None = None,
        current: HtnPlan | None = None,
        explain: bool = False,
        max_expansions: int = 1_000_000,
        memo: BranchMemo | None = None,
    ) -> HtnSearch:
        """An interruptible :meth:`plan`: the same search, run by :meth:`HtnSearch.step`.

        The arguments are :meth:`plan`'s. The search plans against a copy of ``facts`` taken
        now, so the caller's facts may change while it runs over several ticks. Raises
        PlanningError at once for an unknown root task or a missing constant. With ``memo``
        (the same one for every search of an agent), preconditions that failed in the last
        search and read nothing that changed since are not evaluated again
        (:class:`~warband.planning.htn.memo.BranchMemo`): the same result, sooner.
        """
        return self._search(facts, root, constants, current, explain, max_expansions, memo)

    def _search(
        self,
        facts: FactDB,
        root: Task | str,
        constants: Mapping[str, Value] | None,
        current: HtnPlan | None,
        explain: bool,
        max_expansions: int,
        memo: BranchMemo | None = None,
    ) -> HtnSearch:
        root_task = Task(root) if isinstance(root, str) else root
        run = _Run(self, facts, root_task, constants or {}, current, explain, max_expansions)
        if memo is not None:
            memo.begin(self, run.constants)
            run.memo = memo
        return HtnSearch(run)

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


_SEARCH_STATUS: dict[HtnStatus, SearchStatus] = {
    "plan": SearchStatus.FOUND,
    "continue": SearchStatus.FOUND,
    "failed": SearchStatus.NO_PLAN,
    "exhausted": SearchStatus.GAVE_UP,
}


class HtnSearch:
    """An interruptible HTN planning run, made by :meth:`HtnPlanner.search`.

    The interface is :class:`~warband.planning.GoapSearch`'s, so a
    :class:`~warband.planning.PlanningScheduler` serves both kinds: ``step(budget)`` spends at
    most ``budget`` expansions (branch bindings tried: decomposition steps, the unit of
    :attr:`HtnResult.expansions`) and returns a :class:`SearchStatus`; RUNNING means call
    again. Once it is not RUNNING, :attr:`result` holds the :class:`HtnResult`, whose
    ``status`` is the precise answer: ``plan`` and ``continue`` are FOUND, ``failed`` is
    NO_PLAN, ``exhausted`` (``max_expansions`` reached) is GAVE_UP. ``run()`` steps to the end.

    The search state (the stack of choice points) is kept between steps, so the result and
    its ``expansions`` are exactly :meth:`HtnPlanner.plan`'s however the budget is split.
    A step that raises (an unbound variable, a function that raised) ends the search: later
    steps raise PlanningError.
    """

    __slots__ = ("_error", "_result", "_run")

    def __init__(self, run: _Run) -> None:
        self._run = run
        self._result: HtnResult | None = None
        self._error: BaseException | None = None

    @property
    def root(self) -> Task:
        """The task being planned."""
        return self._run.root

    @property
    def expansions(self) -> int:
        """Expansions spent so far."""
        return self._run.expansions

    @property
    def done(self) -> bool:
        """True once :attr:`result` is available."""
        return self._result is not None

    @property
    def result(self) -> HtnResult | None:
        """The result once the search is done, else None."""
        return self._result

    def step(self, budget: int) -> SearchStatus:
        """Spend at most ``budget`` expansions; RUNNING means call again."""
        if budget < 1:
            raise PlanningError(
                f"a search step needs a budget of at least 1 expansion, got {budget}"
            )
        if self._result is not None:
            return _SEARCH_STATUS[self._result.status]
        if self._error is not None:
            raise PlanningError(
                f"the HTN search for {self.root} raised earlier ({self._error}); start a new search"
            ) from self._error
        try:
            result = self._run.search(budget)
        except BaseException as exc:
            # The choice point that raised is closed: resuming would skip its other choices.
            self._error = exc
            self._run.stack.clear()
            raise
        if result is None:
            return SearchStatus.RUNNING
        # The choice points' generators refer to the run that holds them: drop them, or each
        # finished search is a reference cycle that only the cyclic garbage collector frees.
        self._run.stack.clear()
        self._result = result
        return _SEARCH_STATUS[result.status]

    def run(self) -> HtnResult:
        """Search to the end and return the result."""
        while self._result is None:
            self.step(1 << 62)
        return self._result


class _Run:
    """One planning run: the depth-first search with its stack of choice points."""

    def __init__(
        self,
        planner: HtnPlanner,
        facts: FactDB,
        root: Task,
        constants: Mapping[str, Value],
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
        self.memo: BranchMemo | None = None
        """Failed preconditions of the last search, skipped while what they read holds."""
        self.root_failures: list[BranchFailure] = []
        if root.is_primitive:
            if root.name not in planner._primitives:
                raise PlanningError(f"unknown primitive root task '{root.name}'")
        elif root.name not in planner._methods:
            raise PlanningError(
                f"unknown root task '{root.name}' in domain '{domain.name}'; known methods: "
                + ", ".join(sorted(planner._methods))
            )
        self.node: _Node | None = _Node((root, None), facts.copy(), None, None)
        """The node to expand next, or None to take the next child of the top of the stack."""
        self.stack: list[Iterator[_Node | _ContinueSignal]] = []
        """The choice points: one iterator over the children of each node being decomposed."""

    def query_constant(self, name: str) -> Value:
        """A constant named in a query (FactDB's message when it is missing)."""
        return _constant(name, self.constants)

    def term_constant(self, name: str) -> Value:
        """A constant used as a call or task argument."""
        try:
            return self.constants[name]
        except KeyError:
            raise PlanningError(f"unknown constant @{name}") from None

    def search(self, budget: int) -> HtnResult | None:
        """Go on searching for at most ``budget`` more expansions: the result, or None when
        the budget ran out first (call again to resume where it stopped)."""
        stack = self.stack
        node = self.node
        # One comparison per expansion, as before steps existed: the step's budget and the
        # run's max_expansions are folded into one limit.
        limit = self.expansions + budget
        if limit > self.budget:
            limit = self.budget
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
            if self.expansions >= limit:
                if self.expansions >= self.budget:
                    return HtnResult("exhausted", self.root, expansions=self.expansions)
                # ``node`` is on the stack already: resume at the next child of the top.
                self.node = None
                return None
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
        compiled = self.planner._method
        plan = HtnPlan(
            root=self.root,
            steps=tuple(_unwind(node.steps)),  # type: ignore[arg-type]
            path=tuple(c.index for c in choices),
            methods=tuple(c.task.name for c in choices),
            continuable=any(compiled(c.task.name).continues for c in choices),
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
        bindings: HtnBindings = {p.name: a for p, a in zip(primitive.params, args, strict=True)}  # type: ignore[misc]
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
        memo = self.memo
        args = memo_args(head.args) if memo is not None else None  # None: evaluate every branch
        outer = outer_reads(node.state) if args is not None else None
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
            watching: tuple[MemoKey, FactDB, FactReads] | None = None
            if memo is not None and args is not None and not entry.certain:
                key: MemoKey = (head.name, index, args)
                known = memo.fails(key, node.state)
                if known is not None:
                    # It reads what it read when it failed: it fails again, as evaluating it
                    # would find (and the search's reads must hold what it would read).
                    merge(known, outer)
                    if record is not None:
                        record.append(BranchFailure(index, branch.name, "precondition failed"))
                    continue
                if outer is not None:
                    seen, local = node.state, FactReads()
                    listen(seen, local)  # until it finds a binding or fails
                else:
                    seen, local = watch_branch(node.state)
                watching = (key, seen, local)
                state = seen.copy() if entry.copies else seen
            else:
                state = node.state.copy() if entry.copies else node.state
            tried = 0
            env = start.copy()
            trail: _Trail = []
            for _ in entry.solve(env, trail, state, self):
                if watching is not None and not tried:
                    if outer is not None:
                        listen(node.state, outer)
                    hand_over(state, watching[2], outer)
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
            if watching is not None and memo is not None and not tried:
                if outer is not None:
                    listen(node.state, outer)
                merge(watching[2], outer)
                memo.failed(*watching)
            if record is not None:
                reason = "decomposition failed" if tried else "precondition failed"
                record.append(BranchFailure(index, branch.name, reason, tried))

    # --- terms ---

    def _call(self, expr: Call, bindings: HtnBindings, state: FactDB) -> object:
        fn = self.planner._functions.get(expr.function)
        if fn is None:
            raise PlanningError(f"unknown function '{expr.function}'")
        args = [self._value(a, bindings, state) for a in expr.args]
        try:
            return fn(state, *args)
        except PlanningError:
            raise
        except Exception as exc:
            raise function_error(expr, exc, args) from exc

    def _value(self, term: ArgTerm, bindings: HtnBindings, state: FactDB) -> Value:
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


def _merge_constants(domain: HtnDomain, supplied: Mapping[str, Value]) -> dict[str, Value]:
    merged: dict[str, Value] = {}
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
