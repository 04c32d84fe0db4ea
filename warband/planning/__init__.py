"""Planning: GOAP (with Boeda's cooperation), HTN, the planning scheduler, plan explanations.

Pure library code: no sockets, no asyncio, no clocks. Everything here is deterministic.
"""

# --- GOAP block: public names of the GOAP / cooperation / scheduler / GOAP-explanation modules ---
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
from .goap import (
    Action,
    Brain,
    Goal,
    GoalSelection,
    GoalVerdict,
    GoapPlan,
    GoapProblem,
    GoapSearch,
    GoapStep,
    PlanResult,
    Simulation,
    find_plan,
    select_goal,
    simulate,
)
from .goap_explain import SearchTree, SearchTreeNode, goap_tree_dict, goap_tree_dot, goap_tree_text
from .scheduler import InterruptibleSearch, PlanDelivery, PlanningScheduler
from .search import SearchStatus
from .state import Condition, Effect, Key, StateValue, WorldState, eq, ne

# --- end GOAP block ---

# --- HTN block: public names of the fact database / HTN / parser / HTN-explanation modules ---
# isort: split
from ..values import Fact, Value
from .facts import ConstRef, FactDB, HtnBindings, Term, Var, parse_term
from .htn import (
    And,
    Bind,
    Branch,
    BranchFailure,
    Call,
    Choice,
    DomainBuilder,
    HtnDomain,
    HtnPlan,
    HtnPlanner,
    HtnResult,
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
from .htn_explain import BranchNode, TaskNode, decomposition_tree, htn_tree_dict, htn_tree_text
from .htn_parser import format_domain, load_domain_file, parse_domain

# --- end HTN block ---

__all__: list[str] = []
# GOAP __all__ entries are added below this line
__all__ += [
    "Action",
    "Brain",
    "Condition",
    "CooperableNode",
    "CooperationAnswer",
    "CooperationCost",
    "CooperativePlan",
    "CooperativePlanning",
    "CooperativeSearch",
    "Effect",
    "Goal",
    "GoalSelection",
    "GoalVerdict",
    "GoapPlan",
    "GoapProblem",
    "GoapSearch",
    "GoapStep",
    "InterruptibleSearch",
    "Key",
    "PlanDelivery",
    "PlanResult",
    "PlanningScheduler",
    "SearchStatus",
    "SearchTree",
    "SearchTreeNode",
    "Simulation",
    "StateValue",
    "WorldState",
    "answer_request",
    "eq",
    "find_plan",
    "goap_tree_dict",
    "goap_tree_dot",
    "goap_tree_text",
    "ne",
    "plan_cooperatively",
    "select_goal",
    "simulate",
]
# HTN __all__ entries are added below this line
__all__ += [
    "And",
    "Bind",
    "Branch",
    "BranchFailure",
    "BranchNode",
    "Call",
    "Choice",
    "ConstRef",
    "DomainBuilder",
    "Fact",
    "FactDB",
    "HtnBindings",
    "HtnDomain",
    "HtnPlan",
    "HtnPlanner",
    "HtnResult",
    "Method",
    "Not",
    "Or",
    "Primitive",
    "Query",
    "Replan",
    "Task",
    "TaskNode",
    "Term",
    "Value",
    "Var",
    "bind",
    "call",
    "choose_plan",
    "decomposition_tree",
    "format_domain",
    "htn_tree_dict",
    "htn_tree_text",
    "load_domain_file",
    "parse_domain",
    "parse_term",
    "query",
    "task",
    "validate_domain",
]
