"""A recorded run as one timeline: what ``warband view`` shows at every tick, read from the logs.

A run's ``--log DIR`` holds everything the page needs: the world's ``world.snapshot`` per tick
(the map, the agents, captures, objects), the ``msg.send`` / ``msg.recv`` message trace, every
agent's ``agent.plan`` decisions (with memory and tree where the plan changed), and the
commanders' ``commander.objectives`` and ``commander.assignment`` tables. :func:`load_timeline`
reads them once; the :class:`Timeline` then answers per tick, with plain JSON-able dicts.

A run with no world (no snapshots) still has a timeline: its ticks come from the messages and
the decisions, and the map is None.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agents.explain import PLAN_EVENT, explain_decisions
from ..exceptions import ConfigurationError, WarbandError
from ..messaging.live_feed import DROPPED_EVENT
from ..messaging.trace_view import HEARTBEAT_TYPES, load_trace
from ..metrics import TICK_MEASURES, load_match, tick_flags
from ..world import SNAPSHOT_EVENT, build_strategic_graph, snapshot_map
from ..world.maps import Map

OBJECTIVES_EVENT = "commander.objectives"
ASSIGNMENT_EVENT = "commander.assignment"

JsonDict = dict[str, Any]
"""A JSON object as the page receives it."""

MEASURES_EVERY = 2.0
"""Seconds between two workings-out of a growing run's per-tick measures (each reads the whole
log directory again)."""


@dataclass
class Timeline:
    """A run, tick by tick. Build it with :func:`load_timeline` (a finished run) or grow it
    with :meth:`add` as a running one writes its logs (:class:`~warband.view.follow.LogFollower`).
    """

    log_dir: Path
    ticks: list[int] = field(default_factory=list)
    """Every tick the run logged something at, ascending."""
    snapshots: dict[int, JsonDict] = field(default_factory=dict)
    """The world's state by tick (empty for a run without a world)."""
    map: JsonDict | None = None
    """The map's fixed geometry (:func:`map_geometry`), None without a world."""
    messages: list[JsonDict] = field(default_factory=list)
    """Every message sent, in flow order (:func:`load_timeline` says which keys)."""
    decisions: dict[str, list[JsonDict]] = field(default_factory=dict)
    """Each agent's ``agent.plan`` events, by tick."""
    commanders: dict[str, list[JsonDict]] = field(default_factory=dict)
    """Each commander's objectives and assignment events, by tick."""
    problems: list[str] = field(default_factory=list)
    """Lines of the logs that could not be read (file:line: why)."""
    version: int = 0
    """How many times :meth:`add` changed the timeline (the page polls for a new one)."""
    source: str | None = None
    """What the page names as the run's source (default: ``log_dir``); a live endpoint."""
    dropped: dict[int, int] = field(default_factory=dict)
    """A live run's events dropped for a slow viewer, by process id (``live.dropped``)."""
    logged: bool = True
    """Whether ``log_dir`` holds the run's logs (a live feed's timeline has none on disk)."""
    _message_ticks: list[int] = field(default_factory=list, repr=False)
    _by_id: dict[str, JsonDict] = field(default_factory=dict, repr=False)
    _delivered: set[str] = field(default_factory=set, repr=False)
    _unanswered: dict[str, list[str]] = field(default_factory=dict, repr=False)
    """Replies whose message is not read yet, by that message's id."""
    _tick_set: set[int] = field(default_factory=set, repr=False)
    _arrived: int = field(default=0, repr=False)
    _map_tried: bool = field(default=False, repr=False)
    _flags: dict[str, dict[int, dict[str, list[str]]]] = field(default_factory=dict, repr=False)
    _flags_version: int = field(default=-1, repr=False)
    _flags_at: float = field(default=-math.inf, repr=False)

    def add(self, events: Iterable[JsonDict]) -> None:
        """Take in more events of the run's logs (any order, any files; a reply may come
        before the message it answers, a receive before its send)."""
        known = len(self.messages)
        touched: set[tuple[str, str]] = set()
        for event in events:
            name = event.get("event")
            if name in (SNAPSHOT_EVENT, PLAN_EVENT) and type(event.get("tick", 0)) is not int:
                # One hand-edited or foreign line must not stop the page: skip it, say so.
                self.problems.append(
                    f"a {name} event whose tick {event['tick']!r} is not an integer"
                )
                continue
            if name == "msg.send":
                self._add_send(event)
            elif name == "msg.recv":
                self._delivered.add(event["msg_id"])
                sent = self._by_id.get(event["msg_id"])
                if sent is not None:
                    sent["delivered"] = True
            elif name == SNAPSHOT_EVENT and isinstance(event.get("snapshot"), dict):
                tick = int(event.get("tick", 0))
                self.snapshots[tick] = event["snapshot"]
                self._tick_set.add(tick)
                if not self._map_tried:
                    self._map_tried = True
                    self.map = _map_of(self.snapshots, self.problems)
            elif name == PLAN_EVENT and isinstance(event.get("agent"), str):
                self.decisions.setdefault(event["agent"], []).append(event)
                self._tick_set.add(int(event.get("tick", 0)))
                touched.add(("decisions", event["agent"]))
            elif name in (OBJECTIVES_EVENT, ASSIGNMENT_EVENT) and isinstance(
                event.get("agent"), str
            ):
                self.commanders.setdefault(event["agent"], []).append(event)
                touched.add(("commanders", event["agent"]))
            elif name == DROPPED_EVENT and isinstance(event.get("events"), int):
                # Counts so far: the largest one a process sent is its total.
                pid = int(event.get("pid", 0))
                self.dropped[pid] = max(self.dropped.get(pid, 0), event["events"])
        for kind, agent in touched:
            events_of = self.decisions[agent] if kind == "decisions" else self.commanders[agent]
            events_of.sort(key=lambda e: (int(e.get("tick", 0)), str(e.get("timestamp", ""))))
        if len(self.messages) > known:
            # Flow order, as `warband trace` has it: tick, then timestamp, then arrival. A
            # live run's messages mostly come in order: then only the new ones are sorted.
            new = sorted(self.messages[known:], key=_flow_key)
            if known and _flow_key(new[0]) < _flow_key(self.messages[known - 1]):
                self.messages.sort(key=_flow_key)
                self._message_ticks = [_tick_of(m) for m in self.messages]
            else:
                self.messages[known:] = new
                self._message_ticks.extend(_tick_of(m) for m in new)
        self.ticks = sorted(self._tick_set)
        self.version += 1

    def _add_send(self, event: JsonDict) -> None:
        self._arrived += 1
        message: JsonDict = {
            "id": event["msg_id"],
            "type": event["msg_type"],
            "sender": event["sender"],
            "recipient": event["recipient"],
            "conversation": event.get("conversation"),
            "tick": event.get("tick"),
            "reply_to": event.get("reply_to"),
            "replies": self._unanswered.pop(event["msg_id"], []),
            "delivered": event["msg_id"] in self._delivered,
            "_timestamp": str(event.get("timestamp", "")),
            "_arrived": self._arrived,
        }
        self.messages.append(message)
        self._by_id[message["id"]] = message
        if isinstance(message["tick"], int):
            self._tick_set.add(message["tick"])
        asked = message["reply_to"]
        if asked:
            found = self._by_id.get(asked)
            answers = (
                found["replies"] if found is not None else self._unanswered.setdefault(asked, [])
            )
            answers.append(message["id"])

    @property
    def agents(self) -> list[str]:
        """Every agent that decided something or appears in a snapshot, sorted."""
        names = set(self.decisions)
        for snapshot in self.snapshots.values():
            names.update((snapshot.get("agents") or {}).keys())
        return sorted(names)

    def summary(self) -> JsonDict:
        """What the page loads first: the ticks, the agents, the message types, the map."""
        return {
            "log_dir": self.source or str(self.log_dir),
            "first_tick": self.ticks[0] if self.ticks else 0,
            "last_tick": self.ticks[-1] if self.ticks else 0,
            "agents": self.agents,
            "message_types": sorted({m["type"] for m in self.messages}),
            "messages": len(self.messages),
            "map": self.map,
            "problems": self.problems[:20],
            "dropped": sum(self.dropped.values()),
        }

    def frame(self, tick: int) -> JsonDict:
        """Everything on the map at ``tick``: the world's snapshot (the latest at or before
        ``tick``), each agent's plan and current task, and the commanders' tables."""
        snapshot = _at_or_before(self.snapshots, tick) or {}
        agents: dict[str, JsonDict] = {}
        for name, body in sorted((snapshot.get("agents") or {}).items()):
            agents[name] = {**body, **self._doing(name, tick)}
        return {
            "tick": tick,
            "snapshot_tick": snapshot.get("tick"),
            "scores": snapshot.get("scores") or {},
            "outcome": snapshot.get("outcome"),
            "mode": snapshot.get("mode"),
            "agents": agents,
            "turrets": snapshot.get("turrets") or {},
            "captures": snapshot.get("captures") or {},
            "objects": snapshot.get("objects") or {},
            "markers": (snapshot.get("objectives") or {}).get("markers") or {},
            "events": snapshot.get("events") or [],
            "influence": snapshot.get("influence") or {},
            "corridors": snapshot.get("corridors") or {},
            "commanders": self.commander_tables(tick),
            "plans": {name: self._doing(name, tick) for name in sorted(self.decisions)},
        }

    def measures(self, tick: int) -> JsonDict:
        """Per team, the bots each per-tick measure of ``warband metrics`` counts at ``tick``
        (:func:`~warband.metrics.tick_flags`: stuck, order-starved, crowded, enemies
        ignored), worked out from the log directory. A growing run's are worked out again at
        most every :data:`MEASURES_EVERY` seconds; ``as_of`` is the last tick they cover."""
        if not self.logged:
            problem = "a live feed has no logs on disk: run with --log DIR and view that"
            return {"tick": tick, "teams": {}, "as_of": None, "problem": problem}
        if not self.snapshots:
            return {"tick": tick, "teams": {}, "as_of": None, "problem": "no world snapshots"}
        now = time.monotonic()
        if self._flags_version != self.version and now - self._flags_at >= MEASURES_EVERY:
            match = load_match(self.log_dir)
            self._flags = {team: tick_flags(match, team) for team in match.teams}
            self._flags_version, self._flags_at = self.version, now
        teams = {
            team: flags.get(tick, {measure: [] for measure in TICK_MEASURES})
            for team, flags in sorted(self._flags.items())
        }
        covered = [max(flags) for flags in self._flags.values() if flags]
        return {"tick": tick, "teams": teams, "as_of": max(covered) if covered else None}

    def _doing(self, agent: str, tick: int) -> JsonDict:
        """The agent's plan at ``tick`` and the step it is on (``task``)."""
        decision = _last_at_or_before(self.decisions.get(agent, []), tick)
        if decision is None:
            return {"plan": None, "task": None, "decision": None}
        plan = decision.get("plan") or []
        step = decision.get("step")
        task = plan[step] if isinstance(step, int) and 0 <= step < len(plan) else None
        return {"plan": plan, "task": task, "decision": decision.get("decision")}

    def commander_tables(self, tick: int) -> dict[str, JsonDict]:
        """Per commander at ``tick``: its objectives, and its squads with their objective and
        members (``assignment``), the bots in no squad and the bots it orders directly."""
        tables: dict[str, JsonDict] = {}
        for commander, events in sorted(self.commanders.items()):
            upto = [e for e in events if int(e.get("tick", 0)) <= tick]
            objectives = next((e for e in reversed(upto) if e["event"] == OBJECTIVES_EVENT), None)
            assignment = next((e for e in reversed(upto) if e["event"] == ASSIGNMENT_EVENT), None)
            tables[commander] = {
                "objectives": [list(o) for o in (objectives or {}).get("objectives", [])],
                "squads": [
                    {"squad": s[0], "objective": s[1], "members": list(s[2])}
                    for s in (assignment or {}).get("squads", [])
                ],
                "free": list((assignment or {}).get("free", [])),
                "direct": dict((assignment or {}).get("direct", {})),
            }
        return tables

    def messages_around(
        self,
        tick: int,
        *,
        before: int = 2,
        after: int = 0,
        agent: str | None = None,
        msg_types: Iterable[str] = (),
        conversation: str | None = None,
        heartbeats: bool = False,
    ) -> list[JsonDict]:
        """The messages sent from ``tick - before`` to ``tick + after``, in flow order, that
        match every filter (those of ``warband trace``: an agent, types, a conversation).
        Heartbeats are left out unless asked for by type or with ``heartbeats``."""
        types = set(msg_types)
        low, high = tick - before, tick + after
        keys = self._message_ticks
        start, end = bisect.bisect_left(keys, low), bisect.bisect_right(keys, high)
        found = []
        for message in self.messages[start:end]:
            if agent is not None and agent not in (message["sender"], message["recipient"]):
                continue
            if types and message["type"] not in types:
                continue
            if not types and not heartbeats and message["type"] in HEARTBEAT_TYPES:
                continue
            if conversation is not None and message["conversation"] != conversation:
                continue
            found.append({k: v for k, v in message.items() if not k.startswith("_")})
        return found

    def inspect(self, agent: str, tick: int) -> JsonDict:
        """What the agent inspector shows: ``warband explain``'s text for ``agent`` at ``tick``
        and its parts (plan, task, memory, tree). Raises :class:`ConfigurationError` for an
        agent the run does not know."""
        if agent not in self.decisions and agent not in self.agents:
            raise ConfigurationError(
                f"no agent {agent!r} in {str(self.log_dir)!r}; agents: {', '.join(self.agents)}"
            )
        decisions = self.decisions.get(agent, [])
        body = (_at_or_before(self.snapshots, tick) or {}).get("agents", {}).get(agent)
        try:
            explanation = explain_decisions(decisions, agent, tick)
        except ConfigurationError as why:
            return {"agent": agent, "tick": tick, "text": str(why), "body": body, "plan": None}
        decided = explanation.decided or {}
        return {
            "agent": agent,
            "tick": tick,
            "text": explanation.text(),
            "body": body,
            "decided_at": decided.get("tick"),
            "plan": decided.get("plan"),
            "label": decided.get("label"),
            "memory": decided.get("memory"),
            "tree": decided.get("tree"),
            **self._doing(agent, tick),
        }


