"""CURVE encryption and ZAP authentication between actors and the broker, over TCP.

Keys live in one directory, in the format of ``zmq.auth.create_certificates``: ``NAME.key``
holds a public key, ``NAME.key_secret`` the same pair with its secret key. ``NAME`` is
``broker`` for the broker and the agent id for each agent (the clock is an agent too), and
``supervisor`` for the supervisor of a ``warband run --processes`` (it reports the agents it gave
up on to the broker). ``warband keys DIR --agents ...`` writes them. Which files each host needs:

- the broker's host: ``broker.key_secret`` and the public ``ID.key`` of every agent allowed in;
- the host of agent ``ID``: ``ID.key_secret`` and the broker's public ``broker.key``.

The broker runs a ZAP handler (RFC 27) on its context that lets in only the public keys it holds
and names each connection's user by the agent id its key belongs to (the ``User-Id`` every
frame of that connection carries). Its socket sets ``ZMQ_ZAP_ENFORCE_DOMAIN``: without it,
libzmq lets every CURVE client in when no ZAP handler answers. The broker then binds each frame
to that user: its routing id and its ``sender`` must both be the key's agent id.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator

from ..exceptions import ConfigurationError
from .addresses import BROKER_ID, SUPERVISOR_ID, check_actor_id
from .tracing import get_logger

BROKER_KEY = BROKER_ID
"""The name of the broker's key files: ``broker.key`` and ``broker.key_secret``."""

ZAP_DOMAIN = "warband"
"""The ZAP domain of the broker's socket: its authenticator answers for this domain only."""

_PUBLIC = ".key"
_SECRET = ".key_secret"
_Z85_KEY = re.compile(rb"[0-9A-Za-z.\-:+=^!/*?&<>()\[\]{}@%$#]{40}")


@dataclass(frozen=True)
class CurveClient:
    """What an agent needs to talk CURVE to the broker: its key pair and the broker's public
    key (all Z85-encoded, 40 bytes each)."""

    agent_id: str
    public_key: bytes
    secret_key: bytes
    server_key: bytes

    def apply(self, socket: zmq.Socket[bytes]) -> None:
        """Make ``socket`` a CURVE client of the broker; call before ``connect``."""
        socket.setsockopt(zmq.CURVE_SERVERKEY, self.server_key)
        socket.setsockopt(zmq.CURVE_PUBLICKEY, self.public_key)
        socket.setsockopt(zmq.CURVE_SECRETKEY, self.secret_key)


@dataclass(frozen=True)
class CurveServer:
    """What the broker needs: its key pair and the agents it lets in, by public key."""

    public_key: bytes
    secret_key: bytes
    agents: Mapping[bytes, str]
    """Agent id of each allowed public key (Z85-encoded)."""

    def apply(self, socket: zmq.Socket[bytes]) -> None:
        """Make ``socket`` a CURVE server that refuses whoever its ZAP handler does not accept,
        and everyone when no ZAP handler runs; call before ``bind``."""
        socket.setsockopt(zmq.CURVE_SERVER, 1)
        socket.setsockopt(zmq.CURVE_PUBLICKEY, self.public_key)
        socket.setsockopt(zmq.CURVE_SECRETKEY, self.secret_key)
        socket.setsockopt(zmq.ZAP_DOMAIN, ZAP_DOMAIN.encode())
        socket.setsockopt(zmq.ZAP_ENFORCE_DOMAIN, 1)


# --- key files ----------------------------------------------------------------------------------


def make_keys(directory: Path, agent_ids: Iterable[str], *, force: bool = False) -> list[Path]:
    """Write a key pair for the broker, the supervisor and each of ``agent_ids`` into
    ``directory``.

    Returns the files written. Refuses (``ConfigurationError``, naming the file) to replace any
    existing key file unless ``force``. Secret files are readable by their owner only.
    """
    ids = list(dict.fromkeys(agent_ids))
    if not ids:
        raise ConfigurationError("name at least one agent to make keys for, e.g. --agents bot-1")
    for agent_id in ids:
        check_actor_id(agent_id)  # also refuses "broker" and "supervisor", named above
    names = [BROKER_KEY, SUPERVISOR_ID, *ids]
    if not force:
        for name in names:
            for suffix in (_PUBLIC, _SECRET):
                existing = directory / f"{name}{suffix}"
                if existing.exists():
                    raise ConfigurationError(
                        f"{existing} exists already; pass --force to replace it (every agent "
                        "holding the old key must then get the new one)"
                    )
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigurationError(f"cannot create key directory {directory}: {error}") from None
    written: list[Path] = []
    # create_certificates writes into a directory of our choosing; a private temporary one
    # next to the target keeps a half-written pair out of ``directory``.
    with tempfile.TemporaryDirectory(dir=directory, prefix=".keys-") as scratch:
        for name in names:
            public, secret = zmq.auth.create_certificates(scratch, name)
            os.chmod(secret, 0o600)
            for made in (Path(public), Path(secret)):
                target = directory / made.name
                shutil.move(made, target)
                written.append(target)
    return written


