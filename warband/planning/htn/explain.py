"""Explaining an HTN plan: its decomposition tree as text (Killzone 3, Listing 29.2) and as a dict.

The tree alternates task nodes and branch nodes. Under each decomposed compound task come the
branches of its method that were tried and failed (``-``), then the chosen one (``+``) with the
variables its precondition bound and its subtasks. Primitive tasks are leaves. For example::

    behave
      + branch_mp_behave
        + (do_behave_on_foot_mp)
          - branch_self_preservation
          + branch_medic_revive
            (?target = Soldier:TimV)
            (!begin_plan medic_revive Soldier:TimV)

The planner always keeps the choices the tree is built from (they are also how the plan's branch
path is computed), so every plan can explain itself at no extra cost. Why an earlier branch
failed (its precondition, or every binding's decomposition) is recorded only when planning with
``explain=True``; it costs a small tuple per decomposed task: on blocks-world problems of 10 to
100 blocks the difference was within the run-to-run noise (under 6 per cent either way).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ...values import Value, format_value
from .planner import BranchFailure, Choice, HtnDomain, HtnPlan, HtnResult, Task

Mark = Literal["+", "-"]


@dataclass(frozen=True, slots=True)
class BranchNode:
    """A branch tried for a compound task: chosen (``+``) or failed (``-``)."""

    index: int
    name: str
    mark: Mark
    reason: str | None
    """Why a failed branch failed, when recorded (see :class:`.BranchFailure`)."""
    bindings: tuple[tuple[str, Value], ...]
    """Variables the chosen branch's precondition bound."""
    subtasks: tuple[TaskNode, ...]


@dataclass(frozen=True, slots=True)
class TaskNode:
    """A task of the decomposition; ``mark`` is ``+`` when decomposed, ``-`` when every branch
    failed, None for primitives and for tasks left unexpanded (after a continuation)."""

    task: Task
    mark: Mark | None
    branches: tuple[BranchNode, ...] = ()

    @property
    def chosen(self) -> BranchNode | None:
        """The ``+`` branch, if any."""
        return next((b for b in self.branches if b.mark == "+"), None)

    def walk(self) -> Iterator[TaskNode]:
        """This node and every task node below it, depth first."""
        yield self
        for branch in self.branches:
            for sub in branch.subtasks:
                yield from sub.walk()


def decomposition_tree(outcome: HtnResult | HtnPlan, domain: HtnDomain) -> TaskNode:
    """The decomposition tree of a plan, a ``continue`` result (down to the continuation
    branch) or a failed result (the root's branches, all ``-``)."""
    if isinstance(outcome, HtnPlan):
        root, choices = outcome.root, outcome.choices
    else:
        root, choices = outcome.root, outcome.choices
        if outcome.status == "failed":
            failed = _failed_nodes(root, outcome.root_failures, None, domain)
            return TaskNode(root, "-", failed)
    return _build(root, iter(choices), domain)


def _build(task: Task, choices: Iterator[Choice], domain: HtnDomain) -> TaskNode:
    if task.is_primitive:
        return TaskNode(task, None)
    choice = next(choices, None)
    if choice is None:
        return TaskNode(task, None)
    failed = _failed_nodes(task, choice.failures, choice.index, domain)
    subtasks = tuple(_build(sub, choices, domain) for sub in choice.subtasks)
    chosen = BranchNode(choice.index, choice.branch, "+", None, choice.bindings, subtasks)
    return TaskNode(task, "+", (*failed, chosen))


def _failed_nodes(
    task: Task,
    failures: tuple[BranchFailure, ...] | None,
    chosen: int | None,
    domain: HtnDomain,
) -> tuple[BranchNode, ...]:
    if failures is not None:
        return tuple([_failed_branch(f.index, f.name, f.reason) for f in failures])
    # Without explain, every branch above the chosen one was tried and failed (ordered search).
    branches = domain.methods[task.name].branches
    upto = len(branches) if chosen is None else chosen
    return tuple([_failed_branch(i, branches[i].name, None) for i in range(upto)])


@functools.lru_cache(maxsize=4096)
def _failed_branch(index: int, name: str, reason: str | None) -> BranchNode:
    # A node is immutable, and a bot's tree repeats the same failed branches at every new plan
    # (most of its nodes): made once, they cost a tenth (a frozen dataclass is slow to make).
    return BranchNode(index, name, "-", reason, (), ())