def load_timeline(log_dir: Path) -> Timeline:
    """Read a finished run's ``--log DIR`` into a :class:`Timeline`.

    Each message of :attr:`Timeline.messages` is a dict with ``id``, ``type``, ``sender``,
    ``recipient``, ``conversation``, ``tick``, ``reply_to`` (the message it answers, or None),
    ``replies`` (the ids of the messages that answer it: an Order's CompletionReport) and
    ``delivered`` (some process logged receiving it). Raises :class:`ConfigurationError` when
    ``log_dir`` is not a run's log directory.
    """
    trace = load_trace(log_dir)
    timeline = Timeline(log_dir, problems=list(trace.problems))
    timeline.add([*trace.messages, *trace.others])
    return timeline


def _flow_key(message: JsonDict) -> tuple[int, str, int]:
    return (_tick_of(message), message["_timestamp"], message["_arrived"])


def _tick_of(message: JsonDict) -> int:
    tick = message["tick"]
    return tick if isinstance(tick, int) else -1


def _map_of(snapshots: Mapping[int, JsonDict], problems: list[str]) -> JsonDict | None:
    """The geometry of the map the run was played on, from its first snapshot."""
    if not snapshots:
        return None
    first = snapshots[min(snapshots)]
    try:
        return map_geometry(snapshot_map(first))
    except WarbandError as error:
        problems.append(f"{error}: not drawn")
        return None


