"""GOAP planning (F.E.A.R., Pittman, Boeda): world states, actions and goals, the regressive A*
search, goal selection, cooperative planning and search explanations.

- :mod:`.state`: :class:`WorldState`, :class:`Key`, :class:`Condition`, :class:`Effect`;
- :mod:`.model`: :class:`Action`, :class:`Goal`, :class:`Brain`, plans;
- :mod:`.search` (with :mod:`.regression` and :mod:`.heuristic`): :func:`find_plan`, the
  interruptible :class:`GoapSearch`, :func:`simulate`;
- :mod:`.goal_selection`: :func:`select_goal` by relevancy;
- :mod:`.cooperation`: Boeda's cooperative planning (``achievable_by_any_agent``);
- :mod:`.explain`: the search tree as text, a dict or Graphviz DOT.
"""

from __future__ import annotations

from .cooperation import CooperableNode as CooperableNode
from .cooperation import CooperationAnswer as CooperationAnswer
from .cooperation import CooperationCost as CooperationCost
from .cooperation import CooperativePlan as CooperativePlan
from .cooperation import CooperativePlanning as CooperativePlanning
from .cooperation import CooperativeSearch as CooperativeSearch
from .cooperation import answer_request as answer_request
from .cooperation import plan_cooperatively as plan_cooperatively
from .explain import SearchTree as SearchTree
from .explain import SearchTreeNode as SearchTreeNode
from .explain import goap_tree_dict as goap_tree_dict
from .explain import goap_tree_dot as goap_tree_dot
from .explain import goap_tree_text as goap_tree_text
from .goal_selection import GoalSelection as GoalSelection
from .goal_selection import GoalVerdict as GoalVerdict
from .goal_selection import select_goal as select_goal
from .model import Action as Action
from .model import Brain as Brain
from .model import Goal as Goal
from .model import GoapPlan as GoapPlan
from .model import GoapStep as GoapStep
from .search import GoapSearch as GoapSearch
from .search import PlanResult as PlanResult
from .search import Simulation as Simulation
from .search import find_plan as find_plan
from .search import simulate as simulate
from .state import Condition as Condition
from .state import Effect as Effect
from .state import Key as Key
from .state import StateValue as StateValue
from .state import WorldState as WorldState
from .state import eq as eq
from .state import ne as ne

__all__ = [
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
    "GoapSearch",
    "GoapStep",
    "Key",
    "PlanResult",
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
