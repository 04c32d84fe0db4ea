"""The Killzone 3 domains bundled as text: the turret's weapon selection (Listing 29.1) and the
medic's revive (Listing 29.2), with replanning by branch priority and continuation branches."""

from __future__ import annotations

from pathlib import Path

import pytest

from warband.exceptions import PlanningError
from warband.planning import (
    FactDB,
    HtnPlan,
    HtnPlanner,
    HtnResult,
    choose_plan,
    decomposition_tree,
    htn_tree_text,
)
from warband.planning.domains.htn_library import load_domain, medic_facts, turret_facts

TIM = "[Soldier:TimV]"


def _turret(facts: FactDB) -> HtnResult:
    return HtnPlanner(load_domain("turret")).plan(facts, "behave")


def _steps(result: HtnResult) -> list[str]:
    assert result.plan is not None, result.status
    return [str(step) for step in result.plan.steps]


def test_turret_uses_bullets_on_a_close_threat() -> None:
    result = _turret(turret_facts([("grunt-1", 12.0, "infantry")]))
    assert [
        "(!begin_plan attack_using_bullets)",
        "(!select_weapon bullets)",
        "(!fire_weapon grunt-1)",
        "(!end_plan)",
    ] == _steps(result)


def test_turret_uses_missiles_on_a_far_vehicle_and_keeps_a_selected_weapon() -> None:
    facts = turret_facts([("tank-1", 80.0, "vehicle")], selected_weapon="missiles")
    assert [
        "(!begin_plan attack_using_missiles)",
        "(!fire_weapon tank-1)",
        "(!end_plan)",
    ] == _steps(_turret(facts))


def test_turret_scans_when_no_weapon_reaches_the_threat() -> None:
    far_infantry = turret_facts([("sniper", 90.0, "infantry")])  # missiles can't hurt infantry
    assert ["(!scan)"] == _steps(_turret(far_infantry))
    out_of_range = turret_facts([("tank-1", 500.0, "vehicle")])
    assert ["(!scan)"] == _steps(_turret(out_of_range))


def test_turret_backtracks_over_threats_until_one_has_a_line_of_attack() -> None:
    facts = turret_facts(
        [("grunt-1", 10.0, "infantry"), ("tank-1", 60.0, "vehicle")],
        obstructed=[("grunt-1", "bullets")],
    )
    assert "(!fire_weapon tank-1)" in _steps(_turret(facts))


def test_turret_line_of_attack_answers_stay_out_of_the_turrets_memory() -> None:
    facts = turret_facts([("grunt-1", 12.0, "infantry")])
    before = set(facts)
    _turret(facts)
    assert before == set(facts)


def _medic(facts: FactDB, current: HtnPlan | None = None, explain: bool = False) -> HtnResult:
    return HtnPlanner(load_domain("medic")).plan(
        facts, "behave", constants={"self": "medic-1"}, current=current, explain=explain
    )


def test_medic_revives_a_downed_teammate_as_in_listing_29_2() -> None:
    result = _medic(medic_facts(downed=[(TIM, 12.0, 5416)]))
    assert [
        f"(!begin_plan medic_revive {TIM})",
        '(!log_color magenta "Medic reviving nearby entity.")',
        f"(!broadcast 30 10 medic_revives {TIM})",
        f"(!select_target {TIM})",
        "(!walk_to 5416 crouching auto)",
        "(!wield wp_mp_bot_revive_gun)",
        f"(!use_item_on_entity {TIM} crouching)",
        "(!end_plan)",
    ] == _steps(result)


