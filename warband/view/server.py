"""The web server of ``warband view``: the page, its static files, and a small JSON API.

aiohttp serves everything (the optional extra ``warband[view]``). The page (``static/``) asks:

- ``GET /api/summary``: ticks, agents, message types, the map's geometry;
- ``GET /api/frame?tick=N``: the map's moving parts, plans and commanders' tables at tick N;
- ``GET /api/messages?tick=N[&before=B][&after=A][&agent=ID][&type=T...][&conversation=C]``:
  the messages around tick N, filtered as ``warband trace`` filters;
- ``GET /api/inspect?agent=ID&tick=N``: the agent inspector, what ``warband explain`` prints;
- ``GET /api/play?from=N[&fps=F]``: server-sent events, one ``frame`` per tick from N to the
  last, for a client that would rather be pushed frames than ask for each;
- ``GET /api/updates``: server-sent events, one ``update`` (the first and last tick, the
  message count, whether the map is known, the events a live run dropped for the viewer)
  each time a followed run's timeline grows (``--follow`` or ``--live``).

A bad query answers 400 with ``{"error": ...}`` saying what was wrong; an unknown agent 404.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._paths import wrong_kind
from ..exceptions import ConfigurationError
from .follow import LogFollower
from .live import LiveFeed
from .timeline import Timeline, load_timeline

if TYPE_CHECKING:
    from aiohttp import web

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
INSTALL_HINT = "warband view needs aiohttp: pip install 'warband[view]'"
MAX_FPS = 60.0
FOLLOW_EVERY = 0.5
"""Seconds between two reads of a followed run's logs (the run flushes them in blocks)."""
LIVE_NICENESS = 10
"""How much ``warband view --live`` lowers its own scheduling priority (``nice``)."""
KEEPALIVE_EVERY = 10.0
"""Seconds without an update after which ``/api/updates`` writes a comment line."""


def _web() -> Any:
    try:
        from aiohttp import web
    except ImportError:
        raise ConfigurationError(INSTALL_HINT) from None
    return web


def static_dir() -> Path:
    """Where the page's files are (shipped as package data)."""
    return Path(str(resources.files("warband.view") / "static"))


