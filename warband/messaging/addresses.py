"""Who can be addressed: agent ids, group names, and the ids the runtime reserves.

Every actor is reached by its agent id, every group by ``#name``; the broker, the clock and the
``ticks`` and ``all`` groups have names of their own.
"""

from __future__ import annotations

import re

from ..exceptions import ConfigurationError

BROKER_ID = "broker"
"""The broker's own agent id: ``_Register``, ``_Ping`` and ``_Leave`` are addressed to it."""

GROUP_PREFIX = "#"
"""A recipient starting with this names a group: ``#red`` reaches every member of ``red``."""

ALL_GROUP = "all"
"""The group every registered actor is in."""

SUPERVISOR_ID = "supervisor"
"""The id a supervisor connects with to report an agent it gave up on (``_GaveUp``); the broker
obeys ``_GaveUp`` from this id only, and no agent may take it."""

GAVE_UP = "gave_up"
"""The first word of the departure reason (``_Left.reason``) of an agent its supervisor gave up
restarting: ``gave_up: exited with code 1 after 3 restarts in 10 s``."""

DEFAULT_CLOCK_ID = "clock"
"""The clock's id unless a scenario names it otherwise (a scenario with a world: ``world``)."""

TICK_GROUP = "ticks"
"""Every actor that takes ticks joins this group; the clock broadcasts Tick to it."""
_VALID_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,63}$")


def check_group_name(group: str) -> str:
    """Return ``group`` if actors may join or leave it, else raise ConfigurationError."""
    if group in (ALL_GROUP, TICK_GROUP) or not _VALID_ID.match(group):
        raise ConfigurationError(
            f"invalid group name {group!r}: use 1-64 letters, digits, '-', '_', '.', ':' "
            f"starting with a letter or digit (no leading '#'), and not {ALL_GROUP!r} or "
            f"{TICK_GROUP!r}, which the framework manages"
        )
    return group


def check_actor_id(actor_id: str) -> str:
    """Return ``actor_id`` if it is usable as an agent id, else raise ConfigurationError."""
    if actor_id in (BROKER_ID, SUPERVISOR_ID) or not _VALID_ID.match(actor_id):
        raise ConfigurationError(
            f"invalid agent id {actor_id!r}: use 1-64 letters, digits, '-', '_', '.', ':' "
            f"starting with a letter or digit, and not {BROKER_ID!r} or {SUPERVISOR_ID!r}"
        )
    return actor_id
