"""Train a small policy against warband's freelance bots, with numpy alone, and measure it.

Red's bots learn with one shared linear softmax policy (REINFORCE, a linear critic as its
baseline, Adam), in Capture and Hold on the Warzone map; blue's are warband's freelance bots,
each going for the nearest point its team does not hold. Before and after training, the policy plays
``--eval`` matches on seeds it never trained on, and the script prints red's win rate::

    pip install 'warband[env]'
    python examples/train_env.py                   # 5 minutes of training, 2 bots a side
    python examples/train_env.py --minutes 10 --bots 3

The reward is the environment's default (team score, the win, own kills and hits; see
:mod:`warband.env.rewards`) plus shaping of our own (:class:`Reward`), passed as the
environment's ``reward`` function: a random policy almost never works a point for the three
ticks in a row a capture takes, so without it there is little to learn from. What one
machine measured is in README.md, section "Reinforcement learning" (0 of 20 matches won
before, 5 of 20 after, greedy); the matches trained on in the minutes given, and so the
figures, differ with the machine and its load.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from warband.env import OBSERVATION_SIZE, RewardInput, WarzoneParallelEnv, default_reward
from warband.world import Map, load_map
from warband.world.vocabulary import ALIVE, CAPTURED, OBJECTIVE, POSITION, STATE

Array = npt.NDArray[np.float64]
TRAIN_SEEDS = 1000
"""Training matches use seeds from here up; evaluation uses 1..--eval."""


class Reward:
    """The default reward, plus our own shaping: +0.5 for each point red takes, +0.1 for each
    capture act the world takes, +0.02 for each map unit a living bot comes closer to the
    nearest point red does not hold, and +0.05 for each tick it stands on one."""

    def __init__(self, game_map: Map) -> None:
        self.map = game_map
        self.last: dict[str, float | None] = {}

    def new_match(self) -> None:
        self.last.clear()

    def __call__(self, step: RewardInput) -> float:
        events = step.events
        taken = sum(1 for e in events if CAPTURED.matches(e) and CAPTURED.read(e).team == step.team)
        value = default_reward(step) + 0.5 * taken
        if step.act == "capture" and step.act_accepted:
            value += 0.1
        distance = self._distance(step)
        before = self.last.get(step.agent)
        if distance is not None and before is not None:
            value += 0.02 * (before - distance) + (0.05 if distance < 1.0 else 0.0)
        self.last[step.agent] = distance
        return value

    def _distance(self, step: RewardInput) -> float | None:
        """How far the bot is from the nearest point its team lacks (None: dead or downed)."""
        state, position = STATE.first(step.facts), POSITION.first(step.facts)
        if state is None or state.life != ALIVE or position is None:
            return None
        held = {c.point for c in CAPTURED.all(step.facts) if c.team == step.team}
        goals = [o.waypoint for o in OBJECTIVE.all(step.facts) if o.id not in held]
        return min(
            (math.dist((position.x, position.y), self.map.position(w)) for w in goals),
            default=None,
        )


@dataclass
class Policy:
    """Logits = observation @ weights + bias; one policy shared by every learner."""

    actions: int
    weights: Array = field(init=False)
    bias: Array = field(init=False)

    def __post_init__(self) -> None:
        self.weights = np.zeros((OBSERVATION_SIZE, self.actions))
        self.bias = np.zeros(self.actions)

    def probabilities(self, observation: Array) -> Array:
        logits = observation @ self.weights + self.bias
        exp = np.exp(logits - logits.max())
        result: Array = exp / exp.sum()
        return result


class Adam:
    """Adam for the policy's two arrays."""

    def __init__(self, policy: Policy, rate: float) -> None:
        self.rate = rate
        self.moments = [(np.zeros_like(p), np.zeros_like(p)) for p in (policy.weights, policy.bias)]
        self.steps = 0

    def ascend(self, policy: Policy, gradients: list[Array]) -> None:
        self.steps += 1
        for index, (param, grad) in enumerate(
            zip((policy.weights, policy.bias), gradients, strict=True)
        ):
            first, second = self.moments[index]
            first[:] = 0.9 * first + 0.1 * grad
            second[:] = 0.999 * second + 0.001 * grad**2
            unbiased = first / (1 - 0.9**self.steps)
            scale = np.sqrt(second / (1 - 0.999**self.steps)) + 1e-8
            param += self.rate * unbiased / scale


def play(
    env: WarzoneParallelEnv,
    policy: Policy,
    seed: int,
    rng: np.random.Generator,
    reward: Reward,
    greedy: bool = False,
) -> tuple[dict[str, list[tuple[Array, int, float]]], str | None]:
    """One match: each learner's (observation, action, reward) steps, and the winner. The
    policy samples its actions, or takes the likeliest one (``greedy``)."""
    reward.new_match()
    observations, _ = env.reset(seed=seed)
    trajectories: dict[str, list[tuple[Array, int, float]]] = {a: [] for a in env.agents}
    winner = None
    while env.agents:
        actions = {}
        for agent in env.agents:
            probabilities = policy.probabilities(observations[agent].astype(np.float64))
            if greedy:
                actions[agent] = int(np.argmax(probabilities))
            else:
                actions[agent] = int(rng.choice(policy.actions, p=probabilities))
        next_observations, rewards, _, _, infos = env.step(actions)
        for agent, action in actions.items():
            observation = observations[agent].astype(np.float64)
            trajectories[agent].append((observation, action, rewards[agent]))
            if "outcome" in infos[agent]:
                winner = (infos[agent]["outcome"] or {}).get("winner")
        observations = next_observations
    return trajectories, winner


