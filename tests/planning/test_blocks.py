"""Tests of the blocks-world HTN domain and its problem builders.

Every plan is replayed by :class:`_World` below, a simulator written for these tests and
sharing no code with the domain: it applies the four actions on a plain dict with their
preconditions and checks the goal at the end. Problems: the classic ones (the Sussman anomaly,
GTPyhop's and pyhop's examples, the 19-block bw_large_d from the SHOP distribution, IPC 2011's
BW-rand-50 and an IPC 2020 problem), the generator of known optimum, and IPC-style random
problems whose goal places only some blocks, with integer and string names.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warband.exceptions import PlanningError
from warband.planning import FactDB, HtnPlanner, HtnResult, Task, format_domain, parse_domain
from warband.planning.domains import blocks

Block = int | str
Place = Block | None
"""Where a block sits: another block, or None for the table."""


# --- the independent simulator -------------------------------------------------------------


@dataclass
class _World:
    """A one-handed robot's blocks world: ``on[b]`` is the block under ``b`` (None: the table);
    a held block is in no entry of ``on``."""

    on: dict[Block, Place]
    held: Block | None = None
    moves: dict[Block, list[Place]] = field(default_factory=dict)
    """Where each block was put, in order."""

    def clear(self, block: Block) -> bool:
        return block in self.on and all(under != block for under in self.on.values())

    def apply(self, step: Task) -> None:
        name, args = step.name, cast(tuple[Block, ...], step.args)
        if name == "!pickup":
            (b,) = args
            assert self.held is None and self.on.get(b, "gone") is None and self.clear(b), step
            del self.on[b]
            self.held = b
        elif name == "!unstack":
            b, c = args
            assert self.held is None and b in self.on and self.on[b] == c, step
            assert self.clear(b), step
            del self.on[b]
            self.held = b
        elif name == "!putdown":
            (b,) = args
            assert self.held == b, step
            self.on[b], self.held = None, None
            self.moves.setdefault(b, []).append(None)
        elif name == "!stack":
            b, c = args
            assert self.held == b and self.clear(c), step
            self.on[b], self.held = c, None
            self.moves.setdefault(b, []).append(c)
        else:
            raise AssertionError(f"not a blocks-world action: {step}")


@dataclass(frozen=True)
class _Problem:
    start: dict[Block, Place]
    goal: dict[Block, Place]
    """The goal place of the blocks that have one."""
    clear: frozenset[Block] = frozenset()
    """The blocks the goal wants clear."""

    def facts(self) -> FactDB:
        return blocks.facts_for(self.start, self.goal, self.clear)  # type: ignore[arg-type]

    def must_move(self) -> set[Block]:
        """The blocks every plan moves: out of their goal place, or (without one) on a block
        the goal wants for another or clear, or above such a block."""
        wanted = set(self.goal.values()) | self.clear
        out = set()
        for block in self.start:
            current: Place = block
            while current is not None:
                under = self.start[current]
                if current in self.goal:
                    misplaced = self.goal[current] != under
                else:
                    misplaced = under is not None and under in wanted
                if misplaced:
                    out.add(block)
                    break
                current = under
        return out


def _replay(problem: _Problem, steps: Sequence[Task]) -> _World:
    """Run ``steps`` from the start, each action checked, and check the goal holds at the end."""
    world = _World(dict(problem.start))
    for step in steps:
        world.apply(step)
    assert None is world.held
    for block, place in problem.goal.items():
        assert place == world.on[block], f"{block} should be on {place}"
    for block in problem.clear:
        assert world.clear(block), f"{block} should be clear"
    return world


def _plan(problem: _Problem | FactDB) -> HtnResult:
    facts = problem if isinstance(problem, FactDB) else problem.facts()
    return HtnPlanner(blocks.domain()).plan(facts, blocks.ROOT)


def _solve(problem: _Problem) -> tuple[Task, ...]:
    """Plan ``problem``, replay the plan and check what the strategy promises: no backtracking,
    blocks in place never touched, each block moved at most twice (once to the table first)."""
    result = _plan(problem)
    assert result.plan is not None, result.status
    assert len(result.plan.path) == result.expansions  # every binding tried was kept
    world = _replay(problem, result.plan.steps)
    must_move = problem.must_move()
    assert must_move == set(world.moves)
    for places in world.moves.values():
        assert places[:-1] in ([], [None])
    return result.plan.steps


def _moves(steps: Iterable[Task]) -> list[tuple[object, ...]]:
    return [(step.name.lstrip("!"), *step.args) for step in steps]


# --- the classic problems ------------------------------------------------------------------


def test_the_sussman_anomaly_is_solved_in_six_actions() -> None:
    sussman = _Problem({"c": "a", "a": None, "b": None}, {"a": "b", "b": "c"})
    assert [
        ("unstack", "c", "a"),
        ("putdown", "c"),
        ("pickup", "b"),
        ("stack", "b", "c"),
        ("pickup", "a"),
        ("stack", "a", "b"),
    ] == _moves(_solve(sussman))


@pytest.mark.parametrize("goal", [{"c": "b", "b": "a", "a": None}, {"c": "b", "b": "a"}])
def test_gtpyhops_first_example_needs_the_same_six_actions_with_or_without_a_on_the_table(
    goal: dict[Block, Place],
) -> None:
    # "c on b on a" entails "a on the table": a, sitting on b where the goal wants b, moves.
    problem = _Problem({"a": "b", "b": None, "c": None}, goal)
    assert [
        ("unstack", "a", "b"),
        ("putdown", "a"),
        ("pickup", "b"),
        ("stack", "b", "a"),
        ("pickup", "c"),
        ("stack", "c", "b"),
    ] == _moves(_solve(problem))


@pytest.mark.parametrize("goal", [{"b": "c", "a": "d", "c": None, "d": None}, {"b": "c", "a": "d"}])
def test_gtpyhops_second_example_swaps_two_towers_in_six_actions(
    goal: dict[Block, Place],
) -> None:
    problem = _Problem({"a": "c", "b": "d", "c": None, "d": None}, goal)
    assert 6 == len(_solve(problem))


# fmt: off
BW_LARGE_D = _Problem(
    {
        1: 12,
        12: 13,
        13: None,
        11: 10,
        10: 5,
        5: 4,
        4: 14,
        14: 15,
        15: None,
        9: 8,
        8: 7,
        7: 6,
        6: None,
        19: 18,
        18: 17,
        17: 16,
        16: 3,
        3: 2,
        2: None,
    },
    {
        15: 13,
        13: 8,
        8: 9,
        9: 4,
        4: None,
        12: 2,
        2: 3,
        3: 16,
        16: 11,
        11: 7,
        7: 6,
        6: None,
    },
    frozenset({17, 15, 12}),
)
"""bw_large_d from the SHOP distribution (in pyhop's and GTPyhop's examples): 19 blocks named
by integers; the goal places 12 of them and wants 3 clear."""

BW_RAND_50 = _Problem(
    {
        1: 48,
        2: 33,
        3: 41,
        4: 37,
        5: 45,
        6: 16,
        7: 31,
        8: 28,
        9: 49,
        10: 34,
        11: 15,
        12: 17,
        13: 20,
        14: 2,
        15: 44,
        16: 5,
        17: 32,
        18: 50,
        19: 30,
        20: 22,
        21: 27,
        22: 38,
        23: 11,
        24: None,
        25: 46,
        26: None,
        27: 40,
        28: 43,
        29: 19,
        30: 39,
        31: 29,
        32: None,
        33: None,
        34: 14,
        35: 36,
        36: None,
        37: 8,
        38: 9,
        39: 18,
        40: 3,
        41: 35,
        42: 4,
        43: 24,
        44: 26,
        45: 47,
        46: 42,
        47: 1,
        48: 21,
        49: 25,
        50: 6,
    },
    {
        1: 33,
        3: 40,
        4: 46,
        5: 21,
        6: 17,
        7: 37,
        8: 15,
        9: 41,
        10: 26,
        11: 23,
        12: 25,
        13: 47,
        14: 20,
        15: 19,
        16: 31,
        17: 39,
        18: 50,
        19: 1,
        20: 45,
        21: 11,
        23: 43,
        25: 42,
        26: 36,
        27: 35,
        28: 29,
        29: 44,
        30: 8,
        31: 9,
        32: 6,
        33: 10,
        34: 14,
        35: 2,
        36: 7,
        37: 32,
        38: 28,
        40: 24,
        41: 38,
        42: 34,
        43: 12,
        44: 49,
        45: 4,
        46: 18,
        47: 30,
        48: 22,
        50: 13,
    },
)
# fmt: on
"""BW-rand-50 from IPC 2011 (in GTPyhop's examples): 50 blocks, 45 of them placed by the goal."""

IPC2020_P01 = _Problem(
    {"b1": None, "b4": "b1", "b5": "b4", "b3": "b5", "b2": "b3"}, {"b1": "b4", "b3": "b1"}
)
"""p01 of IPC 2020's total-order Blocksworld: two goals for five blocks."""


@pytest.mark.parametrize(
    ("problem", "gtpyhop_length"),
    [(BW_LARGE_D, 38), (BW_RAND_50, 164), (IPC2020_P01, None)],
    ids=["bw_large_d", "bw_rand_50", "ipc2020_p01"],
)
def test_the_published_problems_are_solved_no_longer_than_gtpyhop_solves_them(
    problem: _Problem, gtpyhop_length: int | None
) -> None:
    steps = _solve(problem)
    assert len(steps) <= 4 * len(problem.must_move())
    if gtpyhop_length is not None:  # the length of the plan GTPyhop's examples expect
        assert len(steps) <= gtpyhop_length


def test_the_19_block_problem_is_solved_alike_with_integer_and_string_names() -> None:
    def named(value: Place) -> str | None:
        return None if value is None else f"b{value}"

    as_text = _Problem(
        {f"b{b}": named(p) for b, p in BW_LARGE_D.start.items()},
        {f"b{b}": named(p) for b, p in BW_LARGE_D.goal.items()},
        frozenset(f"b{b}" for b in BW_LARGE_D.clear),
    )
    renamed = [
        Task(step.name, tuple(f"b{arg}" for arg in step.args)) for step in _solve(BW_LARGE_D)
    ]
    assert renamed == list(_solve(as_text))


# --- IPC-style random problems with partial goals ------------------------------------------


def _towers(rng: random.Random, names: list[Block]) -> dict[Block, Place]:
    """A random state: the blocks shuffled, each starting a new tower with probability 1/3."""
    order = names[:]
    rng.shuffle(order)
    on: dict[Block, Place] = {}
    below: Place = None
    for block in order:
        below = None if below is None or rng.random() < 1 / 3 else below
        on[block] = below
        below = block
    return on


def random_problem(n_blocks: int, seed: int, *, numbered: bool) -> _Problem:
    """A random start and a random goal configuration of which the goal names, as the IPC
    problems do, ``on`` or ``on-table`` for a random subset of the blocks (and, sometimes,
    ``clear`` for a few blocks clear in that configuration). Deterministic per seed."""
    rng = random.Random(seed)
    names: list[Block] = (
        list(range(1, n_blocks + 1)) if numbered else [f"b{i}" for i in range(1, n_blocks + 1)]
    )
    start, final = _towers(rng, names), _towers(rng, names)
    share = rng.choice([0.2, 0.5, 0.8, 1.0])
    goal = {block: place for block, place in final.items() if rng.random() < share}
    tops = [block for block in names if block not in final.values()]
    clear = frozenset(block for block in tops if rng.random() < 0.2)
    return _Problem(start, goal, clear)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 30), st.integers(0, 2**32), st.booleans())
