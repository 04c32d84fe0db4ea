"""``warband bench planning``: plan time and plan cost of warband's planners, next to peers.

Problems (each built once, outside the timed region):

- **fear/...**: Orkin's F.E.A.R. combat domain (``warband.planning.domains.fear``): the soldier
  and the assassin planning KillEnemy, the rat (who cannot attack) planning Patrol;
- **pirate/...**: Pittman's pirate (``domains.pirate``): lawful, unlawful, no bottle;
- **synthetic/dD-kK**: the synthetic GOAP family (``domains.synthetic``), chain depth D in
  4, 8, 12, 16 and K distracting ways per stage in 2, 4, 8, seed fixed;
- **chains/dD-bB-sS**: crafting chains (``domains.chains``): depth D, B alternative actions per
  level (decoys, dead ends, detours), seeds 0..2; the sizes run from d4-b2 to d24-b12 (about 400
  actions). A summary per size gives, per planner, the median run and the worst run over the
  seeds; warband's worst includes its first plan on a fresh action set (building the per-action-set
  tables and the heuristic's graph), the one plan no cache helps;
- **blocks/nN**: the HTN blocks world (``domains.blocks``) with N blocks, seed fixed.

Each problem is solved repeatedly (at least ``--repeats`` times and for at least
``--min-time`` seconds, after one untimed run); each run is timed with
``time.perf_counter_ns``, and the median and the 99th percentile (nearest rank) are reported
with the plan's cost next to the problem's known optimal cost.

Peers, when installed (``pip install warband[peers]``), run the same problems in the same
process: pyperplan gets an exact ground STRIPS translation of every GOAP problem as PDDL text;
gtpyhop gets a blocks-world domain written here that mirrors warband's; goap (0.3.0) is
checked for whether its model can state the problem. A missing peer is skipped with a line
saying so; a peer that fails on a problem is reported and the run goes on.

``main(argv)`` is the entry point (``warband bench planning`` loads this file by path and
calls it). With ``--json`` the last stdout line is one JSON object whose ``problems`` list has
one entry per problem and planner; the keys in ``JSON_KEYS`` are a public contract.
"""

# No `from __future__ import annotations`: `warband bench` executes this file without adding it
# to sys.modules, and dataclasses look string annotations up there.

import argparse
import contextlib
import importlib
import importlib.metadata
import json
import math
import platform
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import warband
from warband.exceptions import PlanningError
from warband.planning.domains import blocks, chains, fear, pirate, synthetic
from warband.planning.domains.problem import GoapProblem
from warband.planning.goap.model import GoapStep
from warband.planning.goap.search import simulate
from warband.planning.goap.state import Bindings, Condition, Effect, Key, StateValue, is_variable
from warband.planning.htn.facts import FactDB
from warband.planning.htn.planner import HtnPlanner

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # `warband bench` runs this file by path; bench is a package
    sys.path.insert(0, str(REPO))

from bench.measure import BenchmarkError, percentile  # noqa: E402

JSON_KEYS: Final = ("name", "planner", "median_ms", "p99_ms", "cost", "optimal_cost")
"""Keys every entry of the ``problems`` list holds (a public contract)."""

WARBAND: Final = "warband"
PEERS: Final = ("pyperplan", "goap", "gtpyhop")
IN_THE_EXTRA: Final = ("pyperplan", "gtpyhop")
"""The peers ``pip install 'warband[peers]'`` installs; goap is not one (0.3.0 does not import
on Python 3.11 and later)."""
"""The optional peers, by their import (and distribution) names."""

SYNTHETIC_DEPTHS: Final = (4, 8, 12, 16)
SYNTHETIC_DISTRACTORS: Final = (2, 4, 8)
SYNTHETIC_SEED: Final = 7
CHAINS_SIZES: Final = ((4, 2), (8, 4), (12, 4), (16, 8), (20, 8), (24, 12))
"""(depth, alternatives per level) of the crafting-chain family."""
CHAINS_SEEDS: Final = (0, 1, 2)
BLOCKS_SIZES: Final = (4, 8, 16, 32)
BLOCKS_SEED: Final = 3

PYPERPLAN_SEARCH: Final = "astar"
PYPERPLAN_HEURISTIC: Final = "hmax"
"""A* with h^max: admissible, so pyperplan's plans are optimal in length (it ignores costs)."""


class NotApplicable(Exception):
    """A peer cannot state this problem; the message says why."""


@dataclass(frozen=True)
class Settings:
    """How long each case is measured."""

    repeats: int
    """Timed runs at least."""
    min_time: float
    """Seconds of timed runs at least (after ``repeats``)."""
    max_time: float
    """Stop adding runs past this many seconds (once 3 runs were timed)."""
    quick: bool
    pyperplan_max_blocks: int
    """Larger blocks-world problems are not given to pyperplan (optimal A* takes too long)."""


DEFAULT_SETTINGS: Final = Settings(
    repeats=20, min_time=0.2, max_time=10.0, quick=False, pyperplan_max_blocks=8
)
QUICK_SETTINGS: Final = Settings(
    repeats=3, min_time=0.0, max_time=1.0, quick=True, pyperplan_max_blocks=4
)


