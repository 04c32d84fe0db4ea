"""The message catalog: every message warband actors exchange, as typed msgspec structs.

On the wire each message is one MessagePack map. The key ``type`` holds the struct's name (the
tag); the other keys are the struct's fields. PROTOCOL.md documents every field for clients
written in other languages. Adding a message type is one struct here plus its handler.

Names starting with an underscore are control messages of the runtime itself (registration,
undeliverable notices, run shutdown); agents never handle them.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import msgspec

from ..values import Scalar as Scalar
from ..values import Value as Value

Fact: TypeAlias = list[Value]
"""A fact on the wire: ``[name, arg1, arg2, ...]``, an array; :data:`warband.values.Fact` is
the same fact in memory (a tuple). ``Value`` is :data:`warband.values.Value`."""


class Message(msgspec.Struct, tag=True, frozen=True, kw_only=True):
    """The envelope every message carries.

    The runtime fills ``id``, ``sender``, ``seq`` and ``tick`` when the message is sent; code that
    builds a message sets ``recipient`` and, where it applies, ``conversation`` and ``reply_to``.
    Control messages (underscored) are numbered apart (``"<sender>:c<n>"``, ``seq`` 0), so how
    often a start-up handshake repeats never shifts the ids of the agents' own messages.
    """

    recipient: str = ""
    """Agent id, or ``#group`` for a broadcast to every member of a group (``#all`` is everyone)."""
    sender: str = ""
    """Agent id of the sender; the broker rejects a frame whose sender is not its connection's."""
    id: str = ""
    """Unique message id, ``"<sender>:<seq>"`` (control messages: ``"<sender>:c<n>"``)."""
    seq: int = 0
    """Per-sender sequence number, 1, 2, 3...; orders a sender's messages within a tick."""
    conversation: str | None = None
    """Ties an exchange together: RequestTalk ... EndTalk, or an Order and its CompletionReport."""
    reply_to: str | None = None
    """The ``id`` of the message this one answers; ``request(...)`` waits for it."""
    tick: int = 0
    """The sender's tick when it sent the message (0 before the first tick)."""
    ack_token: str | None = None
    """Set when the sender wants this message acknowledged (a reliable type, see
    :data:`RELIABLE_MESSAGES`): a token for this run of the sender. The receiver answers
    ``_Ack`` and drops a repeat of the same (``sender``, ``ack_token``, ``id``)."""
    trace: str | None = None
    """W3C ``traceparent`` of the span this message follows from (``00-<trace id>-<span id>-
    <flags>``), set only when the sender exports OpenTelemetry spans (``--otel``); the span that
    handles the message becomes its child. None (left out) otherwise, so older peers decode it."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__module__ != __name__:
            # Refused where it is written: the wire carries the catalog's types only, and a
            # type of one's own would otherwise be refused by the broker at run time while the
            # run goes on as a success.
            raise TypeError(
                f"{cls.__qualname__} ({cls.__module__}) subclasses a warband Message: messages "
                "are a fixed catalog that every peer decodes (PROTOCOL.md); send one of its "
                "types, e.g. StatusReport(status=..., details={...}) or Order(task=..., "
                "args={...})"
            )


# --- hierarchy: orders go down, reports come up ------------------------------------------------


class Order(Message, frozen=True):
    """A superior tells a subordinate to carry out a task (Killzone: squad orders a bot)."""

    task: str
    """Task name, e.g. ``"defend"``, ``"move_to"``, ``"attack"``."""
    args: list[Value] = []
    """Task arguments, e.g. ``["area-4"]``."""
    priority: int = 0
    """Higher preempts lower when the subordinate holds several orders."""
    sequence: str | None = None
    """Orders of one command sequence share this id and queue up behind each other at the
    subordinate; an order outside the running sequence overwrites the queue (Killzone's command
    queue)."""


class WithdrawOrder(Message, frozen=True):
    """A superior takes back an order it gave (it replanned): the subordinate drops it at once.

    A withdrawn order gets no CompletionReport; the superior's order book closes it when it
    sends this. Withdrawing an order the subordinate no longer holds is not an error.
    """

    order_id: str
    """The ``id`` of the Order to withdraw."""
    reason: str = ""
    """Why, for the subordinate's log."""


class CompletionReport(Message, frozen=True):
    """A subordinate reports that an order finished (``reply_to`` is the Order's id)."""

    task: str
    """The task of the order being reported on."""
    success: bool
    """True when the task was achieved, False when it failed or was abandoned."""
    reason: str = ""
    """Why it failed, or a short note on how it succeeded."""


