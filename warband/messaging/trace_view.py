"""Reading a run's logs back: merge every process's file into one message flow and render it.

``warband trace DIR`` uses :func:`trace_command`. The flow is ordered by tick, then timestamp,
then file order, which in lockstep reads as the run happened. Each ``msg.send`` is paired with
its ``msg.recv`` events by ``msg_id``; sends nobody received are marked. A participant that
logs nothing (a client in another language) is *silent*: a message only its receiver logged is
shown from its receive, one sent to a silent participant from its send, each marked as known
from one side only (not as never received), so both sides of its conversations are drawn. A
line that is not JSON (a file cut short by a crash), or a ``*.jsonl`` that is not a file, is
reported with its file (and line number) and skipped: one bad line never hides the rest of the
trace. A line that is JSON but not a warband event (not an object, or a message event without
its string ids) is an error naming the file and line: the directory holds something other than
a run's logs.
"""

from __future__ import annotations

import bisect
import difflib
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._paths import wrong_kind
from ..exceptions import ConfigurationError
from .catalog import MESSAGE_TYPES
from .tracing import TRACE_KEYS

MESSAGE_EVENTS = ("msg.send", "msg.recv")
_MARKS = {
    "both": "",
    "never": "  (never received)",
    "sender": "  (sender's log only)",
    "receiver": "  (receiver's log only)",
}
_ARROWS = {"both": "->>", "never": "-x", "sender": "-->>", "receiver": "-->>"}
FORMATS = ("text", "mermaid", "json")

_ID_KEYS = ("msg_id", "msg_type", "sender", "recipient")
"""The keys a message event must carry, as strings, for the flow to be built."""


@dataclass
class TraceLog:
    """All events of a run: message events in flow order, the others, and what went wrong."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    others: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    delivered: set[str] = field(default_factory=set)
    """Ids of every message some process logged receiving (kept whole through filtering)."""
    sent: set[str] = field(default_factory=set)
    """Ids of every message some process logged sending (kept whole through filtering)."""
    loggers: set[str] = field(default_factory=set)
    """Every participant that logged something (kept whole through filtering); the others
    are silent (see :meth:`silent`)."""
    orders: dict[str, str] = field(default_factory=dict)
    """What each Order said (``capture cp-centre``), by its id, from its receiver's
    ``order.received`` event."""
    endings: dict[str, str] = field(default_factory=dict)
    """How each order ended (``done``, ``failed: why``), by the order's id, from
    ``order.finished``: what the CompletionReport answering it said."""

    def about(self, event: dict[str, Any]) -> str | None:
        """What a message said, when the logs know: an Order's task and arguments, a
        CompletionReport's task and how it ended; None for the others."""
        if event.get("msg_type") == "Order":
            return self.orders.get(event["msg_id"])
        if event.get("msg_type") == "CompletionReport":
            return self.endings.get(str(event.get("reply_to")))
        return None

    def sends(self) -> list[dict[str, Any]]:
        """The ``msg.send`` events, in flow order."""
        return [e for e in self.messages if e["event"] == "msg.send"]

    def unmatched_sends(self) -> list[dict[str, Any]]:
        """Sends that no process logged receiving, to a participant that logs (one sent to a
        silent participant may well have arrived)."""
        return [e for e in self.sends() if self.side(e) == "never"]

    def is_silent(self, name: str) -> bool:
        """Whether ``name`` is a participant that logged nothing (not a group)."""
        return not name.startswith("#") and name not in self.loggers

    def silent(self) -> list[str]:
        """The participants of the flow that logged nothing, sorted."""
        names = {e["sender"] for e in self.messages} | {e["recipient"] for e in self.messages}
        return sorted(name for name in names if self.is_silent(name))

    def one_sided(self) -> list[dict[str, Any]]:
        """The flow's messages known from one side only, a silent participant's."""
        return [e for e in self.flow() if self.side(e) in ("sender", "receiver")]

    def flow(self) -> list[dict[str, Any]]:
        """One event per message, in flow order: its send, or, for a message whose sender
        logged nothing (a client in another language), its first receive."""
        seen: set[str] = set()
        flow = []
        for event in self.messages:
            if event["event"] == "msg.send":
                flow.append(event)
            elif event["msg_id"] not in self.sent and event["msg_id"] not in seen:
                seen.add(event["msg_id"])
                flow.append(event)
        return flow

    def logged_by(self, event: dict[str, Any]) -> str:
        """Whose logs know the message of a flow event: ``both``, ``sender`` (never received,
        or sent to a silent participant) or ``receiver`` (its sender logged no send)."""
        if event["event"] == "msg.recv":
            return "receiver"
        return "both" if event["msg_id"] in self.delivered else "sender"

    def side(self, event: dict[str, Any]) -> str:
        """:meth:`logged_by`, with ``sender`` split: ``never`` when the recipient logs and
        logged no receive (never received), ``sender`` when it is silent (it may well have)."""
        logged_by = self.logged_by(event)
        if logged_by == "sender" and not self.is_silent(event["recipient"]):
            return "never"
        return logged_by

    def unmatched_recvs(self) -> list[dict[str, Any]]:
        """Receives whose send is not in the logs though their sender logs (a log cut
        short); a silent sender's are :meth:`one_sided`."""
        return [
            e
            for e in self.messages
            if e["event"] == "msg.recv"
            and e["msg_id"] not in self.sent
            and not self.is_silent(e["sender"])
        ]


