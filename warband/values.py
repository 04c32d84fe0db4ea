"""The one value model: the scalars that cross the wire and enter planners, and facts built of them.

Every layer uses these definitions: the message catalog (``Order.args``, ``Percept.facts``...),
the world's percepts and events, the HTN fact database and GOAP world states.

**Equality.** Two values are equal when :func:`values_equal` says so, and nowhere else differs:

- ``True`` is not ``1`` and ``False`` is not ``0`` (Python says they are; a planner must not,
  or a fact ``("armed", 1)`` would answer a query for ``("armed", True)``);
- numbers compare by value, so ``1`` equals ``1.0`` (MessagePack keeps int and float apart, but
  a float field accepts an integer, and ``12`` metres is ``12.0`` metres);
- ``None`` equals only ``None``; strings equal only strings.

Sets and dicts that must honour this equality key their entries by :func:`value_key` /
:func:`fact_key`, which stand a bool in for a tag that equals nothing else.

**Text.** :func:`format_value` writes a value the way the HTN and GOAP texts read it, with one
quoting rule: a string is written bare when it looks like a name (``bot-3``, ``w7``,
``door.open``, ``[Soldier:TimV]``; see :data:`BARE_STRING`), otherwise in double quotes
with ``\\`` and ``"`` escaped.

**Projections** of a Percept fact into the planners:

- to an HTN fact: the fact as it is, as a tuple (:func:`htn_fact`);
- to GOAP properties (:func:`goap_properties`), by position:

  ====================================  ==================================================
  fact                                  GOAP properties
  ====================================  ==================================================
  ``("alarm",)``                        ``alarm = true`` (a fact without arguments holds)
  ``("hp", 80)``                        ``hp = 80``
  ``("at", "bot-3", "w7")``             ``at(bot-3) = "w7"``
  ``("sees", "bot-7", "w9", 12.5)``     ``sees(bot-7) = "w9"``, ``sees.2(bot-7) = 12.5``
  ====================================  ==================================================

  With two or more arguments the first is the subject (an entity id, a str); the next is the
  value of ``name(subject)`` and each later argument ``i`` (counting from 2) is the value of
  ``name.i(subject)``, so no argument is lost. A ``None`` value projects to no property (in GOAP
  an absent key is one that has no value).
"""

from __future__ import annotations

import math
import re
from typing import TypeAlias

from .exceptions import WarbandError

Scalar: TypeAlias = bool | int | float | str | None
"""One MessagePack nil, bool, int, float or str."""

Value: TypeAlias = Scalar | tuple[Scalar, ...]
"""What crosses the wire or enters a planner: a scalar, or a list of scalars (a squad's
members, a corridor's waypoints), which is a MessagePack array on the wire and a tuple in
memory, so that it can be a fact's argument and a planner's binding like any other value."""

Fact: TypeAlias = tuple[Value, ...]
"""A fact ``(name, arg1, arg2, ...)``: a str name, then values. On the wire: a MessagePack array."""

GoapProperty: TypeAlias = tuple[str, Value]
"""A GOAP property as text key and value: ``("at(bot-3)", "w7")``; see :func:`goap_properties`."""

BARE_STRING = re.compile(r"[A-Za-z_\[][A-Za-z0-9_.:\-\[\]/*+]*")
"""Strings written without quotes: names, ids, enum members (``bot-3``, ``[Soldier:TimV]``).
Never operator-like (no ``=``, ``<``, ``>``, ``!``, quotes or spaces), so both readers tell a
value from junk such as ``a === true``."""
_RESERVED = frozenset({"true", "false", "nil"})
"""Bare words that read as something other than a string; a string spelled so is quoted."""

# Type tuples for the isinstance checks every fact goes through: a union (`str | int`) would be
# built anew at every call, which costs as much again as the check.
_PLAIN_VALUES = (bool, int, str)
_STR_OR_INT = (str, int)
_NUMBERS = (int, float)
_SEQUENCES = (tuple, list)

_SUBJECT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:\-]*")
"""An entity id usable as a GOAP key's subject (as :class:`warband.planning.Key` reads it)."""


class _Tag:
    """Stands in for a bool inside keys: equal only to itself, so it never meets ``1`` or ``0``."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


_TRUE = _Tag("<true>")
_FALSE = _Tag("<false>")


def values_equal(a: object, b: object) -> bool:
    """The one equality of values: Python's ``==``, except that a bool equals only a bool (in
    a list too, item by item)."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(map(values_equal, a, b))
    return a == b and (a.__class__ is bool) is (b.__class__ is bool)


def value_key(value: Value) -> object:
    """A hashable stand-in for ``value``: ``value_key(a) == value_key(b)`` exactly when
    :func:`values_equal` holds. It is the value itself unless the value is a bool."""
    if value is True:
        return _TRUE
    if value is False:
        return _FALSE
    if isinstance(value, tuple):
        return tuple(value_key(item) for item in value)
    return value


