"""``warband gateway``: WebSocket clients join a run, one participant per connection.

aiohttp serves (the optional extra ``warband[gateway]``):

- ``GET /ws``: the WebSocket. The client's first message is a ``_Register`` in JSON
  (:mod:`~warband.gateway.wire`) whose ``sender`` is the agent id it plays, with its ``token``
  when the gateway has tokens; the gateway answers ``_Registered`` once the broker has taken
  the registration (a :class:`~warband.gateway.participant.ClientActor` speaks for the client
  from then on), and the two then exchange catalog messages as JSON text.
- ``GET /maps/NAME``: a bundled map's geometry as JSON (waypoints, links, markers...), so a
  client can find its way without reading warband's map files.
- ``GET /status``: the clients connected now and the counts so far, as JSON.

A client is closed with a code and a one-line reason: 1000 when the run is over (after the
``_Shutdown`` it was sent) or it left, 4000 for bad input (a first message that is not a JSON
``_Register`` with a valid agent id, or none within ``register_timeout``), 4001 when it is
refused (a missing or wrong token, an id another client plays), 4002 when it is too slow (more
than ``queue`` messages waiting for it, or a tick not finished within ``tick_timeout``), and
4003 when the run refused it or ended for it (not a member of the run, the clock gone, no
broker). Every refusal and drop is logged (``gateway.refused``, ``gateway.dropped``) with the
agent, the client's address and the reason; a refusal is also written to the client first as
an ``_Undeliverable`` with the whole reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec
import zmq

from ..exceptions import ConfigurationError, ProtocolError, WarbandError
from ..messaging.addresses import DEFAULT_CLOCK_ID, TICK_GROUP, check_actor_id
from ..messaging.catalog import _Register, _Undeliverable
from ..messaging.tracing import get_logger
from .participant import GATEWAY_SENDER, REJECTED, ClientActor
from .tokens import Tokens
from .wire import MAX_TEXT_BYTES, JsonCodec

if TYPE_CHECKING:
    from aiohttp import web

    from ..messaging.secret import RunSecret

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8766
WEBSOCKET_PATH: Final = "/ws"
INSTALL_HINT: Final = "warband gateway needs aiohttp: pip install 'warband[gateway]'"

CLOSE_DONE: Final = 1000
CLOSE_BAD_INPUT: Final = 4000
CLOSE_REFUSED: Final = 4001
CLOSE_TOO_SLOW: Final = 4002
CLOSE_RUN: Final = 4003
CLOSE_FLUSH_S: Final = 2.0
"""Seconds a closing connection gets to write what is queued for it and say goodbye."""
_MAX_CLOSE_REASON = 123
"""Bytes a WebSocket close frame's reason may hold (RFC 6455)."""


@dataclass(frozen=True)
class GatewayConfig:
    """How a gateway joins a run and whom it lets in."""

    connect: str
    """The broker's endpoint (``tcp://HOST:PORT`` or ``ipc://PATH``)."""
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    tokens: Tokens | None = None
    """The agents clients may play, each with its token; None: any id, loopback only."""
    secret: RunSecret | None = None
    """The run secret each client's connection to the broker proves its id with."""
    curve: Path | None = None
    """Or a CURVE key directory holding ``ID.key_secret`` of every id played and ``broker.key``."""
    clock: str = DEFAULT_CLOCK_ID
    """The run's clock, unless a client names it (``clock`` in its ``_Register``)."""
    queue: int = 10_000
    """Messages waiting for a client before it is dropped as too slow."""
    tick_timeout: float = 5.0
    """Seconds a lockstep client has to answer a Tick with TickDone before it is dropped."""
    register_timeout: float = 10.0
    """Seconds a client has to send its ``_Register``, and the broker to take it."""

    def __post_init__(self) -> None:
        if self.queue < 1:
            raise ConfigurationError(f"--queue must be at least 1 message, got {self.queue}")
        for name in ("tick_timeout", "register_timeout"):
            if not getattr(self, name) > 0:
                flag = "--" + name.replace("_", "-")
                raise ConfigurationError(
                    f"{flag} must be positive seconds, got {getattr(self, name)}"
                )
        if self.tokens is None and not is_loopback(self.host):
            raise ConfigurationError(
                f"--host {self.host}: without --tokens the gateway lets any client play any "
                "agent, so it listens on loopback only (127.0.0.1, ::1, localhost); write tokens "
                "with `warband keys DIR --tokens ID[,ID...]` and pass --tokens DIR"
            )


