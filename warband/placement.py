"""Placing a run's agents in worker processes (``warband run --workers N``).

Two ways, both deterministic (the same scenario, parameters and N give the same workers):

- **groups**, when the scenario declares them (``@scenario.placement``): each group is a set of
  agents that should share a process (a team, a squad and its bots). With at least as many
  groups as workers, every group goes whole to the worker with the fewest agents so far,
  largest group first. With fewer groups than workers, each group gets workers of its own in
  proportion to its size (every group one, each spare one to the group with the most agents
  per worker), and its agents are dealt round-robin over them: no worker mixes two groups.
  Agents no group names form one more group.
- **round-robin** otherwise: agent *i* (in the order the scenario builds them) goes to worker
  *i mod N*.

Where an agent runs changes no message: a lockstep run sends the same messages in one process,
in workers and in one process per agent.
"""

from __future__ import annotations

from collections.abc import Sequence

from .exceptions import ConfigurationError


def place(
    agents: Sequence[str], workers: int, groups: Sequence[Sequence[str]] | None = None
) -> list[list[str]]:
    """The agents of each of ``workers`` worker processes (none empty: fewer workers when there
    are fewer agents, or fewer groups to keep whole than workers).

    Raises :class:`ConfigurationError` for fewer than one worker, or ``groups`` that name an
    agent the run does not have or name one agent twice.
    """
    if workers < 1:
        raise ConfigurationError(f"--workers must be at least 1, got {workers}")
    if groups is None:
        return _round_robin(list(agents), min(workers, len(agents)))
    whole = _checked_groups(agents, groups)
    if len(whole) >= workers:
        return _pack(whole, workers)
    placed: list[list[str]] = []
    for group, share in zip(whole, _shares(whole, workers), strict=True):
        placed += _round_robin(group, min(share, len(group)))
    return placed


def _round_robin(agents: list[str], workers: int) -> list[list[str]]:
    return [agents[index::workers] for index in range(workers)]


def _pack(groups: list[list[str]], workers: int) -> list[list[str]]:
    """Whole groups, largest first (ties: declared order), each to the least loaded worker
    (ties: the first)."""
    placed: list[list[str]] = [[] for _ in range(workers)]
    order = sorted(range(len(groups)), key=lambda index: (-len(groups[index]), index))
    for index in order:
        lightest = min(range(workers), key=lambda worker: (len(placed[worker]), worker))
        placed[lightest] += groups[index]
    return [worker for worker in placed if worker]


def _shares(groups: list[list[str]], workers: int) -> list[int]:
    """Workers per group: one each, then each spare one to the group with the most agents per
    worker (ties: the first)."""
    shares = [1] * len(groups)
    for _ in range(workers - len(groups)):
        busiest = max(range(len(groups)), key=lambda g: (len(groups[g]) / shares[g], -g))
        shares[busiest] += 1
    return shares


def _checked_groups(agents: Sequence[str], groups: Sequence[Sequence[str]]) -> list[list[str]]:
    known = set(agents)
    seen: dict[str, int] = {}
    whole: list[list[str]] = []
    for number, group in enumerate(groups, start=1):
        members: list[str] = []
        for agent in group:
            if agent not in known:
                raise ConfigurationError(
                    f"@scenario.placement: group {number} names {agent!r}, which is not an "
                    f"agent of this run; its agents: {', '.join(sorted(known))}"
                )
            if agent in seen:
                raise ConfigurationError(
                    f"@scenario.placement: {agent!r} is in group {seen[agent]} and in group "
                    f"{number}; an agent runs in one process"
                )
            seen[agent] = number
            members.append(agent)
        if members:
            whole.append(members)
    rest = [agent for agent in agents if agent not in seen]
    if rest:
        whole.append(rest)
    return whole