def test_medic_decomposition_tree_tries_and_chooses_the_listings_branches() -> None:
    domain = load_domain("medic")
    result = _medic(medic_facts(downed=[(TIM, 12.0, 5416)]))
    lines = htn_tree_text(decomposition_tree(result, domain)).splitlines()
    marks = [line.strip() for line in lines if line.strip()[:2] in ("+ ", "- ")]
    assert [
        "+ branch_mp_behave",
        "+ (do_behave_mp)",
        "- branch_in_vehicle",
        "+ branch_on_foot",
        "+ (do_behave_on_foot_mp)",
        "- branch_self_preservation",
        "+ branch_medic_revive",
        "+ (do_medic_revive)",
        "- branch_medic_revive_abort",
        "- branch_medic_revive_continue",
        "+ branch_medic_revive",
        "+ (walk_to_attack 5416 crouching auto)",
        "- branch_already_there",
        "+ branch_walk",
        "+ (wield_weapon wp_online_mp_bot_revive_gun)",
        "- branch_dont_switch_weapon",
        "+ branch_switch_weapon",
        "+ (wield_weapon_internal wp_mp_bot_revive_gun)",
        "+ branch_wield",
    ] == marks
    assert "behave" == lines[0]
    assert any(line.strip() == "(?wp = wp_mp_bot_revive_gun)" for line in lines)
    assert any(line.strip() == f"(?target = {TIM})" for line in lines)


def test_medic_explain_says_why_the_continuation_branch_was_skipped() -> None:
    domain = load_domain("medic")
    result = _medic(medic_facts(downed=[(TIM, 12.0, 5416)]), explain=True)
    text = htn_tree_text(decomposition_tree(result, domain))
    assert "- branch_medic_revive_continue  ; no active plan" in text
    assert "- branch_in_vehicle  ; precondition failed" in text


def test_grenade_beats_heal_when_the_medic_replans() -> None:
    revive = _medic(medic_facts(downed=[(TIM, 12.0, 5416)])).plan
    assert revive is not None
    facts = medic_facts(downed=[(TIM, 12.0, 5416)], grenades=["grenade-7"])
    facts.assert_fact("active_plan", "medic_revive", TIM)
    result = _medic(facts, current=revive)
    assert ["(!flee_from grenade-7)"] == _steps(result)
    assert result.plan is not None and result.plan.outranks(revive)
    decision = choose_plan(revive, result)
    assert True is decision.replaced
    assert result.plan is decision.plan


def test_medic_keeps_reviving_while_the_target_is_down() -> None:
    revive = _medic(medic_facts(downed=[(TIM, 12.0, 5416)])).plan
    facts = medic_facts(downed=[(TIM, 12.0, 5416)])
    facts.assert_fact("active_plan", "medic_revive", TIM)
    result = _medic(facts, current=revive)
    assert "continue" == result.status
    assert revive is choose_plan(revive, result).plan


def test_medic_aborts_when_the_target_dies() -> None:
    revive = _medic(medic_facts(downed=[(TIM, 12.0, 5416)])).plan
    facts = medic_facts()
    facts.assert_fact("active_plan", "medic_revive", TIM)
    facts.assert_fact("dead", TIM)
    result = _medic(facts, current=revive)
    assert ['(!log_color red "Revive target died.")', "(!end_plan)"] == _steps(result)
    assert True is choose_plan(revive, result).replaced


def test_a_revived_target_lets_the_revive_plan_lapse() -> None:
    revive = _medic(medic_facts(downed=[(TIM, 12.0, 5416)])).plan
    facts = medic_facts()  # TimV is back on his feet: nothing to continue, nobody to revive
    facts.assert_fact("active_plan", "medic_revive", TIM)
    result = _medic(facts, current=revive)
    assert ["(!scan)"] == _steps(result)
    decision = choose_plan(revive, result)
    assert True is decision.replaced
    assert "lapsed" in decision.reason


def test_medic_in_a_vehicle_drives() -> None:
    result = _medic(medic_facts(downed=[(TIM, 12.0, 5416)], vehicle="hovertank-2"))
    assert ["(!drive hovertank-2)"] == _steps(result)


def test_medic_needs_its_own_id() -> None:
    with pytest.raises(PlanningError, match="@self"):
        HtnPlanner(load_domain("medic")).plan(medic_facts(), "behave")


def test_load_domain_rejects_unknown_names_and_reads_paths(tmp_path: Path) -> None:
    with pytest.raises(PlanningError, match="bundled domains: medic, turret"):
        load_domain("sniper")
    path = tmp_path / "tiny.htn"
    path.write_text('(:primitive !idle)\n(:method (behave) (:branch "b" () ((!idle))))\n')
    assert "tiny" == load_domain(str(path)).name
