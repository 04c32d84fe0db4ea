"""What is wrong with a path given where a file or a directory is expected, in words.

A directory given for a file (or a file for a directory) is not "missing": saying so sends the
user looking for a typo that is not there. :func:`wrong_kind` tells the cases apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

Kind = Literal["file", "directory"]


def wrong_kind(path: Path, expected: Kind) -> str | None:
    """None when ``path`` is an existing ``expected`` (a file or a directory); else what it is
    instead: ``does not exist``, ``is a directory, not a file``, ``is a file, not a
    directory`` (or ``is not a regular file`` for a device, a socket...)."""
    if expected == "file" and path.is_file():
        return None
    if expected == "directory" and path.is_dir():
        return None
    if not path.exists():
        return "does not exist"
    if path.is_dir():
        return "is a directory, not a file"
    if expected == "directory":
        return "is a file, not a directory" if path.is_file() else "is not a directory"
    return "is not a regular file"
