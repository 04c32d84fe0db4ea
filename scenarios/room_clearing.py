"""Pittman's room clearing (thesis §3.9): a squad of four clears rooms, GOAP at both levels.

The squad leader (``leader``, its role with the :class:`~warband.agents.command.Commanding`
component) has one goal, every room cleared, and two actions per room: ``StackUp_<room>``
(needs the room before cleared) and ``Clear_<room>``. Each runs as a command: a GoalBias
recommends the four members' ``StackUp`` or ``ClearCorner`` goal with the room as its target.
The members (their role with the :class:`~warband.agents.command.Following` component) plan for
themselves: walk to the door and stack up; walk to their own corner of the room and clear it.
Each reports ``adopted`` and ``completed``; the leader moves on only when all four completed,
and a command fails after ``timeout`` ticks (it withdraws its recommendation, replans and
commands again). A member that let two commands in a row time out is dropped: the leader goes
on with the others (:data:`~warband.agents.command.DROP_AFTER`), and its ClearCorner command
names who is left, so they share out the dropped member's corners.

The world is this scenario's own (:class:`RoomsWorld`, symbolic: a goto arrives in one step) on
the geography of the ``rooms`` map: its ``stack`` markers (two per room, one each side of the
door: two members stack at each) and ``corner`` markers (four per room: member *i* clears
corner *i*), grouped per room (``room-1``...). Doors, the lever and hostiles of the map are not
modelled.

Parameters: ``rooms`` (how many), ``stuck`` (a member who cannot clear a corner: it never
completes ``ClearCorner``; the leader's command times out instead of stalling, and after two
time-outs the others clear its corners too), ``timeout`` (ticks a command may take).

    warband run scenarios/room_clearing.py --json
    warband run scenarios/room_clearing.py --param stuck=charlie --processes --json

The ``--json`` outcome: ``rooms_cleared`` (in order), ``commands_done``, ``commands_failed``,
``members_dropped``, ``reports`` (every adoption and completion the leader received: tick,
member, status, goal) and per member the goals ``adopted`` and ``completed`` (in order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from warband import Actor, Outcome, Params, RunResult, Scenario
from warband.agents import Agent, Role
from warband.agents.command import COMMAND_DONE, Commanding, Following, command_task, target_of
from warband.agents.execute import TaskStatus
from warband.exceptions import ConfigurationError
from warband.planning import Action, Brain, FactDB, Goal, Task, WorldState
from warband.values import Value
from warband.world import ActVerdict, load_map
from warband.world.actor import WorldModel

scenario = Scenario(
    "room_clearing",
    ticks=80,
    params={"rooms": 3, "stuck": "", "timeout": 10},
    description="Pittman's room clearing: a squad leader commands four members by goal bias.",
)

LEADER = "leader"
MEMBERS = ("alpha", "bravo", "charlie", "delta")
TIME_LIMIT = 70
"""World steps after which the run ends however many rooms are cleared."""
SETTLE = 3
"""World steps the run goes on after the last room is cleared (the last reports land)."""


ROOMS_MAP = load_map("rooms")
"""The geography: the rooms map's ``stack`` and ``corner`` markers, grouped per room."""


def _posts(kind: str) -> dict[str, list[str]]:
    posts: dict[str, list[str]] = {}
    for marker in ROOMS_MAP.markers_of(kind):
        posts.setdefault(str(marker.group), []).append(marker.waypoint)
    return posts


STACKS, CORNERS = _posts("stack"), _posts("corner")


def room_names(count: int) -> list[str]:
    """The first ``count`` rooms of the map, in the order the squad clears them."""
    rooms = list(CORNERS)
    if not 1 <= count <= len(rooms):
        raise ConfigurationError(
            f"room_clearing: param rooms={count}, but the rooms map has rooms 1 to {len(rooms)}"
        )
    return rooms[:count]


def door(member: str, room: str) -> str:
    """Where ``member`` stacks up outside ``room``: two members at each side of the door."""
    sides = STACKS[room]
    return sides[MEMBERS.index(member) % len(sides)]


def corner(member: str, room: str) -> str:
    """The corner of ``room`` that ``member`` clears (member i, corner i)."""
    return CORNERS[room][MEMBERS.index(member)]


