"""Explaining a GOAP search: the search tree as indented text, a JSON-ready dict, and Graphviz DOT.

The tree is the one the regressive search expanded (Boeda, Fig. 6): each node lists the
conditions already true in the start state ("satisfied") and those still to be made true
("open"); each edge is an action with its bindings, and lists the parent's conditions it
"achieved". The path of the returned plan is marked, and cooperation actions (conditions another
agent is asked to make hold) are marked apart, as are Boeda's cooperable nodes (Fig. 4): nodes
holding conditions tagged ``achievable_by_any_agent``, where a cooperation action may start.
Searches record the tree only when asked (``record_tree=True``), so plain planning pays nothing
for it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..search import AStar
from .model import GoapStep, Node
from .state import Condition, WorldState, sorted_conditions


@dataclass(frozen=True)
class SearchTreeNode:
    """One expanded node of a GOAP search."""

    id: int
    """Expansion order, 0 for the goal node."""
    parent: int | None
    """The node this one was regressed from, None for the goal node."""
    step: GoapStep | None
    """The action (with bindings) on the edge from the parent."""
    achieved: tuple[Condition, ...]
    """The parent's conditions that this step's effects satisfy."""
    satisfied: tuple[Condition, ...]
    """Conditions of this node that already hold in the start state."""
    open: tuple[Condition, ...]
    """Conditions of this node that earlier actions must still make hold."""
    g: float
    """Cost of the actions from the goal down to this node."""
    h: float
    """The heuristic estimate for the rest."""
    on_path: bool
    """True when the node lies on the path of the returned plan."""

    @property
    def cooperation(self) -> bool:
        """True when the edge into this node is a cooperation action."""
        return self.step is not None and self.step.cooperation

    @property
    def cooperable(self) -> tuple[Condition, ...]:
        """The conditions of this node tagged achievable_by_any_agent: those another agent
        could be asked to make hold here (Boeda's cooperable node state when not empty)."""
        return sorted_conditions(
            c for c in (*self.satisfied, *self.open) if c.achievable_by_any_agent
        )


@dataclass(frozen=True)
class SearchTree:
    """The expanded nodes of a GOAP search, the goal, and the chosen path (node ids)."""

    goal: tuple[Condition, ...]
    nodes: tuple[SearchTreeNode, ...]
    path: tuple[int, ...]
    """Node ids from the goal node to the node the start state satisfies; empty if no plan."""

    def node(self, node_id: int) -> SearchTreeNode:
        """The node with id ``node_id``."""
        return self.nodes[node_id]

    def children(self, node_id: int) -> tuple[SearchTreeNode, ...]:
        """The expanded children of a node, in expansion order."""
        return tuple(node for node in self.nodes if node.parent == node_id)

    def text(self) -> str:
        """The tree as indented text (see :func:`goap_tree_text`)."""
        return goap_tree_text(self)

    def to_dict(self) -> dict[str, Any]:
        """The tree as a JSON-serialisable dict (see :func:`goap_tree_dict`)."""
        return goap_tree_dict(self)

    def to_dot(self) -> str:
        """The tree as Graphviz DOT source (see :func:`goap_tree_dot`)."""
        return goap_tree_dot(self)


def _conditions_text(conditions: tuple[Condition, ...]) -> str:
    return "; ".join(_condition_text(c) for c in conditions) or "-"


def _condition_text(condition: Condition) -> str:
    return f"{condition} [any agent]" if condition.achievable_by_any_agent else str(condition)


def _edge_text(step: GoapStep) -> str:
    mark = "[cooperation] " if step.cooperation else ""
    return f"{mark}{step} cost={step.cost:g}"


def goap_tree_text(tree: SearchTree) -> str:
    """An indented tree, children under parents in expansion order.

    ``*`` marks nodes on the chosen path, ``.`` the others; ``[cooperation]`` marks an edge
    where another agent is asked to make conditions hold; ``[cooperable]`` marks a node holding
    conditions tagged ``[any agent]``, where such an edge may start. A summary after the tree
    lists the cooperable nodes and what the chosen plan asks another agent for.
    """
    goal = _conditions_text(tree.goal)
    lines = [
        f"GOAP search tree for: {goal}",
        "legend: * chosen path, . other expanded node; edges read goal-first (backwards)",
    ]
    cooperable = cooperable_nodes(tree)
    if cooperable:
        lines.append(
            "        [cooperable] another agent could help at this node; "
            "[cooperation] the edge that asks it"
        )
    children: dict[int | None, list[SearchTreeNode]] = {}
    for node in tree.nodes:
        children.setdefault(node.parent, []).append(node)
    stack = [(node, 0) for node in reversed(children.get(None, []))]
    while stack:
        node, depth = stack.pop()
        lines.extend(_node_lines(node, depth, node.id in cooperable))
        stack.extend((child, depth + 1) for child in reversed(children.get(node.id, [])))
    if not tree.path:
        lines.append("no plan: no node is satisfied by the start state")
    lines.extend(_cooperation_summary(tree, cooperable))
    return "\n".join(lines)


def cooperable_nodes(tree: SearchTree) -> tuple[int, ...]:
    """Ids of Boeda's cooperable nodes: nodes of the solo search (no cooperation edge between
    them and the goal) holding conditions tagged achievable_by_any_agent."""
    asked: set[int] = set()
    for node in tree.nodes:  # parents are expanded, hence numbered, before their children
        if node.cooperation or (node.parent is not None and node.parent in asked):
            asked.add(node.id)
    return tuple(node.id for node in tree.nodes if node.cooperable and node.id not in asked)


def _cooperation_summary(tree: SearchTree, cooperable: tuple[int, ...]) -> list[str]:
    if not cooperable:
        return []
    lines = [f"cooperable nodes: {' '.join(f'#{node_id}' for node_id in cooperable)}"]
    asked = [tree.node(i) for i in tree.path if tree.node(i).cooperation]
    for node in asked:
        assert node.step is not None
        request = _conditions_text(node.achieved)
        lines.append(
            f"chosen cooperation: #{node.parent} -> #{node.id} asks another agent for "
            f"{request} (cost {node.step.cost:g})"
        )
    if not asked:
        lines.append("chosen plan: no cooperation")
    return lines


def _node_lines(node: SearchTreeNode, depth: int, cooperable: bool) -> list[str]:
    pad = "  " * depth
    mark = "*" if node.on_path else "."
    head = f"{pad}{mark} #{node.id}"
    if node.step is not None:
        head += f" <- {_edge_text(node.step)}"
    head += f"  g={node.g:g} h={node.h:g}"
    if cooperable:
        head += " [cooperable]"
    lines = [head]
    if node.step is not None:
        lines.append(f"{pad}    achieved:  {_conditions_text(node.achieved)}")
    lines.append(f"{pad}    satisfied: {_conditions_text(node.satisfied)}")
    lines.append(f"{pad}    open:      {_conditions_text(node.open)}")
    return lines


def _condition_dict(condition: Condition) -> dict[str, Any]:
    return {
        "text": str(condition),
        "key": condition.key.name,
        "subject": condition.key.subject,
        "op": "!=" if condition.negated else "==",
        "value": condition.value,
        "achievable_by_any_agent": condition.achievable_by_any_agent,
    }


def _step_dict(step: GoapStep) -> dict[str, Any]:
    return {
        "name": step.name,
        "bindings": dict(step.bindings),
        "cost": step.cost,
        "cooperation": step.cooperation,
        "text": str(step),
    }


def goap_tree_dict(tree: SearchTree) -> dict[str, Any]:
    """The tree as plain dicts, lists, strings and numbers (``json.dumps`` accepts it).

    ``plan`` lists the chosen path's steps in execution order (the reverse of the path);
    a node's ``cooperable`` lists its tagged conditions when it is a cooperable node (see
    :func:`cooperable_nodes`), else nothing.
    """
    on_path_steps = [tree.node(i).step for i in tree.path]
    plan = [_step_dict(step) for step in reversed(on_path_steps) if step is not None]
    cooperable = cooperable_nodes(tree)
    return {
        "goal": [_condition_dict(c) for c in tree.goal],
        "path": list(tree.path),
        "plan": plan,
        "nodes": [
            {
                "id": node.id,
                "parent": node.parent,
                "action": None if node.step is None else _step_dict(node.step),
                "achieved": [_condition_dict(c) for c in node.achieved],
                "satisfied": [_condition_dict(c) for c in node.satisfied],
                "open": [_condition_dict(c) for c in node.open],
                "g": node.g,
                "h": node.h,
                "on_path": node.on_path,
                "cooperation": node.cooperation,
                "cooperable": [
                    _condition_dict(c) for c in (node.cooperable if node.id in cooperable else ())
                ],
            }
            for node in tree.nodes
        ],
    }


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _dot_label(lines: list[str]) -> str:
    return "".join(_dot_escape(line) + "\\l" for line in lines)


def goap_tree_dot(tree: SearchTree) -> str:
    """Graphviz DOT source for the tree (no graphviz needed to produce it).

    The chosen path is drawn red and bold; cooperation edges are blue and dashed.
    """
    goal = _dot_escape(_conditions_text(tree.goal))
    lines = [
        "digraph goap_search {",
        f'  label="GOAP search tree for: {goal}";',
        "  rankdir=TB;",
        '  node [shape=box, fontname="monospace", fontsize=10];',
    ]
    for node in tree.nodes:
        body = [f"#{node.id}  g={node.g:g} h={node.h:g}"]
        if node.step is not None:
            body.append(f"achieved: {_conditions_text(node.achieved)}")
        body.append(f"satisfied: {_conditions_text(node.satisfied)}")
        body.append(f"open: {_conditions_text(node.open)}")
        style = ', color="red", penwidth=2' if node.on_path else ""
        lines.append(f'  n{node.id} [label="{_dot_label(body)}"{style}];')
    for node in tree.nodes:
        if node.parent is None or node.step is None:
            continue
        attributes = [f'label="{_dot_escape(_edge_text(node.step))}"']
        if node.cooperation:
            attributes += ['style="dashed"', 'color="blue"', 'fontcolor="blue"']
        if node.on_path:
            attributes += ["penwidth=2"] + ([] if node.cooperation else ['color="red"'])
        lines.append(f"  n{node.parent} -> n{node.id} [{', '.join(attributes)}];")
    lines.append("}")
    return "\n".join(lines)


# --- building the tree from a finished search ---


def achieved_by(step: GoapStep, parent: Iterable[Condition]) -> tuple[Condition, ...]:
    """The conditions of ``parent`` that ``step``'s effects satisfy."""
    assigned = {effect.key: effect.value for effect in step.effects}
    return sorted_conditions(c for c in parent if c.key in assigned and c.accepts(assigned[c.key]))


@dataclass(frozen=True)
class TreeEntry:
    """One expanded node, as the tree builder needs it."""

    node: Hashable
    conditions: Node
    parent: Hashable | None
    step: GoapStep | None
    g: float
    h: float


def build_tree(
    goal: tuple[Condition, ...],
    start: WorldState,
    entries: Sequence[TreeEntry],
    path: Sequence[Hashable],
) -> SearchTree:
    """Number the expanded nodes in expansion order and mark the ones on ``path``."""
    ids = {entry.node: index for index, entry in enumerate(entries)}
    conditions = {entry.node: entry.conditions for entry in entries}
    on_path = set(path)
    nodes = []
    for index, entry in enumerate(entries):
        parent_conditions = conditions.get(entry.parent, frozenset())
        ordered = sorted_conditions(entry.conditions)
        nodes.append(
            SearchTreeNode(
                id=index,
                parent=None if entry.parent is None else ids[entry.parent],
                step=entry.step,
                achieved=achieved_by(entry.step, parent_conditions) if entry.step else (),
                satisfied=tuple(c for c in ordered if c.holds(start)),
                open=tuple(c for c in ordered if not c.holds(start)),
                g=entry.g,
                h=entry.h,
                on_path=entry.node in on_path,
            )
        )
    return SearchTree(goal=goal, nodes=tuple(nodes), path=tuple(ids[n] for n in path if n in ids))


def tree_entries(
    core: AStar[Any, GoapStep],
    *,
    conditions_of: Callable[[Any], Node] | None = None,
    origins: Mapping[Any, tuple[Hashable, GoapStep]] | None = None,
) -> list[TreeEntry]:
    """The expanded nodes of ``core`` as tree entries, in expansion order.

    ``conditions_of`` maps a node to its conditions when nodes are not plain condition sets;
    ``origins`` gives a parent and edge for root nodes that continue another search's node.
    """
    entries = []
    for node in core.expanded:
        record = core.records[node]
        parent, step = record.parent, record.edge
        if parent is None and origins and node in origins:
            parent, step = origins[node]
        conditions = conditions_of(node) if conditions_of is not None else node
        entries.append(TreeEntry(node, conditions, parent, step, record.g, record.h))
    return entries
