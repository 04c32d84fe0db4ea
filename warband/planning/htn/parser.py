"""The SHOP-like text syntax of HTN domains (Killzone 3, Listing 29.1): parse and print.

A domain file is a list of forms; ``;`` starts a comment that runs to the end of the line::

    (:domain turret)                        ; optional: the domain's name
    (:constant @bullet_rng 30)              ; a constant with its default value
    (:constant @self)                       ; a constant the agent must supply when planning
    (:fact firing ?threat "shooting at it")  ; a fact the domain remembers, with its fields
    (:primitive !fire_weapon ?target)       ; a primitive task and its parameters
    (:primitive !pickup ?b                  ; ... with effects on the planner's facts
        :del ((clear ?b) (on_table ?b)) :add ((holding ?b)))
    (:method (attack ?threat)               ; the method of a compound task
      (:branch "use bullets"                ; branches in priority order: name,
        (and (distance_to_threat ?threat ?dist)      ; precondition,
             (call le ?dist @bullet_rng))
        ((!fire_weapon ?threat)))           ; and subtasks
      (:branch "keep going" (firing ?threat) ((!continue))))   ; a continuation branch

Preconditions: ``()`` (always), ``(and c...)``, ``(or c...)``, ``(not c)``, ``(call fn arg...)``
(holds when the function returns a truthy value), ``(?var = value-or-call)`` (binds ``?var``,
or compares it when bound), and fact queries ``(name term...)``. Terms: ``?var``,
``@constant``, integers, floats, ``true``/``false``, ``"quoted strings"``, bare symbols
(strings). Task arguments may also be ``(call fn arg...)``, evaluated when the task is planned.

Every error raises :class:`~warband.exceptions.DomainSyntaxError` with the file, line and
column (both from 1) and says what was expected: syntax errors, unbalanced parentheses, and
reference errors (unknown method, primitive, function or constant; wrong number of arguments;
a variable used by a task or call before anything binds it).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, TypeAlias

from ...exceptions import DomainSyntaxError, PlanningError
from ...values import Value, format_value
from .facts import ConstRef, Term, Var
from .planner import (
    CONTINUE,
    And,
    ArgTerm,
    Bind,
    Branch,
    Call,
    FactDecl,
    HtnCondition,
    HtnDomain,
    HtnFunction,
    Method,
    Not,
    Or,
    Primitive,
    Query,
    Task,
    validate_domain,
)


@dataclass(frozen=True, slots=True)
class _Atom:
    text: str
    quoted: bool
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class _List:
    items: tuple[_Atom | _List, ...]
    line: int
    column: int


_Expr = _Atom | _List

_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-.]*")
_QUOTES = {'"': '"', "\u201c": "\u201d"}  # the paper's listings use typographic quotes


class _Parser:
    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.positions: dict[int, tuple[int, int]] = {}
        self.keep: list[object] = []  # keeps located nodes alive so their ids stay unique

    # --- errors and positions ---

    def fail(self, message: str, line: int, column: int) -> NoReturn:
        raise DomainSyntaxError(message, path=self.path, line=line, column=column)

    def fail_at(self, message: str, expr: _Expr) -> NoReturn:
        self.fail(message, expr.line, expr.column)

    def located(self, node: object, expr: _Expr) -> None:
        self.positions[id(node)] = (expr.line, expr.column)
        self.keep.append(node)

    # --- reading s-expressions ---

    def read(self) -> list[_Expr]:
        text = self.text
        line, column, i = 1, 1, 0
        stack: list[tuple[list[_Expr], int, int]] = [([], 0, 0)]
        while i < len(text):
            ch = text[i]
            if ch == "\n":
                line, column, i = line + 1, 1, i + 1
            elif ch.isspace():
                column, i = column + 1, i + 1
            elif ch == ";":
                while i < len(text) and text[i] != "\n":
                    i += 1
            elif ch == "(":
                stack.append(([], line, column))
                column, i = column + 1, i + 1
            elif ch == ")":
                if len(stack) == 1:
                    self.fail("unexpected ')': no '(' is open here; remove it", line, column)
                items, open_line, open_column = stack.pop()
                stack[-1][0].append(_List(tuple(items), open_line, open_column))
                column, i = column + 1, i + 1
            elif ch in _QUOTES:
                close = _QUOTES[ch]
                start_line, start_column = line, column
                j = i + 1
                chars: list[str] = []
                while j < len(text) and text[j] != close:
                    if text[j] == "\n":
                        self.fail(
                            f"unterminated string: expected {close} before the end of the line",
                            start_line,
                            start_column,
                        )
                    if text[j] == "\\" and j + 1 < len(text):
                        j += 1
                    chars.append(text[j])
                    j += 1
                if j >= len(text):
                    self.fail(
                        f"unterminated string: expected {close} before the end of the file",
                        start_line,
                        start_column,
                    )
                stack[-1][0].append(_Atom("".join(chars), True, start_line, start_column))
                column += j + 1 - i
                i = j + 1
            else:
                j = i
                while j < len(text) and not (text[j].isspace() or text[j] in '();"\u201c'):
                    j += 1
                stack[-1][0].append(_Atom(text[i:j], False, line, column))
                column += j - i
                i = j
        if len(stack) > 1:
            _, open_line, open_column = stack[-1]
            self.fail(
                "unclosed '(': expected ')' before the end of the file", open_line, open_column
            )
        return stack[0][0]

    # --- forms ---

    def domain(
        self, functions: Mapping[str, HtnFunction], default_name: str
    ) -> tuple[HtnDomain, dict[str, _Expr]]:
        name = default_name
        methods: dict[str, Method] = {}
        primitives: dict[str, Primitive] = {}
        constants: dict[str, Value] = {}
        facts: dict[str, FactDecl] = {}
        where: dict[str, _Expr] = {}
        for form in self.read():
            keyword = self.keyword(form)
            assert isinstance(form, _List)
            if keyword == ":domain":
                if len(form.items) != 2 or not isinstance(form.items[1], _Atom):
                    self.fail_at("expected (:domain name)", form)
                name = form.items[1].text
            elif keyword == ":constant":
                const, value = self.constant(form)
                self.unique(where, "@" + const, "constant", form)
                constants[const] = value
            elif keyword == ":primitive":
                primitive = self.primitive(form)
                self.located(primitive, form)
                self.unique(where, primitive.name, "primitive task", form)
                primitives[primitive.name] = primitive
            elif keyword == ":fact":
                fact = self.fact(form)
                self.located(fact, form)
                self.unique(where, "fact " + fact.name, "fact", form)
                facts[fact.name] = fact
            else:
                method = self.method(form)
                self.unique(where, method.task, "method", form)
                methods[method.task] = method
        domain = HtnDomain(name, methods, primitives, constants, dict(functions), facts)
        return domain, where

    def keyword(self, form: _Expr) -> str:
        known = (":domain", ":constant", ":fact", ":primitive", ":method")
        if (
            isinstance(form, _List)
            and form.items
            and isinstance(form.items[0], _Atom)
            and form.items[0].text in known
        ):
            return form.items[0].text
        got = form.items[0] if isinstance(form, _List) and form.items else form
        self.fail_at(
            "expected a top-level form starting with one of "
            + ", ".join(known)
            + f"; got {self.show(got)}",
            got,
        )

    def unique(self, where: dict[str, _Expr], key: str, kind: str, form: _List) -> None:
        first = where.get(key)
        if first is not None:
            self.fail_at(
                f"{kind} '{key}' is defined twice (first at line {first.line}); remove one",
                form,
            )
        where[key] = form

    def constant(self, form: _List) -> tuple[str, Value]:
        items = form.items
        if len(items) not in (2, 3) or not isinstance(items[1], _Atom):
            self.fail_at("expected (:constant @name) or (:constant @name value)", form)
        name = items[1].text
        if not name.startswith("@") or not _NAME.fullmatch(name[1:]):
            self.fail_at(f"expected a constant name like @max_range, got {name!r}", items[1])
        if len(items) == 2:
            return name[1:], None
        value = self.term(items[2])
        if isinstance(value, Var | ConstRef):
            self.fail_at("expected a value (number, true/false, string, symbol)", items[2])
        return name[1:], value

    def fact(self, form: _List) -> FactDecl:
        usage = '(:fact name ?field... ["what it means"])'
        items = list(form.items[1:])
        head = items.pop(0) if items else form
        if not isinstance(head, _Atom) or head.quoted or not _NAME.fullmatch(head.text):
            self.fail_at(f"expected {usage}", head)
        name = head.text
        doc = ""
        last = items[-1] if items else None
        if isinstance(last, _Atom) and last.quoted:
            doc = last.text
            items.pop()
        fields = [self.variable(item, f"field of fact {name!r}").name for item in items]
        return FactDecl(name, tuple(fields), doc)

    def primitive(self, form: _List) -> Primitive:
        items = form.items
        if len(items) < 2 or not isinstance(items[1], _Atom):
            self.fail_at("expected (:primitive !name ?param... [:add (...)] [:del (...)])", form)
        name = items[1].text
        if not name.startswith("!") or not _NAME.fullmatch(name[1:]):
            self.fail_at(
                f"expected a primitive task name starting with '!', got {name!r}", items[1]
            )
        params: list[Var] = []
        effects: dict[str, tuple[Query, ...]] = {":add": (), ":del": ()}
        rest = list(items[2:])
        while rest:
            item = rest.pop(0)
            if isinstance(item, _Atom) and item.text in effects and not item.quoted:
                if not rest or not isinstance(rest[0], _List):
                    self.fail_at(f"expected a list of facts after {item.text}", item)
                effects[item.text] = tuple(self.query(e) for e in self.lists(rest.pop(0)))
            else:
                params.append(self.variable(item, f"parameter of {name}"))
        return Primitive(name, tuple(params), effects[":add"], effects[":del"])

    def method(self, form: _List) -> Method:
        items = form.items
        if len(items) < 2 or not isinstance(items[1], _List) or not items[1].items:
            self.fail_at("expected (:method (task ?param...) (:branch ...)...)", form)
        head = items[1]
        first = head.items[0]
        if not isinstance(first, _Atom) or first.quoted or not _NAME.fullmatch(first.text):
            self.fail_at(
                "expected a compound task name (no '!') at the start of the method head", first
            )
        params = tuple(self.variable(p, f"parameter of {first.text}") for p in head.items[1:])
        branches = tuple(self.branch(b) for b in items[2:])
        if not branches:
            self.fail_at(f"method '{first.text}' has no branches; expected (:branch ...)", form)
        return Method(first.text, params, branches)

    def branch(self, form: _Expr) -> Branch:
        usage = '(:branch "name" precondition (subtask...))'
        if (
            not isinstance(form, _List)
            or not form.items
            or not isinstance(form.items[0], _Atom)
            or form.items[0].text != ":branch"
        ):
            self.fail_at(f"expected a branch {usage}, got {self.show(form)}", form)
        if len(form.items) != 4:
            self.fail_at(
                f"expected {usage}: a name, a precondition and a list of subtasks; got "
                f"{len(form.items) - 1} item(s)",
                form,
            )
        _, name, condition, subtasks = form.items
        if not isinstance(name, _Atom):
            self.fail_at("expected the branch name (a string) after :branch", name)
        if not isinstance(subtasks, _List):
            self.fail_at("expected the list of subtasks, e.g. ((!fire ?t) (reload))", subtasks)
        tasks = [self.task(t) for t in self.lists(subtasks)]
        continuation = any(t.name == CONTINUE for t in tasks)
        if continuation and len(tasks) != 1:
            self.fail_at("(!continue) must be the only subtask of a continuation branch", subtasks)
        return Branch(
            name.text,
            self.condition(condition),
            () if continuation else tuple(tasks),
            continuation,
        )

    def lists(self, expr: _Expr) -> list[_List]:
        if not isinstance(expr, _List):
            self.fail_at(f"expected a parenthesised list, got {self.show(expr)}", expr)
        for item in expr.items:
            if not isinstance(item, _List):
                self.fail_at(f"expected a parenthesised form, got {self.show(item)}", item)
        return list(expr.items)  # type: ignore[arg-type]

    # --- conditions, tasks, terms ---

    def condition(self, expr: _Expr) -> HtnCondition:
        if not isinstance(expr, _List):
            self.fail_at(
                f"expected a precondition in parentheses such as (and ...) or (), "
                f"got {self.show(expr)}",
                expr,
            )
        items = expr.items
        if not items:
            node: HtnCondition = And()
        elif (
            len(items) >= 2
            and isinstance(items[1], _Atom)
            and items[1].text == "="
            and (not items[1].quoted)
        ):
            node = self.binding(expr)
        else:
            head = items[0]
            if not isinstance(head, _Atom) or head.quoted:
                self.fail_at(f"expected a query or connective name, got {self.show(head)}", head)
            if head.text == "and":
                node = And(tuple(self.condition(c) for c in items[1:]))
            elif head.text == "or":
                if len(items) < 2:
                    self.fail_at("expected (or condition...) with at least one condition", expr)
                node = Or(tuple(self.condition(c) for c in items[1:]))
            elif head.text == "not":
                if len(items) != 2:
                    self.fail_at("expected (not condition) with exactly one condition", expr)
                node = Not(self.condition(items[1]))
            elif head.text == "call":
                node = self.call(expr)
            else:
                node = self.query(expr)
        self.located(node, expr)
        return node

    def binding(self, expr: _List) -> Bind:
        items = expr.items
        if len(items) != 3:
            self.fail_at("expected (?var = value) or (?var = (call fn arg...))", expr)
        target = self.variable(items[0], "left side of '='")
        return Bind(target, self.argument(items[2]))

    def query(self, expr: _List) -> Query:
        head = expr.items[0] if expr.items else expr
        if not isinstance(head, _Atom) or head.quoted or not _NAME.fullmatch(head.text):
            self.fail_at(f"expected a fact name, got {self.show(head)}", head)
        args: list[Term] = []
        for item in expr.items[1:]:
            if isinstance(item, _List):
                self.fail_at("expected a value, ?variable or @constant in a fact pattern", item)
            args.append(self.term(item))
        node = Query(head.text, tuple(args))
        self.located(node, expr)
        return node

    def call(self, expr: _List) -> Call:
        if len(expr.items) < 2 or not isinstance(expr.items[1], _Atom):
            self.fail_at("expected (call function arg...)", expr)
        node = Call(expr.items[1].text, tuple(self.argument(a) for a in expr.items[2:]))
        self.located(node, expr)
        return node

    def task(self, expr: _List) -> Task:
        head = expr.items[0] if expr.items else expr
        if not isinstance(head, _Atom) or head.quoted:
            self.fail_at(f"expected a task name, got {self.show(head)}", head)
        bare = head.text.removeprefix("!")
        if not _NAME.fullmatch(bare):
            self.fail_at(f"expected a task name like fire or !fire, got {head.text!r}", head)
        node = Task(head.text, tuple(self.argument(a) for a in expr.items[1:]))
        self.located(node, expr)
        return node

    def argument(self, expr: _Expr) -> ArgTerm:
        if isinstance(expr, _List):
            if expr.items and isinstance(expr.items[0], _Atom) and expr.items[0].text == "call":
                return self.call(expr)
            self.fail_at("expected a value, ?variable, @constant or (call fn arg...)", expr)
        return self.term(expr)

    def variable(self, expr: _Expr, what: str) -> Var:
        term = self.term(expr) if isinstance(expr, _Atom) else None
        if not isinstance(term, Var):
            self.fail_at(f"expected a ?variable as {what}, got {self.show(expr)}", expr)
        return term

    def term(self, atom: _Expr) -> Term:
        if isinstance(atom, _List):
            self.fail_at("expected a value, ?variable or @constant", atom)
        text = atom.text
        if atom.quoted:
            return text
        if text[0] in "?@":
            if not _NAME.fullmatch(text[1:]):
                self.fail_at(f"expected a name after {text[0]!r}, got {text!r}", atom)
            symbol = Var(text[1:]) if text[0] == "?" else ConstRef(text[1:])
            self.located(symbol, atom)
            return symbol
        if _INT.fullmatch(text):
            return int(text)
        if _FLOAT.fullmatch(text):
            return float(text)
        if text in ("true", "false"):
            return text == "true"
        return text

    @staticmethod
    def show(expr: _Expr) -> str:
        if isinstance(expr, _Atom):
            return repr(expr.text)
        return "a list" if expr.items else "()"


DomainCheck: TypeAlias = Callable[[HtnDomain, Callable[[str, object], NoReturn]], None]
"""A further check of a parsed domain: called with the domain and ``fail(message, node)``,
which raises DomainSyntaxError at the node's place in the file (a primitive, method, branch...).
The agents layer checks that a domain's acts fit the world's verbs this way."""


def parse_domain(
    text: str,
    *,
    path: str = "<string>",
    functions: Mapping[str, HtnFunction] | None = None,
    name: str = "domain",
    check: DomainCheck | None = None,
) -> HtnDomain:
    """Parse and validate a domain; ``functions`` are the Python functions its calls may use.

    ``name`` is used unless the text has a ``(:domain name)`` form. Raises DomainSyntaxError
    (with ``path``, line and column) for any syntax or reference error, and for whatever
    ``check`` finds wrong.

    A process parses a text once (see :class:`_ParsedDomains`): every call after the first
    with the same text, path, name and function names gets a new domain of its own (its own
    mappings, over the same immutable methods and primitives) with its own ``functions``, and
    ``check`` is run on it again.
    """
    functions = functions or {}
    key = (text, path, name, frozenset(functions))
    parsed = _PARSED.get(key)
    if parsed is None:
        parsed = _parse(text, path, functions, name)
        _PARSED.put(key, parsed)
    domain, fail = parsed
    domain = dataclasses.replace(
        domain,
        methods=dict(domain.methods),
        primitives=dict(domain.primitives),
        constants=dict(domain.constants),
        functions=dict(functions),
        facts=dict(domain.facts),
    )
    if check is not None:
        check(domain, fail)
    return domain


_Parsed: TypeAlias = tuple[HtnDomain, Callable[[str, object], NoReturn]]
"""A parsed and validated domain, and how to fail at one of its nodes (its file position)."""


class _ParsedDomains:
    """The domains this process parsed, by (text, path, name, function names): the last
    ``size`` of them.

    A Warzone match makes a bot, squad and commander role per faction, each parsing its
    domain file; an environment makes them again at every reset (a third of a reset's time).
    What parsing and validating a text gives depends only on the text, the path and name (in
    the errors and the domain's name) and the names of the functions (validation checks that
    every call names one), so it is done once. The methods, branches, primitives and facts
    are frozen dataclasses over tuples and immutable values, shared by every domain made from
    the entry; the mappings that hold them are copied for each caller, so that no run can
    change what another gets."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self._entries: dict[tuple[str, str, str, frozenset[str]], _Parsed] = {}

    def get(self, key: tuple[str, str, str, frozenset[str]]) -> _Parsed | None:
        found = self._entries.pop(key, None)
        if found is not None:
            self._entries[key] = found  # the most recently used goes last
        return found

    def put(self, key: tuple[str, str, str, frozenset[str]], parsed: _Parsed) -> None:
        self._entries[key] = parsed
        while len(self._entries) > self.size:
            del self._entries[next(iter(self._entries))]

    def clear(self) -> None:
        self._entries.clear()


_PARSED = _ParsedDomains()


def _parse(text: str, path: str, functions: Mapping[str, HtnFunction], name: str) -> _Parsed:
    """Parse and validate ``text`` (no cache): the domain and its ``fail(message, node)``."""
    parser = _Parser(text, path)
    domain, _ = parser.domain(functions, name)
    if not domain.methods and not domain.primitives:
        # An empty file would be accepted here and fail every agent's planning at every tick.
        parser.fail(
            "the domain defines no method and no primitive (an empty file?); an HTN domain "
            "needs at least the method of its root task, e.g. (:method (behave) ...)",
            1,
            1,
        )

    def fail(message: str, node: object) -> NoReturn:
        line, column = parser.positions.get(id(node), (1, 1))
        parser.fail(message, line, column)

    path_of = parser.path
    positions, kept = parser.positions, parser.keep

    def locate(node: object) -> tuple[str, int, int] | None:
        # `kept` holds every located node, so no other object can take one of their ids.
        place = positions.get(id(node)) if kept else None
        return (path_of, *place) if place is not None else None

    domain = dataclasses.replace(domain, locate=locate)
    validate_domain(domain, fail)
    return domain, fail


def load_domain_file(
    path: str | Path,
    functions: Mapping[str, HtnFunction] | None = None,
    *,
    check: DomainCheck | None = None,
) -> HtnDomain:
    """Read and parse a domain file; its name defaults to the file's stem (see
    :func:`parse_domain` for ``check``)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise PlanningError(f"cannot read HTN domain file {str(file)!r}: {exc}") from exc
    return parse_domain(text, path=str(file), functions=functions, name=file.stem, check=check)


# --- printing -------------------------------------------------------------------------------


def format_domain(domain: HtnDomain) -> str:
    """The domain in the text syntax; parsing it gives an equal domain (functions aside)."""
    lines = [f"(:domain {domain.name})"]
    for name, value in domain.constants.items():
        lines.append(
            f"(:constant @{name})"
            if value is None
            else f"(:constant @{name} {format_value(value)})"
        )
    for fact in domain.facts.values():
        doc = f" {format_value_quoted(fact.doc)}" if fact.doc else ""
        lines.append(f"(:fact {str(fact)[1:-1]}{doc})")
    for primitive in domain.primitives.values():
        parts = [primitive.name, *(str(p) for p in primitive.params)]
        if primitive.add:
            parts.append(":add (" + " ".join(str(q) for q in primitive.add) + ")")
        if primitive.delete:
            parts.append(":del (" + " ".join(str(q) for q in primitive.delete) + ")")
        lines.append("(:primitive " + " ".join(parts) + ")")
    for method in domain.methods.values():
        head = " ".join([method.task, *(str(p) for p in method.params)])
        lines.append(f"(:method ({head})")
        for branch in method.branches:
            subtasks = (
                f"(({CONTINUE}))"
                if branch.continuation
                else ("(" + " ".join(str(t) for t in branch.subtasks) + ")")
            )
            lines.append(f"  (:branch {format_value_quoted(branch.name)}")
            lines.append(f"    {format_condition(branch.condition)}")
            lines.append(f"    {subtasks})")
        lines[-1] += ")"
    return "\n".join(lines) + "\n"


def format_value_quoted(text: str) -> str:
    """A string always in double quotes (branch names)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def format_condition(cond: HtnCondition) -> str:
    """A precondition in the text syntax."""
    if isinstance(cond, Query | Call):
        return str(cond)
    if isinstance(cond, Bind):
        expr = cond.expr
        shown = str(expr) if isinstance(expr, Var | ConstRef | Call) else format_value(expr)
        return f"({cond.var} = {shown})"
    if isinstance(cond, Not):
        return f"(not {format_condition(cond.item)})"
    if isinstance(cond, Or):
        return "(or " + " ".join(format_condition(c) for c in cond.items) + ")"
    if not cond.items:
        return "()"
    return "(and " + " ".join(format_condition(c) for c in cond.items) + ")"
