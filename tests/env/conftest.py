"""An environment sets up logging when the program did not (warnings only, on stderr): each test
here leaves logging as it found it, so later tests still see every event."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog

from warband.messaging import configure_logging


@pytest.fixture(autouse=True)
def _logging_as_it_was() -> Iterator[None]:
    configured = structlog.is_configured()
    yield
    if not configured and structlog.is_configured():
        configure_logging(None, "tests", level="info")  # info events on again, no file
        structlog.reset_defaults()