class ViewSite:
    """The page's handlers over one :class:`Timeline`; counts the requests it served."""

    def __init__(self, timeline: Timeline, *, following: bool = False) -> None:
        self.timeline = timeline
        self.following = following
        self.requests = 0

    def app(self) -> web.Application:
        """The aiohttp application; raises :class:`ConfigurationError` without aiohttp."""
        aio = _web()

        async def errors_as_json(request: web.Request, handler: Any) -> web.StreamResponse:
            return await self._errors_as_json(request, handler)

        app: web.Application = aio.Application(middlewares=[aio.middleware(errors_as_json)])
        app.router.add_get("/", self._index)
        app.router.add_get("/api/summary", self._summary)
        app.router.add_get("/api/frame", self._frame)
        app.router.add_get("/api/messages", self._messages)
        app.router.add_get("/api/inspect", self._inspect)
        app.router.add_get("/api/measures", self._measures)
        app.router.add_get("/api/play", self._play)
        app.router.add_get("/api/updates", self._updates)
        app.router.add_static("/static/", static_dir(), name="static")
        return app

    async def _errors_as_json(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.requests += 1
        try:
            response: web.StreamResponse = await handler(request)
            return response
        except ConfigurationError as error:
            status = 404 if str(error).startswith("no agent") else 400
            return _json({"error": str(error)}, status=status)

    async def _index(self, request: web.Request) -> web.StreamResponse:
        response: web.StreamResponse = _web().FileResponse(static_dir() / "index.html")
        return response

    async def _summary(self, request: web.Request) -> web.StreamResponse:
        return _json({**self.timeline.summary(), "following": self.following})

    async def _updates(self, request: web.Request) -> web.StreamResponse:
        response: web.StreamResponse = _web().StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        seen, quiet = -1, 0.0
        try:
            while True:  # until the page goes away or the server stops
                timeline = self.timeline
                if timeline.version != seen:
                    seen, quiet = timeline.version, 0.0
                    update = {
                        "version": seen,
                        "first_tick": timeline.ticks[0] if timeline.ticks else 0,
                        "last_tick": timeline.ticks[-1] if timeline.ticks else 0,
                        "messages": len(timeline.messages),
                        "has_map": timeline.map is not None,
                        "dropped": sum(timeline.dropped.values()),
                    }
                    await response.write(f"event: update\ndata: {json.dumps(update)}\n\n".encode())
                elif quiet >= KEEPALIVE_EVERY:
                    # A comment line: finds out a page that went away without a word.
                    quiet = 0.0
                    await response.write(b": keepalive\n\n")
                await asyncio.sleep(FOLLOW_EVERY)
                quiet += FOLLOW_EVERY
        except ConnectionResetError:
            return response  # the page closed or reloaded

    async def _frame(self, request: web.Request) -> web.StreamResponse:
        return _json(self.timeline.frame(_int(request, "tick")))

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        messages = self.timeline.messages_around(
            _int(request, "tick"),
            before=_int(request, "before", 2),
            after=_int(request, "after", 0),
            agent=request.query.get("agent") or None,
            msg_types=[t for t in request.query.getall("type", []) if t],
            conversation=request.query.get("conversation") or None,
        )
        return _json({"messages": messages})

    async def _measures(self, request: web.Request) -> web.StreamResponse:
        return _json(self.timeline.measures(_int(request, "tick")))

    async def _inspect(self, request: web.Request) -> web.StreamResponse:
        agent = request.query.get("agent")
        if not agent:
            raise ConfigurationError("missing query parameter 'agent' (an agent id)")
        return _json(self.timeline.inspect(agent, _int(request, "tick")))

    async def _play(self, request: web.Request) -> web.StreamResponse:
        timeline = self.timeline
        start = _int(request, "from", timeline.ticks[0] if timeline.ticks else 0)
        try:
            fps = min(MAX_FPS, max(0.1, float(request.query.get("fps", "5"))))
        except ValueError:
            raise ConfigurationError("query parameter 'fps' is not a number") from None
        response: web.StreamResponse = _web().StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        try:
            for tick in [t for t in timeline.ticks if t >= start]:
                data = json.dumps(timeline.frame(tick))
                await response.write(f"event: frame\ndata: {data}\n\n".encode())
                await asyncio.sleep(1.0 / fps)
            await response.write(b"event: end\ndata: {}\n\n")
        except ConnectionResetError:
            pass  # the client stopped listening: nothing to finish
        return response


def make_app(timeline: Timeline) -> web.Application:
    """The aiohttp application serving ``timeline`` (see the module docstring for its API);
    raises :class:`ConfigurationError` without aiohttp."""
    return ViewSite(timeline).app()


def _json(body: object, status: int = 200) -> web.StreamResponse:
    response: web.StreamResponse = _web().json_response(body, status=status)
    return response


def _int(request: web.Request, name: str, default: int | None = None) -> int:
    raw = request.query.get(name)
    if raw is None:
        if default is None:
            raise ConfigurationError(f"missing query parameter {name!r} (an integer)")
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigurationError(f"query parameter {name}={raw!r} is not an integer") from None


async def serve(
    timeline: Timeline,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    *,
    started: Callable[[str], None] = print,
    stop: asyncio.Event | None = None,
    follower: LogFollower | LiveFeed | None = None,
) -> int:
    """Serve ``timeline`` on ``host:port`` until ``stop`` is set (or SIGINT / SIGTERM when no
    event is given); calls ``started`` with the page's URL once it listens, and returns the
    number of requests served. Port 0 picks a free port (the URL says which). With
    ``follower``, what the run appends to its logs (or pushes to a live feed) is added to
    ``timeline`` as it comes."""
    aio = _web()
    site_handlers = ViewSite(timeline, following=follower is not None)
    runner = aio.AppRunner(
        site_handlers.app(), access_log=None, handle_signals=False, shutdown_timeout=1.0
    )
    await runner.setup()
    following = asyncio.create_task(_follow(timeline, follower)) if follower else None
    try:
        site = aio.TCPSite(runner, host, port)
        try:
            await site.start()
        except OSError as error:
            raise ConfigurationError(
                f"cannot listen on {host}:{port}: {error.strerror or error}; "
                "pick another with --port"
            ) from None
        bound_host, bound_port = runner.addresses[0][:2]
        shown = f"[{bound_host}]" if ":" in str(bound_host) else bound_host
        started(f"http://{shown}:{bound_port}/")
        if stop is None:
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, stop.set)
        await stop.wait()
    finally:
        if following is not None:
            following.cancel()
        await runner.cleanup()
    return site_handlers.requests