def corners_of(member: str, room: str, roster: Sequence[str]) -> list[str]:
    """The corners of ``room`` that ``member`` clears when ``roster`` is who is left: its own,
    then those of the members dropped from the roster, dealt out in turn."""
    mine = [corner(member, room)] if member in roster else []
    dropped = [m for m in MEMBERS if m not in roster]
    for index, other in enumerate(dropped):
        if roster and roster[index % len(roster)] == member:
            mine.append(corner(other, room))
    return mine


def clearing_order(target: Value | None) -> tuple[str, tuple[str, ...]] | None:
    """The room and the roster of a ClearCorner target: ``(room, *members)``, or a room alone
    (every member)."""
    if target is None:
        return None
    if isinstance(target, tuple):
        return str(target[0]), tuple(str(m) for m in target[1:])
    return str(target), MEMBERS


def next_corner(member: str, facts: FactDB) -> str | None:
    """The first corner ``member`` was given that is not clear yet (None: all clear, or no
    ClearCorner order)."""
    order = clearing_order(target_of(facts, "ClearCorner"))
    if order is None:
        return None
    cleared = {f[1] for f in facts.facts("corner_clear")}
    room, roster = order
    return next((c for c in corners_of(member, room, roster) if c not in cleared), None)


@dataclass
class Body:
    at: str = "hall"
    stacked: str = ""
    """The room whose door it stacked up at ("" none)."""


@dataclass
class RoomsWorld(WorldModel):
    """The rooms, the members' bodies, and what was done (a WorldModel)."""

    rooms: list[str]
    stuck: str = ""
    bodies: dict[str, Body] = field(default_factory=lambda: {m: Body() for m in MEMBERS})
    cleared: set[str] = field(default_factory=set)
    rooms_cleared: list[str] = field(default_factory=list)
    tick: int = 0
    finished_at: int | None = None
    _queued: list[tuple[str, str, dict[str, Value]]] = field(default_factory=list)

    def has_agent(self, agent_id: str) -> bool:
        return agent_id in self.bodies

    def submit(self, agent_id: str, verb: str, args: Mapping[str, Value]) -> ActVerdict:
        body = self.bodies.get(agent_id)
        if body is None:
            return ActVerdict(False, f"{agent_id} has no body in the building")
        problem = self._problem(agent_id, body, verb, args)
        if problem:
            return ActVerdict(False, problem)
        self._queued.append((agent_id, verb, dict(args)))
        return ActVerdict(True)

    def _problem(self, member: str, body: Body, verb: str, args: Mapping[str, Value]) -> str:
        room = str(args.get("room"))
        if room not in self.rooms:
            return f"there is no room {room!r}; the building has {', '.join(self.rooms)}"
        if verb == "goto":
            return ""
        if verb == "stack":
            post = door(member, room)
            return "" if body.at == post else f"{member} stacks up at {post}, not {body.at}"
        if verb == "clear":
            if body.stacked != room:
                return f"{member} did not stack up at {door(member, room)} before clearing"
            if body.at not in CORNERS[room]:
                return f"{member} is at {body.at}, not in a corner of {room}"
            if member == self.stuck:
                return f"{member} is stuck: it cannot clear {body.at}"
            return ""
        return f"unknown verb {verb!r}; the building knows goto, stack and clear"

    def step(self) -> None:
        self.tick += 1
        for member, verb, args in self._queued:
            body, room = self.bodies[member], str(args["room"])
            if verb == "goto":
                body.at = str(args["place"])
            elif verb == "stack":
                body.stacked = room
            elif verb == "clear":
                self.cleared.add(body.at)
        self._queued.clear()
        for room in self.rooms:
            done = all(corner(m, room) in self.cleared for m in MEMBERS)
            if done and room not in self.rooms_cleared:
                self.rooms_cleared.append(room)

    def percepts_for(self, agent_id: str) -> Sequence[Sequence[Value]]:
        body = self.bodies.get(agent_id)
        if body is None:
            return []
        return [
            ("at", agent_id, body.at),
            ("stacked", agent_id, body.stacked),
            *(("corner_clear", place, True) for place in sorted(self.cleared)),
        ]

    def outcome(self) -> Mapping[str, Any] | None:
        finished = len(self.rooms_cleared) == len(self.rooms)
        if finished and self.finished_at is None:
            self.finished_at = self.tick
        # The members' last completion reports need a few ticks to reach the leader.
        settled = self.finished_at is not None and self.tick >= self.finished_at + SETTLE
        if not settled and self.tick < TIME_LIMIT:
            return None
        return {
            "reason": "every room is cleared" if finished else "time is up",
            "rooms_cleared": list(self.rooms_cleared),
        }

    def snapshot(self) -> dict[str, Any]:
        # On the rooms map, so `warband render` and `warband view` draw the squad where it is
        # (the hall, before the first goto, is the map's start).
        agents = {}
        for member, body in sorted(self.bodies.items()):
            where = (
                body.at if ROOMS_MAP.has_waypoint(body.at) else ROOMS_MAP.spawns("swat")[0].waypoint
            )
            x, y = ROOMS_MAP.position(where)
            agents[member] = {"team": "swat", "x": x, "y": y, "state": "alive", "waypoint": where}
        return {
            "map": ROOMS_MAP.name,
            "map_source": ROOMS_MAP.source,
            "tick": self.tick,
            "rooms_cleared": list(self.rooms_cleared),
            "agents": agents,
        }


