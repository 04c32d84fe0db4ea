"""Tests of the SHOP-like domain syntax: what it reads, the errors it reports (file, line,
column, what was expected), and printing domains back to text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warband.exceptions import DomainSyntaxError, PlanningError
from warband.planning import (
    And,
    Bind,
    Call,
    ConstRef,
    DomainBuilder,
    FactDB,
    HtnPlanner,
    Not,
    Or,
    Query,
    Var,
    format_domain,
    load_domain_file,
    parse_domain,
    query,
    task,
)
from warband.planning.domains.htn_library import BUNDLED_DOMAINS, load_domain
from warband.values import Value

ATTACK = """
; a comment
(:domain attack)
(:constant @range 30)
(:constant @self)
(:primitive !fire ?t)
(:primitive !load ?w :add ((loaded ?w)) :del ((empty ?w)))
(:method (attack ?t)
  (:branch \u201cuse bullets\u201d                 ; typographic quotes, as in the paper
    (and (dist ?t ?d) (call le ?d @range) (not (friend ?t)) (or (armed ?t) (angry ?t))
         (?x = (call add ?d 1.5)))
    ((!load rifle) (!fire ?t)))
  (:branch "wait" (?t = true) ((!continue))))
"""


def test_the_text_syntax_reads_every_construct() -> None:
    domain = parse_domain(ATTACK)
    assert "attack" == domain.name
    assert {"range": 30, "self": None} == dict(domain.constants)
    load = domain.primitives["!load"]
    assert (Query("loaded", (Var("w"),)),) == load.add
    assert (Query("empty", (Var("w"),)),) == load.delete
    method = domain.methods["attack"]
    assert (Var("t"),) == method.params
    bullets, wait = method.branches
    assert "use bullets" == bullets.name
    assert (
        And(
            (
                Query("dist", (Var("t"), Var("d"))),
                Call("le", (Var("d"), ConstRef("range"))),
                Not(Query("friend", (Var("t"),))),
                Or((Query("armed", (Var("t"),)), Query("angry", (Var("t"),)))),
                Bind(Var("x"), Call("add", (Var("d"), 1.5))),
            )
        )
        == bullets.condition
    )
    assert ("(!load rifle)", "(!fire ?t)") == tuple(str(t) for t in bullets.subtasks)
    assert True is wait.continuation
    assert () == wait.subtasks
    assert Bind(Var("t"), True) == wait.condition


def test_a_parsed_domain_equals_the_same_domain_built_in_python() -> None:
    text = """
    (:primitive !fire ?t)
    (:method (behave)
      (:branch "attack" (threat ?t) ((!fire ?t)))
      (:branch "idle" () ()))
    """
    b = DomainBuilder("domain")
    b.primitive("!fire", "?t")
    b.method("behave").branch("attack", query("threat", "?t"), [task("!fire", "?t")]).branch("idle")
    built = b.build()
    parsed = parse_domain(text)
    assert built.methods == parsed.methods
    assert built.primitives == parsed.primitives


def test_values_are_numbers_booleans_strings_and_symbols() -> None:
    domain = parse_domain(
        '(:primitive !say ?a ?b ?c ?d ?e ?f)\n(:method (t) (:branch "b" () '
        '((!say 3 -2.5 true "two words" [Soldier:TimV] "42")))))'.replace(")))))", "))))")
    )
    (sub,) = domain.methods["t"].branches[0].subtasks
    assert (3, -2.5, True, "two words", "[Soldier:TimV]", "42") == sub.args


def _error(text: str) -> DomainSyntaxError:
    with pytest.raises(DomainSyntaxError) as info:
        parse_domain(text, path="bad.htn")
    return info.value


@pytest.mark.parametrize(
    ("text", "line", "column", "expected"),
    [
        (
            '(:primitive !fire ?t)\n(:method (behave)\n  (:branch "b" () ((!fire x)))\n',
            2,
            1,
            r"unclosed '\(': expected '\)'",
        ),
        ("(:primitive !fire ?t))\n", 1, 22, r"unexpected '\)'"),
        ('(:method (behave)\n  (:branch "b () ()))\n', 2, 12, "unterminated string"),
        ("(:methd (behave))\n", 1, 2, "expected a top-level form starting with one of :domain"),
        ('(:method (behave)\n  (:branch "b" ()))\n', 2, 3, 'expected \\(:branch "name"'),
        ('(:method (attack threat)\n  (:branch "b" () ()))\n', 1, 18, "expected a \\?variable"),
        ("(:primitive !x)\n(:primitive !x)\n", 2, 1, "defined twice \\(first at line 1\\)"),
        ('(:method (behave)\n  (:branch "b" () ((attak x))))\n', 2, 20, "unknown compound task"),
        (
            '(:primitive !fire ?t)\n(:method (behave)\n  (:branch "b" ()\n'
            "    ((!fire x) (!reload))))\n",
            4,
            16,
            "unknown primitive task '!reload'.*Known primitives: !fire",
        ),
        (
            '(:method (behave)\n  (:branch "b" (and (dist ?d) (call near ?d)) ()))\n',
            2,
            31,
            "unknown function 'near'",
        ),
        (
            '(:method (behave)\n  (:branch "b" (dist @range) ()))\n',
            2,
            22,
            "unknown constant @range",
        ),
        (
            "(:primitive !fire ?t)\n(:method (behave)\n"
            '  (:branch "b" (threat ?t) ((!fire ?target))))\n',
            3,
            36,
            r"unbound variable \?target",
        ),
        (
            '(:primitive !fire ?t)\n(:method (behave)\n  (:branch "b" () ((!fire))))\n',
            3,
            20,
            r"task '!fire' takes 1 argument\(s\) but",
        ),
        (
            '(:primitive !go)\n(:method (b)\n  (:branch "x" () ((!go) (!continue))))\n',
            3,
            19,
            r"\(!continue\) must be the only subtask",
        ),
    ],
)
def test_malformed_domains_name_the_file_line_and_column(
    text: str, line: int, column: int, expected: str
) -> None:
    error = _error(text)
    assert ("bad.htn", line, column) == (error.path, error.line, error.column)
    assert str(error).startswith(f"bad.htn:{line}:{column}: ")
    assert re.search(expected, str(error)), str(error)


def test_a_domain_file_error_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.htn"
    path.write_text("(:primitive !x\n", encoding="utf-8")
    with pytest.raises(DomainSyntaxError) as info:
        load_domain_file(path)
    assert str(path) == info.value.path
    assert (1, 1) == (info.value.line, info.value.column)


def test_a_missing_domain_file_is_a_planning_error(tmp_path: Path) -> None:
    with pytest.raises(PlanningError, match="cannot read HTN domain file"):
        load_domain_file(tmp_path / "nope.htn")


def test_a_domain_file_is_named_after_its_stem(tmp_path: Path) -> None:
    path = tmp_path / "guard.htn"
    path.write_text('(:primitive !idle)\n(:method (behave) (:branch "b" () ((!idle))))\n')
    domain = load_domain_file(path)
    assert "guard" == domain.name
    result = HtnPlanner(domain).plan(FactDB(), "behave")
    assert result.plan is not None and ("(!idle)",) == tuple(str(s) for s in result.plan.steps)


@pytest.mark.parametrize("name", BUNDLED_DOMAINS)
def test_bundled_domains_survive_a_round_trip_through_text(name: str) -> None:
    domain = load_domain(name)
    again = parse_domain(format_domain(domain), functions=domain.functions)
    assert domain.name == again.name
    assert domain.methods == again.methods
    assert domain.primitives == again.primitives
    assert domain.constants == again.constants
    assert format_domain(domain) == format_domain(again)


def test_a_builder_domain_with_calls_and_bindings_survives_a_round_trip() -> None:
    text = ATTACK
    domain = parse_domain(text)
    assert domain.methods == parse_domain(format_domain(domain)).methods


def test_task_arguments_may_be_nested_calls_evaluated_when_planning() -> None:
    # The shape of Killzone 3's Listing 29.3: an order whose argument is a call of a call.
    text = """
    (:primitive !order ?member ?what ?value)
    (:method (advance ?m ?marker)
      (:branch "advance" ()
        ((!order ?m set_area (call areas_to (call waypoint_of ?marker))))))
    """
    functions = {
        "waypoint_of": lambda facts, marker: f"wp-{marker}",
        "areas_to": lambda facts, wp: f"areas-to-{wp}",
    }
    domain = parse_domain(text, functions=functions)
    result = HtnPlanner(domain).plan(FactDB(), task("advance", "bot-1", "flag"))
    assert result.plan is not None
    assert ("(!order bot-1 set_area areas-to-wp-flag)",) == tuple(str(s) for s in result.plan.steps)


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        st.text(alphabet=st.characters(codec="ascii", exclude_categories=["Cc"]), max_size=12),
        st.integers(-(10**12), 10**12),
        st.floats(allow_nan=False, allow_infinity=False),
        st.booleans(),
    )
)
def test_every_value_prints_as_text_that_reads_back_as_the_same_value(value: Value) -> None:
    domain = DomainBuilder("v")
    domain.primitive("!say", "?x")
    domain.method("t").branch("b", subtasks=[task("!say", value)])
    text = format_domain(domain.build()) if not _is_term_text(value) else None
    if text is None:
        return  # "?x" and "@x" strings are variables/constants in the builder too
    (sub,) = parse_domain(text).methods["t"].branches[0].subtasks
    assert (type(value), value) == (type(sub.args[0]), sub.args[0])


def _is_term_text(value: object) -> bool:
    return isinstance(value, str) and len(value) > 1 and value[0] in "?@"
