"""Agents: who the actors are. One agent loop (gather, decide, execute) for every layer, made
into bots, squads and commanders by data (a :class:`Role`), not by class trees.

- :class:`Agent` runs any role; :class:`Role` is a domain, its root task, daemons and tasks;
- :class:`Memory` is an agent's fact database, filled by named sources;
- :class:`HtnDecider` keeps, replaces or drops plans by HTN branch priority, and
  :class:`GoapDecider` by goal relevancy with a superior's biases (:class:`Decider` is the
  interface both implement; a :class:`DecisionMemo` lets a decider give its last decision again
  while nothing it read has changed);
- :class:`SharedPlanning`: Pittman's planning scheduler for the agents of one process of a
  realtime run (``warband run --planning-budget N``);
- :class:`CommandQueue` and :class:`OrderBook` keep orders that outlive a tick;
- :data:`BUILTIN_TASKS`, :func:`check_acts`: what primitive tasks do;
- :func:`assign`, :class:`Objective` and the ``objectives_for_<mode>`` functions: the
  commander's objectives and its six-step assignment of squads and bots (pure functions);
  :func:`objective_source` and :data:`MODE_SOURCES`: a mode's objectives read from the
  commander's memory on any map; :func:`faction_actors` and :func:`check_map`: a Killzone
  faction (commander, squads, bots) on a map, and whether the map can host a mode;
- :class:`Component`: a per-agent part of a role (state, hooks, message handlers); GOAP roles
  are made of them, as HTN roles are of daemons and tasks;
- :func:`cooperative_role` (:class:`Conversation`, :class:`Walking`): Boeda's commanderless
  cooperation, a GOAP character that asks the agents it knows for help in a conversation;
- :func:`character_role` (:class:`Recollection`): a F.E.A.R.-style GOAP character, with working
  memory (confidence, age) and failures remembered so it replans another way;
- :class:`Commanding`, :class:`Following`, :func:`command_task`: Pittman's GOAP command
  hierarchy (GoalBias orders, adopted / completed reports, time-outs, interruption);
- :func:`CooperativeAgent`, :func:`Character`, :func:`Commander`, :func:`Subordinate` make an
  :class:`Agent` with those components, for code written when they were classes.
"""

from .agent import Agent as Agent
from .assignment import Assignment as Assignment
from .assignment import AssignmentChanges as AssignmentChanges
from .assignment import BotInfo as BotInfo
from .assignment import Objective as Objective
from .assignment import ObjectiveKind as ObjectiveKind
from .assignment import SquadAssignment as SquadAssignment
from .assignment import assign as assign
from .assignment import ideal_distribution as ideal_distribution
from .character import Character as Character
from .character import Recollection as Recollection
from .character import WorkingMemory as WorkingMemory
from .character import character_role as character_role
from .command import Commander as Commander
from .command import Commanding as Commanding
from .command import Following as Following
from .command import Subordinate as Subordinate
from .command import command_task as command_task
from .component import Component as Component
from .cooperation import Conversation as Conversation
from .cooperation import CooperativeAgent as CooperativeAgent
from .cooperation import CooperativeDecider as CooperativeDecider
from .cooperation import Walking as Walking
from .cooperation import cooperative_role as cooperative_role
from .cooperation import from_wire as from_wire
from .cooperation import to_wire as to_wire
from .decide import AgentPlan as AgentPlan
from .decide import Decider as Decider
from .decide import Decision as Decision
from .decide import DecisionMemo as DecisionMemo
from .decide import GoapDecider as GoapDecider
from .decide import HtnDecider as HtnDecider
from .execute import BUILTIN_TASKS as BUILTIN_TASKS
from .execute import ActTask as ActTask
from .execute import TaskHandler as TaskHandler
from .execute import check_acts as check_acts
from .factions import check_map as check_map
from .factions import faction_actors as faction_actors
from .factions import faction_observers as faction_observers
from .memory import Daemon as Daemon
from .memory import Memory as Memory
from .objectives import MODE_SOURCES as MODE_SOURCES
from .objectives import MapMarkers as MapMarkers
from .objectives import choose_hiding_spot as choose_hiding_spot
from .objectives import objective_source as objective_source
from .objectives import objectives_for_assassination as objectives_for_assassination
from .objectives import objectives_for_body_count as objectives_for_body_count
from .objectives import objectives_for_capture_and_hold as objectives_for_capture_and_hold
from .objectives import objectives_for_search_and_destroy as objectives_for_search_and_destroy
from .objectives import objectives_for_search_and_retrieve as objectives_for_search_and_retrieve
from .objectives import objectives_for_tsps as objectives_for_tsps
from .objectives import round_source as round_source
from .orders import CommandQueue as CommandQueue
from .orders import OrderBook as OrderBook
from .role import Role as Role
from .shared_planning import SharedPlanning as SharedPlanning

__all__ = [
    "BUILTIN_TASKS",
    "MODE_SOURCES",
    "ActTask",
    "Agent",
    "AgentPlan",
    "Assignment",
    "AssignmentChanges",
    "BotInfo",
    "Character",
    "CommandQueue",
    "Commander",
    "Commanding",
    "Component",
    "Conversation",
    "CooperativeAgent",
    "CooperativeDecider",
    "Daemon",
    "Decider",
    "Decision",
    "DecisionMemo",
    "Following",
    "GoapDecider",
    "HtnDecider",
    "MapMarkers",
    "Memory",
    "Objective",
    "ObjectiveKind",
    "OrderBook",
    "Recollection",
    "Role",
    "SharedPlanning",
    "SquadAssignment",
    "Subordinate",
    "TaskHandler",
    "Walking",
    "WorkingMemory",
    "assign",
    "character_role",
    "check_acts",
    "check_map",
    "choose_hiding_spot",
    "command_task",
    "cooperative_role",
    "faction_actors",
    "faction_observers",
    "from_wire",
    "ideal_distribution",
    "objective_source",
    "objectives_for_assassination",
    "objectives_for_body_count",
    "objectives_for_capture_and_hold",
    "objectives_for_search_and_destroy",
    "objectives_for_search_and_retrieve",
    "objectives_for_tsps",
    "round_source",
    "to_wire",
]