def is_loopback(host: str) -> bool:
    """True when ``host`` names this machine's loopback interface only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Hello(msgspec.Struct):
    """What a client's first message carries besides a ``_Register``'s fields."""

    token: str = ""
    clock: str = ""


@dataclass
class _Session:
    """One client's connection, from its ``_Register`` on."""

    agent: str
    peer: str
    queue: asyncio.Queue[str] = field(default_factory=asyncio.Queue)
    close_code: int = CLOSE_DONE
    close_reason: str = ""
    actor: ClientActor | None = None
    run: asyncio.Task[None] | None = None
    """The actor's ``run``: it ends when the run is over, the client left or was dropped."""


@dataclass
class GatewayCounts:
    """What a gateway did so far (``GET /status``, and its summary line)."""

    served: int = 0
    refused: int = 0
    dropped: int = 0
    to_clients: int = 0
    from_clients: int = 0


class Gateway:
    """The gateway's handlers; one :class:`ClientActor` per connected client."""

    def __init__(self, config: GatewayConfig, context: zmq.Context[zmq.Socket[bytes]]) -> None:
        self.config = config
        self.counts = GatewayCounts()
        self._context = context
        self._json = JsonCodec()
        self._sessions: dict[str, _Session] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self.log = get_logger(agent="gateway")

    def app(self) -> web.Application:
        """The aiohttp application; raises :class:`ConfigurationError` without aiohttp."""
        aio = _web()
        app: web.Application = aio.Application()
        app.router.add_get(WEBSOCKET_PATH, self._websocket)
        app.router.add_get("/maps/{name}", self._map)
        app.router.add_get("/status", self._status)
        return app

    @property
    def agents(self) -> list[str]:
        """The agents played by a client now."""
        return sorted(self._sessions)

    # --- HTTP -----------------------------------------------------------------------------------

    async def _status(self, request: web.Request) -> web.StreamResponse:
        response: web.StreamResponse = _web().json_response(
            {"agents": self.agents, **vars(self.counts)}
        )
        return response

    async def _map(self, request: web.Request) -> web.StreamResponse:
        from ..view.timeline import map_geometry
        from ..world import bundled_maps, load_map

        name = request.match_info["name"].removesuffix(".json")
        # A map is public, and a page loaded from anywhere (file://) may read it.
        cors = {"Access-Control-Allow-Origin": "*"}
        if name not in bundled_maps():
            known = ", ".join(sorted(bundled_maps()))
            body: dict[str, Any] = {"error": f"no bundled map {name!r}; bundled maps: {known}"}
            status = 404
        else:
            body, status = map_geometry(load_map(name)), 200
        response: web.StreamResponse = _web().json_response(body, status=status, headers=cors)
        return response

    # --- WebSocket ------------------------------------------------------------------------------

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        ws: web.WebSocketResponse = _web().WebSocketResponse(max_msg_size=MAX_TEXT_BYTES)
        await ws.prepare(request)
        peer = _address(request)
        session = await self._admit(ws, peer)
        if session is None:
            return ws
        try:
            await self._serve(ws, session)
        finally:
            self._sessions.pop(session.agent, None)
        return ws

    async def _admit(self, ws: web.WebSocketResponse, peer: str) -> _Session | None:
        """Read the client's ``_Register``, check it and its token, register it with the
        broker; None (the connection closed, the refusal logged) when any of that fails."""
        aio = _web()
        try:
            first = await asyncio.wait_for(ws.receive(), self.config.register_timeout)
        except TimeoutError:
            await self._refuse(
                ws,
                peer,
                "",
                CLOSE_BAD_INPUT,
                f"you did not register within {self.config.register_timeout:g} s: send a "
                "_Register with your agent id as sender first",
            )
            return None
        if first.type not in (aio.WSMsgType.TEXT, aio.WSMsgType.BINARY):
            return None  # closed before it said anything
        try:
            register, hello = self._read_register(first.data)
        except (ProtocolError, ConfigurationError) as error:
            await self._refuse(ws, peer, "", CLOSE_BAD_INPUT, str(error))
            return None
        agent = register.sender
        if self.config.tokens is not None:
            refusal = self.config.tokens.refusal(agent, hello.token)
            if refusal is not None:
                await self._refuse(ws, peer, agent, CLOSE_REFUSED, refusal, register.id)
                return None
        if agent in self._sessions:
            await self._refuse(
                ws,
                peer,
                agent,
                CLOSE_REFUSED,
                f"agent {agent!r} is played by another client of this gateway "
                f"({self._sessions[agent].peer})",
                register.id,
            )
            return None
        session = _Session(agent, peer)
        self._sessions[agent] = session
        try:
            await self._start_actor(session, register, hello)
        except WarbandError as error:
            self._sessions.pop(agent, None)
            await self._refuse(ws, peer, agent, CLOSE_RUN, str(error), register.id)
            return None
        self.counts.served += 1
        self.log.info("gateway.connected", peer=agent, address=peer)
        return session

    def _read_register(self, data: str | bytes) -> tuple[_Register, _Hello]:
        if isinstance(data, bytes):
            raise ProtocolError("send JSON text messages, not binary ones")
        message = self._json.decode(data)
        if not isinstance(message, _Register):
            raise ProtocolError(
                f"the first message must be a _Register (got {type(message).__name__}): "
                '{"type": "_Register", "sender": YOUR_AGENT_ID, "groups": ["ticks"], '
                '"token": YOUR_TOKEN}'
            )
        if not message.sender:
            raise ProtocolError("_Register has no sender: set 'sender' to the agent id you play")
        check_actor_id(message.sender)
        hello = msgspec.json.decode(data, type=_Hello)
        if hello.clock:
            check_actor_id(hello.clock)
        return message, hello

    async def _start_actor(self, session: _Session, register: _Register, hello: _Hello) -> None:
        """Start the client's actor and return once the broker registered it. Raises
        WarbandError when the run refused it (or no broker answered)."""
        lockstep = TICK_GROUP in register.groups
        actor = ClientActor(
            session.agent,
            groups=[g for g in register.groups if g != TICK_GROUP],
            watch=register.watch,
            lockstep=lockstep,
            outbox=lambda text: self._put(session, text),
            drop=lambda reason: self._drop(session, reason),
            tick_timeout=self.config.tick_timeout,
            held_limit=self.config.queue,
            codec=self._json,
        )
        actor.register_id = register.id
        session.actor = actor
        curve = None
        if self.config.curve is not None:
            from ..messaging.curve import load_client

            curve = load_client(self.config.curve, session.agent)
        run = asyncio.create_task(
            actor.run(
                self.config.connect,
                context=self._context,
                mode="lockstep" if lockstep else "realtime",
                clock_id=hello.clock or self.config.clock,
                heartbeat_interval=0.0,
                register_timeout=self.config.register_timeout,
                secret=self.config.secret,
                curve=curve,
            ),
            name=f"gateway client {session.agent}",
        )
        self._tasks.add(run)
        run.add_done_callback(self._tasks.discard)
        started = asyncio.create_task(actor.wait_started(self.config.register_timeout + 1))
        await asyncio.wait({run, started}, return_when=asyncio.FIRST_COMPLETED)
        if started.done() and started.exception() is None:
            session.run = run
            return
        started.cancel()
        if not run.done():
            actor.stop("not started")
            await asyncio.wait({run}, timeout=CLOSE_FLUSH_S)
        error = run.exception() if run.done() and not run.cancelled() else None
        if isinstance(error, WarbandError):
            raise error
        raise WarbandError(f"the gateway could not start {session.agent!r}: {error!r}")

    async def _serve(self, ws: web.WebSocketResponse, session: _Session) -> None:
        actor = session.actor
        assert actor is not None
        run = session.run
        assert run is not None
        writer = asyncio.create_task(self._write(ws, session))
        reader = asyncio.create_task(self._read(ws, actor))
        try:
            await asyncio.wait({reader, run}, return_when=asyncio.FIRST_COMPLETED)
            if not run.done():
                actor.stop("the client closed its connection")
                await asyncio.wait({run}, timeout=CLOSE_FLUSH_S * 5)
            elif session.close_code == CLOSE_DONE:
                self._ended(session, run)
            if session.close_code != CLOSE_TOO_SLOW:
                # What is queued (the _Shutdown, a last notice) goes out before the goodbye.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(session.queue.join(), CLOSE_FLUSH_S)
        finally:
            writer.cancel()
            reader.cancel()
            self.counts.to_clients += actor.to_client
            self.counts.from_clients += actor.from_client
            await _close(ws, session.close_code, session.close_reason)
            self.log.info(
                "gateway.closed",
                peer=session.agent,
                address=session.peer,
                code=session.close_code,
                reason=session.close_reason,
                to_client=actor.to_client,
                from_client=actor.from_client,
            )

    def _ended(self, session: _Session, run: asyncio.Task[None]) -> None:
        """Say why the client's actor ended: the run is over, or the run ended it."""
        error = run.exception() if not run.cancelled() else None
        if error is not None:
            session.close_code, session.close_reason = CLOSE_RUN, str(error)
        elif session.actor is not None and session.actor.stopping:
            session.close_reason = session.actor._stop_reason or "the run is over"

    async def _read(self, ws: web.WebSocketResponse, actor: ClientActor) -> None:
        aio = _web()
        async for message in ws:
            if message.type == aio.WSMsgType.TEXT:
                actor.from_text(message.data)
            elif message.type == aio.WSMsgType.BINARY:
                actor._notice(
                    _Undeliverable(
                        message_id="",
                        message_type="",
                        target="",
                        reason="send JSON text messages, not binary ones",
                    )
                )
            else:
                break

    async def _write(self, ws: web.WebSocketResponse, session: _Session) -> None:
        while True:
            text = await session.queue.get()
            try:
                await ws.send_str(text)
            except ConnectionError:
                return
            finally:
                session.queue.task_done()

    def _put(self, session: _Session, text: str) -> None:
        if session.close_code == CLOSE_TOO_SLOW:
            return
        if session.queue.qsize() >= self.config.queue:
            self._drop(
                session,
                f"{session.queue.qsize()} messages were waiting for you (--queue "
                f"{self.config.queue}): read faster",
            )
            return
        session.queue.put_nowait(text)

    def _drop(self, session: _Session, reason: str) -> None:
        if session.close_code == CLOSE_TOO_SLOW:
            return
        self.counts.dropped += 1
        session.close_code, session.close_reason = CLOSE_TOO_SLOW, f"too slow: {reason}"
        self.log.error("gateway.dropped", peer=session.agent, address=session.peer, reason=reason)
        if session.actor is not None:
            session.actor.stop(f"dropped by the gateway: {reason}")

    async def _refuse(
        self,
        ws: web.WebSocketResponse,
        peer: str,
        agent: str,
        code: int,
        reason: str,
        message_id: str = "",
    ) -> None:
        self.counts.refused += 1
        self.log.error("gateway.refused", peer=agent or "unknown", address=peer, reason=reason)
        notice = _Undeliverable(
            sender=GATEWAY_SENDER,
            recipient=agent,
            message_id=message_id,
            message_type="_Register",
            target="broker",
            reason=f"{REJECTED}{reason}",
        )
        with contextlib.suppress(ConnectionError):
            await ws.send_str(self._json.encode(notice))
        await _close(ws, code, reason)

    async def close(self) -> None:
        """Stop every client's actor (each leaves the run) and wait for them."""
        for session in list(self._sessions.values()):
            session.close_code, session.close_reason = 1001, "the gateway is shutting down"
            if session.actor is not None:
                session.actor.stop("the gateway is shutting down")
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=CLOSE_FLUSH_S * 5)


