"""World-state properties for GOAP: keys with an optional subject, values, states and conditions.

A property is a key (a name, optionally about a subject: ``at(bot-3)``) with a value (bool, int,
or str for enums and entity ids). A :class:`WorldState` is an immutable, hashable assignment of
values to keys. A :class:`Condition` asks for ``key == value`` or ``key != value`` and may be
tagged ``achievable_by_any_agent`` (Boeda): another character could make it hold.

Strings that start with ``?`` are variables (``?node``); they may appear in the conditions and
effects of actions and goals, never in a world state. Bindings map variable names (without the
``?``) to values. One key should always carry values of one type: ``True`` and ``1`` compare
equal in Python, so mixing them on one key makes two conditions indistinguishable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from ..exceptions import PlanningError

StateValue: TypeAlias = bool | int | str
"""A property value: a flag, a count, or a name (an enum member or an entity id)."""

_NAME = r"[A-Za-z_][A-Za-z0-9_.\-]*"
_SUBJECT = r"\??[A-Za-z0-9_][A-Za-z0-9_.:\-]*"
_KEY_RE = re.compile(rf"^\s*({_NAME})\s*(?:\(\s*({_SUBJECT})\s*\))?\s*$")
_CONDITION_RE = re.compile(r"^(?P<key>[^=!]+?)\s*(?:(?P<op>==|!=)\s*(?P<value>.+?))?\s*$")
_INT_RE = re.compile(r"^[+-]?[0-9]+$")
_BARE_STR_RE = re.compile(r"^[A-Za-z0-9_.:\-?]+$")


def is_variable(value: object) -> bool:
    """True for a variable token such as ``"?node"``."""
    return isinstance(value, str) and value.startswith("?")


def _variables_of(key: Key, value: StateValue) -> frozenset[str]:
    found = [v[1:] for v in (key.subject, value) if isinstance(v, str) and v.startswith("?")]
    return frozenset(found)


def _check_value(value: object, where: str) -> StateValue:
    if isinstance(value, bool | int | str):
        return value
    raise PlanningError(
        f"{where}: value {value!r} has type {type(value).__name__}; "
        "world-state values must be bool, int or str"
    )


_PARSED_KEYS: dict[str, Key] = {}
"""Keys read from text, shared: the same text gives the same (immutable) object, so the
planner's dict and set look-ups find keys by identity instead of comparing fields."""
_PARSED_KEYS_KEPT = 1 << 16
"""A bound on the shared keys, so that endless distinct texts cannot grow it forever."""


class _CachedHash:
    """Gives a frozen slotted dataclass a slot for its hash, filled on first use.

    Keys and conditions are hashed over and over by the planner (sets of conditions are its
    search nodes); the generated ``__hash__`` rebuilds a tuple of the fields on every call. The
    slot is not a dataclass field, so equality, repr and pickling ignore it (a copy or an
    unpickled object just fills it again).
    """

    __slots__ = ("_hash",)
    _hash: int