def test_random_problems_with_partial_goals_are_solved_by_replayable_plans(
    n: int, seed: int, numbered: bool
) -> None:
    _solve(random_problem(n, seed, numbered=numbered))


@pytest.mark.parametrize("numbered", [True, False], ids=["int", "str"])
def test_a_hundred_random_problems_of_forty_blocks_are_solved(numbered: bool) -> None:
    for seed in range(100):
        _solve(random_problem(40, seed, numbered=numbered))


def test_a_block_without_a_goal_leaves_the_block_the_goal_wants_for_another() -> None:
    problem = _Problem({"a": "b", "b": None, "c": None}, {"c": "b"})
    assert [("unstack", "a", "b"), ("putdown", "a"), ("pickup", "c"), ("stack", "c", "b")] == (
        _moves(_solve(problem))
    )


def test_a_block_without_a_goal_leaves_a_block_the_goal_wants_clear() -> None:
    problem = _Problem({"a": "b", "b": None}, {}, frozenset({"b"}))
    assert [("unstack", "a", "b"), ("putdown", "a")] == _moves(_solve(problem))


def test_a_goal_already_met_needs_an_empty_plan() -> None:
    assert () == _solve(_Problem({1: 2, 2: None, 3: None}, {1: 2}))


def test_a_block_held_at_the_start_is_put_in_its_place_first() -> None:
    facts = FactDB(
        [
            ("block", 1),
            ("block", 2),
            ("block", 3),
            ("on_table", 2),
            ("on", 3, 2),
            ("clear", 3),
            ("holding", 1),
            ("goal_on", 1, 2),
        ]
    )
    result = _plan(facts)
    assert result.plan is not None
    assert [
        ("putdown", 1),
        ("unstack", 3, 2),
        ("putdown", 3),
        ("pickup", 1),
        ("stack", 1, 2),
    ] == _moves(result.plan.steps)
    world = _World({2: None, 3: 2}, held=1)
    for step in result.plan.steps:
        world.apply(step)
    assert (None, 2) == (world.held, world.on[1])