@dataclass(frozen=True)
class BenchProblem:
    """One problem of the benchmark: a GOAP problem or an HTN blocks-world problem."""

    name: str
    family: str
    goap: GoapProblem | None = None
    htn: blocks.BlocksProblem | None = None
    size: str | None = None
    """The size within a family summarised per size (``d16-b8`` for chains), else None."""

    @property
    def optimal_cost(self) -> float:
        if self.goap is not None:
            assert self.goap.optimal_cost is not None
            return float(self.goap.optimal_cost)
        assert self.htn is not None
        return float(self.htn.optimal_length)


@dataclass
class Outcome:
    """What one planner did on one problem."""

    name: str
    planner: str
    samples_ns: list[int]
    cost: float
    optimal_cost: float
    valid: bool = True
    """The plan replays from the start state to the goal (checked outside the timed runs)."""
    setup_ms: float | None = None
    """Untimed one-off preparation (a peer's parsing and grounding)."""
    notes: str = ""
    ratio: float | None = None
    """This peer's median over warband's on the same problem (set for peers only)."""
    first_ms: float | None = None
    """warband's first plan on a freshly built problem (untimed otherwise), where measured."""

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples_ns) / 1e6

    @property
    def p99_ms(self) -> float:
        return percentile(self.samples_ns, 0.99) / 1e6

    @property
    def optimal(self) -> bool:
        return math.isclose(self.cost, self.optimal_cost)


@dataclass(frozen=True)
class Skip:
    """A peer that did not run a problem: not applicable, or failed."""

    name: str
    planner: str
    status: str
    """``n/a`` (the peer cannot state the problem) or ``failed``."""
    reason: str


@dataclass
class Results:
    outcomes: list[Outcome] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)


def time_runs(run: Callable[[], object], settings: Settings) -> list[int]:
    """Call ``run`` once untimed, then time it until the settings are satisfied."""
    run()
    samples: list[int] = []
    clock = time.perf_counter_ns
    spent = 0
    while True:
        start = clock()
        run()
        elapsed = clock() - start
        samples.append(elapsed)
        spent += elapsed
        enough = len(samples) >= settings.repeats and spent >= settings.min_time * 1e9
        too_long = spent >= settings.max_time * 1e9 and len(samples) >= 3
        if enough or too_long:
            return samples


# --- problems ---------------------------------------------------------------------------------


def build_problems(quick: bool) -> list[BenchProblem]:
    """The benchmark's problems; ``quick`` keeps one or two of each family."""
    goap: list[tuple[str, str, GoapProblem]] = [
        ("fear/soldier-kill", "fear", fear.problem("soldier", "KillEnemy")),
        ("fear/assassin-kill", "fear", fear.problem("assassin", "KillEnemy")),
        ("fear/rat-patrol", "fear", fear.problem("rat", "Patrol")),
        ("pirate/lawful", "pirate", pirate.problem("lawful")),
        ("pirate/unlawful", "pirate", pirate.problem("unlawful")),
        ("pirate/no_bottle", "pirate", pirate.problem("no_bottle")),
    ]
    grid = [(d, k) for d in SYNTHETIC_DEPTHS for k in SYNTHETIC_DISTRACTORS]
    sizes = BLOCKS_SIZES
    if quick:
        goap = [entry for entry in goap if entry[0] in ("fear/soldier-kill", "pirate/lawful")]
        grid = [(4, 2), (8, 4)]
        sizes = (4, 8)
    for depth, distractors in grid:
        made = synthetic.problem(depth, distractors, SYNTHETIC_SEED)
        goap.append((f"synthetic/d{depth}-k{distractors}", "synthetic", made))
    problems = [BenchProblem(name, family, goap=made) for name, family, made in goap]
    chain_sizes: Sequence[tuple[int, int]] = CHAINS_SIZES
    chain_seeds: Sequence[int] = CHAINS_SEEDS
    if quick:
        chain_sizes, chain_seeds = ((4, 2), (16, 8)), (0,)
    for depth, alternatives in chain_sizes:
        label = f"d{depth}-b{alternatives}"
        for seed in chain_seeds:
            made = chains.problem(depth, alternatives, seed)
            name = f"chains/{label}-s{seed}"
            problems.append(BenchProblem(name, "chains", goap=made, size=label))
    for size in sizes:
        made_htn = blocks.problem(size, BLOCKS_SEED)
        problems.append(BenchProblem(f"blocks/n{size}", "blocks", htn=made_htn))
    return problems


# --- warband ----------------------------------------------------------------------------------


def run_warband(problem: BenchProblem, settings: Settings) -> Outcome:
    """Time warband's planner on ``problem``: GOAP ``solve()`` or ``HtnPlanner.plan``."""
    if problem.goap is not None:
        goap = problem.goap
        started = time.perf_counter_ns()
        result = goap.solve()
        first_ms = (time.perf_counter_ns() - started) / 1e6
        if result.plan is None:
            raise BenchmarkError(f"{problem.name}: warband found no plan ({result.status})")
        samples = time_runs(goap.solve, settings)
        replay = simulate(
            goap.start, result.plan.steps, goal=result.plan.goal, context=goap.context
        )
        outcome = Outcome(
            problem.name, WARBAND, samples, result.plan.cost, problem.optimal_cost, replay.ok
        )
        if problem.size is not None:
            outcome.first_ms = first_ms
        return outcome
    assert problem.htn is not None
    domain, facts, root, _ = problem.htn
    htn = HtnPlanner(domain).plan(facts, root)
    if htn.plan is None:
        raise BenchmarkError(f"{problem.name}: warband found no plan ({htn.status})")
    samples = time_runs(lambda: HtnPlanner(domain).plan(facts, root), settings)
    moves = [(step.name, *map(str, step.args)) for step in htn.plan.steps]
    valid = _blocks_plan_valid(facts, moves)
    return Outcome(problem.name, WARBAND, samples, len(moves), problem.optimal_cost, valid)


