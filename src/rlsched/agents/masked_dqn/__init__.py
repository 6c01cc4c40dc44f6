"""Masked dueling double DQN: the value-based agent of VMAgent's design note, on SB3's DQN.

What differs from :class:`stable_baselines3.DQN` (everything else, including the training
loop, the hard target-network update every ``target_update_interval`` steps, the Huber loss,
gradient clipping and ``.save()`` / ``.load()``, is SB3's):

- **Action masks.** Masks come from the env's ``action_masks()``
  (:func:`sb3_contrib.common.maskable.utils.get_action_masks` on the VecEnv). An invalid action
  is never chosen: not greedily, not by the epsilon-random branch (uniform over the *valid*
  actions, like VMAgent's ``EpsilonGreedyActionSelector``), not during the warm-up before
  ``learning_starts``. :meth:`MaskedDQN.predict` takes ``action_masks=`` as MaskablePPO's does,
  so :class:`~sb3_contrib.common.maskable.callbacks.MaskableEvalCallback` and
  :class:`~rlsched.policies.learned.LearnedPolicy` pass them.
- **Masked double DQN target.** The replay buffer also stores the mask of the next state;
  :func:`masked_double_dqn_target` takes the argmax over valid next actions with the online
  network and evaluates it with the target network.
- **Dueling Q-network.** ``Q(s, a) = V(s) + A(s, a) - mean_a A(s, a)`` (:class:`DuelingQNetwork`).
  The mean runs over *all* actions, not the valid ones: a constant shift per state does not
  change which valid action is best, and keeping Q a function of the observation alone means
  the current mask is needed only at the argmax, not inside the network (nor stored for the
  current state). With ``node_scoring`` the advantage of each node comes from one shared
  per-node head over :class:`~rlsched.agents.networks.NodeSetExtractor` embeddings (VMAgent's
  QmixAgent scores every (server, NUMA) option with shared weights in the same spirit).
- **Epsilon schedule.** Piecewise linear over training progress (:func:`piecewise_linear`),
  by default VMAgent's ``linear_decay(x, [0, .25, .9, 1] * MAX, [0.9, 0.5, 0.2, 0.2])``.

Terminal transitions store an all-True next mask: their target is ``r`` (``done`` zeroes the
bootstrap), so the mask only has to keep the argmax well defined. The rlsched envs end episodes
with ``terminated``; SB3 bootstraps time-limit truncations from the terminal observation, whose
mask a VecEnv has already replaced by the reset state's, so there too the max runs over all
actions (a slight over-estimate on truncated steps only).
"""

from rlsched.agents.masked_dqn.algorithm import MaskedDQN
from rlsched.agents.masked_dqn.buffers import (
    MaskedDictReplayBuffer,
    MaskedReplayBuffer,
    MaskedReplayBufferSamples,
)
from rlsched.agents.masked_dqn.policies import (
    DuelingDQNPolicy,
    DuelingQNetwork,
    MultiInputDuelingDQNPolicy,
    masked_argmax,
    masked_double_dqn_target,
    random_valid_actions,
)
from rlsched.agents.masked_dqn.schedule import (
    DEFAULT_EPSILON_POINTS,
    DEFAULT_EPSILON_VALUES,
    EpsilonSchedule,
    piecewise_linear,
)

__all__ = [
    "DEFAULT_EPSILON_POINTS",
    "DEFAULT_EPSILON_VALUES",
    "DuelingDQNPolicy",
    "DuelingQNetwork",
    "EpsilonSchedule",
    "MaskedDQN",
    "MaskedDictReplayBuffer",
    "MaskedReplayBuffer",
    "MaskedReplayBufferSamples",
    "MultiInputDuelingDQNPolicy",
    "masked_argmax",
    "masked_double_dqn_target",
    "piecewise_linear",
    "random_valid_actions",
]
