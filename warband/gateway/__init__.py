"""``warband gateway``: clients that cannot speak ZeroMQ (game engines, browsers) join a run over
WebSocket, one participant per connection, in JSON (PROTOCOL.md, section 15).

- :class:`JsonCodec` (:mod:`~warband.gateway.wire`): the JSON form of every catalog message,
  one-to-one with its MessagePack frame;
- :class:`Gateway` and :class:`GatewayConfig` (:mod:`~warband.gateway.server`): the aiohttp
  server (extra ``warband[gateway]``); :func:`serve` runs one as ``warband gateway`` does;
- :class:`ClientActor` (:mod:`~warband.gateway.participant`): the actor that registers, pings,
  acknowledges and de-duplicates for a client;
- :func:`write_tokens` and :func:`load_tokens` (:mod:`~warband.gateway.tokens`): one token per
  agent id, the proof a client gives (``warband keys DIR --tokens ID[,ID...]``).
"""

from .participant import ClientActor as ClientActor
from .server import DEFAULT_PORT as DEFAULT_PORT
from .server import Gateway as Gateway
from .server import GatewayConfig as GatewayConfig
from .server import serve as serve
from .tokens import Tokens as Tokens
from .tokens import load_tokens as load_tokens
from .tokens import write_tokens as write_tokens
from .wire import JsonCodec as JsonCodec

__all__ = [
    "DEFAULT_PORT",
    "ClientActor",
    "Gateway",
    "GatewayConfig",
    "JsonCodec",
    "Tokens",
    "load_tokens",
    "serve",
    "write_tokens",
]