# --- the ground STRIPS view of a GOAP problem (pyperplan, goap) ---------------------------------


@dataclass(frozen=True)
class GroundAction:
    """One ground GOAP action: what the procedural check and cost function said at grounding."""

    step: GoapStep
    preconditions: tuple[tuple[Key, StateValue], ...]
    effects: tuple[tuple[Key, StateValue], ...]


@dataclass(frozen=True)
class GroundProblem:
    """A GOAP problem ground out: actions with fixed costs and ``key == value`` atoms only."""

    start: dict[Key, StateValue]
    goal: tuple[tuple[Key, StateValue], ...]
    actions: tuple[GroundAction, ...]
    values: dict[Key, tuple[StateValue, ...]]
    """Every value each ground key can take or be asked for."""


def _typed(value: StateValue) -> tuple[str, str]:
    # True and 1 are different values for warband (conditions compare types too).
    return (type(value).__name__, repr(value))


def _ground_conditions(conditions: Sequence[Condition], where: str) -> list[tuple[Key, StateValue]]:
    pairs = []
    for condition in conditions:
        if condition.negated:
            raise NotApplicable(f"{where} uses '!=' ({condition}), which needs negation")
        pairs.append((condition.key, condition.value))
    return pairs


def ground_goap(problem: GoapProblem) -> GroundProblem:
    """Ground ``problem`` into STRIPS terms, or raise NotApplicable saying why it cannot be.

    A variable takes every ground value the problem asks for on its key (in a goal or a
    precondition): those are the only values warband's regression binds it to. Procedural
    checks and cost functions are evaluated once per ground action, with the problem's fixed
    context; so the result is exact for this problem, not for another context.
    """
    goal_conditions = problem.goal.ground(problem.context)
    goal = _ground_conditions(goal_conditions, f"goal {problem.goal.name}")
    asked: dict[str, dict[tuple[str, str], StateValue]] = {}
    for key, value in goal:
        asked.setdefault(key.name, {})[_typed(value)] = value
    for action in problem.brain.actions:
        for condition in action.preconditions:
            if not is_variable(condition.value):
                asked.setdefault(condition.key.name, {})[_typed(condition.value)] = condition.value
    actions: list[GroundAction] = []
    for action in problem.brain.actions:
        if action.cooperation:
            raise NotApplicable(f"action {action.name} is a cooperation action")
        if action.bind is not None:
            raise NotApplicable(f"action {action.name} binds variables with a function")
        for bindings in _action_bindings(action.name, action.variables, action.effects, asked):
            if action.check is not None and not action.check(problem.context, bindings):
                continue
            try:
                cost = float(
                    action.cost(problem.context, bindings) if callable(action.cost) else action.cost
                )
            except PlanningError:
                continue  # the cost function refuses these bindings: warband cannot use them
            preconditions = tuple(c.substitute(bindings) for c in action.preconditions)
            effects = tuple(e.substitute(bindings) for e in action.effects)
            step = GoapStep(action, bindings, preconditions, effects, cost)
            pre = _ground_conditions(preconditions, f"action {action.name}")
            actions.append(GroundAction(step, tuple(pre), tuple((e.key, e.value) for e in effects)))
    start = dict(problem.start.items())
    collected: dict[Key, dict[tuple[str, str], StateValue]] = {}
    mentioned = [*start.items(), *goal]
    for ground in actions:
        mentioned += [*ground.preconditions, *ground.effects]
    for key, value in mentioned:
        collected.setdefault(key, {})[_typed(value)] = value
    values = {key: tuple(found[t] for t in sorted(found)) for key, found in collected.items()}
    return GroundProblem(start, tuple(goal), tuple(actions), values)


def _action_bindings(
    name: str,
    variables: frozenset[str],
    effects: Sequence[Effect],
    asked: dict[str, dict[tuple[str, str], StateValue]],
) -> Iterator[Bindings]:
    if not variables:
        yield Bindings()
        return
    domains: dict[str, list[StateValue]] = {}
    for effect in effects:
        if effect.key.has_variable:
            raise NotApplicable(f"action {name} has a variable subject ({effect.key})")
        if is_variable(effect.value):
            found = asked.get(effect.key.name, {})
            domains[str(effect.value)[1:]] = [found[t] for t in sorted(found)]
    missing = variables - set(domains)
    if missing:
        raise NotApplicable(f"action {name}: cannot ground ?{', ?'.join(sorted(missing))}")
    names = sorted(domains)
    combos: list[dict[str, StateValue]] = [{}]
    for var in names:
        combos = [{**combo, var: value} for combo in combos for value in domains[var]]
    for combo in combos:
        yield Bindings(combo)


