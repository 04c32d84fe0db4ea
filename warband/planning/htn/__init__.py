"""HTN planning (Killzone 3, after SHOP): the domain model, its text syntax, the planner and its
explanations.

- :mod:`.domain`: tasks, conditions, branches, methods, primitives, :class:`HtnDomain`, the
  :class:`DomainBuilder` and :func:`validate_domain`;
- :mod:`.facts`: the fact database the planner queries (:class:`FactDB`) and its terms;
- :mod:`.reads`: what a computation read of a fact database and whether it changed since
  (:class:`FactReads`);
- :mod:`.memo`: preconditions that failed and what they read, skipped by the next search while
  that holds (:class:`BranchMemo`);
- :mod:`.parser`: the SHOP-like text syntax (:func:`parse_domain`, :func:`load_domain_file`);
- :mod:`.planner` (with :mod:`.compile`, its compiled form): :class:`HtnPlanner`, plans and their
  priority (:func:`choose_plan`);
- :mod:`.explain`: a plan's decomposition tree as text or a dict.
"""

from __future__ import annotations

from .explain import BranchNode as BranchNode
from .explain import TaskNode as TaskNode
from .explain import decomposition_tree as decomposition_tree
from .explain import htn_plan_text as htn_plan_text
from .explain import htn_tree_dict as htn_tree_dict
from .explain import htn_tree_text as htn_tree_text
from .facts import ConstRef as ConstRef
from .facts import FactDB as FactDB
from .facts import Var as Var
from .memo import BranchMemo as BranchMemo
from .parser import format_domain as format_domain
from .parser import load_domain_file as load_domain_file
from .parser import parse_domain as parse_domain
from .planner import And as And
from .planner import Bind as Bind
from .planner import Branch as Branch
from .planner import BranchFailure as BranchFailure
from .planner import Call as Call
from .planner import Choice as Choice
from .planner import DomainBuilder as DomainBuilder
from .planner import FactDecl as FactDecl
from .planner import HtnCondition as HtnCondition
from .planner import HtnDomain as HtnDomain
from .planner import HtnPlan as HtnPlan
from .planner import HtnPlanner as HtnPlanner
from .planner import HtnResult as HtnResult
from .planner import HtnSearch as HtnSearch
from .planner import Method as Method
from .planner import Not as Not
from .planner import Or as Or
from .planner import Primitive as Primitive
from .planner import Query as Query
from .planner import Replan as Replan
from .planner import Task as Task
from .planner import bind as bind
from .planner import call as call
from .planner import choose_plan as choose_plan
from .planner import query as query
from .planner import task as task
from .planner import validate_domain as validate_domain
from .reads import FactReads as FactReads

__all__ = [
    "And",
    "Bind",
    "Branch",
    "BranchFailure",
    "BranchMemo",
    "BranchNode",
    "Call",
    "Choice",
    "ConstRef",
    "DomainBuilder",
    "FactDB",
    "FactDecl",
    "FactReads",
    "HtnCondition",
    "HtnDomain",
    "HtnPlan",
    "HtnPlanner",
    "HtnResult",
    "HtnSearch",
    "Method",
    "Not",
    "Or",
    "Primitive",
    "Query",
    "Replan",
    "Task",
    "TaskNode",
    "Var",
    "bind",
    "call",
    "choose_plan",
    "decomposition_tree",
    "format_domain",
    "htn_plan_text",
    "htn_tree_dict",
    "htn_tree_text",
    "load_domain_file",
    "parse_domain",
    "query",
    "task",
    "validate_domain",
]