# --- is_done -------------------------------------------------------------------------------


def test_a_block_named_by_an_integer_is_done_on_its_goal_block() -> None:
    facts = FactDB(
        [
            ("block", 1),
            ("block", 2),
            ("on", 1, 2),
            ("on_table", 2),
            ("clear", 1),
            ("hand_empty",),
            ("goal_on", 1, 2),
            ("goal_on_table", 2),
        ]
    )
    assert True is blocks.is_done(facts, 1)
    assert True is blocks.is_done(facts, 1.0)  # one value model: 1 == 1.0


def test_a_block_named_true_is_not_the_block_named_1() -> None:
    facts = FactDB([("on", True, 2), ("on_table", 2), ("on_table", 1), ("goal_on_table", 1)])
    assert True is blocks.is_done(facts, 1)
    assert True is blocks.is_done(facts, True)  # no goal, on a block nobody wants
    facts.assert_fact("goal_on", 1, 2)
    assert False is blocks.is_done(facts, True)


def test_a_block_without_a_goal_is_not_done_where_a_goal_wants_another_block() -> None:
    facts = FactDB([("on", "a", "b"), ("on_table", "b"), ("on_table", "c"), ("goal_on", "c", "b")])
    assert False is blocks.is_done(facts, "a")
    assert True is blocks.is_done(facts, "b")
    assert False is blocks.is_done(facts, "c")