# --- pyperplan --------------------------------------------------------------------------------


def _pddl_name(prefix: str, index: int, text: str) -> str:
    cleaned = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return f"{prefix}{index}-{cleaned}" if cleaned else f"{prefix}{index}"


def goap_to_pddl(ground: GroundProblem, name: str) -> tuple[str, str, list[GroundAction]]:
    """PDDL domain and problem text (STRIPS, no parameters) for a ground GOAP problem.

    Each ``key == value`` pair is one nullary predicate; an effect ``key = v`` adds ``key ==
    v`` and deletes ``key == w`` for every other value ``w`` of that key. Returns the domain
    text, the problem text and the ground actions in the order of their PDDL names (``aN-...``).
    """
    atoms: dict[tuple[Key, tuple[str, str]], str] = {}
    for key in sorted(ground.values, key=Key.sort_key):
        for value in ground.values[key]:
            atoms[key, _typed(value)] = _pddl_name("f", len(atoms), f"{key}-{value}")

    def atom(key: Key, value: StateValue) -> str:
        return f"({atoms[key, _typed(value)]})"

    lines = [f"(define (domain wb-{_pddl_name('d', 0, name)})", "  (:requirements :strips)"]
    lines.append("  (:predicates " + " ".join(f"({a})" for a in atoms.values()) + ")")
    for index, action in enumerate(ground.actions):
        label = f"{action.step.name}-{action.step.bindings}"
        pre = " ".join(atom(k, v) for k, v in action.preconditions)
        adds = [atom(k, v) for k, v in action.effects]
        dels = [
            f"(not {atom(k, other)})"
            for k, v in action.effects
            for other in ground.values[k]
            if _typed(other) != _typed(v)
        ]
        lines += [
            f"  (:action {_pddl_name('a', index, label)}",
            "    :parameters ()",
            f"    :precondition (and {pre})",
            f"    :effect (and {' '.join(adds + dels)}))",
        ]
    lines.append(")")
    init = " ".join(atom(k, v) for k, v in ground.start.items())
    goal = " ".join(atom(k, v) for k, v in ground.goal)
    problem = (
        f"(define (problem wb-p0) (:domain wb-{_pddl_name('d', 0, name)})\n"
        f"  (:objects)\n  (:init {init})\n  (:goal (and {goal})))\n"
    )
    return "\n".join(lines) + "\n", problem, list(ground.actions)


def _pyperplan_task(domain_text: str, problem_text: str) -> Any:
    """Parse PDDL text and ground it with pyperplan's own parser and grounder."""
    from pyperplan import grounding
    from pyperplan.pddl.parser import Parser

    parser = Parser(None)
    parser.domInput = domain_text
    parser.probInput = problem_text
    pddl_domain = parser.parse_domain(read_from_file=False)
    pddl_problem = parser.parse_problem(pddl_domain, read_from_file=False)
    return grounding.ground(pddl_problem)


def _pyperplan_search(task: Any) -> Callable[[], Any]:
    from pyperplan.heuristics.relaxation import hMaxHeuristic
    from pyperplan.search.a_star import astar_search

    return lambda: astar_search(task, hMaxHeuristic(task))


def run_pyperplan(problem: BenchProblem, settings: Settings) -> Outcome:
    """pyperplan's A* (h^max) on a PDDL translation of the problem.

    GOAP problems: the exact ground STRIPS translation; the cost reported is warband's cost of
    pyperplan's plan. Blocks: the classic four-operator PDDL blocks world with the same start
    and goal; the cost is the plan's length, like warband's.
    """
    setup = time.perf_counter_ns()
    if problem.goap is not None:
        ground = ground_goap(problem.goap)
        domain_text, problem_text, actions = goap_to_pddl(ground, problem.name)
    else:
        assert problem.htn is not None
        size = sum(1 for _ in problem.htn.facts.facts("block"))
        if size > settings.pyperplan_max_blocks:
            raise NotApplicable(
                f"not run above {settings.pyperplan_max_blocks} blocks: its optimal A* takes "
                "seconds to minutes per plan there"
            )
        domain_text, problem_text = blocks_to_pddl(problem.htn.facts)
    task = _pyperplan_task(domain_text, problem_text)
    setup_ms = (time.perf_counter_ns() - setup) / 1e6
    search = _pyperplan_search(task)
    solution = search()
    if solution is None:
        raise RuntimeError("pyperplan found no plan")
    samples = time_runs(search, settings)
    names = [operator.name.strip("()").split() for operator in solution]
    if problem.htn is not None:
        moves = [(_PDDL_BLOCKS_OPS[name[0]], *name[1:]) for name in names]
        valid = _blocks_plan_valid(problem.htn.facts, moves)
        return Outcome(
            problem.name,
            "pyperplan",
            samples,
            len(moves),
            problem.optimal_cost,
            valid,
            setup_ms=setup_ms,
            notes="length-optimal",
        )
    steps = []
    for name in names:
        match = re.match(r"a(\d+)", name[0])
        if match is None:
            raise RuntimeError(f"unexpected operator name {name[0]!r}")
        steps.append(actions[int(match.group(1))].step)
    goap = problem.goap
    goal = goap.goal.ground(goap.context)
    valid = simulate(goap.start, steps, goal=goal, context=goap.context).ok
    return Outcome(
        problem.name,
        "pyperplan",
        samples,
        sum(step.cost for step in steps),
        problem.optimal_cost,
        valid,
        setup_ms=setup_ms,
        notes="length-optimal; cost = warband's cost of its plan",
    )


