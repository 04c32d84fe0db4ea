"""A guard's behaviour as an HTN domain, planned against two memories. Run: python guard_htn.py"""

from warband.planning.htn import FactDB, HtnPlanner, decomposition_tree, htn_tree_text, parse_domain

DOMAIN = """
(:domain guard)
(:constant @reach 20)
(:primitive !fire ?target) (:primitive !move ?waypoint) (:primitive !idle)

(:method (behave)
  (:branch "fight" (threat ?enemy ?distance) ((engage ?enemy ?distance)))
  (:branch "patrol" (next_post ?post) ((!move ?post)))
  (:branch "wait" () ((!idle))))

(:method (engage ?enemy ?distance)
  (:branch "shoot" (call le ?distance @reach) ((!fire ?enemy)))
  (:branch "close in" (seen_at ?enemy ?where) ((!move ?where) (!fire ?enemy))))
"""

domain = parse_domain(DOMAIN)
planner = HtnPlanner(domain)

calm = FactDB([("next_post", "gate")])
result = planner.plan(calm, "behave")
print(result.plan.steps)  # one primitive task: (!move gate)

alarm = FactDB([("next_post", "gate"), ("threat", "blue-2", 35), ("seen_at", "blue-2", "w7")])
result = planner.plan(alarm, "behave", explain=True)
print(result.plan.steps)  # (!move w7), then (!fire blue-2): too far to shoot from here
print(result.plan.path)  # the branch indices from the root: how plans are compared
print(htn_tree_text(decomposition_tree(result, domain)))  # tried (-) and chosen (+) branches