# --- the members --------------------------------------------------------------------------------


def member_brain(member: str) -> Brain:
    """Two goals, pursued only when recommended (relevancy 0), and four actions."""
    at_door, stacked = f"at_door({member})", f"stacked({member})"
    ready = f"ready({member})"  # stacked up at the door of the room to clear
    at_corner, clear = f"at_corner({member})", f"corner_clear({member})"
    actions = [
        Action("MoveToDoor", effects={at_door: True}),
        Action("Stack", preconditions={at_door: True}, effects={stacked: True}),
        Action("MoveToCorner", preconditions={ready: True}, effects={at_corner: True}),
        Action("ClearCorner", preconditions={at_corner: True}, effects={clear: True}),
    ]
    goals = [
        Goal("StackUp", {stacked: True}, relevancy=0.0),
        Goal("ClearCorner", {clear: True}, relevancy=0.0),
    ]
    return Brain("squad_member", goals, actions)


def member_state(member: str) -> Any:
    """The member's GOAP state: where it stands relative to the rooms it was given."""

    def state(facts: FactDB) -> WorldState:
        at = _fact_value(facts, "at", member)
        stacked = _fact_value(facts, "stacked", member)
        stack_room = target_of(facts, "StackUp")
        clearing = clearing_order(target_of(facts, "ClearCorner"))
        post = door(member, str(stack_room)) if stack_room else None
        upcoming = next_corner(member, facts)
        return WorldState(
            {
                f"at_door({member})": post is not None and at == post,
                f"stacked({member})": stack_room is not None and stacked == stack_room,
                f"ready({member})": clearing is not None and stacked == clearing[0],
                f"at_corner({member})": upcoming is not None and at == upcoming,
                # Every corner it was given is clear (one plan clears one: it plans again).
                f"corner_clear({member})": clearing is not None and upcoming is None,
            }
        )

    return state


def _fact_value(facts: FactDB, name: str, subject: str) -> Value | None:
    for fact in facts.facts(name):
        if len(fact) >= 3 and fact[1] == subject:
            return fact[2]
    return None


def _act(verb: str, goal: str, where: Any) -> Any:
    """A task that sends one act about the room of ``goal``'s target; ``where(member, room,
    facts)`` gives the act's place, if it has one."""

    def run(agent: Agent, task: Task) -> TaskStatus:
        target = target_of(agent.memory.facts, goal)
        order = clearing_order(target) if goal == "ClearCorner" else None
        room = order[0] if order is not None else target
        if room is None:
            return agent.fail_task(f"{agent.id}: no target room for {goal}")
        args: dict[str, Value] = {"room": room}
        if where is not None:
            place = where(agent.id, str(room), agent.memory.facts)
            if place is None:
                return agent.fail_task(f"{agent.id}: nowhere left to go for {goal} in {room}")
            args["place"] = place
        return agent.act(task, verb, args)

    return run


def _door(member: str, room: str, facts: FactDB) -> str:
    return door(member, room)


def _corner(member: str, room: str, facts: FactDB) -> str | None:
    return next_corner(member, facts)


REPLAN_EVERY = 10
"""Ticks between the roles' fixed-rate replans; in between, an agent plans only when a fact its
last decision read has changed (its state and goals read only its facts)."""


