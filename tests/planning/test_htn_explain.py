"""Tests of HTN explanations: the decomposition tree as Listing 29.2-shaped text and as a dict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from warband.planning import (
    And,
    DomainBuilder,
    FactDB,
    HtnPlanner,
    call,
    decomposition_tree,
    htn_plan_text,
    htn_tree_dict,
    htn_tree_text,
    query,
    task,
)
from warband.planning.htn.planner import HtnDomain, HtnPlan

REPO = Path(__file__).resolve().parents[2]


def _domain() -> HtnDomain:
    b = DomainBuilder("guard")
    b.constant("range", 10)
    b.primitive("!fire", "?t")
    b.primitive("!wield", "?w")
    b.primitive("!idle")
    b.method("behave").branch("flee", query("grenade", "?g"), [task("!idle")]).branch(
        "attack",
        And((query("threat", "?t"), query("dist", "?t", "?d"), call("le", "?d", "@range"))),
        [task("wield", "rifle"), task("!fire", "?t")],
    ).branch("idle", subtasks=[task("!idle")])
    b.method("wield", "?w").branch("holding", query("holding", "?w")).branch(
        "switch", subtasks=[task("!wield", "?w")]
    )
    return b.build()


FACTS = [("threat", "a"), ("dist", "a", 50), ("threat", "b"), ("dist", "b", 5)]


def test_the_text_marks_failed_and_chosen_branches_with_bindings() -> None:
    domain = _domain()
    result = HtnPlanner(domain).plan(FactDB(FACTS), "behave")
    expected = """\
behave
  - flee  ; precondition failed
  + attack
    (?t = b)
    (?d = 5)
    + (wield rifle)
      - holding
      + switch
        (!wield rifle)
    (!fire b)
"""
    assert expected == htn_tree_text(decomposition_tree(result, domain))


def test_explain_records_why_each_earlier_branch_failed() -> None:
    domain = _domain()
    facts = FactDB([*FACTS, ("threat", "c"), ("dist", "c", 1)])
    b = DomainBuilder("deep")
    b.primitive("!go", "?t")
    b.primitive("!stop")
    b.method("root").branch("pick", query("threat", "?t"), [task("check", "?t")]).branch(
        "stop", subtasks=[task("!stop")]
    )
    b.method("check", "?t").branch("never", query("never"))
    deep = b.build()
    result = HtnPlanner(deep).plan(facts, "root", explain=True)
    tree = decomposition_tree(result, deep)
    assert [("pick", "-", "decomposition failed"), ("stop", "+", None)] == [
        (br.name, br.mark, br.reason) for br in tree.branches
    ]
    failures = result.choices[0].failures
    assert failures is not None
    assert 3 == failures[0].bindings_tried  # threats a, b and c were each tried
    plain = HtnPlanner(domain).plan(facts, "behave", explain=True)
    (wield,) = [n for n in decomposition_tree(plain, domain).walk() if n.task.name == "wield"]
    assert [("holding", "precondition failed")] == [
        (br.name, br.reason) for br in wield.branches if br.mark == "-"
    ]


def test_the_dict_form_is_json_ready_and_has_the_same_tree() -> None:
    domain = _domain()
    result = HtnPlanner(domain).plan(FactDB(FACTS), "behave")
    data = htn_tree_dict(decomposition_tree(result, domain))
    assert data == json.loads(json.dumps(data))
    assert "(behave)" == data["task"]
    assert ["-", "+"] == [b["mark"] for b in data["branches"]]
    attack = data["branches"][1]
    assert {"t": "b", "d": 5} == attack["bindings"]
    assert ["(wield rifle)", "(!fire b)"] == [s["task"] for s in attack["subtasks"]]
    assert "switch" == attack["subtasks"][0]["branches"][1]["name"]


def test_a_failed_plan_shows_every_root_branch_as_failed() -> None:
    b = DomainBuilder("none")
    b.method("behave").branch("a", query("x")).branch("b", query("y"))
    domain = b.build()
    result = HtnPlanner(domain).plan(FactDB(), "behave")
    text = htn_tree_text(decomposition_tree(result, domain))
    assert "- behave\n  - a  ; precondition failed\n  - b  ; precondition failed\n" == text


def test_a_continue_result_shows_the_path_to_the_continuation_branch() -> None:
    b = DomainBuilder("heal")
    b.primitive("!heal", "?who")
    b.method("behave").branch("heal", subtasks=[task("heal")])
    b.method("heal").continuation("keep", query("hurt", "?who")).branch(
        "start", query("hurt", "?who"), [task("!heal", "?who")]
    )
    domain = b.build()
    planner = HtnPlanner(domain)
    first = planner.plan(FactDB([("hurt", "ann")]), "behave")
    again = planner.plan(FactDB([("hurt", "ann")]), "behave", current=first.plan)
    expected = (
        "behave\n  + heal\n    + (heal)\n      + keep\n        (?who = ann)\n        (!continue)\n"
    )
    assert expected == htn_tree_text(decomposition_tree(again, domain))


def test_a_plans_text_written_from_its_choices_is_the_text_of_its_tree() -> None:
    domain = _domain()
    facts = [FACTS, [("grenade", "g1")], [("holding", "rifle"), *FACTS], []]
    for situation in facts:
        for explain in (False, True):
            result = HtnPlanner(domain).plan(FactDB(situation), "behave", explain=explain)
            assert result.plan is not None
            tree = decomposition_tree(result.plan, domain)
            assert htn_tree_text(tree) == htn_plan_text(result.plan, domain)
            assert htn_tree_text(tree, indent="\t", reasons=False) == htn_plan_text(
                result.plan, domain, indent="\t", reasons=False
            )


def test_every_plan_of_a_warzone_match_writes_the_text_of_its_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import warband.agents.decide as decide
    from warband.launcher import RunOptions, run_scenario
    from warband.messaging import configure_logging
    from warband.scenario import load_scenario

    compared: list[str] = []

    def both(plan: HtnPlan, domain: HtnDomain) -> str:
        text = htn_plan_text(plan, domain)
        assert htn_tree_text(decomposition_tree(plan, domain)) == text
        compared.append(text)
        return text

    monkeypatch.setattr(decide, "htn_plan_text", both)
    scenario = load_scenario(REPO / "scenarios" / "warzone.py")
    configure_logging(tmp_path, "tests")  # the trees are written only when tracing
    try:
        run_scenario(scenario, RunOptions(seed=3, ticks=40, params={"bots": "3"}, log_dir=tmp_path))
    finally:
        configure_logging(None, "tests")
    # Many plans, with failed branches and decompositions nested below the root's.
    assert len(compared) > 50, len(compared)
    assert any("  ; " in text for text in compared)
    assert any("\n    + (" in text for text in compared)