_PDDL_BLOCKS: Final = """(define (domain wb-blocks)
  (:requirements :strips)
  (:predicates (on ?b ?c) (on_table ?b) (clear ?b) (hand_empty) (holding ?b))
  (:action pickup
    :parameters (?b)
    :precondition (and (on_table ?b) (clear ?b) (hand_empty))
    :effect (and (holding ?b) (not (on_table ?b)) (not (clear ?b)) (not (hand_empty))))
  (:action unstack
    :parameters (?b ?c)
    :precondition (and (on ?b ?c) (clear ?b) (hand_empty))
    :effect (and (holding ?b) (clear ?c) (not (on ?b ?c)) (not (clear ?b)) (not (hand_empty))))
  (:action putdown
    :parameters (?b)
    :precondition (holding ?b)
    :effect (and (on_table ?b) (clear ?b) (hand_empty) (not (holding ?b))))
  (:action stack
    :parameters (?b ?c)
    :precondition (and (holding ?b) (clear ?c))
    :effect (and (on ?b ?c) (clear ?b) (hand_empty) (not (holding ?b)) (not (clear ?c)))))
"""
"""Warband's four blocks-world primitives: its declared effects, with the classic preconditions
(warband's primitives have none: its methods' conditions guard them)."""

_PDDL_BLOCKS_OPS: Final = {
    "pickup": "!pickup",
    "unstack": "!unstack",
    "putdown": "!putdown",
    "stack": "!stack",
}


def blocks_to_pddl(facts: FactDB) -> tuple[str, str]:
    """PDDL domain and problem text for a warband blocks-world fact base."""
    objects: list[str] = []
    init: list[str] = []
    goal: list[str] = []
    for fact in facts:
        name, args = fact[0], " ".join(str(arg) for arg in fact[1:])
        if name == "block":
            objects.append(args)
        elif name in ("on", "on_table", "clear", "hand_empty", "holding"):
            init.append(f"({name} {args})" if args else f"({name})")
        elif name == "goal_on":
            goal.append(f"(on {args})")
        elif name == "goal_on_table":
            goal.append(f"(on_table {args})")
    problem = (
        "(define (problem wb-blocks-p) (:domain wb-blocks)\n"
        f"  (:objects {' '.join(objects)})\n"
        f"  (:init {' '.join(init)})\n"
        f"  (:goal (and {' '.join(goal)})))\n"
    )
    return _PDDL_BLOCKS, problem


# --- goap (0.3.0) -----------------------------------------------------------------------------


def run_goap(problem: BenchProblem, settings: Settings) -> Outcome:
    """goap 0.3.0's ``Planner.plan(state, goal)`` matches the goal node by equality with a
    *complete* world state; warband's goals are partial, and giving it the final state of the
    optimal plan would hand it the answer. So no problem here can be stated for it."""
    if problem.goap is None:
        raise NotApplicable("goap is a GOAP library; blocks is an HTN problem")
    raise NotApplicable(
        "goap 0.3.0 wants the goal as a complete world state (matched by equality); "
        "warband's goals are partial conditions"
    )


# --- gtpyhop ----------------------------------------------------------------------------------


def _blocks_done(below: dict[str, str], goal: dict[str, str], block: str) -> bool:
    """Mirror of ``blocks.is_done``: ``block`` and everything under it are in goal position."""
    current = block
    while True:
        support = below[current]
        wanted = goal.get(current)
        if wanted == "table":
            return support == "table"
        if wanted is not None and wanted != support:
            return False
        if support == "table":
            return True
        current = support


def blocks_state(facts: FactDB, make_state: Callable[..., Any]) -> Any:
    """The gtpyhop-style state of a warband blocks-world fact base, built by ``make_state``."""
    below: dict[str, str] = {}
    clear: dict[str, bool] = {}
    goal: dict[str, str] = {}
    holding: str | bool = False
    for fact in facts:
        name, args = fact[0], [str(a) for a in fact[1:]]
        if name == "block":
            clear.setdefault(args[0], False)
        elif name == "on":
            below[args[0]] = args[1]
        elif name == "on_table":
            below[args[0]] = "table"
        elif name == "clear":
            clear[args[0]] = True
        elif name == "holding":
            below[args[0]], holding = "hand", args[0]
        elif name == "goal_on":
            goal[args[0]] = args[1]
        elif name == "goal_on_table":
            goal[args[0]] = "table"
    return make_state("start", below=below, clear=clear, holding=holding, goal=goal)


