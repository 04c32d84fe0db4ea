"""A process parses a domain text once (parser._PARSED): every later parse of the same text
must give what parsing afresh gives, its own mappings and its own functions, and nothing one
caller does to its domain may reach another's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from warband.agents.bot import BOT_DOMAIN, bot_functions
from warband.agents.commander import COMMANDER_DOMAIN
from warband.agents.execute import check_acts
from warband.agents.squad import SQUAD_DOMAIN, squad_functions
from warband.exceptions import DomainSyntaxError, PlanningError
from warband.planning import (
    FactDB,
    HtnDomain,
    HtnPlanner,
    format_domain,
    load_domain_file,
    parse_domain,
)
from warband.planning.htn import parser
from warband.world import load_map

GUARD = """
(:domain guard)
(:constant @range 30)
(:primitive !shoot ?t)
(:primitive !idle)
(:method (behave)
  (:branch "shoot" (and (enemy ?t) (call near ?t @range)) ((!shoot ?t)))
  (:branch "idle" () ((!idle))))
"""


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    parser._PARSED.clear()
    yield
    parser._PARSED.clear()


def _afresh(text: str, **kwargs: object) -> HtnDomain:
    """What parsing gives without the cache."""
    parser._PARSED.clear()
    try:
        return parse_domain(text, **kwargs)  # type: ignore[arg-type]
    finally:
        parser._PARSED.clear()


def _steps(domain: HtnDomain, facts: FactDB) -> tuple[str, ...]:
    result = HtnPlanner(domain).plan(facts, "behave")
    assert result.plan is not None
    return tuple(str(step) for step in result.plan.steps)


def test_a_text_parsed_again_gives_what_parsing_afresh_gives() -> None:
    game_map = load_map("warzone")
    shipped = [
        (BOT_DOMAIN, bot_functions(game_map)),
        (SQUAD_DOMAIN, squad_functions(game_map)),
        (COMMANDER_DOMAIN, {}),
    ]
    for path, functions in shipped:
        text = Path(path).read_text(encoding="utf-8")
        options = {"path": str(path), "functions": functions, "name": Path(path).stem}
        first = parse_domain(text, **options)  # type: ignore[arg-type]
        again = parse_domain(text, **options)  # type: ignore[arg-type]
        # Parsed once: the second shares the first's (immutable) methods.
        assert all(again.methods[name] is first.methods[name] for name in first.methods)
        assert again.methods is not first.methods and again.functions is not first.functions
        fresh = _afresh(text, **options)
        for domain in (first, again):
            assert fresh == domain
            assert format_domain(fresh) == format_domain(domain)
            assert dict(functions) == dict(domain.functions)
        # The nodes are shared, so the file positions are the same too.
        primitive = next(iter(again.primitives.values()))
        assert fresh.where(next(iter(fresh.primitives.values()))) == again.where(primitive)
        assert again.where(primitive).startswith(f"{path}:")


def test_a_domain_changed_by_its_caller_changes_no_other() -> None:
    first = parse_domain(GUARD, functions={"near": lambda facts, t, r: True})
    first.methods.clear()  # type: ignore[attr-defined]
    first.primitives.pop("!idle")  # type: ignore[attr-defined]
    first.constants["range"] = 99  # type: ignore[index]
    first.facts["spy"] = None  # type: ignore[index]
    first.functions["near"] = None  # type: ignore[index]
    second = parse_domain(GUARD, functions={"near": lambda facts, t, r: True})
    assert _afresh(GUARD, functions={"near": lambda facts, t, r: True}) == second
    assert {"range": 30} == dict(second.constants)
    assert {"behave"} == set(second.methods)
    assert {"!shoot", "!idle"} == set(second.primitives)
    assert {} == dict(second.facts)
    assert ("(!shoot red-1)",) == _steps(second, FactDB([("enemy", "red-1")]))


def test_each_caller_plans_with_its_own_functions() -> None:
    near = parse_domain(GUARD, functions={"near": lambda facts, t, r: True})
    far = parse_domain(GUARD, functions={"near": lambda facts, t, r: False})
    facts = FactDB([("enemy", "red-1")])
    assert ("(!shoot red-1)",) == _steps(near, facts)
    assert ("(!idle)",) == _steps(far, facts)
    assert ("(!shoot red-1)",) == _steps(near, facts)


def test_other_function_names_path_or_text_are_parsed_and_checked_again() -> None:
    parse_domain(GUARD, functions={"near": lambda facts, t, r: True})
    with pytest.raises(PlanningError, match="unknown function 'near'"):
        parse_domain(GUARD, functions={"close": lambda facts, t, r: True})
    with pytest.raises(DomainSyntaxError) as info:
        parse_domain(GUARD, path="other.htn")
    assert "other.htn" == info.value.path
    renamed = parse_domain(
        GUARD.replace("(:domain guard)", ""), functions={"near": lambda f, t, r: True}, name="x"
    )
    assert "x" == renamed.name


def test_a_malformed_text_fails_every_time() -> None:
    for _ in range(2):
        with pytest.raises(DomainSyntaxError) as info:
            parse_domain(GUARD + "(:method (broken)", path="bad.htn")
        assert ("bad.htn", 9) == (info.value.path, info.value.line)


def test_the_check_runs_on_every_parse_and_names_the_line() -> None:
    checked: list[HtnDomain] = []

    def check(domain: HtnDomain, fail: object) -> None:
        checked.append(domain)

    functions = {"near": lambda facts, t, r: True}
    one = parse_domain(GUARD, functions=functions, check=check)
    two = parse_domain(GUARD, functions=functions, check=check)
    assert [one, two] == checked and checked[0] is one and checked[1] is two

    def refuse_shoot(domain: HtnDomain, fail: object) -> NoReturn:
        fail("no shooting here", domain.primitives["!shoot"])  # type: ignore[operator]
        raise AssertionError("fail returned")

    for _ in range(2):
        with pytest.raises(DomainSyntaxError, match="no shooting here") as info:
            parse_domain(GUARD, path="g.htn", functions=functions, check=refuse_shoot)
        assert ("g.htn", 4, 1) == (info.value.path, info.value.line, info.value.column)


def test_an_edited_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "guard.htn"
    path.write_text('(:primitive !idle)\n(:method (behave) (:branch "b" () ((!idle))))\n')
    assert ("(!idle)",) == _steps(load_domain_file(path, check=check_acts), FactDB())
    path.write_text('(:primitive !wait)\n(:method (behave) (:branch "b" () ((!wait))))\n')
    assert ("(!wait)",) == _steps(load_domain_file(path, check=check_acts), FactDB())


def test_the_cache_keeps_the_most_recently_used_texts() -> None:
    cache = parser._ParsedDomains(size=2)
    texts = [GUARD.replace("guard", f"guard{i}") for i in range(3)]
    parsed = [parser._parse(text, "<string>", {"near": print}, "d") for text in texts]
    keys = [(text, "<string>", "d", frozenset({"near"})) for text in texts]
    cache.put(keys[0], parsed[0])
    cache.put(keys[1], parsed[1])
    assert parsed[0] is cache.get(keys[0])  # now the most recent
    cache.put(keys[2], parsed[2])
    assert None is cache.get(keys[1])
    assert parsed[0] is cache.get(keys[0]) and parsed[2] is cache.get(keys[2])
