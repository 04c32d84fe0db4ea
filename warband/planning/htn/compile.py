"""HTN methods and primitives compiled for the planner: conditions and subtasks as closures over
numbered variable slots, primitive effects as argument positions, and the per-domain cache of them.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Final, NoReturn, TypeAlias

from ...exceptions import PlanningError
from ...values import Fact, values_equal
from .domain import (
    And,
    ArgTerm,
    Bind,
    Branch,
    Call,
    HtnCondition,
    HtnDomain,
    HtnFunction,
    Method,
    Not,
    Or,
    Primitive,
    Query,
    Task,
)
from .facts import ConstRef, FactDB, HtnBindings, Var

if TYPE_CHECKING:
    from .planner import _Run


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


def _mentions_call(cond: HtnCondition) -> bool:
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

_TASK_ARG_TYPES: Final = (str, int, float, tuple)  # bool is an int; a tuple is a list value


class _CompiledBranch:
    __slots__ = ("branch", "certain", "copies", "solve", "subtasks")

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
        # A branch without a condition holds once, reading nothing: no memo needs it.
        self.certain = isinstance(branch.condition, And) and not branch.condition.items


class _CompiledMethod:
    __slots__ = ("branches", "continues", "method", "names", "simple_head", "width")

    def __init__(
        self, method: Method, names: list[str], branches: tuple[_CompiledBranch, ...]
    ) -> None:
        self.method = method
        self.names = tuple(names)
        self.width = len(names)
        self.branches = branches
        # Method.has_continuation, asked for every method of every plan found.
        self.continues = method.has_continuation
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

    def condition(self, cond: HtnCondition, bound: set[int]) -> _Step:
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
                return value is not None and values_equal(env[slot], value)

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
            elif values_equal(seen, value):
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
                    raise function_error(expr, exc, [arg]) from exc

            return invoke1
        getters = tuple(self.term(arg) for arg in expr.args)

        def invoke(env: _Env, state: FactDB, run: _Run) -> object:
            args = [get(env, state, run) for get in getters]
            try:
                return known(state, *args)
            except PlanningError:
                raise
            except Exception as exc:
                raise function_error(expr, exc, args) from exc

        return invoke


def function_error(expr: Call, exc: Exception, args: Sequence[object]) -> PlanningError:
    """The error for a registered function that raised: which function, what, and its call."""
    shown = ", ".join(map(repr, args)) or "no arguments"
    return PlanningError(
        f"function '{expr.function}' raised {type(exc).__name__}: {exc} "
        f"(called as {expr} with {shown})"
    )


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
                "arguments must be str, int, float, bool or a list of them"
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
                if len(fact) == 3 and fact[2] == b and _same_kind(fact[2], b):
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
                    if fact[where] != value or not _same_kind(fact[where], value):
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
                if fact[where] != value or not _same_kind(fact[where], value):
                    break
            else:
                bound = 0
                for position, slot in new:
                    seen = env[slot]
                    if seen is _UNBOUND:
                        env[slot] = fact[position]
                        trail.append(slot)
                        bound += 1
                    elif not values_equal(seen, fact[position]):
                        break  # the pattern repeats ?var with two different values
                else:
                    yield
                for _ in range(bound):
                    env[trail.pop()] = _UNBOUND

    return solve


def _same_kind(a: object, b: object) -> bool:
    """For two values that compare equal: True unless one is a bool and the other is not
    (:func:`warband.values.values_equal`, split so hot loops call it only on a match)."""
    return (a.__class__ is bool) is (b.__class__ is bool)


def _head_bindings(method: Method, head: Task) -> HtnBindings | None:
    if len(head.args) != len(method.params):
        raise PlanningError(
            f"task {head} has {len(head.args)} argument(s); method '{method.task}' takes "
            f"{len(method.params)}"
        )
    bindings: HtnBindings = {}
    for param, arg in zip(method.params, head.args, strict=True):
        if isinstance(arg, Var | ConstRef | Call):
            raise PlanningError(f"task {head} must be ground (its arguments values) to plan")
        seen = bindings.get(param.name, _NOTHING)
        if seen is _NOTHING:
            bindings[param.name] = arg
        elif not values_equal(seen, arg):
            return None  # the head repeats ?param and the task gives two different values
    return bindings


_NOTHING = object()