def test_a_block_is_done_only_when_everything_under_it_is_in_place() -> None:
    facts = FactDB(
        [
            ("on", "a", "b"),
            ("on_table", "b"),
            ("goal_on", "a", "b"),
            ("goal_on", "b", "c"),
            ("goal_on_table", "c"),
            ("on_table", "c"),
        ]
    )
    assert False is blocks.is_done(facts, "a")
    assert False is blocks.is_done(facts, "b")
    assert True is blocks.is_done(facts, "c")


def test_a_block_in_the_hand_is_not_done() -> None:
    assert False is blocks.is_done(FactDB([("holding", "a")]), "a")


def test_is_done_follows_changes_to_the_facts_it_was_asked_about() -> None:
    facts = FactDB([("on", "a", "b"), ("on_table", "b"), ("goal_on", "a", "b")])
    facts.assert_fact("goal_on_table", "b")
    assert blocks.is_done(facts, "a")
    moved = facts.copy()
    moved.retract("on", "a", "b")
    assert not blocks.is_done(moved, "a")
    assert blocks.is_done(facts, "a")
    facts.retract("goal_on_table", "b")
    facts.assert_fact("goal_on", "b", "c")
    assert not blocks.is_done(facts, "a")
    assert not blocks.is_done(facts, "b")


# --- goals that cannot be met --------------------------------------------------------------


def _goal_facts(goal: Iterable[tuple[object, ...]]) -> FactDB:
    facts = blocks.facts_for({"a": None, "b": None, "c": None, "d": None})
    facts.update(goal)  # type: ignore[arg-type]
    return facts


@pytest.mark.parametrize(
    ("goal", "reason"),
    [
        ([("goal_on", "a", "b"), ("goal_on", "c", "b")], "two blocks on b"),
        ([("goal_on", "a", "b"), ("goal_on_table", "a")], "wants a in two places"),
        ([("goal_on", "a", "b"), ("goal_on", "a", "c")], "wants a in two places"),
        ([("goal_on", "a", "a")], "a block on itself"),
        ([("goal_on", "a", "b"), ("goal_clear", "b")], "wants b clear"),
        ([("goal_on", "a", "x")], "names x, which is not a block"),
        ([("goal_on", "a", "b"), ("goal_on", "b", "c"), ("goal_on", "c", "a")], "in a cycle"),
        ([("goal_on", "a")], "should name 2 block"),
    ],
)
def test_a_goal_that_cannot_be_met_fails_at_once_and_says_why(
    goal: list[tuple[object, ...]], reason: str
) -> None:
    facts = _goal_facts(goal)
    problem = blocks.goal_problem(facts)
    assert problem is not None and reason in problem
    result = _plan(facts)
    assert ("failed", 0) == (result.status, result.expansions)