def load_client(directory: Path, agent_id: str) -> CurveClient:
    """The keys agent ``agent_id`` talks to the broker with, read from ``directory``."""
    public, secret = _load(directory / f"{agent_id}{_SECRET}", secret=True)
    server, _ = _load(directory / f"{BROKER_KEY}{_PUBLIC}", secret=False)
    assert secret is not None
    return CurveClient(agent_id, public, secret, server)


def load_server(directory: Path) -> CurveServer:
    """The broker's keys and every agent public key (``ID.key``) found in ``directory``."""
    public, secret = _load(directory / f"{BROKER_KEY}{_SECRET}", secret=True)
    assert secret is not None
    agents: dict[bytes, str] = {}
    for file in sorted(directory.glob(f"*{_PUBLIC}")):
        agent_id = file.name.removesuffix(_PUBLIC)
        if agent_id == BROKER_KEY:
            continue
        key, _ = _load(file, secret=False)
        if key in agents:
            raise ConfigurationError(
                f"{file} holds the same public key as {agents[key]}{_PUBLIC}; every agent needs "
                "its own key pair (warband keys DIR --agents ...)"
            )
        agents[key] = agent_id
    if not agents:
        raise ConfigurationError(
            f"no agent public key (ID{_PUBLIC}) in {directory}: the broker would let nobody in; "
            "copy each agent's ID.key there (warband keys DIR --agents ... makes them)"
        )
    return CurveServer(public, secret, agents)


def _load(path: Path, *, secret: bool) -> tuple[bytes, bytes | None]:
    what = "secret key file" if secret else "public key file"
    if not path.is_file():
        raise ConfigurationError(
            f"missing {what} {path}; make keys with `warband keys {path.parent} --agents ...` "
            "or copy it from the host that made them"
        )
    try:
        public, secret_key = zmq.auth.load_certificate(path)
    except (OSError, ValueError) as error:
        raise ConfigurationError(f"cannot read {what} {path}: {error}") from None
    if not _Z85_KEY.fullmatch(public) or (secret and secret_key is None):
        raise ConfigurationError(
            f"{path} is not a {what} written by `warband keys` (zmq.auth certificate format)"
        )
    return public, secret_key


def check_run_keys(directory: Path, agent_ids: Iterable[str]) -> None:
    """Refuse, before a one-host run starts, a key directory whose broker would not let one of
    ``agent_ids`` in: each needs ``ID.key_secret`` and the public ``ID.key`` of the same pair
    (the broker lets in the keys of the ``ID.key`` files only), besides the broker's pair."""
    load_server(directory)
    for agent_id in agent_ids:
        client = load_client(directory, agent_id)
        public_file = directory / f"{agent_id}{_PUBLIC}"
        if not public_file.is_file():
            raise ConfigurationError(
                f"no key file {agent_id}{_PUBLIC} in {directory}: the broker would refuse "
                f"{agent_id!r}; make keys with `warband keys {directory} --agents {agent_id}` "
                "or copy it from the host that made them"
            )
        public, _ = _load(public_file, secret=False)
        if public != client.public_key:
            raise ConfigurationError(
                f"{public_file} and {agent_id}{_SECRET} in {directory} are not one key pair: "
                f"the broker would refuse {agent_id!r}; copy both from the same `warband keys` run"
            )


def check_curve_endpoint(endpoint: str) -> None:
    """Refuse an endpoint CURVE cannot protect here: only ``tcp://`` crosses hosts."""
    if not endpoint.startswith("tcp://"):
        raise ConfigurationError(
            f"--curve needs a tcp:// endpoint, got {endpoint!r}: CURVE protects connections "
            "between hosts (ipc:// and inproc:// never leave this one); use e.g. "
            "tcp://0.0.0.0:5555 to bind and tcp://HOST:5555 to connect"
        )


# --- the broker's ZAP handler -------------------------------------------------------------------


class KeyAuthenticator(ThreadAuthenticator):
    """The broker's ZAP handler: lets in the keys of :class:`CurveServer` ``agents`` only and
    names each connection's user by its agent id.

    It runs in its own thread on the broker's context (ZAP handlers are reached over
    ``inproc://``, so it must share the socket's context).
    """

    def __init__(self, context: zmq.Context[zmq.Socket[bytes]], server: CurveServer) -> None:
        super().__init__(context)
        self._agents = dict(server.agents)
        self._log = get_logger(agent=BROKER_ID)

    def start(self) -> None:
        """Start answering ZAP requests for :data:`ZAP_DOMAIN`."""
        super().start()
        self.configure_curve_callback(ZAP_DOMAIN, self)

    def callback(self, domain: str, key: bytes) -> bool:
        """The credentials check of ``configure_curve_callback``: is ``key`` let in?"""
        if key not in self._agents:
            self._log.error(
                "broker.key_refused", key=key.decode("ascii", "replace"), reason="unknown key"
            )
            return False
        return True

    def curve_user_id(self, client_public_key: bytes) -> str:
        """The User-Id of an accepted key: its agent id."""
        return self._agents[zmq.utils.z85.encode(client_public_key)]

    def stop(self) -> None:
        """Stop answering; the broker's socket then refuses every handshake."""
        with contextlib.suppress(zmq.ZMQError):
            super().stop()