async def _follow(timeline: Timeline, follower: LogFollower | LiveFeed) -> None:
    reported = 0
    while True:
        # Reading and parsing happen off the loop; the timeline changes only on it.
        events = await asyncio.to_thread(follower.read_new)
        if events:
            timeline.add(events)
        timeline.problems.extend(follower.problems[reported:])
        reported = len(follower.problems)
        await asyncio.sleep(FOLLOW_EVERY)


def check_port(port: int, flag: str = "--port") -> None:
    """Raise :class:`ConfigurationError` for a TCP port outside 0..65535 (0 picks a free one),
    before anything is read or started."""
    if not 0 <= port <= 65535:
        raise ConfigurationError(
            f"{flag} must be a TCP port, 1 to 65535 (0 picks a free one), got {port}"
        )


def view_command(
    log_dir: Path | None,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    *,
    follow: bool = False,
    live: str | None = None,
    name: str | None = None,
) -> int:
    """What ``warband view LOG_DIR`` runs: the URL on the first line of output, then serve
    until Ctrl-C and print a one-line summary. With ``follow``, the run may still be running
    (or not started: the directory may not exist yet) and the page follows its logs as they
    grow. With ``live`` (and no ``log_dir``), the viewer binds that endpoint and follows the
    runs started with ``--live`` and the same endpoint (:mod:`warband.view.live`); ``name``
    is what its page then calls the run (default ``live ENDPOINT``). Returns the exit code."""
    check_port(port)
    _web()  # say which extra to install before reading a large log
    if live is not None:
        return _live_command(live, host, port, name)
    if log_dir is None:
        raise ConfigurationError(
            "warband view needs a run's LOG_DIR, or --live ENDPOINT to follow a running run"
        )
    wrong = wrong_kind(log_dir, "directory")
    if wrong is not None and not (follow and not log_dir.exists()):
        raise ConfigurationError(
            f"log directory {str(log_dir)!r} {wrong}; pass the --log DIR of a run, or "
            "add --follow to watch a run that will write it"
        )
    follower = LogFollower(log_dir) if follow else None
    if follower is not None:
        timeline = Timeline(log_dir)
        timeline.add(follower.read_new())
    else:
        timeline = load_timeline(log_dir)

    def started(url: str) -> None:
        print(url, flush=True)
        print(
            f"serving {str(log_dir)!r}: ticks {timeline.summary()['first_tick']}.."
            f"{timeline.summary()['last_tick']}, {len(timeline.agents)} agents, "
            f"{len(timeline.messages)} messages; Ctrl-C stops",
            file=sys.stderr,
            flush=True,
        )

    served = asyncio.run(serve(timeline, host, port, started=started, follower=follower))
    print(f"warband view: stopped after {served} request{'' if served == 1 else 's'}", flush=True)
    return 0


def _live_command(endpoint: str, host: str, port: int, name: str | None) -> int:
    # On a machine the run keeps busy, the run comes first: the viewer takes the CPU left
    # over (and drops frames if that is not enough), never the run's.
    if hasattr(os, "nice"):
        os.nice(LIVE_NICENESS)
    feed = LiveFeed(endpoint)
    timeline = Timeline(Path("."), source=name or f"live {feed.endpoint}", logged=False)

    def started(url: str) -> None:
        print(url, flush=True)
        print(
            f"following the runs started with --live {feed.endpoint}; Ctrl-C stops",
            file=sys.stderr,
            flush=True,
        )

    try:
        served = asyncio.run(serve(timeline, host, port, started=started, follower=feed))
    finally:
        feed.close()
    dropped = sum(timeline.dropped.values())
    print(
        f"warband view: stopped after {served} request{'' if served == 1 else 's'}; "
        f"{feed.events} events received live, {dropped} dropped by the run for this viewer",
        flush=True,
    )
    return 0
