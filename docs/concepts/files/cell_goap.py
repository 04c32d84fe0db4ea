"""A prisoner plans with GOAP, alone when it can, else asking for help. Run: python cell_goap.py"""

from warband.planning.goap import (
    Action,
    WorldState,
    answer_request,
    eq,
    find_plan,
    plan_cooperatively,
)

# The bars can be opened by anyone who stands on the plate: a condition any agent may achieve.
BARS_OPEN = eq("bars_open(cell)", True, any_agent=True)

prisoner = [
    Action("WalkOut", preconditions=[BARS_OPEN], effects={"at(prisoner)": "yard"}),
    Action(
        "PickLock",
        preconditions={"has(prisoner)": "pick"},
        effects={"bars_open(cell)": True},
        cost=5,
    ),
]

with_pick = WorldState({"at(prisoner)": "cell", "bars_open(cell)": False, "has(prisoner)": "pick"})
alone = find_plan(with_pick, {"at(prisoner)": "yard"}, prisoner)
print(alone.plan.names)  # ('PickLock', 'WalkOut')

empty_handed = WorldState({"at(prisoner)": "cell", "bars_open(cell)": False})
found = plan_cooperatively(empty_handed, {"at(prisoner)": "yard"}, prisoner)
print(found.solo)  # None: no plan alone
best = found.best
print(best.plan.names)  # ('Cooperate', 'WalkOut'): ask for help, then walk out
print(best.request)  # what to ask another agent for: bars_open(cell) == true

# The guard answers the request by planning for the conditions asked of it.
guard = [
    Action("Goto", effects={"at(guard)": "?place"}, cost=2),
    Action("StepOnPlate", preconditions={"at(guard)": "plate"}, effects={"bars_open(cell)": True}),
]
answer = answer_request(best.request, WorldState({"at(guard)": "desk"}), guard)
print(answer.plan.names)  # ('Goto', 'StepOnPlate')