@dataclass(frozen=True, slots=True)
class Key(_CachedHash):
    """A world-state property name with an optional subject: ``Key("at", "bot-3")``.

    The subject may be a variable (``Key("holding", "?item")``) inside action effects and
    conditions. ``str(key)`` gives the text form ``at(bot-3)``; :meth:`parse` reads it back.
    """

    name: str
    subject: str | None = None

    def __post_init__(self) -> None:
        if not re.fullmatch(_NAME, self.name):
            raise PlanningError(
                f"bad property name {self.name!r}: use letters, digits, '_', '.', '-' "
                "and start with a letter or '_'"
            )
        if self.subject is not None and not re.fullmatch(_SUBJECT, self.subject):
            raise PlanningError(
                f"bad subject {self.subject!r} for property {self.name!r}: use an entity id "
                "such as 'bot-3' or a variable such as '?node'"
            )

    @classmethod
    def parse(cls, text: str) -> Key:
        """Read ``name`` or ``name(subject)``; raise PlanningError naming the bad text."""
        if cls is Key:
            known = _PARSED_KEYS.get(text)
            if known is not None:
                return known
        match = _KEY_RE.match(text)
        if match is None:
            raise PlanningError(
                f"cannot read property key {text!r}: expected 'name' or 'name(subject)', "
                "e.g. 'hungry' or 'at(bot-3)'"
            )
        key = cls(match.group(1), match.group(2))
        if cls is Key and len(_PARSED_KEYS) < _PARSED_KEYS_KEPT:
            _PARSED_KEYS[text] = key
        return key

    @property
    def has_variable(self) -> bool:
        """True when the subject is a variable such as ``?item``."""
        return is_variable(self.subject)

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            value = hash((self.name, self.subject))
            object.__setattr__(self, "_hash", value)
            return value

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, Key) and other.__class__ is self.__class__:
            return self.name == other.name and self.subject == other.subject
        return NotImplemented

    def sort_key(self) -> tuple[str, bool, str]:
        """A total order: by name, then global keys before keys with a subject."""
        return (self.name, self.subject is not None, self.subject or "")

    def __str__(self) -> str:
        return self.name if self.subject is None else f"{self.name}({self.subject})"

    def __repr__(self) -> str:
        return (
            f"Key({str(self)!r})"
            if self.subject is None
            else f"Key({self.name!r}, {self.subject!r})"
        )


KeyLike: TypeAlias = Key | str
"""A :class:`Key` or its text form ``name(subject)``."""

PropertyMap: TypeAlias = Mapping[Any, object]
"""``{key: value}`` with keys as :class:`Key` objects or text; values are checked when read
(typed loosely so that a literal such as ``{"at(me)": "n1", "armed": True}`` type-checks)."""

ValuesLike: TypeAlias = PropertyMap | Iterable[tuple[KeyLike, StateValue]]
"""Key/value pairs as a mapping or as pairs; keys as :class:`Key` objects or text."""


def as_key(key: KeyLike) -> Key:
    """Return ``key`` as a :class:`Key`, parsing the text form if needed."""
    if isinstance(key, Key):
        return key
    if isinstance(key, str):
        return Key.parse(key)
    raise PlanningError(f"property key {key!r} must be a Key or text such as 'at(bot-3)'")


def _pairs(values: ValuesLike) -> Iterator[tuple[Key, StateValue]]:
    pairs: Iterable[tuple[Any, object]] = values.items() if isinstance(values, Mapping) else values
    for raw_key, raw_value in pairs:
        key = as_key(raw_key)
        yield key, _check_value(raw_value, f"property {key}")


def parse_value(text: str) -> StateValue:
    """Read a value's text form: ``true``/``false``, an integer, or a (maybe quoted) string."""
    stripped = text.strip()
    lowered = stripped.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if _INT_RE.match(stripped):
        return int(stripped)
    if len(stripped) >= 2 and stripped[0] == stripped[-1] and stripped[0] in "\"'":
        return stripped[1:-1]
    if not stripped:
        raise PlanningError("empty value: write true, false, an integer or a name")
    return stripped