class ThreatReport(Message, frozen=True):
    """A subordinate reports a threat it perceived, for its superior's picture of the world."""

    threat: str
    """Entity id of the threat."""
    position: str | None = None
    """Waypoint or area where the threat was seen, if known."""
    level: float = 1.0
    """How dangerous the reporter judges it, 0..1 and up."""


class StatusReport(Message, frozen=True):
    """A subordinate reports its state: position, health, current task, and so on."""

    status: str
    """Short state name, e.g. ``"idle"``, ``"busy"``, ``"dead"``."""
    details: dict[str, Value] = {}
    """Free-form key/values: ``{"health": 80, "at": "w12"}``."""


class GoalBias(Message, frozen=True):
    """A superior recommends (positive bias) or discourages (negative) one of a subordinate's goals.

    As in the Pittman thesis: the subordinate adds ``bias`` to that goal's relevancy.
    """

    goal: str
    """Goal name as known by the subordinate's goal set."""
    bias: float
    """Added to the goal's relevancy; positive recommends, negative discourages."""
    target: Value = None
    """What the goal is about (a room, a waypoint, an enemy id), as Pittman's recommendations
    carry it; None when the goal has none. Optional: older peers leave it out."""


# --- peer conversations (Boeda) ----------------------------------------------------------------


class WireCondition(msgspec.Struct, frozen=True, kw_only=True):
    """One world-state condition: ``key(subject) == value``, or ``!=`` when ``negated``.

    The two flags were added later with defaults, so a peer that leaves them out still means a
    plain untagged ``==`` condition."""

    key: str
    """Property name, e.g. ``"door_open"``."""
    subject: str | None = None
    """What the property is about, e.g. ``"cell-2"``; None for a global property."""
    value: Scalar = True
    """The value the condition asks for."""
    negated: bool = False
    """True for ``key(subject) != value``; absent (False) means ``==``."""
    achievable_by_any_agent: bool = False
    """Boeda's condition tag: another character could make it hold (only on ``==``)."""


class RequestTalk(Message, frozen=True):
    """Opens a conversation: may we talk? The reply is a TalkReply."""

    topic: str = "cooperation"
    """What the requester wants to talk about."""


class TalkReply(Message, frozen=True):
    """Accepts or refuses a RequestTalk."""

    accepted: bool
    """True when the responder is willing to talk."""
    reason: str = ""
    """Why it refused (busy, dislikes the requester, ...), or empty."""


class RequestCooperation(Message, frozen=True):
    """Asks the peer to make these conditions true (Boeda's cooperation request)."""

    conditions: list[WireCondition]
    """The conditions the requester needs another agent to achieve."""


class CooperationReply(Message, frozen=True):
    """Answers a RequestCooperation: can the responder achieve the conditions?"""

    accepted: bool
    """True when the responder found a plan and will carry it out."""
    reason: str = ""
    """Why it cannot, or empty."""
    cost: float | None = None
    """The responder's plan cost, when it has one."""


class EndTalk(Message, frozen=True):
    """Closes a conversation; either side may send it."""

    reason: str = ""
    """Why the conversation ends (done, timed out, cancelled...)."""


class CooperationResult(Message, frozen=True):
    """The responder tells the requester whether it achieved the requested conditions."""

    success: bool
    """True when the conditions now hold."""
    conditions: list[WireCondition] = []
    """The conditions this result is about."""
    reason: str = ""
    """Why it failed, or empty."""


# --- liveness ----------------------------------------------------------------------------------


class Heartbeat(Message, frozen=True):
    """Sent by an actor's event loop at a fixed interval so a monitor can see it is alive."""

    interval: float = 1.0
    """Seconds (realtime) or ticks (lockstep) until the next heartbeat."""


# --- the world: virtual controller, senses, time -----------------------------------------------


class Act(Message, frozen=True):
    """An agent asks the world to do something with its body (the virtual controller)."""

    verb: str
    """``move``, ``fire``, ``use``, ``reload``, ``select_weapon``, ``crouch``, ``stand``, ..."""
    args: dict[str, Value] = {}
    """Verb arguments, e.g. ``{"waypoint": "w7"}`` or ``{"target": "bot-4"}``."""


class ActResult(Message, frozen=True):
    """The world's answer to an Act (``reply_to`` is the Act's id)."""

    accepted: bool
    """True when the world took the action."""
    reason: str = ""
    """Why it was rejected, or empty."""