def test_facts_for_refuses_a_goal_that_cannot_be_met() -> None:
    with pytest.raises(PlanningError, match="two blocks on 2"):
        blocks.facts_for({1: None, 2: None, 3: None}, {1: 2, 3: 2})


@pytest.mark.parametrize(
    ("start", "reason"),
    [
        ({"a": "x"}, "not a block of the start state"),
        ({"a": "c", "b": "c", "c": None}, "both sit on c"),
        ({"a": "b", "b": "a"}, "stands on itself"),
        ({None: "a", "a": None}, "cannot be called None"),
    ],
)
def test_facts_for_refuses_a_start_that_is_not_a_state(
    start: Mapping[Block | None, Place], reason: str
) -> None:
    with pytest.raises(PlanningError, match=reason):
        blocks.facts_for(start)  # type: ignore[arg-type]


def test_facts_for_writes_the_state_the_goal_and_an_empty_hand() -> None:
    facts = blocks.facts_for({1: 2, 2: None}, {2: 1, 1: None}, [2])
    assert {
        ("hand_empty",),
        ("block", 1),
        ("block", 2),
        ("on", 1, 2),
        ("on_table", 2),
        ("clear", 1),
        ("goal_on", 2, 1),
        ("goal_on_table", 1),
        ("goal_clear", 2),
    } == set(facts)


# --- the generator of known optimum --------------------------------------------------------


def _generated(problem: blocks.BlocksProblem) -> _Problem:
    facts = problem.facts
    start: dict[Block, Place] = {f[1]: f[2] for f in facts.facts("on")}  # type: ignore[misc]
    start.update({f[1]: None for f in facts.facts("on_table")})  # type: ignore[misc]
    goal: dict[Block, Place] = {f[1]: f[2] for f in facts.facts("goal_on")}  # type: ignore[misc]
    goal.update({f[1]: None for f in facts.facts("goal_on_table")})  # type: ignore[misc]
    return _Problem(start, goal)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 25), st.integers(0, 10_000))
def test_every_plan_reaches_the_goal_in_the_optimal_number_of_actions(n: int, seed: int) -> None:
    problem = blocks.problem(n, seed)
    result = HtnPlanner(problem.domain).plan(problem.facts, problem.root)
    assert result.plan is not None, result.status
    _replay(_generated(problem), result.plan.steps)
    assert problem.optimal_length == len(result.plan.steps)


def test_problems_are_deterministic_per_seed_and_differ_across_seeds() -> None:
    first, again, other = blocks.problem(12, 7), blocks.problem(12, 7), blocks.problem(12, 8)
    assert set(first.facts) == set(again.facts)
    assert first.optimal_length == again.optimal_length
    assert set(first.facts) != set(other.facts)


def test_a_problem_unpacks_into_domain_facts_root_and_optimum() -> None:
    domain, facts, root, optimal = blocks.problem(6, 1)
    assert "blocks" == domain.name
    assert blocks.ROOT == root
    assert 6 == len(facts.facts("block"))
    assert 0 == optimal % 2 and optimal <= 2 * 6


def test_the_optimum_is_the_lower_bound_of_two_actions_per_misplaced_block() -> None:
    problem = blocks.problem(15, 3)
    misplaced = [
        b for (_, b) in problem.facts.facts("block") if not blocks.is_done(problem.facts, b)
    ]
    assert 2 * len(misplaced) == problem.optimal_length
    assert 2 * len(_generated(problem).must_move()) == problem.optimal_length


def test_problems_need_at_least_one_block() -> None:
    with pytest.raises(PlanningError, match="at least 1 block"):
        blocks.problem(0, 1)


def test_the_python_built_domain_prints_as_text_that_parses_back_to_it() -> None:
    domain = blocks.domain()
    again = parse_domain(format_domain(domain), functions=domain.functions)
    assert domain.methods == again.methods
    assert domain.primitives == again.primitives