def map_geometry(game_map: Map) -> JsonDict:
    """The fixed part of the map as JSON: bounds, teams, waypoints, links, walls, markers,
    objects, and the areas of the default clustering (the one the world's influence maps and
    squad corridors number, as ``warband render`` draws them). The page draws these once and
    moves the agents over them."""
    graph = build_strategic_graph(game_map)
    return {
        "name": game_map.name,
        "bounds": list(game_map.bounds),
        "teams": list(game_map.teams),
        "waypoints": [{"id": w.id, "x": w.pos[0], "y": w.pos[1]} for w in game_map.waypoints],
        "links": [[a, b] for a, b in game_map.links],
        "walls": [[list(p), list(q)] for p, q in game_map.walls],
        "markers": [
            {"id": m.id, "kind": m.kind, "waypoint": m.waypoint, "team": m.team}
            for m in game_map.markers
        ],
        "objects": [
            {
                "id": o.id,
                "kind": o.kind,
                "waypoint": o.waypoint,
                "link": list(o.link) if o.link else None,
                "open": o.open,
            }
            for o in game_map.objects
        ],
        "areas": [
            {"id": a.id, "waypoints": list(a.waypoints), "centre": list(a.centre)}
            for a in graph.areas
        ],
    }


def _at_or_before(by_tick: Mapping[int, JsonDict], tick: int) -> JsonDict | None:
    earlier = [t for t in by_tick if t <= tick]
    return by_tick[max(earlier)] if earlier else None


def _last_at_or_before(events: list[JsonDict], tick: int) -> JsonDict | None:
    found = None
    for event in events:
        if int(event.get("tick", 0)) > tick:
            break
        found = event
    return found