class Percept(Message, frozen=True):
    """What an agent's sensors tell it this tick, and the game events it should know.

    A *full* percept (``since`` is None, the default) lists every fact that holds. A *delta*
    (``since`` is the ``tick`` of the percept it follows) lists in ``facts`` only the facts added
    since that percept, and in ``removed`` the facts that no longer hold. The world sends deltas
    only to a participant that asked for them when it joined (``_Ready.percept_deltas``), and a
    full percept on join, on request (:class:`PerceptRequest`) and every few ticks.
    """

    facts: list[Fact] = []
    """Facts such as ``["at", "bot-1", "w3"]`` or ``["sees", "bot-7", "w9", 12.5]``; in a delta,
    the facts that hold now and did not in the percept ``since``."""
    events: list[Fact] = []
    """Game events such as ``["death", "bot-7"]`` or ``["captured", "cp-a", "red"]``: those of
    this tick, in a delta too."""
    since: int | None = None
    """None: a full percept. Else a delta from the percept of that ``tick`` the same sender sent;
    a receiver that did not apply that one must not apply this one (it asks for a full one)."""
    removed: list[Fact] = []
    """In a delta: the facts of the percept ``since`` that no longer hold (byte for byte)."""


class PerceptRequest(Message, frozen=True):
    """Asks the world for a full :class:`Percept` next time (a delta did not follow the last
    percept its receiver applied: one was lost or dropped)."""


class Tick(Message, frozen=True):
    """The clock starts tick ``tick``: handle what arrived during the previous tick, then act."""


class TickDone(Message, frozen=True):
    """An actor has finished its work for tick ``tick``."""


# --- runtime control (underscored: never handled by agent code) --------------------------------


class _Register(Message, frozen=True):
    """An actor introduces itself to the broker and joins groups; answered by _Registered."""

    groups: list[str] = []
    """Groups to join, without the leading ``#``."""
    lockstep: bool = True
    """True when the actor takes part in the lockstep tick."""
    watch: list[str] = []
    """Agent ids whose departure the broker reports to this actor with ``_Left``; ``"*"`` watches
    every peer (the clock does)."""
    run: str = ""
    """The id of the run the actor belongs to, when it knows it (a launcher's processes do);
    empty: whichever run the broker serves. A broker refuses a registration for another run."""
    members: list[str] = []
    """Sent by a clock only: the run's membership, every agent id that may take part (the
    clock's own included). The broker then refuses registrations under any other id."""


class _Registered(Message, frozen=True):
    """The broker confirms registration: from now on the actor is routable by id and group."""

    peers: list[str] = []
    """Ids of the actors registered at that moment (the new one included)."""


class _RollCall(Message, frozen=True):
    """The clock, once registered, asks every tick-taking actor to announce itself (_Ready)."""


class _Undeliverable(Message, frozen=True):
    """The broker could not deliver a message; sent back to its sender."""

    message_id: str
    """``id`` of the message that was not delivered."""
    message_type: str
    """Its type."""
    target: str
    """The recipient it was meant for."""
    reason: str
    """Why: unknown recipient, mailbox full, ..."""


class _Ready(Message, frozen=True):
    """An actor tells the clock it has started and is waiting for ticks."""

    percept_deltas: bool = False
    """True when the actor applies delta percepts (``Percept.since``); a world sends it full
    percepts otherwise, and a full one after every ``_Ready`` (a join or a restart)."""


class _FinishRun(Message, frozen=True):
    """Asks the clock to end the run after the current tick."""

    reason: str = ""
    """Why the run should end."""


class _Shutdown(Message, frozen=True):
    """The run is over: report your stats and stop."""

    reason: str = ""
    """Why the run ended."""


class _Leave(Message, frozen=True):
    """An actor tells the broker it is leaving for good (stopped, failed, shut down)."""

    reason: str = ""
    """Why it leaves."""


class _Left(Message, frozen=True):
    """The broker tells a watcher that a peer is gone: it left, its connection went away, or it
    was silent for longer than its heartbeats allow."""

    agent: str
    """The id of the peer that is gone."""
    reason: str = ""
    """How the broker knows: ``left: <the peer's reason>``, ``disconnected`` or ``silent ...``."""


class _Watch(Message, frozen=True):
    """An actor asks the broker to report (``_Left``) when ``agent`` is gone, as it does for the
    peers named in its registration's ``watch``; warband actors send it before they wait on a
    conversation with ``agent``, so a peer that dies or goes silent closes it."""

    agent: str
    """The id of the peer to watch."""