def load_trace(log_dir: Path) -> TraceLog:
    """Read every ``*.jsonl`` file in ``log_dir`` into one :class:`TraceLog`."""
    wrong = wrong_kind(log_dir, "directory")
    if wrong is not None:
        raise ConfigurationError(
            f"trace directory {str(log_dir)!r} {wrong}; pass the --log DIR of a run"
        )
    problems: list[str] = []
    files = log_files(log_dir, problems)
    if not files:
        raise ConfigurationError(
            f"no *.jsonl log files in {str(log_dir)!r}; run with --log {log_dir} first"
        )
    trace = TraceLog(files=[f.name for f in files], problems=problems)
    order = 0
    for file in files:
        for number, line in enumerate(file.read_text(errors="replace").splitlines(), 1):
            if not line.strip():
                continue
            event = _parse(line, f"{file}:{number}")
            if event is None:
                trace.problems.append(f"{file.name}:{number}: not a JSON object")
                continue
            order += 1
            event["_order"] = order
            if event.get("event") in MESSAGE_EVENTS:
                _check_message_event(event, f"{file}:{number}")
                trace.messages.append(event)
            else:
                trace.others.append(event)
                _note_order(trace, event)
    _place_untimed(trace.messages)
    trace.messages.sort(key=_flow_key)
    trace.delivered = {e["msg_id"] for e in trace.messages if e["event"] == "msg.recv"}
    trace.sent = {e["msg_id"] for e in trace.messages if e["event"] == "msg.send"}
    trace.loggers = {
        e["sender"] if e["event"] == "msg.send" else e["recipient"] for e in trace.messages
    } | {e["agent"] for e in trace.others if isinstance(e.get("agent"), str)}
    return trace


def log_files(log_dir: Path, problems: list[str]) -> list[Path]:
    """The ``*.jsonl`` files of ``log_dir``, sorted; anything else of that name (a directory
    ``x.jsonl``) is said in ``problems`` and skipped, as a malformed line is."""
    files = []
    for path in sorted(log_dir.glob("*.jsonl")):
        if path.is_file():
            files.append(path)
        else:
            problems.append(f"{path.name}: not a file")
    return files


def _note_order(trace: TraceLog, event: dict[str, Any]) -> None:
    kind, order = event.get("event"), event.get("order")
    if not isinstance(order, str):
        return
    if kind == "order.received":
        args = " ".join(_arg_text(arg) for arg in event.get("args") or [])
        trace.orders[order] = f"{event.get('task')} {args}".strip()
    elif kind == "order.finished":
        how = "done" if event.get("success") else f"failed: {event.get('reason') or '?'}"
        trace.endings[order] = f"{event.get('task')} {how}"


