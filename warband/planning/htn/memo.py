"""Preconditions that failed last time, and what they read: a search skips them while none of
that changed.

An agent plans from its root task every few ticks, and most of a Warzone bot's search is spent
trying the higher-priority branches that fail before the one it takes (am I under fire? do I see
an enemy? is there an order?). Between two searches a few facts change, but each failed
precondition reads only a few of them. :class:`BranchMemo` keeps, for each precondition that
yielded no binding at all (a branch that failed without an expansion), what its evaluation read
(:class:`~warband.planning.FactReads`) and the state it read it from; the next search, reaching
the same branch of the same method with the same task arguments, skips it when none of those
facts was added or removed since (:meth:`~warband.planning.FactReads.changed`): evaluated
again, it would read the same facts and find no binding again.

So the search takes exactly the same steps as without the memo, in the same order, with the same
expansions (a precondition without a binding costs none) and the same explanations (the skipped
branch is recorded as "precondition failed", as evaluating it records it); only the work of
evaluating such a precondition again is saved. A precondition that found a binding, or whose
branch failed further down, is evaluated as always.

What the skipped evaluation would have read is still noted in the search's own reads, when the
search runs on a watching copy (:meth:`~warband.planning.FactReads.watch`): a decision
reused later (:meth:`~warband.agents.HtnDecider.reuse`) depends on those facts too.

As for reusing whole decisions, the planner's functions must be ``fn(facts, *args)`` over the
facts and data that never changes. A memo belongs to one planner and one set of constants (it
forgets everything when given others), and forgets a precondition no search met for a while.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...values import Value
from .facts import FactDB
from .reads import FactReads, _Watching

MemoKey = tuple[str, int, tuple[object, ...]]
"""(method name, branch index, the task's arguments each with its class: ``1`` and ``True``
apart)."""


class BranchMemo:
    """Failed preconditions of an agent's recent searches, with what each read (see the
    module docstring). Pass one to :meth:`~warband.planning.HtnPlanner.search` for every
    search of the same root; ``hits`` and ``misses`` count the skipped and re-evaluated
    preconditions that it knew.

    A precondition not met for ``keep`` searches is forgotten (an agent goes back and forth
    between a few plans, whose searches try different branches; what a forgotten entry held,
    the state it saw, is what keeping it would cost)."""

    __slots__ = ("_constants", "_entries", "_planner", "_searches", "hits", "keep", "misses")

    def __init__(self, keep: int = 8) -> None:
        if keep < 1:
            raise ValueError(f"BranchMemo(keep={keep}): keep at least 1 search")
        self.keep = keep
        self._entries: dict[MemoKey, tuple[FactDB, FactReads, int]] = {}
        """Per precondition: the state it failed in, what it read there, the last search
        that met it."""
        self._searches = 0
        self._planner: object = None
        self._constants: Mapping[str, Value] | None = None
        self.hits = 0
        """Preconditions skipped: known to fail again."""
        self.misses = 0
        """Preconditions known from before but evaluated again: something they read changed."""

    def __len__(self) -> int:
        return len(self._entries)

    def begin(self, planner: object, constants: Mapping[str, Value]) -> None:
        """A search starts (every ``keep`` searches, the entries it is too old to meet go)."""
        if planner is not self._planner or constants != self._constants:
            self._entries = {}
            self._planner, self._constants = planner, dict(constants)
        self._searches += 1
        if self._searches % self.keep == 0:
            oldest = self._searches - self.keep
            self._entries = {k: e for k, e in self._entries.items() if e[2] > oldest}

    def fails(self, key: MemoKey, state: FactDB) -> FactReads | None:
        """What the precondition ``key`` read when it failed, if it read the same in
        ``state`` (so fails again); None when it must be evaluated."""
        known = self._entries.get(key)
        if known is None:
            return None
        seen, reads, _ = known
        if reads.changed(seen, state):
            self.misses += 1
            del self._entries[key]  # evaluated now: a failure comes back with fresh reads
            return None
        self.hits += 1
        self._entries[key] = (seen, reads, self._searches)
        return reads

    def failed(self, key: MemoKey, seen: FactDB, reads: FactReads) -> None:
        """The precondition ``key`` found no binding in ``seen`` (a copy nobody changes),
        reading ``reads``."""
        self._entries[key] = (seen, reads, self._searches)


def memo_args(args: tuple[object, ...]) -> tuple[object, ...] | None:
    """A task's arguments as part of a :data:`MemoKey`, each with its class (``1`` and
    ``True`` apart); None when one cannot be a key (a list value holding a list)."""
    if not args:
        return ()
    key = tuple([(arg.__class__, arg) for arg in args])
    try:
        hash(key)
    except TypeError:
        return None
    return key


def watch_branch(state: FactDB) -> tuple[_Watching, FactReads]:
    """A copy of ``state`` that notes what a precondition reads of it, and those reads."""
    reads = FactReads()
    return _Watching.of(state, reads), reads


def outer_reads(state: FactDB) -> FactReads | None:
    """The reads ``state`` notes for its search, when it is a watching copy."""
    return state.reads if isinstance(state, _Watching) else None


def listen(watching: FactDB, reads: FactReads) -> None:
    """Make ``watching`` (a watching copy) note what is read of it in ``reads`` from now on.

    The search's own state notes into a precondition's reads while that precondition is
    evaluated, and back into the search's when it found a binding or failed: cheaper than a
    copy of the state for each precondition, and the state, which no search writes, is what
    the memo keeps as what the precondition saw."""
    assert isinstance(watching, _Watching)
    watching.note_into(reads)


def hand_over(watching: FactDB, local: FactReads, outer: FactReads | None) -> None:
    """A precondition found a binding: what it read so far goes to the search's reads
    (``outer``), and what it (and the decomposition below it) reads from now on is noted there
    directly (``watching``: the state it was evaluated on, a watching copy)."""
    if outer is None:
        outer = FactReads()  # nobody asks: the notes go nowhere
    else:
        merge(local, outer)
    listen(watching, outer)


def merge(local: FactReads, outer: FactReads | None) -> None:
    """Note in ``outer`` what ``local`` noted."""
    if outer is None:
        return
    if local.everything:
        outer.read_all()
    outer.names |= local.names
    outer.groups |= local.groups
