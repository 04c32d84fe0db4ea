"""Planning: GOAP (with Boeda's cooperation), HTN, the planning scheduler, plan explanations.

Pure library code: no sockets, no asyncio, no clocks; everything here is deterministic.
``import warband.planning`` loads nothing of warband's runtime (a test pins it).

What a user needs is listed below; the modules behind it hold the rest:

- GOAP: :func:`find_plan` (or an interruptible :class:`GoapSearch`) over :class:`Action` s toward
  a :class:`Goal` from a :class:`WorldState`; a :class:`Brain` is a goal set plus an action set,
  and :func:`select_goal` picks a goal. The state language (:class:`Key`, :class:`Condition`,
  :class:`Effect`) is :mod:`~warband.planning.state`; the model :mod:`~warband.planning.goap`;
  the search :mod:`~warband.planning.goap_search`.
- Cooperation (Boeda): :func:`plan_cooperatively` and :func:`answer_request`.
- HTN: :class:`HtnPlanner` plans root tasks (in one go, or by an interruptible
  :class:`HtnSearch`) over a :class:`FactDB` with a domain built by :class:`DomainBuilder`,
  parsed by :func:`parse_domain`, read by :func:`load_domain_file`, or bundled
  (:func:`load_domain`).
- The :class:`PlanningScheduler` shares a per-tick planning budget among agents.
- Explanations: ``goap_tree_*`` and ``htn_tree_*``.

Values and facts are :mod:`warband.values` (one model for the wire and both planners).
"""

from .cooperation import (
    CooperableNode,
    CooperationAnswer,
    CooperationCost,
    CooperativePlan,
    CooperativePlanning,
    CooperativeSearch,
    answer_request,
    plan_cooperatively,
)
from .domains.htn_library import BUNDLED_DOMAINS, load_domain
from .facts import ConstRef, FactDB, Var
from .goal_selection import GoalSelection, GoalVerdict, select_goal
from .goap import Action, Brain, Goal, GoapPlan, GoapStep
from .goap_explain import SearchTree, SearchTreeNode, goap_tree_dict, goap_tree_dot, goap_tree_text
from .goap_search import GoapSearch, PlanResult, Simulation, find_plan, simulate
from .htn import (
    And,
    Bind,
    Branch,
    BranchFailure,
    Call,
    Choice,
    DomainBuilder,
    FactDecl,
    HtnCondition,
    HtnDomain,
    HtnPlan,
    HtnPlanner,
    HtnResult,
    HtnSearch,
    Method,
    Not,
    Or,
    Primitive,
    Query,
    Replan,
    Task,
    bind,
    call,
    choose_plan,
    query,
    task,
    validate_domain,
)
from .htn_explain import (
    BranchNode,
    TaskNode,
    decomposition_tree,
    htn_plan_text,
    htn_tree_dict,
    htn_tree_text,
)
from .htn_parser import format_domain, load_domain_file, parse_domain
from .scheduler import InterruptibleSearch, PlanDelivery, PlanningScheduler
from .search import SearchStatus
from .state import Condition, Effect, Key, StateValue, WorldState, eq, ne

__all__ = [
    "BUNDLED_DOMAINS",
    "Action",
    "And",
    "Bind",
    "Brain",
    "Branch",
    "BranchFailure",
    "BranchNode",
    "Call",
    "Choice",
    "Condition",
    "ConstRef",
    "CooperableNode",
    "CooperationAnswer",
    "CooperationCost",
    "CooperativePlan",
    "CooperativePlanning",
    "CooperativeSearch",
    "DomainBuilder",
    "Effect",
    "FactDB",
    "FactDecl",
    "Goal",
    "GoalSelection",
    "GoalVerdict",
    "GoapPlan",
    "GoapSearch",
    "GoapStep",
    "HtnCondition",
    "HtnDomain",
    "HtnPlan",
    "HtnPlanner",
    "HtnResult",
    "HtnSearch",
    "InterruptibleSearch",
    "Key",
    "Method",
    "Not",
    "Or",
    "PlanDelivery",
    "PlanResult",
    "PlanningScheduler",
    "Primitive",
    "Query",
    "Replan",
    "SearchStatus",
    "SearchTree",
    "SearchTreeNode",
    "Simulation",
    "StateValue",
    "Task",
    "TaskNode",
    "Var",
    "WorldState",
    "answer_request",
    "bind",
    "call",
    "choose_plan",
    "decomposition_tree",
    "eq",
    "find_plan",
    "format_domain",
    "goap_tree_dict",
    "goap_tree_dot",
    "goap_tree_text",
    "htn_plan_text",
    "htn_tree_dict",
    "htn_tree_text",
    "load_domain",
    "load_domain_file",
    "ne",
    "parse_domain",
    "plan_cooperatively",
    "query",
    "select_goal",
    "simulate",
    "task",
    "validate_domain",
]