class _GtpyhopBlocks:
    """Warband's blocks-world HTN (``domains.blocks``) declared for gtpyhop.

    State variables: ``below[b]`` (a block, ``"table"`` or ``"hand"``), ``clear[b]``,
    ``holding`` (a block or False) and ``goal[b]`` (a block or ``"table"``). The actions are
    the four primitives with the same preconditions; the methods are the same branches in the
    same order, each taking the first binding in block-name order (warband takes the first
    binding in fact order; both strategies move each misplaced block once).
    """

    def __init__(self, gtpyhop: Any) -> None:
        self.gt = gtpyhop
        with contextlib.redirect_stdout(sys.stderr):
            self.domain = gtpyhop.Domain("warband_bench_blocks")
            gtpyhop.set_verbose_level(0)
        gtpyhop.declare_actions(pickup, unstack, putdown, stack)
        gtpyhop.declare_task_methods(
            "move_blocks", m_onto_final, m_final_table, m_misplaced_table, m_all_done
        )
        gtpyhop.declare_task_methods("move_onto", m_onto_from_table, m_onto_from_block)
        gtpyhop.declare_task_methods("move_to_table", m_table_from_block)

    def state(self, facts: FactDB) -> Any:
        return blocks_state(facts, self.gt.State)

    def plan(self, state: Any) -> Any:
        self.gt.set_current_domain(self.domain)
        return self.gt.find_plan(state, [("move_blocks",)])


def pickup(state: Any, b: str) -> Any:
    if state.below[b] == "table" and state.clear[b] and state.holding is False:
        state.below[b], state.clear[b], state.holding = "hand", False, b
        return state
    return False


def unstack(state: Any, b: str, c: str) -> Any:
    if state.below[b] == c and state.clear[b] and state.holding is False:
        state.below[b], state.clear[b], state.holding, state.clear[c] = "hand", False, b, True
        return state
    return False


def putdown(state: Any, b: str) -> Any:
    if state.holding == b:
        state.below[b], state.clear[b], state.holding = "table", True, False
        return state
    return False


def stack(state: Any, b: str, c: str) -> Any:
    if state.holding == b and state.clear[c]:
        state.below[b], state.clear[b], state.holding, state.clear[c] = c, True, False, False
        return state
    return False


def _misplaced(state: Any) -> list[str]:
    return [
        b
        for b in sorted(state.below)
        if state.clear[b] and not _blocks_done(state.below, state.goal, b)
    ]


def m_onto_final(state: Any) -> Any:
    for x in _misplaced(state):
        y = state.goal.get(x)
        if y not in (None, "table") and _blocks_done(state.below, state.goal, y) and state.clear[y]:
            return [("move_onto", x, y), ("move_blocks",)]
    return False


def m_final_table(state: Any) -> Any:
    for x in _misplaced(state):
        if state.goal.get(x) == "table":
            return [("move_to_table", x), ("move_blocks",)]
    return False


def m_misplaced_table(state: Any) -> Any:
    for x in _misplaced(state):
        if state.below[x] not in ("table", "hand"):
            return [("move_to_table", x), ("move_blocks",)]
    return False


def m_all_done(state: Any) -> Any:
    if all(_blocks_done(state.below, state.goal, b) for b in state.below):
        return []
    return False


def m_onto_from_table(state: Any, x: str, y: str) -> Any:
    return [("pickup", x), ("stack", x, y)] if state.below[x] == "table" else False


def m_onto_from_block(state: Any, x: str, y: str) -> Any:
    z = state.below[x]
    return [("unstack", x, z), ("stack", x, y)] if z not in ("table", "hand") else False


def m_table_from_block(state: Any, x: str) -> Any:
    z = state.below[x]
    return [("unstack", x, z), ("putdown", x)] if z not in ("table", "hand") else False


_GTPYHOP_ADAPTERS: dict[int, _GtpyhopBlocks] = {}
"""The blocks domain is declared once per gtpyhop module (gtpyhop keeps domains globally)."""

_GTPYHOP_NAMES: Final = {"pickup": "!pickup", "unstack": "!unstack", "putdown": "!putdown"}


def run_gtpyhop(problem: BenchProblem, settings: Settings, gtpyhop: Any) -> Outcome:
    """gtpyhop's ``find_plan`` (its default strategy) on the mirrored blocks-world domain."""
    if problem.htn is None:
        raise NotApplicable("gtpyhop is an HTN planner; this GOAP problem has no task network")
    adapter = _GTPYHOP_ADAPTERS.get(id(gtpyhop))
    if adapter is None:
        adapter = _GTPYHOP_ADAPTERS[id(gtpyhop)] = _GtpyhopBlocks(gtpyhop)
    state = adapter.state(problem.htn.facts)
    plan = adapter.plan(state)
    if not plan:
        raise RuntimeError("gtpyhop found no plan")
    samples = time_runs(lambda: adapter.plan(state), settings)
    moves = [(_GTPYHOP_NAMES.get(step[0], "!" + step[0]), *step[1:]) for step in plan]
    valid = _blocks_plan_valid(problem.htn.facts, moves)
    return Outcome(problem.name, "gtpyhop", samples, len(plan), problem.optimal_cost, valid)


def _blocks_plan_valid(facts: FactDB, moves: Sequence[tuple[str, ...]]) -> bool:
    """Replay blocks-world moves from ``facts`` with the mirrored actions; all goals met?"""
    adapter_state = blocks_state(facts, _PlainState)
    actions = {"!pickup": pickup, "!unstack": unstack, "!putdown": putdown, "!stack": stack}
    for name, *args in moves:
        if actions[name](adapter_state, *args) is False:
            return False
    below, goal = adapter_state.below, adapter_state.goal
    return all(_blocks_done(below, goal, b) for b in below)