def member_role(member: str) -> Role:
    tasks = {
        "MoveToDoor": _act("goto", "StackUp", _door),
        "Stack": _act("stack", "StackUp", None),
        "MoveToCorner": _act("goto", "ClearCorner", _corner),
        "ClearCorner": _act("clear", "ClearCorner", None),
    }
    options = {"state": member_state(member)}
    return Role(
        "squad_member",
        member_brain(member),
        tasks=tasks,
        decider_options=options,
        components=[Following],
        replan_every=REPLAN_EVERY,
    )


# --- the leader ---------------------------------------------------------------------------------


def leader_brain(rooms: Sequence[str]) -> Brain:
    """Every room cleared, one after another: stack up at a room only once the last is clear."""
    actions = []
    for index, room in enumerate(rooms):
        before = {f"cleared({rooms[index - 1]})": True} if index else {}
        stacked, cleared = f"stacked({room})", f"cleared({room})"
        actions.append(Action(f"StackUp_{room}", preconditions=before, effects={stacked: True}))
        actions.append(
            Action(f"Clear_{room}", preconditions={stacked: True}, effects={cleared: True})
        )
    goal = Goal("ClearRooms", {f"cleared({room})": True for room in rooms}, relevancy=1.0)
    return Brain("squad_leader", [goal], actions)


def leader_state(rooms: Sequence[str]) -> Any:
    def state(facts: FactDB) -> WorldState:
        done = {(f[1], f[2]) for f in facts.facts(COMMAND_DONE) if len(f) >= 3}
        values: dict[str, Value] = {}
        for room in rooms:
            values[f"stacked({room})"] = ("StackUp", room) in done
            values[f"cleared({room})"] = ("ClearCorner", room) in done
        return WorldState(values)

    return state


def leader_role(rooms: Sequence[str], timeout: int) -> Role:
    tasks = {}
    for room in rooms:
        aim = room  # each action's target is its own room

        def target(task: Task, room: str = aim) -> Value:
            return room

        tasks[f"StackUp_{room}"] = command_task("StackUp", target=target, timeout=timeout)
        # The members left share the corners of one the leader dropped (roster=True).
        tasks[f"Clear_{room}"] = command_task(
            "ClearCorner", target=target, timeout=timeout, roster=True
        )
    return Role(
        "squad_leader",
        leader_brain(rooms),
        tasks=tasks,
        task_timeout=timeout + 5,
        decider_options={"state": leader_state(rooms)},
        components=[Commanding],
        replan_every=REPLAN_EVERY,
    )


@scenario.world
def make_world(params: Params, seed: int) -> RoomsWorld:
    return RoomsWorld(room_names(int(params["rooms"])), stuck=str(params["stuck"]))


@scenario.actors
def build(params: Params, seed: int) -> list[Actor]:
    rooms = room_names(int(params["rooms"]))
    leader = Agent(
        LEADER,
        leader_role(rooms, int(params["timeout"])),
        subordinates=MEMBERS,
        team="squad",
        seed=seed,
    )
    members: list[Actor] = [
        Agent(name, member_role(name), superior=LEADER, team="squad", seed=seed) for name in MEMBERS
    ]
    return [leader, *members]


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    world = (result.final_states.get("world") or {}).get("outcome") or {}
    leader = result.final_states.get(LEADER, {})
    members = {
        name: {
            "adopted": result.final_states.get(name, {}).get("adopted", []),
            "completed": result.final_states.get(name, {}).get("completed", []),
            "interrupted": result.final_states.get(name, {}).get("interrupted", []),
        }
        for name in MEMBERS
    }
    rooms = room_names(int(params["rooms"]))
    cleared = list(world.get("rooms_cleared", []))
    details = {
        "rooms": rooms,
        "rooms_cleared": cleared,
        "stuck": params["stuck"],
        "commands_done": leader.get("commands_done", []),
        "commands_failed": leader.get("commands_failed", []),
        "members_dropped": leader.get("members_dropped", []),
        "reports": leader.get("reports", []),
        "members": members,
    }
    summary = f"{len(cleared)} of {len(rooms)} rooms cleared"
    return Outcome(cleared == rooms, summary, details)


if __name__ == "__main__":
    from warband.cli import run_file

    raise SystemExit(run_file(__file__))
