"""The web server of ``warband view``: the page, its static files, and a small JSON API.

aiohttp serves everything (the optional extra ``warband[view]``). The page (``static/``) asks:

- ``GET /api/summary``: ticks, agents, message types, the map's geometry;
- ``GET /api/frame?tick=N``: the map's moving parts, plans and commanders' tables at tick N;
- ``GET /api/messages?tick=N[&before=B][&after=A][&agent=ID][&type=T...][&conversation=C]``:
  the messages around tick N, filtered as ``warband trace`` filters;
- ``GET /api/inspect?agent=ID&tick=N``: the agent inspector, what ``warband explain`` prints;
- ``GET /api/play?from=N[&fps=F]``: server-sent events, one ``frame`` per tick from N to the
  last, for a client that would rather be pushed frames than ask for each.

A bad query answers 400 with ``{"error": ...}`` saying what was wrong; an unknown agent 404.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..exceptions import ConfigurationError
from .timeline import Timeline, load_timeline

if TYPE_CHECKING:
    from aiohttp import web

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
INSTALL_HINT = "warband view needs aiohttp: pip install 'warband[view]'"
MAX_FPS = 60.0


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

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline
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
        app.router.add_get("/api/play", self._play)
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
        return _json(self.timeline.summary())

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
        for tick in [t for t in timeline.ticks if t >= start]:
            data = json.dumps(timeline.frame(tick))
            await response.write(f"event: frame\ndata: {data}\n\n".encode())
            await asyncio.sleep(1.0 / fps)
        await response.write(b"event: end\ndata: {}\n\n")
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
) -> int:
    """Serve ``timeline`` on ``host:port`` until ``stop`` is set (or SIGINT / SIGTERM when no
    event is given); calls ``started`` with the page's URL once it listens, and returns the
    number of requests served. Port 0 picks a free port (the URL says which)."""
    aio = _web()
    site_handlers = ViewSite(timeline)
    runner = aio.AppRunner(
        site_handlers.app(), access_log=None, handle_signals=False, shutdown_timeout=1.0
    )
    await runner.setup()
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
        await runner.cleanup()
    return site_handlers.requests


def view_command(log_dir: Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> int:
    """What ``warband view LOG_DIR`` runs: the URL on the first line of output, then serve
    until Ctrl-C and print a one-line summary. Returns the exit code."""
    _web()  # say which extra to install before reading a large log
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

    served = asyncio.run(serve(timeline, host, port, started=started))
    print(f"warband view: stopped after {served} request{'' if served == 1 else 's'}", flush=True)
    return 0