class _PlainState:
    """A stand-in for ``gtpyhop.State`` (replays need no gtpyhop)."""

    def __init__(self, name: str, **values: Any) -> None:
        self.__dict__.update(values)


# --- orchestration ----------------------------------------------------------------------------


def load_peers(wanted: Sequence[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """Import the wanted peers: (modules that loaded, {peer: why it is skipped})."""
    loaded: dict[str, Any] = {}
    missing: dict[str, str] = {}
    for name in wanted:
        try:
            # gtpyhop prints a banner on import: keep stdout for the table and the JSON.
            with contextlib.redirect_stdout(sys.stderr):
                loaded[name] = importlib.import_module(name)
        except ModuleNotFoundError:
            missing[name] = _not_installed(name)
        except Exception as error:
            missing[name] = f"installed but does not import: {type(error).__name__}: {error}"
    return loaded, missing


def _not_installed(name: str) -> str:
    """Why a peer is skipped, with the install command that brings it (if one does)."""
    if name in IN_THE_EXTRA:
        return "not installed (pip install 'warband[peers]')"
    return (
        f"not installed ({name} is not in warband[peers]: pip install {name}, on a Python it "
        "supports; goap 0.3.0 does not import on 3.11 or later)"
    )


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def measure(problems: Sequence[BenchProblem], peers: dict[str, Any], settings: Settings) -> Results:
    results = Results()
    for problem in problems:
        _progress(f"{problem.name}: warband")
        mine = run_warband(problem, settings)
        results.outcomes.append(mine)
        for peer, module in peers.items():
            try:
                if peer == "pyperplan":
                    theirs = run_pyperplan(problem, settings)
                elif peer == "goap":
                    theirs = run_goap(problem, settings)
                else:
                    theirs = run_gtpyhop(problem, settings, module)
                _progress(f"{problem.name}: {peer}")
            except NotApplicable as reason:
                results.skipped.append(Skip(problem.name, peer, "n/a", str(reason)))
                continue
            except Exception as error:
                text = f"{type(error).__name__}: {error}"
                _progress(f"{problem.name}: {peer} failed: {text}")
                results.skipped.append(Skip(problem.name, peer, "failed", text))
                continue
            theirs.ratio = theirs.median_ms / mine.median_ms
            results.outcomes.append(theirs)
    return results


def chain_summary(results: Results, sizes: dict[str, str]) -> list[dict[str, Any]]:
    """Per chain size and planner: the median run and the worst run over every seed (warband's
    first plan included), and whether every plan was valid and optimal."""
    grouped: dict[tuple[str, str], list[Outcome]] = {}
    for outcome in results.outcomes:
        size = sizes.get(outcome.name)
        if size is not None:
            grouped.setdefault((size, outcome.planner), []).append(outcome)
    summary = []
    for (size, planner), outcomes in grouped.items():
        samples = [sample for outcome in outcomes for sample in outcome.samples_ns]
        worst = max(samples) / 1e6
        firsts = [o.first_ms for o in outcomes if o.first_ms is not None]
        summary.append(
            {
                "size": size,
                "planner": planner,
                "seeds": len(outcomes),
                "median_ms": round(statistics.median(samples) / 1e6, 6),
                "worst_ms": round(max([worst, *firsts]), 6),
                "optimal": all(o.optimal and o.valid for o in outcomes),
            }
        )
    return summary


def build_report(
    results: Results,
    settings: Settings,
    peers: dict[str, Any],
    missing: dict[str, str],
    sizes: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The JSON object: ``problems`` (the contract), skipped cases, summary and versions."""
    sizes = sizes or {}
    entries = []
    for outcome in results.outcomes:
        entry: dict[str, Any] = {
            "name": outcome.name,
            "planner": outcome.planner,
            "median_ms": round(outcome.median_ms, 6),
            "p99_ms": round(outcome.p99_ms, 6),
            "cost": float(outcome.cost),
            "optimal_cost": float(outcome.optimal_cost),
            "optimal": outcome.optimal,
            "valid": outcome.valid,
            "runs": len(outcome.samples_ns),
        }
        if outcome.ratio is not None:
            entry["ratio"] = round(outcome.ratio, 4)
        if outcome.setup_ms is not None:
            entry["setup_ms"] = round(outcome.setup_ms, 3)
        if outcome.first_ms is not None:
            entry["first_ms"] = round(outcome.first_ms, 3)
        if outcome.notes:
            entry["notes"] = outcome.notes
        entries.append(entry)
    mine = [o for o in results.outcomes if o.planner == WARBAND]
    theirs = [o for o in results.outcomes if o.planner != WARBAND]
    return {
        "problems": entries,
        "chains": chain_summary(results, sizes),
        "skipped": [vars(skip) for skip in results.skipped],
        "peers_missing": missing,
        "peer_versions": {name: _version(name) for name in PEERS},
        "peers_run": sorted(peers),
        "warband_all_optimal": all(o.optimal and o.valid for o in mine),
        "warband_faster_than_every_peer": all(o.ratio is not None and o.ratio > 1 for o in theirs),
        "pyperplan_search": f"{PYPERPLAN_SEARCH} + {PYPERPLAN_HEURISTIC}",
        "repeats": settings.repeats,
        "min_time_s": settings.min_time,
        "quick": settings.quick,
        "warband_version": warband.__version__ if hasattr(warband, "__version__") else None,
        "python": platform.python_version(),
    }


def render_table(report: dict[str, Any]) -> str:
    """The readable table: one line per problem and planner, then skips and the verdict."""
    header = (
        f"{'problem':<22} {'planner':<10} {'median ms':>10} {'p99 ms':>10} "
        f"{'cost':>6} {'optimal':>8}  {'x warband':>9}  note"
    )
    lines = [header, "-" * len(header)]
    for entry in report["problems"]:
        flags = []
        if not entry["optimal"]:
            flags.append("NOT OPTIMAL")
        if not entry["valid"]:
            flags.append("INVALID PLAN")
        ratio = f"{entry['ratio']:.2f}" if "ratio" in entry else ""
        lines.append(
            f"{entry['name']:<22} {entry['planner']:<10} {entry['median_ms']:>10.3f} "
            f"{entry['p99_ms']:>10.3f} {entry['cost']:>6g} {entry['optimal_cost']:>8g}  "
            f"{ratio:>9}  {' '.join(flags)}"
        )
    if report["chains"]:
        lines += ["", _chains_table(report["chains"])]
    lines.append("")
    lines.append("x warband: the peer's median over warband's on the same problem (> 1: slower).")
    if report["peers_run"]:
        lines.append(
            f"pyperplan: {report['pyperplan_search']}, optimal in plan length (it ignores "
            "costs); on GOAP problems its cost is warband's cost of its plan; parsing and "
            "grounding untimed."
        )
    for peer, reason in report["peers_missing"].items():
        lines.append(f"peer {peer} skipped: {reason}")
    by_reason: dict[tuple[str, str, str], list[str]] = {}
    for skip in report["skipped"]:
        by_reason.setdefault((skip["planner"], skip["status"], skip["reason"]), []).append(
            skip["name"]
        )
    for (planner, status, reason), names in by_reason.items():
        lines.append(f"{planner} {status} on {len(names)} problem(s) ({_names(names)}): {reason}")
    optimal = "yes" if report["warband_all_optimal"] else "NO"
    lines.append(f"warband optimal on every problem: {optimal}")
    if report["peers_run"]:
        faster = "yes" if report["warband_faster_than_every_peer"] else "NO"
        lines.append(f"warband faster than every peer on every problem it ran: {faster}")
    return "\n".join(lines)


def _chains_table(summary: list[dict[str, Any]]) -> str:
    header = (
        f"{'chains size':<12} {'planner':<10} {'seeds':>5} {'median ms':>10} {'worst ms':>10}"
        "  optimal"
    )
    lines = [header, "-" * len(header)]
    for row in summary:
        lines.append(
            f"{row['size']:<12} {row['planner']:<10} {row['seeds']:>5} {row['median_ms']:>10.3f} "
            f"{row['worst_ms']:>10.3f}  {'yes' if row['optimal'] else 'NO'}"
        )
    lines.append(
        "worst: the slowest run over the seeds; warband's includes its first plan on a fresh "
        "action set. optimal: every plan replays and costs the known optimum."
    )
    return "\n".join(lines)


def _names(names: list[str]) -> str:
    return ", ".join(names) if len(names) <= 3 else f"{names[0]} ... {names[-1]}"


def _progress(text: str) -> None:
    print(f"[bench planning] {text}", file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    """Run the benchmark; 0 on success, 1 if warband's planner failed on a problem."""
    args = _parser().parse_args(argv)
    base = QUICK_SETTINGS if args.quick else DEFAULT_SETTINGS
    settings = Settings(
        repeats=base.repeats if args.repeats is None else args.repeats,
        min_time=base.min_time if args.min_time is None else args.min_time,
        max_time=base.max_time,
        quick=args.quick,
        pyperplan_max_blocks=base.pyperplan_max_blocks,
    )
    if settings.repeats < 1 or settings.min_time < 0:
        raise SystemExit("--repeats must be at least 1 and --min-time at least 0")
    wanted = [] if args.no_peers else list(PEERS)
    peers, missing = load_peers(wanted)
    for peer, reason in missing.items():
        _progress(f"peer {peer} skipped: {reason}")
    problems = build_problems(args.quick)
    try:
        results = measure(problems, peers, settings)
    except BenchmarkError as error:
        print(f"planning bench failed: {error}", file=sys.stderr)
        return 1
    sizes = {problem.name: problem.size for problem in problems if problem.size is not None}
    report = build_report(results, settings, peers, missing, sizes)
    print(render_table(report))
    if args.json:
        print(json.dumps(report, sort_keys=True))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="warband bench planning",
        description="Plan time (median, p99) and plan cost of warband's GOAP and HTN planners "
        "on the F.E.A.R., pirate, synthetic, crafting-chain and blocks-world problems, next to "
        "the optimal "
        "cost and, where installed, the peers gtpyhop, pyperplan and goap.",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument("--quick", action="store_true", help="few problems and runs (smoke test)")
    parser.add_argument("--no-peers", action="store_true", help="run warband only")
    parser.add_argument("--repeats", type=int, metavar="N", help="timed runs per case, at least")
    parser.add_argument(
        "--min-time", type=float, metavar="S", help="seconds of timed runs per case, at least"
    )
    return parser


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
