"""The run secret: how the processes of one run prove who they are to its broker, without keys.

A broker given a secret speaks ZeroMQ's PLAIN mechanism (RFC 24) with a ZAP handler (RFC 27):
a connection is let in only when its PLAIN user name is an agent id and its password is that
id's *pass*, the hex HMAC-SHA256 of the id under the secret; the connection's ``User-Id`` is
then that id, and the broker binds every frame of it to that id, as it does with CURVE keys. A
stranger without the secret fails the handshake: it never holds a routing id, so it can neither
squat on a restarting agent's id nor pose as ``supervisor`` or the clock.

``warband run --processes`` makes a fresh secret for every run and hands it to its own children
only, in the environment variable :data:`SECRET_VARIABLE` (never on a command line, which ``ps``
shows to every user). Across hosts the user passes the same secret file to every process
(``warband keys DIR --secret`` writes one; ``--secret FILE`` reads it). Like Jupyter's token or
Ray's cluster password, whoever holds the secret can speak as any id: it keeps strangers out,
not one member from another (CURVE keys do that), and it does not hide the traffic.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path

import zmq
from zmq.auth.thread import ThreadAuthenticator

from ..exceptions import ConfigurationError
from .addresses import BROKER_ID
from .tracing import get_logger, logged_at

SECRET_VARIABLE = "WARBAND_RUN_SECRET"
"""The environment variable a launcher's children read the run secret from (hex text)."""

RUN_ID_VARIABLE = "WARBAND_RUN_ID"
"""The environment variable a launcher's children read the run id from."""

SECRET_FILE = "run.secret"
"""The name of the file ``warband keys DIR --secret`` writes."""

ZAP_DOMAIN = "warband"
"""The ZAP domain of the broker's socket (the same as with CURVE: one handler answers it)."""

_MIN_SECRET_CHARACTERS = 32


@dataclass(frozen=True)
class RunSecret:
    """A shared secret: each agent id's pass is derived from it, checked by the broker."""

    value: bytes

    def password(self, agent_id: str) -> bytes:
        """The pass of ``agent_id``: hex HMAC-SHA256 of the id (UTF-8) under the secret."""
        return hmac.new(self.value, agent_id.encode(), hashlib.sha256).hexdigest().encode()

    def admits(self, agent_id: str, password: bytes) -> bool:
        """True when ``password`` is ``agent_id``'s pass (compared in constant time)."""
        return hmac.compare_digest(password, self.password(agent_id))

    def apply_client(self, socket: zmq.Socket[bytes], agent_id: str) -> None:
        """Make ``socket`` a PLAIN client speaking as ``agent_id``; call before ``connect``."""
        socket.setsockopt(zmq.PLAIN_USERNAME, agent_id.encode())
        socket.setsockopt(zmq.PLAIN_PASSWORD, self.password(agent_id))

    def apply_server(self, socket: zmq.Socket[bytes]) -> None:
        """Make ``socket`` a PLAIN server that lets in only what its ZAP handler accepts, and
        nobody when no ZAP handler runs; call before ``bind``."""
        socket.setsockopt(zmq.PLAIN_SERVER, 1)
        socket.setsockopt(zmq.ZAP_DOMAIN, ZAP_DOMAIN.encode())
        socket.setsockopt(zmq.ZAP_ENFORCE_DOMAIN, 1)


def new_secret() -> RunSecret:
    """A fresh random secret (256 bits)."""
    return RunSecret(secrets.token_hex(32).encode())


def secret_from_text(text: str, origin: str) -> RunSecret:
    """The secret written as ``text`` (hex, as :func:`write_secret` writes it); ``origin`` names
    where it came from in the error raised when it is too short to be one."""
    value = text.strip()
    if len(value) < _MIN_SECRET_CHARACTERS:
        raise ConfigurationError(
            f"{origin} holds no run secret (at least {_MIN_SECRET_CHARACTERS} characters "
            f"expected, got {len(value)}); write one with `warband keys DIR --secret`"
        )
    return RunSecret(value.encode())


def load_secret(path: Path) -> RunSecret:
    """The secret in the file ``path`` (``--secret FILE``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise ConfigurationError(
            f"cannot read the run secret file {path} ({reason}); write one with `warband keys "
            f"{path.parent} --secret` and pass the same file to the broker and every agent"
        ) from None
    return secret_from_text(text, f"the run secret file {path}")


def write_secret(directory: Path, *, force: bool = False) -> Path:
    """Write a fresh secret to ``directory/run.secret``, readable by its owner only."""
    path = directory / SECRET_FILE
    if path.exists() and not force:
        raise ConfigurationError(
            f"{path} exists already; pass --force to replace it (every host holding the old "
            "secret must then get the new one)"
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as error:
        raise ConfigurationError(f"cannot write {path}: {error.strerror}") from None
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(new_secret().value.decode() + "\n")
    return path


def take_inherited_secret() -> RunSecret | None:
    """The secret a launcher handed this process (:data:`SECRET_VARIABLE`), or None.

    The variable is removed from this process's environment as it is read, so that nothing this
    process starts in turn inherits it.
    """
    text = os.environ.pop(SECRET_VARIABLE, "")
    if not text:
        return None
    return secret_from_text(text, f"the environment variable {SECRET_VARIABLE}")


class SecretAuthenticator(ThreadAuthenticator):
    """The broker's ZAP handler for a run secret: lets in a PLAIN connection whose password is
    its user name's pass (:meth:`RunSecret.password`), and names its user by that name.

    Refusals are logged as ``broker.auth_refused`` (the 1st, 10th, 100th ... per user name: a
    refused client reconnects every 100 ms by itself, and the log must not grow with it).
    """

    def __init__(self, context: zmq.Context[zmq.Socket[bytes]], secret: RunSecret) -> None:
        super().__init__(context)
        self._secret = secret
        self._refused: dict[str, int] = {}
        self._lock = threading.Lock()
        self._log = get_logger(agent=BROKER_ID)

    def _authenticate_plain(self, domain: str, username: str, password: str) -> tuple[bool, bytes]:
        if domain == ZAP_DOMAIN and self._secret.admits(username, password.encode()):
            return True, b"OK"
        with self._lock:
            count = self._refused.get(username, 0) + 1
            if len(self._refused) < 10_000 or username in self._refused:
                self._refused[username] = count
        if logged_at(count):
            self._log.error(
                "broker.auth_refused",
                user=username,
                refused=count,
                reason="wrong pass for this id: the connection does not hold the run's secret",
            )
        return False, b"wrong pass for this id"

    def stop(self) -> None:
        """Stop answering; the broker's socket then refuses every handshake."""
        with contextlib.suppress(zmq.ZMQError):
            super().stop()