def format_value(value: StateValue) -> str:
    """The text form of a value; :func:`parse_value` reads it back to an equal value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    needs_quotes = (
        not _BARE_STR_RE.match(value)
        or value.lower() in ("true", "false")
        or bool(_INT_RE.match(value))
    )
    return f'"{value}"' if needs_quotes else value


class WorldState(Mapping[Key, StateValue]):
    """An immutable, hashable assignment of values to keys.

    Build one from a mapping (or pairs) whose keys are :class:`Key` objects or their text
    form: ``WorldState({"at(bot-3)": "n1", "hungry": False})``. A key that is absent has no
    value: ``key == v`` does not hold for any ``v`` and ``key != v`` holds for every ``v``.
    Iteration order is sorted by key, so equal states iterate identically.
    """

    __slots__ = ("_hash", "_values")

    def __init__(self, values: ValuesLike = ()) -> None:
        collected: dict[Key, StateValue] = {}
        for key, value in _pairs(values):
            if key.has_variable:
                raise PlanningError(f"world state key {key} has a variable subject; use an id")
            if is_variable(value):
                raise PlanningError(
                    f"world state key {key} has the variable {value!r} as its value; "
                    "world states hold concrete values only"
                )
            collected[key] = value
        self._values = dict(sorted(collected.items(), key=lambda item: item[0].sort_key()))
        self._hash = hash(frozenset(self._values.items()))

    def __getitem__(self, key: Key) -> StateValue:
        return self._values[key]

    def __iter__(self) -> Iterator[Key]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def get(self, key: Key, default: Any = None) -> Any:
        """The value of ``key``, or ``default``; the mixin's version goes through a raised
        KeyError for every absent key, and conditions are checked against states constantly."""
        return self._values.get(key, default)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, WorldState):
            return self._hash == other._hash and self._values == other._values
        return NotImplemented

    def __repr__(self) -> str:
        body = ", ".join(f"{key}: {format_value(value)}" for key, value in self._values.items())
        return f"WorldState({{{body}}})"

    def value(self, key: KeyLike) -> StateValue | None:
        """The value of ``key`` (text form accepted), or None when the state does not set it."""
        return self._values.get(as_key(key))

    def updated(self, changes: ValuesLike) -> WorldState:
        """A new state with ``changes`` applied on top of this one."""
        merged: dict[Key, StateValue] = dict(self._values)
        merged.update(WorldState(changes)._values)
        return WorldState._trusted(merged)

    @classmethod
    def _trusted(cls, values: dict[Key, StateValue]) -> WorldState:
        """A state from values that are already checked (plans replay many small updates)."""
        state = cls.__new__(cls)
        state._values = dict(sorted(values.items(), key=lambda item: item[0].sort_key()))
        state._hash = hash(frozenset(state._values.items()))
        return state

    def without(self, *keys: KeyLike) -> WorldState:
        """A new state in which ``keys`` have no value."""
        dropped = {as_key(key) for key in keys}
        return WorldState._trusted({k: v for k, v in self._values.items() if k not in dropped})

    def satisfies(self, conditions: Iterable[Condition]) -> bool:
        """True when every condition holds in this state."""
        return all(condition.holds(self) for condition in conditions)


class Bindings(Mapping[str, StateValue]):
    """Immutable, hashable variable bindings: variable name (without ``?``) to value."""

    __slots__ = ("_hash", "_items")

    def __init__(self, values: Mapping[str, StateValue] | None = None) -> None:
        items = {name.removeprefix("?"): value for name, value in (values or {}).items()}
        self._items = dict(sorted(items.items()))
        self._hash = hash(frozenset(self._items.items()))

    def __getitem__(self, name: str) -> StateValue:
        return self._items[name.removeprefix("?")]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.removeprefix("?") in self._items

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Bindings):
            return self._items == other._items
        return NotImplemented

    def __repr__(self) -> str:
        return f"Bindings({self._items!r})"

    def __str__(self) -> str:
        return ", ".join(f"{name}={format_value(value)}" for name, value in self._items.items())

    def bind(self, variable: str, value: StateValue) -> Bindings | None:
        """These bindings plus ``variable = value``, or None if it is already bound otherwise."""
        name = variable.removeprefix("?")
        if name in self._items:
            return self if self._items[name] == value else None
        return Bindings({**self._items, name: value})

    def resolve(self, value: StateValue) -> StateValue:
        """``value`` with a bound variable replaced by its value; anything else unchanged."""
        if isinstance(value, str) and value.startswith("?"):
            return self._items.get(value[1:], value)
        return value

    def resolve_key(self, key: Key) -> Key:
        """``key`` with a bound variable subject replaced by its value."""
        if key.subject is not None and key.subject.startswith("?"):
            bound = self._items.get(key.subject[1:])
            if bound is not None:
                return Key(key.name, str(bound))
        return key


NO_BINDINGS = Bindings()
"""The empty bindings."""


def unify_key(pattern: Key, key: Key, bindings: Bindings) -> Bindings | None:
    """Bindings under which ``pattern`` (maybe with a variable subject) equals ground ``key``."""
    if pattern.name != key.name:
        return None
    if pattern.subject is not None and pattern.subject.startswith("?"):
        if key.subject is None:
            return None
        return bindings.bind(pattern.subject, key.subject)
    return bindings if pattern.subject == key.subject else None


def unify_value(pattern: StateValue, value: StateValue, bindings: Bindings) -> Bindings | None:
    """Bindings under which ``pattern`` (a value or a variable) equals the ground ``value``."""
    if isinstance(pattern, str) and pattern.startswith("?"):
        return bindings.bind(pattern, value)
    return bindings if pattern == value and type(pattern) is type(value) else None


@dataclass(frozen=True, slots=True)
class Condition(_CachedHash):
    """``key == value`` (or ``key != value`` when ``negated``), optionally tagged.

    ``achievable_by_any_agent`` marks a condition another character could make hold, such as
    ``door_open(cell) == true`` (Boeda's condition tagging); only ``==`` conditions may carry it,
    because a helper is asked for a value, not for "anything but" one.
    """

    key: Key
    value: StateValue
    negated: bool = False
    achievable_by_any_agent: bool = False

    def __post_init__(self) -> None:
        _check_value(self.value, f"condition on {self.key}")
        if self.negated and self.achievable_by_any_agent:
            raise PlanningError(
                f"condition {self} is tagged achievable_by_any_agent but uses '!='; "
                "tag the '==' condition another agent should make hold instead"
            )

    @classmethod
    def parse(cls, text: str, *, achievable_by_any_agent: bool = False) -> Condition:
        """Read ``key == value``, ``key != value`` or a bare ``key`` (meaning ``== true``)."""
        match = _CONDITION_RE.match(text)
        if match is None or not match.group("key").strip():
            raise PlanningError(
                f"cannot read condition {text!r}: expected 'key == value' or 'key != value', "
                "e.g. 'door_open(cell) == true'"
            )
        key = Key.parse(match.group("key"))
        op = match.group("op")
        value = True if op is None else parse_value(match.group("value"))
        return cls(key, value, op == "!=", achievable_by_any_agent)

    @property
    def variables(self) -> frozenset[str]:
        """Names (without ``?``) of the variables in this condition."""
        return _variables_of(self.key, self.value)

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            value = hash((self.key, self.value, self.negated, self.achievable_by_any_agent))
            object.__setattr__(self, "_hash", value)
            return value

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, Condition) and other.__class__ is self.__class__:
            return (
                self.key == other.key
                and self.value == other.value
                and self.negated == other.negated
                and self.achievable_by_any_agent == other.achievable_by_any_agent
            )
        return NotImplemented

    def holds(self, state: Mapping[Key, StateValue]) -> bool:
        """True when this (ground) condition holds in ``state``."""
        current = state.get(self.key)
        same = current is not None and current == self.value and type(current) is type(self.value)
        return same != self.negated

    def accepts(self, value: StateValue) -> bool:
        """True when a key holding ``value`` satisfies this condition."""
        same = value == self.value and type(value) is type(self.value)
        return same != self.negated

    def substitute(self, bindings: Bindings) -> Condition:
        """This condition with bound variables replaced by their values."""
        key = bindings.resolve_key(self.key)
        value = bindings.resolve(self.value)
        if key is self.key and value is self.value:
            return self
        return Condition(key, value, self.negated, self.achievable_by_any_agent)

    def sort_key(self) -> tuple[str, str, bool, str, str]:
        """A total, process-independent order for deterministic iteration."""
        return (
            self.key.name,
            self.key.subject or "",
            self.negated,
            type(self.value).__name__,
            str(self.value),
        )

    def __str__(self) -> str:
        op = "!=" if self.negated else "=="
        return f"{self.key} {op} {format_value(self.value)}"

    def __repr__(self) -> str:
        tag = ", achievable_by_any_agent=True" if self.achievable_by_any_agent else ""
        return f"Condition.parse({str(self)!r}{tag})"


@dataclass(frozen=True, slots=True)
class Effect:
    """An action's effect: after it runs, ``key`` holds ``value`` (either may use variables)."""

    key: Key
    value: StateValue

    def __post_init__(self) -> None:
        _check_value(self.value, f"effect on {self.key}")

    @property
    def variables(self) -> frozenset[str]:
        """Names (without ``?``) of the variables in this effect."""
        return _variables_of(self.key, self.value)

    def substitute(self, bindings: Bindings) -> Effect:
        """This effect with bound variables replaced by their values."""
        key = bindings.resolve_key(self.key)
        value = bindings.resolve(self.value)
        if key is self.key and value is self.value:
            return self
        return Effect(key, value)

    def __str__(self) -> str:
        return f"{self.key} = {format_value(self.value)}"

    def __repr__(self) -> str:
        return f"Effect({self.key!r}, {self.value!r})"


def eq(key: KeyLike, value: StateValue, *, any_agent: bool = False) -> Condition:
    """The condition ``key == value``; ``any_agent`` tags it achievable_by_any_agent."""
    return Condition(as_key(key), value, False, any_agent)


def ne(key: KeyLike, value: StateValue) -> Condition:
    """The condition ``key != value``."""
    return Condition(as_key(key), value, True)


ConditionsLike: TypeAlias = PropertyMap | Iterable[Condition | str]
"""Conditions as a ``{key: value}`` mapping (all ``==``), or Condition objects / their text."""


def as_conditions(
    conditions: ConditionsLike, *, any_agent: Iterable[KeyLike] = ()
) -> tuple[Condition, ...]:
    """Normalise a :data:`ConditionsLike` to a tuple; keys in ``any_agent`` get the tag."""
    tagged = {as_key(key) for key in any_agent}
    if isinstance(conditions, Mapping):
        return tuple(eq(key, value, any_agent=key in tagged) for key, value in _pairs(conditions))
    result = []
    for item in conditions:
        condition = item if isinstance(item, Condition) else Condition.parse(item)
        if condition.key in tagged and not condition.achievable_by_any_agent:
            condition = Condition(condition.key, condition.value, condition.negated, True)
        result.append(condition)
    return tuple(result)


EffectsLike: TypeAlias = PropertyMap | Iterable[Effect]
"""Effects as a ``{key: value}`` mapping or as Effect objects."""


def as_effects(effects: EffectsLike) -> tuple[Effect, ...]:
    """Normalise ``{key: value}`` or Effect objects to a tuple of effects."""
    if isinstance(effects, Mapping):
        return tuple(Effect(key, value) for key, value in _pairs(effects))
    return tuple(effects)


def normalize(conditions: Iterable[Condition]) -> frozenset[Condition] | None:
    """The canonical form of a conjunction, or None when it cannot hold.

    Per key: two different ``==`` values, or ``== v`` with ``!= v``, are contradictory. An
    ``==`` makes the ``!=`` conditions on its key redundant, so they are dropped. Duplicates
    that differ only in the tag merge, keeping the tag: the property is shared either way.
    """
    by_key: dict[Key, list[Condition]] = {}
    for condition in conditions:
        by_key.setdefault(condition.key, []).append(condition)
    result: list[Condition] = []
    for key, group in by_key.items():
        equal = [c for c in group if not c.negated]
        if equal:
            value = equal[0].value
            if any(not c.accepts(value) for c in group):
                return None
            tagged = any(c.achievable_by_any_agent for c in equal)
            result.append(Condition(key, value, False, tagged))
        else:
            result.extend({(c.value, type(c.value)): c for c in group}.values())
    return frozenset(result)


def sorted_conditions(conditions: Iterable[Condition]) -> tuple[Condition, ...]:
    """``conditions`` in the deterministic :meth:`Condition.sort_key` order."""
    return tuple(sorted(conditions, key=Condition.sort_key))