class _GaveUp(Message, frozen=True):
    """A supervisor tells the broker it gave up restarting ``agent`` (restart intensity
    exceeded); the broker reports the departure with ``_Left`` to whoever watches the agent,
    the agent's superior and the clock included. Obeyed only from the id ``supervisor``."""

    agent: str
    """The id of the agent given up on."""
    reason: str = ""
    """Why, starting with ``gave_up``: ``gave_up: exited with code 1 after 3 restarts in 10 s``."""


class _Ack(Message, frozen=True):
    """A receiver got a message that carries an ``ack_token``; sent before any handler runs.

    The sender stops re-sending ``message_id`` when this comes from the message's recipient."""

    message_id: str
    """The ``id`` of the message received."""


class _Ping(Message, frozen=True):
    """An actor's liveness heartbeat to the broker, sent from its event loop on the wall clock."""

    interval: float = 1.0
    """Seconds until the next ping; the broker counts a peer gone after a few silent intervals."""


class _Vouch(Message, frozen=True):
    """A process's keeper tells the broker that these agents of its process are alive, from a
    thread a long tick does not block (keeper.py); the broker counts each as heard, as if it
    had pinged. Not answered."""

    agents: list[str] = []
    """The ids of the agents of the sender's process it vouches for."""
    interval: float = 1.0
    """Seconds until the next vouch."""


class _Pong(Message, frozen=True):
    """The broker's answer to _Ping; it tells the actor whether the broker knows it."""

    registered: bool = True
    """False from a broker that does not know the actor (it restarted): register again."""


class _Stats(Message, frozen=True):
    """An actor's final counters and state, sent in answer to _Shutdown."""

    messages_sent: int = 0
    """Catalog messages this actor sent (control messages are not counted)."""
    messages_received: int = 0
    """Catalog messages this actor received and accepted (control messages are not counted)."""
    messages_rejected: int = 0
    """Frames this actor rejected as malformed."""
    handler_failures: int = 0
    """Exceptions raised by this actor's handlers, timers and ``on_tick``."""
    undeliverable: int = 0
    """Messages of this actor the broker could not deliver."""
    conflated: int = 0
    """Percepts this actor dropped for a newer one from the same sender (backpressure)."""
    would_block: int = 0
    """Sends this actor could not queue (EAGAIN: its queue to the broker was full)."""
    final_state: dict[str, Any] = {}
    """What the actor exposes to the scenario's outcome function."""


AGENT_MESSAGES: tuple[type[Message], ...] = (
    Order,
    WithdrawOrder,
    CompletionReport,
    ThreatReport,
    StatusReport,
    GoalBias,
    RequestTalk,
    TalkReply,
    RequestCooperation,
    CooperationReply,
    EndTalk,
    CooperationResult,
    Heartbeat,
    Act,
    ActResult,
    Percept,
    PerceptRequest,
    Tick,
    TickDone,
)
"""The public message types, in catalog order."""

CONTROL_MESSAGES: tuple[type[Message], ...] = (
    _Register,
    _Registered,
    _RollCall,
    _Undeliverable,
    _Ready,
    _FinishRun,
    _Shutdown,
    _Stats,
    _Leave,
    _Left,
    _Watch,
    _GaveUp,
    _Ack,
    _Ping,
    _Pong,
    _Vouch,
)
"""The runtime's own control messages."""

RELIABLE_MESSAGES: frozenset[type[Message]] = frozenset(
    {
        Order,
        WithdrawOrder,
        CompletionReport,
        RequestTalk,
        TalkReply,
        RequestCooperation,
        CooperationReply,
        EndTalk,
        CooperationResult,
    }
)
"""The types warband delivers effectively once: orders and their ends, and every turn of a
cooperation conversation. Sent to one agent (not a group), each carries an ``ack_token``, is
acknowledged by ``_Ack``, re-sent until acknowledged, and deduplicated by its receiver.
Percepts, acts, reports and ticks are not: they are re-sent by their meaning (the next percept,
the next tick) or not at all. An actor may change its own set (``Actor.reliable_types``)."""

ALL_MESSAGES: tuple[type[Message], ...] = AGENT_MESSAGES + CONTROL_MESSAGES

MESSAGE_TYPES: dict[str, type[Message]] = {cls.__name__: cls for cls in ALL_MESSAGES}
"""Type tag -> struct class."""
