"""Reinforcement learning against warband's bots: PettingZoo and Gymnasium environments.

Needs the ``env`` extra (``pip install 'warband[env]'``: pettingzoo, gymnasium, numpy).

- :class:`WarzoneParallelEnv` (PettingZoo ``ParallelEnv``): learning bots, each an agent;
- :class:`WarzoneEnv` (Gymnasium ``Env``, also ``gymnasium.make("warband/Warzone-v0")``): one
  learning bot;
- :class:`WarzoneSquadEnv` (Gymnasium ``Env``, also
  ``gymnasium.make("warband/WarzoneSquad-v0")``): one learning squad leader, ordering warband's
  bots;

in a Warzone match whose other bots, squads and commanders are warband's own, and whose
learners are participants of a real warband run (:mod:`warband.env.match` says how ``step()``
stays synchronous). The encodings are documented where they are defined:
:mod:`~warband.env.observations`, :mod:`~warband.env.actions`, :mod:`~warband.env.rewards`,
and for the squad leader :mod:`~warband.env.squad_observations` and
:mod:`~warband.env.squad_actions`.
"""

try:
    import gymnasium as _gymnasium
    import pettingzoo as _pettingzoo  # noqa: F401 - checked here to name the extra
except ImportError as _missing:  # pragma: no cover - depends on the installation
    raise ImportError(
        f"warband.env needs the env extra ({_missing.name} is missing): pip install 'warband[env]'"
    ) from _missing

from .actions import ActionDecoder as ActionDecoder
from .actions import action_count as action_count
from .match import MatchConfig as MatchConfig
from .match import all_bots as all_bots
from .observations import OBSERVATION_FIELDS as OBSERVATION_FIELDS
from .observations import OBSERVATION_SIZE as OBSERVATION_SIZE
from .observations import ObservationEncoder as ObservationEncoder
from .parallel import WarzoneParallelEnv as WarzoneParallelEnv
from .rewards import RewardFunction as RewardFunction
from .rewards import RewardInput as RewardInput
from .rewards import default_reward as default_reward
from .single import WarzoneEnv as WarzoneEnv
from .squad import WarzoneSquadEnv as WarzoneSquadEnv
from .squad_actions import SQUAD_ACTION_COUNT as SQUAD_ACTION_COUNT
from .squad_actions import squad_places as squad_places
from .squad_observations import SQUAD_OBSERVATION_FIELDS as SQUAD_OBSERVATION_FIELDS
from .squad_observations import SQUAD_OBSERVATION_SIZE as SQUAD_OBSERVATION_SIZE
from .squad_observations import SquadObservationEncoder as SquadObservationEncoder

GYMNASIUM_ID = "warband/Warzone-v0"
"""The id :func:`gymnasium.make` knows :class:`WarzoneEnv` by, once this package is imported
(``"warband.env:warband/Warzone-v0"`` imports it)."""

SQUAD_GYMNASIUM_ID = "warband/WarzoneSquad-v0"
"""The id :func:`gymnasium.make` knows :class:`WarzoneSquadEnv` by, once this package is
imported."""

if GYMNASIUM_ID not in _gymnasium.registry:
    _gymnasium.register(GYMNASIUM_ID, entry_point="warband.env.single:WarzoneEnv")
if SQUAD_GYMNASIUM_ID not in _gymnasium.registry:
    _gymnasium.register(SQUAD_GYMNASIUM_ID, entry_point="warband.env.squad:WarzoneSquadEnv")

__all__ = [
    "GYMNASIUM_ID",
    "OBSERVATION_FIELDS",
    "OBSERVATION_SIZE",
    "SQUAD_ACTION_COUNT",
    "SQUAD_GYMNASIUM_ID",
    "SQUAD_OBSERVATION_FIELDS",
    "SQUAD_OBSERVATION_SIZE",
    "ActionDecoder",
    "MatchConfig",
    "ObservationEncoder",
    "RewardFunction",
    "RewardInput",
    "SquadObservationEncoder",
    "WarzoneEnv",
    "WarzoneParallelEnv",
    "WarzoneSquadEnv",
    "action_count",
    "all_bots",
    "default_reward",
    "squad_places",
]
