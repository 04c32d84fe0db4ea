"""Property tests of the GOAP planner against an exhaustive forward uniform-cost search.

Hypothesis builds small domains (bool, int and str keys; 2-8 actions, some with a ``?variable``
bound from the goal, a cost function and a procedural check; random costs including 0 and 0.5;
``==`` and ``!=`` conditions). Half the problems hide a planted walk of 1-4 chained actions that
reaches the goal, so multi-step plans are common; goals never hold at the start.
The oracle below searches forward over whole world states with Dijkstra; it shares no code with
the planner's search. Every plan must replay, cost exactly what the oracle finds, exist exactly
when the oracle finds one, and come out the same when searched one expansion at a time. For
cooperation, the oracle may once use a "magic" action that makes any tagged conditions hold.

The oracle is also imported by the domain tests.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warband.planning import (
    Action,
    Condition,
    CooperativeSearch,
    GoapSearch,
    GoapStep,
    Key,
    SearchStatus,
    WorldState,
    find_plan,
    plan_cooperatively,
)
from warband.planning.goap.state import Bindings, Effect, StateValue

# --- the oracle ---------------------------------------------------------------------------------


def _substitute(item: StateValue | str | None, bindings: Mapping[str, StateValue]) -> Any:
    if isinstance(item, str) and item.startswith("?"):
        return bindings[item[1:]]
    return item


def _ground_key(key: Key, bindings: Mapping[str, StateValue]) -> Key:
    return Key(key.name, None if key.subject is None else str(_substitute(key.subject, bindings)))


def _holds(condition: Condition, state: Mapping[Key, StateValue]) -> bool:
    current = state.get(condition.key)
    same = current is not None and current == condition.value
    same = same and type(current) is type(condition.value)
    return same != condition.negated


def _candidates(
    actions: Sequence[Action], start: WorldState, goal: Sequence[Condition]
) -> dict[str, set[StateValue]]:
    """Values every key name is ever given or asked for, to ground value variables."""
    seen: dict[str, set[StateValue]] = {}
    items: list[tuple[Key, StateValue]] = list(start.items())
    items += [(c.key, c.value) for c in goal]
    for action in actions:
        items += [(c.key, c.value) for c in action.preconditions]
        items += [(e.key, e.value) for e in action.effects]
    for key, value in items:
        if not (isinstance(value, str) and value.startswith("?")):
            seen.setdefault(key.name, set()).add(value)
    return seen


class GroundAction:
    """An action with every variable bound, as the oracle applies it."""

    def __init__(self, action: Action, bindings: Bindings, context: Any) -> None:
        self.action = action
        self.bindings = bindings
        self.pre = [
            Condition(_ground_key(c.key, bindings), _substitute(c.value, bindings), c.negated)
            for c in action.preconditions
        ]
        self.eff = [
            (_ground_key(e.key, bindings), _substitute(e.value, bindings)) for e in action.effects
        ]
        cost = action.cost
        self.cost = float(cost(context, bindings) if callable(cost) else cost)


def ground_actions(
    actions: Sequence[Action], start: WorldState, goal: Sequence[Condition], context: Any
) -> list[GroundAction]:
    """Every binding of every action (value variables range over the values of their key, or
    over what the action's ``bind`` yields)."""
    candidates = _candidates(actions, start, goal)
    result = []
    for action in actions:
        if action.bind is not None:
            # The action names its variables' values itself.
            for extra in action.bind(context, Bindings()):
                bindings = Bindings(dict(extra))
                if action.variables <= set(bindings) and (
                    action.check is None or action.check(context, bindings)
                ):
                    result.append(GroundAction(action, bindings, context))
            continue
        names = sorted(action.variables)
        pools = []
        for name in names:
            pool: set[StateValue] = set()
            for effect in action.effects:
                if effect.value == f"?{name}":
                    pool |= candidates.get(effect.key.name, set())
            pools.append(sorted(pool, key=repr))
        for values in itertools.product(*pools):
            bindings = Bindings(dict(zip(names, values, strict=True)))
            if action.check is None or action.check(context, bindings):
                result.append(GroundAction(action, bindings, context))
    return result


def forward_optimal_cost(
    start: WorldState,
    goal: Sequence[Condition],
    actions: Sequence[Action],
    context: Any = None,
    *,
    magic: Iterable[Condition] = (),
    magic_cost: float = 1.0,
    max_states: int = 200_000,
) -> float | None:
    """Dijkstra forward over world states; None when the goal is unreachable.

    With ``magic`` conditions, one extra transition (usable once, never required) makes any
    non-empty, consistent subset of them hold at ``magic_cost``: an oracle helper agent.
    """
    ground = ground_actions(actions, start, goal, context)
    magic_sets = _consistent_subsets(list(magic))
    counter = itertools.count()
    frontier: list[tuple[float, int, WorldState, bool]] = [(0.0, next(counter), start, False)]
    best: dict[tuple[WorldState, bool], float] = {(start, False): 0.0}
    while frontier:
        cost, _, state, used = heapq.heappop(frontier)
        if best[state, used] < cost:
            continue
        if all(_holds(c, state) for c in goal):
            return cost
        if len(best) > max_states:
            raise AssertionError("oracle state space too large for a test")
        moves = [
            (cost + g.cost, state.updated(g.eff), used)
            for g in ground
            if all(_holds(c, state) for c in g.pre)
        ]
        if not used:
            moves += [
                (cost + magic_cost, state.updated((c.key, c.value) for c in subset), True)
                for subset in magic_sets
            ]
        for new_cost, new_state, new_used in moves:
            if new_cost < best.get((new_state, new_used), float("inf")):
                best[new_state, new_used] = new_cost
                heapq.heappush(frontier, (new_cost, next(counter), new_state, new_used))
    return None


def _consistent_subsets(conditions: list[Condition]) -> list[list[Condition]]:
    unique = list({(c.key, c.value): c for c in conditions}.values())
    subsets = []
    for size in range(1, len(unique) + 1):
        for combo in itertools.combinations(unique, size):
            if len({c.key for c in combo}) == size:
                subsets.append(list(combo))
    return subsets


def replay(
    start: WorldState,
    steps: Iterable[GoapStep],
    goal: Sequence[Condition],
    context: Any = None,
) -> bool:
    """The oracle's own forward check: grounds each step from its action and bindings."""
    state = start
    for step in steps:
        if step.cooperation:
            state = state.updated((e.key, e.value) for e in step.effects)
            continue
        ground = GroundAction(step.action, step.bindings, context)
        if ground.cost != step.cost or not all(_holds(c, state) for c in ground.pre):
            return False
        check = step.action.check
        if check is not None and not check(context, step.bindings):
            return False
        state = state.updated(ground.eff)
    return all(_holds(c, state) for c in goal)


# --- generated domains --------------------------------------------------------------------------

DOMAINS: dict[str, list[StateValue]] = {
    "flag(x)": [False, True],
    "flag(y)": [False, True],
    "flag(z)": [False, True],
    "level": [0, 1, 2],
    "at(me)": ["a", "b", "c"],
}
COSTS = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0]
MOVE_COSTS = {"a": 1.0, "b": 2.0, "c": 0.5}


