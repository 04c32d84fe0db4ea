"""Agents: who the actors are. One agent loop (gather, decide, execute) for every layer, made
into bots, squads and commanders by data (a :class:`Role`), not by class trees.

- :class:`Agent` runs any role; :class:`Role` is a domain, its root task, daemons and tasks;
- :class:`Memory` is an agent's fact database, filled by named sources;
- :class:`HtnDecider` keeps, replaces or drops plans by HTN branch priority (:class:`Decider`
  is the interface every decider implements);
- :class:`CommandQueue` and :class:`OrderBook` keep orders that outlive a tick;
- :data:`BUILTIN_TASKS`, :func:`check_acts`: what primitive tasks do.
"""

from .agent import Agent as Agent
from .decide import AgentPlan as AgentPlan
from .decide import Decider as Decider
from .decide import Decision as Decision
from .decide import HtnDecider as HtnDecider
from .execute import BUILTIN_TASKS as BUILTIN_TASKS
from .execute import ActTask as ActTask
from .execute import TaskHandler as TaskHandler
from .execute import check_acts as check_acts
from .memory import Daemon as Daemon
from .memory import Memory as Memory
from .orders import CommandQueue as CommandQueue
from .orders import OrderBook as OrderBook
from .role import Role as Role

__all__ = [
    "BUILTIN_TASKS",
    "ActTask",
    "Agent",
    "AgentPlan",
    "CommandQueue",
    "Daemon",
    "Decider",
    "Decision",
    "HtnDecider",
    "Memory",
    "OrderBook",
    "Role",
    "TaskHandler",
    "check_acts",
]
