"""A departure model as a policy: the base's choice unless the network's score clears the
threshold; loaded by ``learned:PATH``, refused where its inputs are missing."""

import numpy as np
import pytest

from rlsched.errors import PolicyError
from rlsched.evaluate import evaluate, make_env
from rlsched.policies.departures import DeparturePolicy
from rlsched.policies.offloading import peft_choice
from rlsched.policies.registry import make_policy
from tests.conftest import TINY_DEPARTURES, small_dag_entry


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



def _completion(env, pol, seed: int) -> float:
    (episode,) = evaluate(pol, env, 1, seed)
    return float(episode.metrics["mean_completion"])


def test_a_trial_over_thresholds_plays_the_best_of_them_in_a_known_workflow() -> None:
    """One workflow per episode, known on arrival: one future is the episode itself, so the
    guard's completion is the least of PEFT's and of the model's at each threshold (the
    zoo's small-DAG entry, on workflows of a world no round uses)."""
    from rlsched.zoo import card

    c = card(small_dag_entry())
    env = make_env(c["env"], "synthetic:placement?workflows=50&tasks=15&seed=90",
                   **{**c["env_kwargs"], "scenario": c["preset"]})  # fmt: skip
    model = f"zoo/{small_dag_entry()}"
    cuts = (-0.004, 0.003)
    spec = (f"learned:{model}?threshold=0.02&trial=peft&trial_futures=1&trial_horizon=end"
            "&trial_every=1000&trial_significance=0&trial_thresholds=-0.004/0.003")
    guard = make_policy(spec, env, seed=0)
    assert [p.threshold for p in guard.candidates] == [0.02, *cuts]
    assert guard.describe()["trial"]["thresholds"] == list(cuts)
    specs = [f"learned:{model}?threshold={t}&trial=off" for t in (0.02, *cuts)]
    plays = [make_policy("peft", env)] + [make_policy(spec, env) for spec in specs]
    chosen = set()
    for seed in range(8):
        alone = [_completion(env, p, seed) for p in plays]
        assert _completion(env, guard, seed) == pytest.approx(min(alone))
        assert guard.trials == 1
        chosen.add(guard.last_choice)
        if guard.last_choice is not None:  # the followed candidate beat PEFT strictly
            assert alone[1 + guard.last_choice] < alone[0]
    assert len(chosen) > 1  # the trials did not all pick the same


def test_trial_thresholds_need_numbers_and_a_departure_model(departure_run) -> None:
    env = _env()
    model = departure_run / "model"
    for bad in ("-0.01/x", "inf"):
        with pytest.raises(PolicyError, match="thresholds"):
            make_policy(f"learned:{model}?trial=peft&trial_thresholds={bad}", env)