class Problem:
    """A generated problem: start, goal, actions, the context (forbidden move targets)."""

    def __init__(
        self,
        start: WorldState,
        goal: tuple[Condition, ...],
        actions: list[Action],
        context: frozenset[str],
        public: frozenset[str],
    ) -> None:
        self.start, self.goal, self.actions = start, goal, actions
        self.context, self.public = context, public

    def __repr__(self) -> str:
        lines = [f"start={self.start!r}", f"goal={[str(c) for c in self.goal]}"]
        lines += [f"forbidden={sorted(self.context)} public={sorted(self.public)}"]
        for a in self.actions:
            pre = [str(c) for c in a.preconditions]
            eff = [str(e) for e in a.effects]
            lines.append(f"  {a.name}: pre={pre} eff={eff} cost={a.cost}")
        return "\n".join(lines)


@st.composite
def conditions(draw: st.DrawFn, public: frozenset[str], size: tuple[int, int]) -> list[Condition]:
    keys = draw(st.lists(st.sampled_from(sorted(DOMAINS)), min_size=size[0], max_size=size[1]))
    result = []
    for key in dict.fromkeys(keys):
        value = draw(st.sampled_from(DOMAINS[key]))
        negated = key not in public and draw(st.booleans())
        result.append(Condition(Key.parse(key), value, negated, key in public and not negated))
    return result


def _move_cost(context: Any, bindings: Bindings) -> float:
    return MOVE_COSTS[str(bindings["to"])]


def _move_allowed(context: Any, bindings: Bindings) -> bool:
    return bindings["to"] not in context


def _move(index: int, pre: list[Condition]) -> Action:
    return Action(
        f"Move{index}",
        preconditions=[c for c in pre if c.key != Key("at", "me")],
        effects={"at(me)": "?to"},
        cost=_move_cost,
        min_cost=min(MOVE_COSTS.values()),
        check=_move_allowed,
    )


