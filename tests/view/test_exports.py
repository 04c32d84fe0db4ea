"""warband.view's public names are pinned, and importing it does not import aiohttp (only
serving the page needs the ``view`` extra)."""

from __future__ import annotations

import subprocess
import sys

import warband.view

PUBLIC = [
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


def test_warband_view_exports_exactly_its_curated_names() -> None:
    assert PUBLIC == sorted(warband.view.__all__)


def test_importing_warband_view_leaves_aiohttp_unimported() -> None:
    code = "import sys, warband.view; print('aiohttp' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert "False" == result.stdout.strip()
