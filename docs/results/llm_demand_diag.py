"""Issue 13, a diagnosis for ``make_zoo_llm_residual_demand.py`` (not a verdict): the
``prompt_demand`` and ``token_demand`` features HPA sees on the training trace (conv) at 1x, 2x
and 3x, 3 episodes each on diagnosis seeds 20,800-20,802 (neither validation nor test), their
quartiles over every decision. Printed on 2026-11-28 (eighth session):

    1x prompt_demand q25/50/75 [0.028 0.034 0.069] token_demand [0.134 0.147 0.162]
    2x prompt_demand q25/50/75 [0.057 0.085 0.129] token_demand [0.278 0.299 0.314]
    3x prompt_demand q25/50/75 [0.089 0.123 0.171] token_demand [0.432 0.453 0.471]

    cd docs/results && PYTHONPATH=. python llm_demand_diag.py
"""

import numpy as np
from make_zoo_llm_residual_down import ENV, SPLITS

from rlsched.envs.make import make_env
from rlsched.policies.registry import make_policy

split = SPLITS[ENV]
for load in ("1x", "2x", "3x"):
    env = make_env(ENV, "azure-llm:conv", **{**split.env_kwargs, "scenario": f"conv-{load}"})
    names = list(env.unwrapped.feature_names)
    ip, it = names.index("prompt_demand"), names.index("token_demand")
    pol = make_policy("hpa", env, seed=0)
    prompt, token = [], []
    for seed in range(20_800, 20_803):
        obs, _ = env.reset(seed=seed)
        pol.reset(seed)
        done = False
        while not done:
            prompt.append(obs[ip])
            token.append(obs[it])
            obs, _, term, trunc, _ = env.step(pol.act(obs, env.unwrapped.action_masks()))
            done = term or trunc
    q = [0.25, 0.5, 0.75]
    print(load, "prompt_demand q25/50/75", np.round(np.quantile(prompt, q), 3),
          "token_demand", np.round(np.quantile(token, q), 3))  # fmt: skip
