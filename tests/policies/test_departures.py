"""A departure model as a policy: the base's choice unless the network's score clears the
threshold; loaded by ``learned:PATH``, refused where its inputs are missing."""

import numpy as np
import pytest

from rlsched.errors import PolicyError
from rlsched.evaluate import make_env
from rlsched.policies.departures import DeparturePolicy
from rlsched.policies.offloading import peft_choice
from rlsched.policies.registry import make_policy
from tests.conftest import TINY_DEPARTURES


def _env(**over):
    kw = {**TINY_DEPARTURES["env_kwargs"], **over}
    return make_env(TINY_DEPARTURES["env_id"], TINY_DEPARTURES["eval_dataset"], **kw)


def _decisions(env, episodes: int = 4):
    for seed in range(episodes):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            yield obs, mask
            obs, _, done, _, _ = env.step(peft_choice(obs, mask))


def test_departs_exactly_where_the_score_clears_the_threshold(departure_run) -> None:
    env = _env()
    model = departure_run / "model"
    never = make_policy(f"learned:{model}?threshold=inf", env)
    always = DeparturePolicy(model, threshold=-1e9)
    mid = DeparturePolicy(model, threshold=0.0)
    moved = 0
    for obs, mask in _decisions(env):
        base = peft_choice(obs, mask)
        assert never.act(obs, mask) == base
        z = np.where(mask, always.scores(obs, base), -np.inf)
        z[base] = -np.inf
        want = int(np.argmax(z)) if mask.sum() > 1 else base
        assert always.act(obs, mask) == want and mask[want]
        moved += want != base
        assert mid.act(obs, mask) == (want if mask.sum() > 1 and z[want] >= 0.0 else base)
    assert moved > 0 and always.departures == moved


def test_learned_path_loads_it_with_its_threshold_and_refuses_what_it_cannot_read(
    departure_run,
) -> None:
    model = departure_run / "model"
    pol = make_policy(f"learned:{model}", _env())
    assert isinstance(pol, DeparturePolicy) and pol.base_name == "peft"
    assert pol.describe()["algo"] == "departures"
    with pytest.raises(PolicyError, match="takes threshold"):
        make_policy(f"learned:{model}?margin=1", _env())
    with pytest.raises(PolicyError, match="lacks"):
        make_policy(f"learned:{model}", _env(dag=False))
    with pytest.raises(PolicyError, match="not a number"):
        DeparturePolicy(model, threshold="high")  # type: ignore[arg-type]
    with pytest.raises(PolicyError, match="servers"):
        make_policy(f"learned:{model}", _env(num_nodes=2))


def test_learned_path_puts_a_departure_model_under_a_trial_guard(departure_run) -> None:
    from rlsched.policies.trial import TrialGuard

    env = _env()
    model = departure_run / "model"
    spec = f"learned:{model}?threshold=-1e9&trial=peft&trial_every=3&trial_futures=2"
    pol = make_policy(spec, env, seed=0)
    assert isinstance(pol, TrialGuard) and isinstance(pol.policy, DeparturePolicy)
    assert pol.policy.threshold == -1e9 and pol.base_name == "peft" and pol.name == spec
    obs, _ = env.reset(seed=0)
    pol.reset(0)
    done = False
    while not done:
        mask = env.unwrapped.action_masks()
        a = pol.act(obs, mask)
        assert mask[a]
        obs, _, done, _, _ = env.step(a)
    assert pol.trials == -(-pol.decisions // 3)
    with pytest.raises(PolicyError, match="trial_futures"):
        make_policy(f"learned:{model}?margin=1&trial=peft", env)
