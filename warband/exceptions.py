"""Every error warband raises on purpose derives from :class:`WarbandError`."""

from __future__ import annotations


class WarbandError(Exception):
    """Base class of all warband errors; catch this to handle any of them."""


class ConfigurationError(WarbandError):
    """A scenario, map, domain, endpoint or CLI value is wrong; the message says which and why."""


class ProtocolError(WarbandError):
    """A frame on the wire could not be accepted (bad bytes, bad schema, spoofed sender...)."""


class DeliveryError(WarbandError):
    """A message could not be delivered (unknown recipient, peer gone, mailbox full)."""


class RequestTimeout(WarbandError):
    """A request got no reply within its timeout; the conversation has been closed."""


class PlanningError(WarbandError):
    """A planning domain or problem is malformed (not: "no plan exists", which is a result)."""


class DomainSyntaxError(PlanningError):
    """A domain text file does not parse; carries the file, line and column."""

    def __init__(self, message: str, *, path: str, line: int, column: int) -> None:
        self.path = path
        self.line = line
        self.column = column
        super().__init__(f"{path}:{line}:{column}: {message}")


class MapError(ConfigurationError):
    """A map file is malformed; the message names the file, the element and the problem."""


class UnknownIdError(ConfigurationError, KeyError):
    """A lookup named a waypoint, marker, object, agent or team that does not exist; the
    message names the id and the map. Also a ``KeyError``, for callers that catch that."""

    def __str__(self) -> str:
        # KeyError's str() is the repr of its argument; the message reads better as it is.
        return str(self.args[0]) if self.args else ""
