"""Gateway tokens: how a WebSocket client proves the agent id it plays.

``warband keys DIR --tokens ID[,ID...]`` writes one file per agent id, ``DIR/ID.token``, holding
a random token (64 hex characters, readable by its owner only). The gateway (``warband gateway
--tokens DIR``) reads every ``*.token`` file of the directory; the client of agent ``ID`` is
given ``ID.token`` and sends its text in the ``token`` key of its first message. A token is
bound to its id: it lets its holder play that id and no other, and an id without a token file
cannot be played at all. Tokens travel as the client sends them: over ``ws://`` anyone on the
path can read them, so reach a gateway across a network through TLS (a reverse proxy).
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..exceptions import ConfigurationError
from ..messaging.addresses import check_actor_id

TOKEN_SUFFIX = ".token"
"""The file ``ID.token`` holds the token of agent ``ID``."""

_MIN_TOKEN_CHARACTERS = 32


@dataclass(frozen=True)
class Tokens:
    """The token of every agent id a gateway lets clients play."""

    by_agent: Mapping[str, str]

    def refusal(self, agent_id: str, token: str) -> str | None:
        """Why a client offering ``token`` may not play ``agent_id``; None when it may.
        Tokens are compared in constant time."""
        expected = self.by_agent.get(agent_id)
        if expected is None:
            return f"no token was made for agent {agent_id!r}: this gateway lets no client play it"
        if not token:
            return f"no token given for agent {agent_id!r}: send its token in the 'token' key"
        if not hmac.compare_digest(expected.encode(), token.encode()):
            return f"wrong token for agent {agent_id!r}"
        return None


def write_tokens(directory: Path, agent_ids: Iterable[str], *, force: bool = False) -> list[Path]:
    """Write a fresh token for each of ``agent_ids`` to ``directory/ID.token`` (owner-only).

    Returns the files written. Refuses (:class:`ConfigurationError`, naming the file) to
    replace a token file unless ``force``, and an invalid agent id.
    """
    ids = list(dict.fromkeys(agent_ids))
    if not ids:
        raise ConfigurationError("name at least one agent to make a token for: --tokens ID[,ID...]")
    for agent_id in ids:
        check_actor_id(agent_id)
        existing = directory / f"{agent_id}{TOKEN_SUFFIX}"
        if existing.exists() and not force:
            raise ConfigurationError(
                f"{existing} exists already; pass --force to replace it (its client must then "
                "get the new token)"
            )
    written: list[Path] = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for agent_id in ids:
            path = directory / f"{agent_id}{TOKEN_SUFFIX}"
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.write(secrets.token_hex(32) + "\n")
            written.append(path)
    except OSError as error:
        raise ConfigurationError(f"cannot write tokens in {directory}: {error}") from None
    return written


def load_tokens(directory: Path) -> Tokens:
    """Every ``ID.token`` of ``directory``. Raises :class:`ConfigurationError` naming the
    directory or the file when one cannot be read, holds no token, or has no valid id as its
    name, and when the directory holds no token at all."""
    if not directory.is_dir():
        raise ConfigurationError(
            f"--tokens {str(directory)!r} is not a directory; write tokens with `warband keys "
            "DIR --tokens ID[,ID...]` and pass DIR"
        )
    tokens: dict[str, str] = {}
    for path in sorted(directory.glob(f"*{TOKEN_SUFFIX}")):
        agent_id = path.name.removesuffix(TOKEN_SUFFIX)
        try:
            check_actor_id(agent_id)
            text = path.read_text(encoding="utf-8").strip()
        except ConfigurationError as error:
            raise ConfigurationError(f"token file {path}: {error}") from None
        except (OSError, UnicodeDecodeError) as error:
            reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
            raise ConfigurationError(f"cannot read the token file {path} ({reason})") from None
        if len(text) < _MIN_TOKEN_CHARACTERS:
            raise ConfigurationError(
                f"token file {path} holds no token (at least {_MIN_TOKEN_CHARACTERS} characters "
                f"expected, got {len(text)}); write one with `warband keys {directory} --tokens "
                f"{agent_id} --force`"
            )
        tokens[agent_id] = text
    if not tokens:
        raise ConfigurationError(
            f"--tokens {str(directory)!r} holds no ID{TOKEN_SUFFIX} file; write them with "
            f"`warband keys {directory} --tokens ID[,ID...]`"
        )
    return Tokens(tokens)


__all__ = ["TOKEN_SUFFIX", "Tokens", "load_tokens", "write_tokens"]
