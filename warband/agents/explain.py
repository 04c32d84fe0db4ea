"""``warband explain``: an agent's memory, plan and decision at a tick, from a run's logs alone.

Pittman's snapshot debugger, for a whole team. Every decision an agent makes is one
``agent.plan`` log event (:mod:`warband.agents.agent`); with ``--log`` those that start a plan
(new, replaced, dropped, none) also carry the memory the decision saw and the tree behind the
plan: an HTN decomposition, or a GOAP search tree (a cooperative agent's shows Boeda's
cooperable nodes and the cooperation it chose). To explain an agent at tick N, this reads the
last such event at or before N, and the decisions since (kept plans, replans), and prints them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._paths import wrong_kind
from ..exceptions import ConfigurationError
from ..messaging.trace_view import log_files

PLAN_EVENT = "agent.plan"
GOAP_TREE_TITLE = "GOAP search tree"
"""How a GOAP search tree's text begins (:func:`~warband.planning.goap_tree_text`)."""


@dataclass
class Explanation:
    """What ``warband explain`` knows of one agent at one tick."""

    agent: str
    tick: int
    decided: dict[str, Any] | None
    """The last decision at or before ``tick`` that carried the agent's memory."""
    since: list[dict[str, Any]] = field(default_factory=list)
    """The decisions after it, up to ``tick`` (kept plans, mostly)."""
    skipped: list[str] = field(default_factory=list)
    """What of the logs was not read (``file:line: why``): said at the end of :meth:`text`."""

    def text(self) -> str:
        """The explanation as a person reads it."""
        if self.decided is None:
            missing = f"{self.agent}: no decision with its memory at or before tick {self.tick}"
            return "\n".join([missing, *self._skipped_lines()])
        decided = self.decided
        lines = [
            f"{self.agent} at tick {self.tick} "
            f"(plan decided at tick {decided.get('tick')}: {decided.get('decision')}, "
            f"{decided.get('reason')})",
            "",
            "plan:",
        ]
        plan = decided.get("plan") or []
        lines += [f"  {step}" for step in plan] or ["  (none)"]
        if decided.get("label"):
            lines.append(f"  from {decided['label']}")
        for later in self.since:
            lines.append(
                f"  tick {later.get('tick')}: {later.get('decision')} ({later.get('reason')})"
            )
        lines += ["", "memory:"]
        for source, facts in (decided.get("memory") or {}).items():
            lines.append(f"  [{source}]")
            lines += [f"    ({' '.join(_show(v) for v in fact)})" for fact in facts]
        tree = decided.get("tree")
        if tree:
            goap = str(tree).startswith(GOAP_TREE_TITLE)
            lines += ["", "search tree:" if goap else "decomposition:"]
            lines += [f"  {line}" for line in str(tree).rstrip("\n").splitlines()]
        return "\n".join(lines + self._skipped_lines())

    def _skipped_lines(self) -> list[str]:
        if not self.skipped:
            return []
        shown = "; ".join(self.skipped[:3]) + (" ..." if len(self.skipped) > 3 else "")
        return ["", f"skipped as malformed: {len(self.skipped)} ({shown})"]


def explain(log_dir: Path, agent: str, tick: int) -> Explanation:
    """Explain ``agent`` at ``tick`` from the ``*.jsonl`` logs in ``log_dir``."""
    skipped: list[str] = []
    decisions = _decisions(log_dir, agent, skipped)
    if not decisions:
        raise ConfigurationError(
            f"no {PLAN_EVENT} events of agent {agent!r} in {str(log_dir)!r}; is it an agent "
            "of warband.agents, and did the run have --log?"
        )
    explanation = explain_decisions(decisions, agent, tick)
    explanation.skipped = skipped
    return explanation


def explain_decisions(decisions: list[dict[str, Any]], agent: str, tick: int) -> Explanation:
    """Explain ``agent`` at ``tick`` from its ``agent.plan`` events, already read and sorted by
    tick (what ``warband view`` holds in memory); raises :class:`ConfigurationError` when the
    agent decided nothing at or before ``tick``."""
    # A decision without an integer tick (a hand-edited or foreign log) cannot be placed.
    decisions = [d for d in decisions if type(d.get("tick")) is int]
    if not decisions:
        raise ConfigurationError(f"agent {agent!r} made no decision in this run")
    known = sorted({d["tick"] for d in decisions})
    upto = [d for d in decisions if d["tick"] <= tick]
    with_memory = [d for d in upto if "memory" in d]
    decided = with_memory[-1] if with_memory else None
    since = upto[upto.index(decided) + 1 :] if decided is not None else upto
    if decided is None and not upto:
        raise ConfigurationError(
            f"agent {agent!r} made no decision at or before tick {tick}; its decisions are at "
            f"ticks {known[0]}..{known[-1]}"
        )
    return Explanation(agent, tick, decided, since)


def _decisions(log_dir: Path, agent: str, skipped: list[str]) -> list[dict[str, Any]]:
    """``agent``'s ``agent.plan`` events, sorted by tick; a line that is not one (not JSON, a
    tick that is not an integer) or a ``*.jsonl`` that is not a file is said in ``skipped``."""
    wrong = wrong_kind(log_dir, "directory")
    if wrong is not None:
        raise ConfigurationError(
            f"log directory {str(log_dir)!r} {wrong}; pass the --log DIR of a run"
        )
    found: list[dict[str, Any]] = []
    for file in log_files(log_dir, skipped):
        lines = file.read_text(errors="replace").splitlines()
        for number, line in enumerate(lines, 1):
            if PLAN_EVENT not in line:
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                skipped.append(f"{file.name}:{number}: not JSON")
                continue
            if not (
                isinstance(event, dict)
                and event.get("event") == PLAN_EVENT
                and event.get("agent") == agent
            ):
                continue
            if type(event.get("tick")) is not int:
                skipped.append(
                    f"{file.name}:{number}: tick {event.get('tick')!r} is not an integer"
                )
                continue
            found.append(event)
    found.sort(key=lambda e: (e["tick"], str(e.get("timestamp", ""))))
    return found


def _show(value: object) -> str:
    return "nil" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