class Critic:
    """A linear estimate of a step's return, fitted (ridge regression) on recent matches: the
    baseline that REINFORCE's returns are compared with."""

    def __init__(self, memory: int = 8) -> None:
        self.weights = np.zeros(OBSERVATION_SIZE + 1)
        self.recent: list[tuple[Array, Array]] = []
        self.memory = memory

    def values(self, observations: Array) -> Array:
        return _with_bias(observations) @ self.weights

    def fit(self, observations: Array, returns: Array) -> None:
        self.recent = [*self.recent, (observations, returns)][-self.memory :]
        x = _with_bias(np.concatenate([o for o, _ in self.recent]))
        y = np.concatenate([r for _, r in self.recent])
        self.weights = np.linalg.solve(x.T @ x + np.eye(x.shape[1]), x.T @ y)


def _with_bias(observations: Array) -> Array:
    return np.hstack([observations, np.ones((len(observations), 1))])


def gradients(
    policy: Policy,
    critic: Critic,
    trajectories: dict[str, list[tuple[Array, int, float]]],
    gamma: float,
    entropy_weight: float,
) -> tuple[list[Array], float]:
    """REINFORCE's gradient of one match (each step's discounted return minus the critic's
    estimate, normalised) plus ``entropy_weight`` times the entropy's, and the learners' mean
    return."""
    observations, actions, returns = [], [], []
    for steps in trajectories.values():
        running, backwards = 0.0, []
        for _, _, r in reversed(steps):
            running = r + gamma * running
            backwards.append(running)
        observations += [obs for obs, _, _ in steps]
        actions += [action for _, action, _ in steps]
        returns += backwards[::-1]
    x, g = np.array(observations), np.array(returns)
    advantages = g - critic.values(x)
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    critic.fit(x, g)
    logits = x @ policy.weights + policy.bias
    probabilities = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    direction = -probabilities
    direction[np.arange(len(actions)), actions] += 1.0
    # The entropy's gradient keeps the policy trying other actions instead of settling early
    # on the first one that pays a little (walking to a point, and never working on it).
    log_p = np.log(probabilities + 1e-12)
    entropy = -(probabilities * log_p).sum(axis=1, keepdims=True)
    weighted = advantages[:, None] * direction - entropy_weight * probabilities * (log_p + entropy)
    total = sum(r for steps in trajectories.values() for _, _, r in steps)
    return [x.T @ weighted / len(x), weighted.mean(axis=0)], total / max(len(trajectories), 1)


def win_rates(
    env: WarzoneParallelEnv, policy: Policy, matches: int, reward: Reward
) -> tuple[float, float]:
    """Red's win rate on seeds 1..matches, the policy sampling its actions, then greedy."""
    rates = []
    for greedy in (False, True):
        rng = np.random.default_rng(0)
        seeds = range(1, matches + 1)
        wins = sum(play(env, policy, s, rng, reward, greedy)[1] == "red" for s in seeds)
        rates.append(wins / matches)
    return rates[0], rates[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="training time (5)")
    parser.add_argument("--bots", type=int, default=2, help="bots a side (2)")
    parser.add_argument("--time-limit", type=int, default=150, help="ticks per match (150)")
    parser.add_argument("--eval", type=int, default=20, help="matches per win rate (20)")
    parser.add_argument("--rate", type=float, default=0.01, help="Adam's learning rate (0.01)")
    parser.add_argument("--entropy", type=float, default=0.05, help="entropy bonus (0.05)")
    parser.add_argument("--gamma", type=float, default=0.9, help="discount (0.9)")
    args = parser.parse_args()
    shaped = Reward(load_map("warzone"))
    env = WarzoneParallelEnv(
        bots=args.bots, blue="freelance", time_limit=args.time_limit, reward=shaped
    )
    policy = Policy(int(env.action_space(env.possible_agents[0]).n))
    try:
        before = win_rates(env, policy, args.eval, shaped)
        print(f"before training: red wins {_rates(before, args.eval)}", flush=True)
        optimiser = Adam(policy, args.rate)
        critic = Critic()
        rng = np.random.default_rng(1)
        deadline = time.monotonic() + 60 * args.minutes
        match = 0
        while time.monotonic() < deadline:
            trajectories, winner = play(env, policy, TRAIN_SEEDS + match, rng, shaped)
            grads, mean_return = gradients(policy, critic, trajectories, args.gamma, args.entropy)
            optimiser.ascend(policy, grads)
            match += 1
            if match % 20 == 0:
                print(f"match {match}: return {mean_return:+.2f}, winner {winner}", flush=True)
        after = win_rates(env, policy, args.eval, shaped)
        print(f"trained on {match} matches in {args.minutes:g} min", flush=True)
        print(f"before training: red wins {_rates(before, args.eval)}")
        print(f"after training:  red wins {_rates(after, args.eval)}")
    finally:
        env.close()


def _rates(rates: tuple[float, float], matches: int) -> str:
    sampled, greedy = rates
    return f"{sampled:.0%} of {matches} matches sampling its actions, {greedy:.0%} greedy"


if __name__ == "__main__":
    main()