@st.composite
def actions(draw: st.DrawFn, public: frozenset[str], count: int) -> list[Action]:
    result = []
    for index in range(count):
        pre = draw(conditions(public, (0, 2)))
        if draw(st.integers(0, 5)) == 0:
            result.append(_move(index, pre))
            continue
        keys = draw(st.lists(st.sampled_from(sorted(DOMAINS)), min_size=1, max_size=2, unique=True))
        effects = [Effect(Key.parse(k), draw(st.sampled_from(DOMAINS[k]))) for k in keys]
        cost = draw(st.sampled_from(COSTS))
        result.append(Action(f"Act{index}", preconditions=pre, effects=effects, cost=cost))
    return result


@st.composite
def planted_walk(
    draw: st.DrawFn, start: WorldState, public: frozenset[str], length: int
) -> tuple[list[Action], WorldState]:
    """``length`` actions that run one after another from ``start``, and the state they reach.

    Each one's preconditions are drawn from the state it runs in, so a plan is known to exist;
    the random actions drawn beside them make it cheaper, dearer or impossible to improve on.
    """
    state = start
    result = []
    previous: list[str] = []
    for index in range(length):
        # Needing something the previous step set chains the walk, so plans get longer.
        keys = previous[:1] + draw(st.lists(st.sampled_from(sorted(DOMAINS)), max_size=1))
        keys = list(dict.fromkeys(keys))
        pre = [Condition(Key.parse(k), state[Key.parse(k)], False, k in public) for k in keys]
        effect_keys = draw(
            st.lists(st.sampled_from(sorted(DOMAINS)), min_size=1, max_size=2, unique=True)
        )
        # Every step changes what it sets, so the walk really goes somewhere.
        effects = [
            Effect(key, draw(st.sampled_from([v for v in DOMAINS[k] if v != state[key]])))
            for k in effect_keys
            for key in [Key.parse(k)]
        ]
        cost = draw(st.sampled_from(COSTS))
        result.append(Action(f"Walk{index}", preconditions=pre, effects=effects, cost=cost))
        state = state.updated((e.key, e.value) for e in effects)
        previous = effect_keys
    return result, state


def _violated(goal: tuple[Condition, ...], start: WorldState) -> tuple[Condition, ...]:
    """``goal``, with its first condition changed to fail at ``start`` if all of them hold."""
    if not start.satisfies(goal):
        return goal
    first = goal[0]
    if first.negated:
        changed = Condition(first.key, start[first.key], True)
    else:
        other = next(v for v in DOMAINS[str(first.key)] if v != start[first.key])
        changed = Condition(first.key, other, False, first.achievable_by_any_agent)
    return (changed, *goal[1:])


@st.composite
def goal_from(
    draw: st.DrawFn, state: WorldState, start: WorldState, public: frozenset[str]
) -> list[Condition]:
    """1-3 conditions that hold in ``state`` (``==`` its value, or ``!=`` another value), the
    first on a property that differs from ``start`` when there is one."""
    changed = sorted(str(k) for k in DOMAINS if state[Key.parse(k)] != start[Key.parse(k)])
    first = draw(st.sampled_from(changed or sorted(DOMAINS)))
    more = draw(st.lists(st.sampled_from(sorted(DOMAINS)), max_size=2))
    keys = list(dict.fromkeys([first, *more]))
    result = []
    for name in keys:
        key = Key.parse(name)
        others = [v for v in DOMAINS[name] if v != state[key]]
        if name not in public and draw(st.booleans()):
            result.append(Condition(key, draw(st.sampled_from(others)), True))
        else:
            result.append(Condition(key, state[key], False, name in public))
    return result


@st.composite
def problems(draw: st.DrawFn, with_public: bool = False) -> Problem:
    """A random start and 2-8 actions; half the time some of them are a planted walk to the
    goal (so longer plans occur often), otherwise the goal is random too."""
    public = frozenset(draw(st.sets(st.sampled_from(sorted(DOMAINS)), max_size=2)))
    if not with_public:
        public = frozenset()
    start = WorldState({k: draw(st.sampled_from(v)) for k, v in DOMAINS.items()})
    count = draw(st.integers(2, 8))
    planted = draw(st.integers(1, min(4, count))) if draw(st.booleans()) else 0
    walk, reached = draw(planted_walk(start, public, planted))
    if planted:
        goal = tuple(draw(goal_from(reached, start, public)))
    else:
        goal = tuple(draw(conditions(public, (1, 3))))
    goal = _violated(goal, start)
    others = draw(actions(public, count - planted))
    mixed = draw(st.permutations([*walk, *others]))
    forbidden = frozenset(draw(st.sets(st.sampled_from(["a", "b", "c"]), max_size=1)))
    return Problem(start, goal, mixed, forbidden, public)