def htn_tree_text(tree: TaskNode, *, indent: str = "  ", reasons: bool = True) -> str:
    """The tree in the shape of Listing 29.2: one line per task, branch and binding.

    The root is written bare when it has no arguments (``behave``); compound tasks below it
    carry their mark (``+ (wield_weapon gun)``); failed branches may end with ``; reason``.
    """
    lines = [_root_line(tree.task, tree.mark)]
    _branch_lines(tree, 1, indent, reasons, lines)
    return "\n".join(lines) + "\n"


def htn_plan_text(
    plan: HtnPlan, domain: HtnDomain, *, indent: str = "  ", reasons: bool = True
) -> str:
    """``htn_tree_text(decomposition_tree(plan, domain))``, written straight from the plan's
    choices without making the tree's nodes: what an agent logs with each new plan, for about
    a third fewer instructions."""
    lines: list[str] = []
    choices = iter(plan.choices)
    choice = None if plan.root.is_primitive else next(choices, None)
    lines.append(_root_line(plan.root, "+" if choice is not None else None))
    if choice is not None:
        _choice_lines(plan.root, choice, choices, domain, 1, indent, reasons, lines)
    return "\n".join(lines) + "\n"


def _root_line(task: Task, mark: Mark | None) -> str:
    root = task.name if not task.args else str(task)
    return f"- {root}" if mark == "-" else root


def _task_line(pad: str, mark: Mark | None, task: Task) -> str:
    return f"{pad}{mark} {task}" if mark else f"{pad}{task}"


def _branch_line(pad: str, mark: Mark, name: str, reason: str | None) -> str:
    return f"{pad}{mark} {name}  ; {reason}" if reason else f"{pad}{mark} {name}"


def _binding_line(pad: str, var: str, value: Value) -> str:
    return f"{pad}(?{var} = {format_value(value)})"


def _task_lines(node: TaskNode, depth: int, indent: str, reasons: bool, out: list[str]) -> None:
    out.append(_task_line(indent * depth, node.mark, node.task))
    _branch_lines(node, depth + 1, indent, reasons, out)


def _branch_lines(node: TaskNode, depth: int, indent: str, reasons: bool, out: list[str]) -> None:
    pad = indent * depth
    for branch in node.branches:
        out.append(_branch_line(pad, branch.mark, branch.name, branch.reason if reasons else None))
        for var, value in branch.bindings:
            out.append(_binding_line(pad + indent, var, value))
        for sub in branch.subtasks:
            _task_lines(sub, depth + 1, indent, reasons, out)


def _choice_lines(
    task: Task,
    choice: Choice,
    choices: Iterator[Choice],
    domain: HtnDomain,
    depth: int,
    indent: str,
    reasons: bool,
    out: list[str],
) -> None:
    """The lines _branch_lines writes for the node _build makes of ``task`` and ``choice``:
    the same walk over the plan's choices, in the same order."""
    pad = indent * depth
    for failed in _failed_nodes(task, choice.failures, choice.index, domain):
        out.append(_branch_line(pad, "-", failed.name, failed.reason if reasons else None))
    out.append(_branch_line(pad, "+", choice.branch, None))
    for var, value in choice.bindings:
        out.append(_binding_line(pad + indent, var, value))
    sub_pad = pad + indent
    for sub in choice.subtasks:
        sub_choice = None if sub.is_primitive else next(choices, None)
        out.append(_task_line(sub_pad, "+" if sub_choice is not None else None, sub))
        if sub_choice is not None:
            _choice_lines(sub, sub_choice, choices, domain, depth + 2, indent, reasons, out)


def htn_tree_dict(tree: TaskNode) -> dict[str, Any]:
    """The tree as a JSON-ready dict: ``{"task", "mark", "branches": [{"index", "name",
    "mark", "reason", "bindings", "subtasks": [...]}]}``."""
    return {
        "task": str(tree.task),
        "mark": tree.mark,
        "branches": [
            {
                "index": b.index,
                "name": b.name,
                "mark": b.mark,
                "reason": b.reason,
                "bindings": dict(b.bindings),
                "subtasks": [htn_tree_dict(sub) for sub in b.subtasks],
            }
            for b in tree.branches
        ],
    }
