"""World-state properties for GOAP: keys with an optional subject, values, states and conditions.

A property is a key (a name, optionally about a subject: ``at(bot-3)``) with a value: a
:data:`warband.values.Value` other than None (bool, int, float, or str for enums and entity ids;
an absent key is how GOAP says "no value"). A :class:`WorldState` is an immutable, hashable
assignment of values to keys; :meth:`WorldState.from_facts` builds one from Percept facts by the
projection :func:`warband.values.goap_properties` documents (``("at", "bot-3", "w7")`` ->
``at(bot-3) = w7``). A :class:`Condition` asks for ``key == value`` or ``key != value`` and may be
tagged ``achievable_by_any_agent`` (Boeda): another character could make it hold.

Strings that start with ``?`` are variables (``?node``); they may appear in the conditions and
effects of actions and goals, never in a world state. Bindings map variable names (without the
``?``) to values. Values compare by :func:`warband.values.values_equal`: ``True`` is not ``1``,
``1`` equals ``1.0``.

Condition text is ``key``, ``key == value`` or ``key != value``; :func:`parse_value` reads the
value (``true``/``false``, a number, a name such as ``bot-3``, a ``"quoted string"`` or a
``?variable``) and refuses anything else, naming the text: ``a === true`` is an error, not the
string ``"= true"``. A bare name is a string, so ``a == ture`` compares with the string
``"ture"``; :class:`warband.planning.Brain` reports a key compared with values of two kinds
(a bool here, a str there), which catches such typos.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from ...exceptions import PlanningError
from ...values import Fact, format_value, goap_properties, value_key, value_problem, values_equal

StateValue: TypeAlias = bool | int | float | str
"""A property value: a :data:`warband.values.Value` other than None (a flag, a count, a
distance, or a name: an enum member or an entity id)."""

_NAME = r"[A-Za-z_][A-Za-z0-9_.\-]*"
_SUBJECT = r"\??[A-Za-z0-9_][A-Za-z0-9_.:\-]*"
_KEY_RE = re.compile(rf"^\s*({_NAME})\s*(?:\(\s*({_SUBJECT})\s*\))?\s*$")
_CONDITION_RE = re.compile(r"^(?P<key>[^=!<>\"']+?)\s*(?:(?P<op>==|!=)(?P<value>.*))?$", re.DOTALL)
_INT_RE = re.compile(r"^[+-]?[0-9]+$")
_FLOAT_RE = re.compile(r"^[+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?:\.[0-9]*)?[eE][+-]?[0-9]+)$")
_BARE_VALUE_RE = re.compile(r"^\??[A-Za-z0-9_\[][A-Za-z0-9_.:\-\[\]/*+]*$")
"""A value written without quotes: a name, an id (``bot-3``, ``1st-squad``) or a ``?variable``;
never an operator-like or spaced text. A superset of what :func:`format_value` writes bare."""


def is_variable(value: object) -> bool:
    """True for a variable token such as ``"?node"``."""
    return isinstance(value, str) and value.startswith("?")


def _variables_of(key: Key, value: StateValue) -> frozenset[str]:
    found = [v[1:] for v in (key.subject, value) if isinstance(v, str) and v.startswith("?")]
    return frozenset(found)


def _check_value(value: object, where: str) -> StateValue:
    if value is None:
        raise PlanningError(
            f"{where}: value None; a GOAP property has no None value: leave the key out of the "
            "state (an absent key has no value)"
        )
    if isinstance(value, tuple | list):
        raise PlanningError(
            f"{where}: value {value!r} is a list; a GOAP property holds one bool, int, float "
            "or str (a list belongs in an HTN fact)"
        )
    problem = value_problem(value)
    if problem is not None:
        raise PlanningError(f"{where}: value {problem}")
    return value  # type: ignore[return-value]  # value_problem checked the type


def value_text(value: StateValue) -> str:
    """A value's text form (:func:`warband.values.format_value`); a variable (``?node``) is
    written as it is."""
    return value if is_variable(value) else format_value(value)  # type: ignore[return-value]


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


_VALUE_HELP = 'write true, false, a number, a name such as bot-3, a ?variable, or a "quoted string"'


def parse_value(text: str) -> StateValue:
    """Read a value's text form, as :func:`warband.values.format_value` writes it.

    ``true``/``false`` (any case), an integer, a float (``12.5``), a ``"quoted"`` or
    ``'quoted'`` string (``\\`` escapes the next character), a bare name (``bot-3``) or a
    ``?variable``. Anything else raises PlanningError naming the text: an empty value, an
    unbalanced quote, operator-like or spaced text (``= true``, ``two words``).
    """
    stripped = text.strip()
    if not stripped:
        raise PlanningError(f"empty value {text!r}: {_VALUE_HELP}")
    lowered = stripped.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if _INT_RE.match(stripped):
        return int(stripped)
    if _FLOAT_RE.match(stripped):
        return _check_value(float(stripped), f"value {stripped!r}")
    if stripped[0] in "\"'":
        return _parse_quoted(stripped)
    if _BARE_VALUE_RE.match(stripped):
        return stripped
    raise PlanningError(f"cannot read value {stripped!r}: {_VALUE_HELP}")


def _parse_quoted(text: str) -> str:
    quote = text[0]
    chars: list[str] = []
    i = 1
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            chars.append(text[i + 1])
            i += 2
            continue
        if ch == quote:
            if i != len(text) - 1:
                raise PlanningError(
                    f"cannot read value {text!r}: text after the closing {quote}; "
                    "quote the whole value"
                )
            return "".join(chars)
        chars.append(ch)
        i += 1
    raise PlanningError(f"cannot read value {text!r}: unbalanced {quote}; close the quote")


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
            return (
                self._hash == other._hash
                and self._values == other._values
                # dict equality says True == 1; the one equality does not
                and all(values_equal(v, other._values[k]) for k, v in self._values.items())
            )
        return NotImplemented

    @classmethod
    def from_facts(cls, facts: Iterable[Fact]) -> WorldState:
        """The state holding the GOAP projection of ``facts`` (Percept facts, HTN facts): see
        :func:`warband.values.goap_properties`. Two facts giving one key two values are an
        error naming both (``("at", "bot-3", "w7")`` and ``("at", "bot-3", "w8")``)."""
        values: dict[Key, StateValue] = {}
        source: dict[Key, Fact] = {}
        for fact in facts:
            for text, value in goap_properties(fact, PlanningError):
                key = Key.parse(text)
                if key in values and not values_equal(values[key], value):
                    raise PlanningError(
                        f"facts {source[key]!r} and {tuple(fact)!r} both set the GOAP property "
                        f"{key} ({value_text(values[key])} and {value_text(value)}); "  # type: ignore[arg-type]
                        "a world state holds one value per key"
                    )
                values[key] = _check_value(value, f"fact {tuple(fact)!r}")
                source[key] = tuple(fact)
        return cls(values)

    def __repr__(self) -> str:
        body = ", ".join(f"{key}: {value_text(value)}" for key, value in self._values.items())
        return f"WorldState({{{body}}})"

    def value(self, key: KeyLike) -> StateValue | None:
        """The value of ``key`` (text form accepted), or None when the state does not set it."""
        return self._values.get(as_key(key))

    def to_dict(self) -> dict[Key, StateValue]:
        """A fresh dict of the values, for code that replays many small updates."""
        return dict(self._values)

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
        return ", ".join(f"{name}={value_text(value)}" for name, value in self._items.items())

    def bind(self, variable: str, value: StateValue) -> Bindings | None:
        """These bindings plus ``variable = value``, or None if it is already bound otherwise."""
        name = variable.removeprefix("?")
        if name in self._items:
            return self if values_equal(self._items[name], value) else None
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
    return bindings if values_equal(pattern, value) else None


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
                f"cannot read condition {text!r}: expected 'key', 'key == value' or "
                "'key != value' (two '=' or '!='), e.g. 'door_open(cell) == true'"
            )
        try:
            key = Key.parse(match.group("key"))
        except PlanningError as exc:
            raise PlanningError(f"cannot read condition {text!r}: {exc}") from None
        op = match.group("op")
        if op is None:
            return cls(key, True, False, achievable_by_any_agent)
        try:
            value = parse_value(match.group("value"))
        except PlanningError as exc:
            raise PlanningError(f"cannot read condition {text!r}: {exc}") from None
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
                and values_equal(self.value, other.value)
                and self.negated == other.negated
                and self.achievable_by_any_agent == other.achievable_by_any_agent
            )
        return NotImplemented

    def holds(self, state: Mapping[Key, StateValue]) -> bool:
        """True when this (ground) condition holds in ``state``."""
        current = state.get(self.key)
        same = current is not None and values_equal(current, self.value)
        return same != self.negated

    def accepts(self, value: StateValue) -> bool:
        """True when a key holding ``value`` satisfies this condition."""
        return values_equal(value, self.value) != self.negated

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
        return f"{self.key} {op} {value_text(self.value)}"

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
        return f"{self.key} = {value_text(self.value)}"

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
            result.extend({value_key(c.value): c for c in group}.values())
    return frozenset(result)


def sorted_conditions(conditions: Iterable[Condition]) -> tuple[Condition, ...]:
    """``conditions`` in the deterministic :meth:`Condition.sort_key` order."""
    return tuple(sorted(conditions, key=Condition.sort_key))