def fact_key(fact: Fact) -> Fact:
    """A hashable stand-in for ``fact`` that honours :func:`values_equal` position by position.

    It is ``fact`` itself (the same object) when the fact holds no bool, the common case, so a
    set of facts keyed by it costs nothing extra for facts without flags.
    """
    # Two scans of the values' types in C: half the instructions of the generator expressions
    # they replace (a non-exact bucket of the planner's database keys every fact it is asked
    # about, and an agent's memory asks about hundreds a tick).
    if bool in map(type, fact) or tuple in map(type, fact):
        return tuple(value_key(value) for value in fact)  # type: ignore[misc]  # tags stand in
    return fact


def value_problem(value: object) -> str | None:
    """Why ``value`` is not a :data:`Value` fit for a planner, or None when it is.

    A tuple of scalars is a value (a list on the wire). Refused: other types (lists, dicts,
    objects...), nested tuples, and floats that are not finite (``nan`` equals nothing, not
    even itself, so a fact holding it could never be found again).
    """
    if value is None or isinstance(value, _PLAIN_VALUES):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value!r} is not a finite number"
    if isinstance(value, tuple):
        for item in value:
            if isinstance(item, tuple) or value_problem(item) is not None:
                return f"{value!r} holds {item!r}; a list value holds scalars only"
        return None
    if isinstance(value, list):
        return f"{value!r} is a list; pass a tuple (a list value is a tuple in memory)"
    return f"{value!r} has type {type(value).__name__}; use None, bool, int, float, str or a tuple"


def check_value(value: object, where: str, error: type[WarbandError] = WarbandError) -> Value:
    """Return ``value`` if it is a :data:`Value`, else raise ``error`` naming ``where``."""
    problem = value_problem(value)
    if problem is not None:
        raise error(f"{where}: value {problem}")
    return value  # type: ignore[return-value]  # value_problem checked the type


def check_fact(fact: object, error: type[WarbandError] = WarbandError) -> Fact:
    """Return ``fact`` as a tuple if it is a :data:`Fact` (a list, as on the wire, is accepted);
    else raise ``error`` saying what is wrong."""
    if not isinstance(fact, _SEQUENCES) or not fact or not isinstance(fact[0], str):
        raise error(f"bad fact {fact!r}: a fact is a tuple (name, arg1, ...) whose name is a str")
    for value in fact[1:]:
        # str and int (bool included) first: the planner checks every fact it adds; then a
        # float, finite when it minus itself is 0 (inf and nan give nan), without a call.
        if not isinstance(value, _STR_OR_INT):
            if value.__class__ is float and value - value == 0.0:
                continue
            problem = value_problem(value)
            if problem is not None:
                raise error(f"bad fact {tuple(fact)!r}: argument {problem}")
    return fact if isinstance(fact, tuple) else tuple(fact)


def format_value(value: Value) -> str:
    """The text form of a value: ``true``, ``false``, ``nil``, ``12``, ``12.5``, ``bot-3``,
    ``"two words"``, ``[bot-1 bot-2]`` (a list). A string is bare when it looks like a name
    and is not a reserved word."""
    if isinstance(value, tuple):
        return "[" + " ".join(format_value(item) for item in value) + "]"
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _NUMBERS):
        return repr(value)
    if BARE_STRING.fullmatch(value) and value.lower() not in _RESERVED:
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def format_fact(fact: Fact) -> str:
    """``("at", "bot-1", 3)`` -> ``(at bot-1 3)``."""
    return "(" + " ".join(format_value(value) for value in fact) + ")"


def htn_fact(fact: Fact | list[Value], error: type[WarbandError] = WarbandError) -> Fact:
    """The HTN projection of a Percept fact: the fact as it is, as a tuple (checked; raises
    ``error`` for a bad fact)."""
    return check_fact(fact, error)


def goap_properties(
    fact: Fact | list[Value], error: type[WarbandError] = WarbandError
) -> list[GoapProperty]:
    """The GOAP projection of a Percept fact, as ``(key text, value)`` pairs; see the module
    docstring for the rule. Raises ``error`` for a fact that has none (a bad fact, or a
    subject that is not an entity id)."""
    checked = check_fact(fact, error)
    name: str = checked[0]  # type: ignore[assignment]  # check_fact checked the name
    args = checked[1:]
    if len(args) == 0:
        pairs: list[GoapProperty] = [(name, True)]
    elif len(args) == 1:
        pairs = [(name, args[0])]
    else:
        subject = args[0]
        if not isinstance(subject, str) or not _SUBJECT.fullmatch(subject):
            raise error(
                f"fact {checked!r} has no GOAP projection: its first argument {subject!r} is "
                "the subject of the key and must be an entity id such as 'bot-3'"
            )
        pairs = [(f"{name}({subject})", args[1])]
        pairs += [(f"{name}.{i}({subject})", value) for i, value in enumerate(args[2:], start=2)]
    return [(key, value) for key, value in pairs if value is not None]