def _arg_text(arg: object) -> str:
    if isinstance(arg, list):
        return "[" + " ".join(_arg_text(item) for item in arg) + "]"
    return str(arg)


def _parse(line: str, where: str) -> dict[str, Any] | None:
    """The event on ``line``; None when it is not JSON; an error when it is not an object."""
    try:
        event = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(event, dict):
        raise ConfigurationError(
            f"{where}: a JSON {type(event).__name__}, not an event object; "
            "warband trace reads the *.jsonl files a run writes with --log DIR"
        )
    return event


def _check_message_event(event: dict[str, Any], where: str) -> None:
    problem = next(
        (f"{key!r} as a string" for key in _ID_KEYS if not isinstance(event.get(key), str)), None
    )
    conversation, tick = event.get("conversation"), event.get("tick")
    if problem is None and not (conversation is None or isinstance(conversation, str)):
        problem = "'conversation' as a string or null"
    if problem is None and not (tick is None or type(tick) is int):
        problem = "'tick' as an integer or null"
    if problem is not None:
        raise ConfigurationError(
            f"{where}: this {event['event']} event needs {problem}; "
            "warband trace reads the *.jsonl files a run writes with --log DIR"
        )


def check_message_types(msg_types: Iterable[str]) -> None:
    """Raise :class:`ConfigurationError` for a name that is not a message type of the catalog."""
    for name in msg_types:
        if name in MESSAGE_TYPES:
            continue
        public = [t for t in MESSAGE_TYPES if not t.startswith("_")]
        control = [t for t in MESSAGE_TYPES if t.startswith("_")]
        close = difflib.get_close_matches(name, list(MESSAGE_TYPES), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigurationError(
            f"unknown message type {name!r}; {hint}known types: {', '.join(public)} "
            f"(control: {', '.join(control)})"
        )


HEARTBEAT_TYPES = frozenset({"_Ping", "_Pong"})
"""Left out of a trace view unless asked for by type (see :func:`filter_trace`)."""


def _flow_key(event: dict[str, Any]) -> tuple[int, str, int]:
    return (_tick_of(event), str(event.get("timestamp", "")), event["_order"])


def _tick_of(event: dict[str, Any]) -> int:
    """The tick the flow places ``event`` at: its own, or where :func:`_place_untimed` put it;
    -1 for none."""
    tick = event.get("_at", event.get("tick"))
    return tick if isinstance(tick, int) else -1


def _place_untimed(messages: list[dict[str, Any]]) -> None:
    """Place each control message stamped tick 0 after the run started at the run's tick when
    it was logged (``_at``): a restarted incarnation knows no tick yet, so its ``_Register``,
    ``_Ready`` and ``_Leave`` say 0, and sorted by it they would open the trace, before the
    conversation they end. The run's tick at a time is the last ``Tick`` the clock sent by
    then (the processes of a run share a clock, or nearly: hosts' clocks may drift)."""
    ticks = sorted(
        (str(e.get("timestamp", "")), e["tick"])
        for e in messages
        if e["event"] == "msg.send" and e["msg_type"] == "Tick" and type(e.get("tick")) is int
    )
    times = [when for when, _ in ticks]
    for event in messages:
        if event["msg_type"].startswith("_") and not event.get("tick"):
            before = bisect.bisect_right(times, str(event.get("timestamp", "")))
            if before:
                event["_at"] = ticks[before - 1][1]


def filter_trace(
    trace: TraceLog,
    *,
    agent: str | None = None,
    conversation: str | None = None,
    msg_types: Iterable[str] | None = None,
) -> TraceLog:
    """A copy of ``trace`` keeping the messages that match every given filter.

    Liveness heartbeats to and from the broker (``_Ping``, ``_Pong``) come every second from
    every actor and say nothing about the flow: they are left out unless ``msg_types`` asks
    for them by name.
    """
    types = set(msg_types or ())
    # A message to a group (a Tick to #ticks) is the agent's when it logged receiving it.
    received = {
        e["msg_id"] for e in trace.messages if e["event"] == "msg.recv" and e["recipient"] == agent
    }

    def keep(event: dict[str, Any]) -> bool:
        mine = agent in (event.get("sender"), event.get("recipient"))
        if agent is not None and not mine and event["msg_id"] not in received:
            return False
        if conversation is not None and event.get("conversation") != conversation:
            return False
        if not types:
            return event.get("msg_type") not in HEARTBEAT_TYPES
        return event.get("msg_type") in types

    others = [e for e in trace.others if agent is None or e.get("agent") == agent]
    return TraceLog(
        messages=[e for e in trace.messages if keep(e)],
        others=others,
        problems=list(trace.problems),
        files=list(trace.files),
        delivered=trace.delivered,
        sent=trace.sent,
        loggers=trace.loggers,
        orders=trace.orders,
        endings=trace.endings,
    )


def summary(trace: TraceLog) -> dict[str, Any]:
    """Counts a reader wants at the end: per type, agents, processes, unmatched, messages
    known from one side (and the silent participants that make them so), bad lines."""
    flow = trace.flow()
    agents = sorted({e["sender"] for e in flow} | {e["recipient"] for e in flow})
    return {
        "messages": len(flow),
        "by_type": dict(sorted(Counter(e["msg_type"] for e in flow).items())),
        "agents": agents,
        "processes": sorted({e.get("pid") for e in trace.messages if e.get("pid") is not None}),
        "files": trace.files,
        "unmatched_sends": len(trace.unmatched_sends()),
        "unmatched_recvs": len(trace.unmatched_recvs()),
        "one_sided": len(trace.one_sided()),
        "silent": [name for name in trace.silent() if name in agents],
        "malformed_lines": trace.problems,
    }


def _summary_lines(trace: TraceLog) -> list[str]:
    """The summary as a person reads it, for the end of the text and (as comments) of the
    Mermaid diagram."""
    facts = summary(trace)
    by_type = ", ".join(f"{name} {count}" for name, count in facts["by_type"].items())
    lines = [
        f"{facts['messages']} messages between {len(facts['agents'])} agents "
        f"in {len(facts['processes'])} processes ({len(trace.files)} log files)",
        f"by type: {by_type or 'none'}",
        f"never received: {facts['unmatched_sends']}; received without a logged send: "
        f"{facts['unmatched_recvs']}",
    ]
    if facts["silent"]:
        lines.append(
            f"known from one side only: {facts['one_sided']} "
            f"({', '.join(facts['silent'])} logged nothing)"
        )
    if trace.problems:
        shown = "; ".join(trace.problems[:3]) + (" ..." if len(trace.problems) > 3 else "")
        lines.append(f"skipped as malformed: {len(trace.problems)} ({shown})")
    return lines


def render_text(trace: TraceLog) -> str:
    """One line per message (from its send, or its receive when only the receiver logged it),
    then the summary."""
    lines = []
    for event in trace.flow():
        mark = _MARKS[trace.side(event)]
        conversation = f" [{event['conversation']}]" if event.get("conversation") else ""
        about = trace.about(event)
        said = f" ({about})" if about else ""
        lines.append(
            f"tick {event.get('_at', event.get('tick', '?')):>4}  "
            f"{str(event.get('timestamp', ''))[11:23]}  "
            f"{event['sender']} -> {event['recipient']}  {event['msg_type']}{said}"
            f"{conversation}  {event['msg_id']}{mark}"
        )
    return "\n".join([*lines, "", *_summary_lines(trace)])


def render_mermaid(trace: TraceLog) -> str:
    """A Mermaid ``sequenceDiagram``: one arrow per message, a note at each new tick; a message
    never received ends in a cross, one known from one side only is dotted; the summary ends
    it as ``%%`` comments."""
    sends = trace.flow()
    participants: dict[str, str] = {}
    for event in sends:
        for name in (event["sender"], event["recipient"]):
            participants.setdefault(name, _mermaid_id(name, len(participants)))
    lines = ["sequenceDiagram"]
    lines += [
        f"    participant {alias} as {_mermaid_label(name)}" for name, alias in participants.items()
    ]
    current_tick = None
    for event in sends:
        tick = event.get("_at", event.get("tick"))
        if tick != current_tick and participants:
            current_tick = tick
            first, last = next(iter(participants.values())), list(participants.values())[-1]
            lines.append(f"    Note over {first},{last}: tick {tick}")
        logged_by = trace.side(event)
        arrow = _ARROWS[logged_by]
        label = event["msg_type"]
        about = trace.about(event)
        if about:
            label += f" {_mermaid_text(about)}"
        if event.get("conversation"):
            label += f" ({event['conversation']})"
        if logged_by in ("sender", "receiver"):
            label += f" [{logged_by}'s log only]"
        lines.append(
            f"    {participants[event['sender']]}{arrow}{participants[event['recipient']]}: {label}"
        )
    return "\n".join(lines + [f"%% {line}" for line in _summary_lines(trace)])


def render_json(trace: TraceLog) -> str:
    """One JSON object: ``events`` (each message with ``delivered``, some process logged
    receiving it, and ``logged_by``: both, sender or receiver) and ``summary`` (whose
    ``silent`` lists the participants that logged nothing)."""
    events = [
        {
            **{key: e.get(key) for key in TRACE_KEYS},
            "delivered": trace.logged_by(e) in ("both", "receiver"),
            "logged_by": trace.logged_by(e),
            "about": trace.about(e),
        }
        for e in trace.flow()
    ]
    return json.dumps({"events": events, "summary": summary(trace)})


def trace_command(
    log_dir: Path,
    fmt: str = "text",
    agent: str | None = None,
    conversation: str | None = None,
    msg_types: Iterable[str] | None = None,
) -> str:
    """What ``warband trace`` prints."""
    if fmt not in FORMATS:
        raise ConfigurationError(f"unknown trace format {fmt!r}; use one of {', '.join(FORMATS)}")
    check_message_types(msg_types or ())
    whole = load_trace(log_dir)
    if agent is not None:
        check_agent(whole, agent, log_dir)
    if conversation is not None:
        check_conversation(whole, conversation, log_dir)
    trace = filter_trace(whole, agent=agent, conversation=conversation, msg_types=msg_types)
    renderers = {"text": render_text, "mermaid": render_mermaid, "json": render_json}
    return renderers[fmt](trace)


def check_agent(trace: TraceLog, agent: str, log_dir: Path) -> None:
    """Raise :class:`ConfigurationError` when ``agent`` neither logged nor was named by any
    message of ``trace``: a misspelt ``--agent`` would otherwise print "0 messages"."""
    known = trace.loggers | {e["sender"] for e in trace.messages}
    known |= {e["recipient"] for e in trace.messages}
    if agent in known:
        return
    close = difflib.get_close_matches(agent, sorted(known), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    names = sorted(name for name in known if not name.startswith("#"))
    raise ConfigurationError(
        f"no agent {agent!r} in the logs of {str(log_dir)!r}; {hint}"
        f"agents there: {', '.join(names) or 'none'}"
    )


def check_conversation(trace: TraceLog, conversation: str, log_dir: Path) -> None:
    """Raise :class:`ConfigurationError` when no message of ``trace`` is of ``conversation``,
    naming the closest (and how many there are)."""
    known = sorted({e["conversation"] for e in trace.messages if e.get("conversation")})
    if conversation in known:
        return
    close = difflib.get_close_matches(conversation, known, n=3)
    hint = f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""
    raise ConfigurationError(
        f"no message of conversation {conversation!r} in the logs of {str(log_dir)!r}; {hint}"
        f"{len(known)} conversations there (a conversation is its opening message's id: "
        "`warband trace DIR` shows each in brackets)"
    )


def _mermaid_text(text: str) -> str:
    # ';' ends a Mermaid statement and '#' starts an entity code: neither may stay in a label.
    return text.replace(";", ",").replace("#", "")


def _mermaid_label(name: str) -> str:
    # '#' starts an entity code in Mermaid text, so a group is spelled out.
    return f"group {name[1:]}" if name.startswith("#") else name


def _mermaid_id(name: str, index: int) -> str:
    cleaned = "".join(ch if ch.isalnum() else "_" for ch in name)
    return f"p{index}_{cleaned}"