# --- properties ---------------------------------------------------------------------------------


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_every_plan_replays_and_costs_what_the_forward_oracle_finds(problem: Problem) -> None:
    check_against_oracle(problem)


def check_against_oracle(problem: Problem) -> None:
    """The planner's answer to ``problem`` replays and costs what the forward oracle finds,
    or it finds no plan when the oracle finds none."""
    result = find_plan(problem.start, problem.goal, problem.actions, problem.context)
    expected = forward_optimal_cost(problem.start, problem.goal, problem.actions, problem.context)
    if expected is None:
        assert result.plan is None
        assert SearchStatus.NO_PLAN == result.status
        return
    assert result.plan is not None, "the exhaustive search found a plan"
    assert replay(problem.start, result.plan.steps, problem.goal, problem.context)
    assert expected == result.plan.cost


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_searching_one_expansion_at_a_time_gives_the_one_shot_plan(problem: Problem) -> None:
    one_shot = find_plan(problem.start, problem.goal, problem.actions, problem.context)
    search = GoapSearch(problem.start, problem.goal, problem.actions, problem.context)
    calls = 0
    while search.step(1) is SearchStatus.RUNNING:
        calls += 1
    assert search.result is not None
    assert one_shot.status == search.result.status
    assert one_shot.expansions == search.result.expansions
    assert one_shot.plan == search.result.plan
    assert calls <= search.result.expansions


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(with_public=True))
def test_cooperative_plans_are_valid_and_the_cheapest_matches_a_magic_helper(
    problem: Problem,
) -> None:
    result = plan_cooperatively(
        problem.start, problem.goal, problem.actions, problem.context, cooperation_cost=2.0
    )
    solo = forward_optimal_cost(problem.start, problem.goal, problem.actions, problem.context)
    if solo is not None:
        assert result.solo is not None
        assert solo == result.solo.cost
        assert () == result.plans
        return
    tagged = [
        c
        for c in [*problem.goal, *(p for a in problem.actions for p in a.preconditions)]
        if c.achievable_by_any_agent
    ]
    helped = forward_optimal_cost(
        problem.start,
        problem.goal,
        problem.actions,
        problem.context,
        magic=tagged,
        magic_cost=2.0,
    )
    if helped is None:
        assert () == result.plans
        return
    assert result.plans
    assert helped == result.plans[0].cost
    costs = [plan.cost for plan in result.plans]
    assert sorted(costs) == costs
    for plan in result.plans:
        assert all(c.achievable_by_any_agent for c in plan.request)
        assert 1 == sum(step.cooperation for step in plan.plan.steps)
        assert replay(problem.start, plan.plan.steps, problem.goal, problem.context)
        requests = [set(other.request) for other in result.plans if other is not plan]
        assert set(plan.request) not in requests


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(with_public=True))
def test_cooperative_search_gives_the_same_result_in_small_steps(problem: Problem) -> None:
    one_shot = plan_cooperatively(problem.start, problem.goal, problem.actions, problem.context)
    search = CooperativeSearch(problem.start, problem.goal, problem.actions, problem.context)
    while search.step(1) is SearchStatus.RUNNING:
        pass
    assert search.result is not None
    assert one_shot.status == search.result.status
    assert one_shot.solo == search.result.solo
    assert [p.plan.names for p in one_shot.plans] == [p.plan.names for p in search.result.plans]
    assert [p.request for p in one_shot.plans] == [p.request for p in search.result.plans]
    assert one_shot.expansions == search.result.expansions


def _counterexample(act_effect: str, act_cost: float) -> Problem:
    """Shrunk failures of earlier planner versions: a ``!=`` goal met by a variable effect."""
    start = WorldState(
        {"at(me)": "b", "flag(x)": False, "flag(y)": False, "flag(z)": False, "level": 0}
    )
    goal = (Condition.parse("at(me) != b"), Condition.parse("flag(x) == false"))
    act = Action(
        "Act0", preconditions={"at(me)": "a"}, effects={"at(me)": act_effect}, cost=act_cost
    )
    return Problem(start, goal, [act, _move(1, [])], frozenset(), frozenset())


@pytest.mark.parametrize(
    ("problem", "expected"),
    [(_counterexample("b", 0.0), 1.0), (_counterexample("a", 0.5), 1.0)],
)
def test_known_counterexamples_cost_what_the_oracle_finds(
    problem: Problem, expected: float
) -> None:
    result = find_plan(problem.start, problem.goal, problem.actions, problem.context)

    oracle = forward_optimal_cost(problem.start, problem.goal, problem.actions, problem.context)
    assert expected == oracle
    assert result.plan is not None
    assert expected == result.plan.cost
    assert replay(problem.start, result.plan.steps, problem.goal, problem.context)
