"""The LLM zoo entry's token floor written as a gate (how it ships) and as a play range
(``[[-1, 0], [1, 1]]``, the plainer form) play the same actions: 1,200 decisions of conv and a
code-like mix of it (prompts x 1.8, outputs x 0.13) at 1x and 3x, seeds 11-12, 300-s episodes.
Printed on 2026-11-28: ``1200 decisions, 1200 the same``.

    python docs/results/llm_floor_range_equivalence.py
"""

import numpy as np

from rlsched.envs.make import make_env
from rlsched.policies.registry import make_policy
from rlsched.policies.residual import ResidualPolicy

ENTRY = "learned:zoo/llm-autoscaling-hpa-residual-ppo"
FLOOR = ([-1.0, 0.0], [1.0, 1.0])  # the token pool never below HPA's action


def main() -> None:
    n = same = 0
    for scenario in ("conv-1x", "conv-3x"):
        for mix in ({}, {"prompt_scale": 1.8, "output_scale": 0.13}):
            env = make_env("rlsched/LLMAutoscaling-v0", None, scenario=scenario,
                           episode_duration=300.0, **mix)  # fmt: skip
            gated = make_policy(ENTRY, env, seed=0)
            assert isinstance(gated, ResidualPolicy) and gated.gate is not None
            ranged = ResidualPolicy(gated.learned, make_policy("hpa", env, seed=0), gated.scale,
                                    env.unwrapped, FLOOR)  # fmt: skip
            for seed in (11, 12):
                obs, _ = env.reset(seed=seed)
                gated.reset(seed)
                ranged.reset(seed)
                done = False
                while not done:
                    mask = env.unwrapped.action_masks()
                    a = gated.act(obs, mask)
                    n, same = n + 1, same + bool(np.array_equal(a, ranged.act(obs, mask)))
                    obs, _, term, trunc, _ = env.step(a)
                    done = term or trunc
    print(f"{n} decisions, {same} the same")


if __name__ == "__main__":
    main()
