"""``warband view``: a web page to watch a recorded run (map, messages, plans, commanders).

``timeline`` reads a run's logs into a per-tick model (``follow``: as a running run writes
them; ``live``: as a running run pushes them, ``warband view --live``); ``server`` serves it
with aiohttp (the optional extra ``warband[view]``) and the page under ``static/`` (plain JS
and SVG, no build step, nothing fetched from the internet).
"""

from __future__ import annotations

from .follow import LogFollower as LogFollower
from .live import LiveFeed as LiveFeed
from .server import DEFAULT_HOST as DEFAULT_HOST
from .server import DEFAULT_PORT as DEFAULT_PORT
from .server import make_app as make_app
from .server import serve as serve
from .server import view_command as view_command
from .timeline import Timeline as Timeline
from .timeline import load_timeline as load_timeline
from .timeline import map_geometry as map_geometry

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "LiveFeed",
    "LogFollower",
    "Timeline",
    "load_timeline",
    "make_app",
    "map_geometry",
    "serve",
    "view_command",
]