async def _close(ws: web.WebSocketResponse, code: int, reason: str) -> None:
    data = reason.encode()
    if len(data) > _MAX_CLOSE_REASON:
        data = data[: _MAX_CLOSE_REASON - 3].decode(errors="ignore").encode() + b"..."
    with contextlib.suppress(TimeoutError, ConnectionError):
        await asyncio.wait_for(ws.close(code=code, message=data), CLOSE_FLUSH_S)


def _address(request: web.Request) -> str:
    peername = request.transport.get_extra_info("peername") if request.transport else None
    if isinstance(peername, tuple) and len(peername) >= 2:
        return f"{peername[0]}:{peername[1]}"
    return request.remote or "unknown"


def _web() -> Any:
    try:
        from aiohttp import web
    except ImportError:
        raise ConfigurationError(INSTALL_HINT) from None
    return web


def serve(config: GatewayConfig, *, quiet: bool = False) -> int:
    """Run a gateway until SIGINT, SIGTERM or SIGHUP; print its URL first and a summary last."""
    _web()
    from ..messaging.event_loop import new_event_loop

    loop = new_event_loop()
    try:
        return loop.run_until_complete(_serve_forever(config, quiet))
    finally:
        loop.close()


async def _serve_forever(config: GatewayConfig, quiet: bool) -> int:
    aio = _web()
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    gateway = Gateway(config, context)
    runner = aio.AppRunner(gateway.app(), handle_signals=False, shutdown_timeout=CLOSE_FLUSH_S)
    await runner.setup()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, stop.set)
    try:
        site = aio.TCPSite(runner, config.host, config.port)
        try:
            await site.start()
        except OSError as error:
            raise ConfigurationError(
                f"cannot listen on {config.host}:{config.port}: {error.strerror}; pick another "
                "--port"
            ) from None
        print(f"ws://{_url_host(config.host)}:{config.port}{WEBSOCKET_PATH}", flush=True)
        if not quiet:
            print(
                f"warband gateway: clients of {config.connect} connect to the URL above",
                file=sys.stderr,
                flush=True,
            )
        gateway.log.info("gateway.start", endpoint=config.connect, port=config.port)
        await stop.wait()
    finally:
        await gateway.close()
        await runner.cleanup()
        context.term()
    counts = gateway.counts
    print(
        f"warband gateway: served {counts.served} clients ({counts.refused} refused, "
        f"{counts.dropped} dropped); {counts.to_clients} messages to clients, "
        f"{counts.from_clients} from them",
        file=sys.stderr,
        flush=True,
    )
    return 0


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


__all__ = [
    "CLOSE_BAD_INPUT",
    "CLOSE_DONE",
    "CLOSE_REFUSED",
    "CLOSE_RUN",
    "CLOSE_TOO_SLOW",
    "DEFAULT_PORT",
    "WEBSOCKET_PATH",
    "Gateway",
    "GatewayConfig",
    "serve",
]
