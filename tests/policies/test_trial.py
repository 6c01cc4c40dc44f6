"""The trial guard: it follows the policy whose trials over sampled futures win, never moves
the real episode while trying, tries as often as asked, and is built from ``learned:PATH``
arguments or a model's ``meta.json``."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rlsched.errors import PolicyError
from rlsched.evaluate import make_env
from rlsched.policies.learned import LearnedPolicy
from rlsched.policies.pods import GreedyMigrationPolicy, NoMigrationPolicy
from rlsched.policies.registry import make_policy
from rlsched.policies.residual import ResidualPolicy
from rlsched.policies.trial import Committed, TrialGuard, trial_settings
from rlsched.zoo import ZOO_DIR

ENV = "rlsched/PodRebalancing-v0"
ENTRY = ZOO_DIR / "pod-rebalancing-anchored-ppo" / "model"


def _env(**kwargs: Any) -> Any:
    return make_env(ENV, episode_length=8, **kwargs)


def _play(env: Any, pol: Any, seed: int) -> tuple[list[int], list[float]]:
    obs, _ = env.reset(seed=seed)
    pol.reset(seed)
    u = env.unwrapped
    actions, rewards = [], []
    done = False
    while not done:
        a = int(pol.act(obs, u.action_masks()))
        obs, r, term, trunc, _ = env.step(a)
        actions.append(a)
        rewards.append(float(r))
        done = term or trunc
    return actions, rewards


def _guard(env: Any, policy: Any, anchor: Any, **kwargs: Any) -> TrialGuard:
    return TrialGuard(env, policy, anchor, anchor.name, seed=0, **kwargs)


def test_it_follows_the_policy_whose_trials_win_and_the_anchor_otherwise() -> None:
    env = _env()
    greedy, idle = GreedyMigrationPolicy(), NoMigrationPolicy()
    # moving pods off contended nodes beats leaving them (greedy's violations are far fewer)
    follows = _guard(env, greedy, idle, futures=4, horizon=None, every=4)
    acts, _ = _play(env, follows, seed=3)
    assert follows.trials == 2 and follows.trusted > 0
    assert follows.last_gain is not None and follows.last_gain.shape == (4,)
    assert any(acts)  # it moved pods, as greedy does
    holds = _guard(env, idle, greedy, futures=4, horizon=None, every=4)
    acts, _ = _play(env, holds, seed=3)
    assert holds.trusted == 0  # no_migration never wins its trials: greedy plays throughout
    assert acts == _play(_env(), GreedyMigrationPolicy(), seed=3)[0]


def test_trials_leave_the_real_episode_as_it_was() -> None:
    env = _env()
    guarded = _guard(env, GreedyMigrationPolicy(), NoMigrationPolicy(), futures=3, every=2)
    acts, rewards = _play(env, guarded, seed=5)
    assert guarded.trials == 4 and guarded.trial_seconds > 0

    class Replay(NoMigrationPolicy):
        def __init__(self) -> None:
            self.i = 0

        def act(self, observation: Any, mask: np.ndarray) -> int:
            self.i += 1
            return acts[self.i - 1]

    replayed, again = _play(_env(), Replay(), seed=5)
    assert replayed == acts and again == rewards  # the trials moved nothing the env kept


def test_a_trial_every_decision_costs_futures_times_two_rollouts() -> None:
    env = _env()
    guarded = _guard(env, GreedyMigrationPolicy(), NoMigrationPolicy(), futures=2, every=1)
    _play(env, guarded, seed=1)
    assert guarded.trials == guarded.decisions == 8
    assert guarded.rollouts == 8 * 2 * 2


def test_settings_are_checked_and_named() -> None:
    out = trial_settings({"anchor": "greedy_migration", "horizon": "end"}, "here")
    assert out["horizon"] is None and out["futures"] == 8 and out["significance"] == 1.0
    with pytest.raises(PolicyError, match="anchor"):
        trial_settings({}, "here")
    with pytest.raises(PolicyError, match="every"):
        trial_settings({"anchor": "greedy_migration", "every": 0}, "here")
    with pytest.raises(PolicyError, match="significance"):
        trial_settings({"anchor": "greedy_migration", "significance": -1}, "here")
    with pytest.raises(PolicyError, match=r"not \['budget'\]"):
        trial_settings({"anchor": "greedy_migration", "budget": 3}, "here")
    # other thresholds: a list (meta.json), one number, or numbers joined by / (a spec)
    for raw, want in (([-0.004, 0.003], (-0.004, 0.003)), (0.5, (0.5,)), ("-1/2", (-1.0, 2.0))):
        assert trial_settings({"anchor": "peft", "thresholds": raw}, "here")["thresholds"] == want
    for raw in ("1/nan", [True], "low"):
        with pytest.raises(PolicyError, match="thresholds"):
            trial_settings({"anchor": "peft", "thresholds": raw}, "here")
    # commit: a number of decisions, or off (None: the candidate to the horizon)
    assert trial_settings({"anchor": "peft"}, "here")["commit"] is None
    assert trial_settings({"anchor": "peft", "commit": "off"}, "here")["commit"] is None
    assert trial_settings({"anchor": "peft", "commit": 10}, "here")["commit"] == 10
    for raw in (0, 2.5, "soon", True):
        with pytest.raises(PolicyError, match="commit"):
            trial_settings({"anchor": "peft", "commit": raw}, "here")


class _Counting(NoMigrationPolicy):
    """no_migration that counts the decisions it is shown (a stateful policy)."""

    stateless = False

    def __init__(self) -> None:
        self.shown = 0

    def act(self, observation: Any, mask: np.ndarray) -> int:
        self.shown += 1
        return super().act(observation, mask)


def test_a_committed_candidate_plays_its_block_then_the_anchor_which_saw_every_step() -> None:
    env = _env()
    greedy, anchor = GreedyMigrationPolicy(), _Counting()
    pol = Committed(greedy, anchor, 3)
    acts, _ = _play(env, pol, seed=3)
    want, _ = _play(_env(), GreedyMigrationPolicy(), seed=3)
    assert acts[:3] == want[:3] and any(want[:3])  # greedy's block: it moved pods
    assert not any(acts[3:])  # then no_migration's
    assert anchor.shown == len(acts) == 8  # shown greedy's decisions too, as a shadow is
    # a rollout's copy shares a stateless part, copies a stateful one, and starts its block
    pol.taken_so_far = 5
    twin = copy.deepcopy(pol)
    assert twin.then is not anchor and twin.then.shown == anchor.shown
    assert twin.first is greedy or not greedy.stateless
    twin.reset(3)
    assert twin.taken_so_far == 0 and pol.taken_so_far == 5


def test_a_committed_trial_weighs_the_block_it_decides_not_the_whole_rollout() -> None:
    # greedy for 2 decisions then no_migration, against no_migration throughout: the trials
    # score the block's moves, and the guard still follows greedy where that block pays
    env = _env()
    guard = _guard(env, GreedyMigrationPolicy(), NoMigrationPolicy(), futures=4, horizon=None,
                   every=2, commit=2)  # fmt: skip
    _play(env, guard, seed=3)
    assert guard.describe()["trial"]["commit"] == 2
    assert guard.trials == 4 and guard.trusted > 0
    obs, _ = env.reset(seed=3)
    snap = env.unwrapped.snapshot()
    mask = env.unwrapped.action_masks()
    guard._future = 1
    block = guard._rollout(snap, Committed(GreedyMigrationPolicy(), NoMigrationPolicy(), 2),
                           obs, mask, None)  # fmt: skip
    whole = guard._rollout(snap, GreedyMigrationPolicy(), obs, mask, None)
    assert block.actions[:2] == whole.actions[:2] and not any(block.actions[2:])
    assert len(block.actions) == len(whole.actions) == 8


def _model(tmp_path: Path, trial: dict[str, Any] | None) -> Path:
    """A copy of the zoo's PodRebalancing model with ``trial`` (None: none) in its meta."""
    model = tmp_path / "model"
    shutil.copytree(ENTRY, model)
    meta = json.loads((model / "meta.json").read_text())
    meta.pop("trial", None)
    if trial is not None:
        meta["trial"] = trial
    (model / "meta.json").write_text(json.dumps(meta))
    return model


def _model_env() -> Any:
    meta = json.loads((ENTRY / "meta.json").read_text())
    return make_env(ENV, episode_length=4, **meta["env_kwargs"])


def test_learned_path_takes_a_trial_from_its_spec(tmp_path: Path) -> None:
    model = _model(tmp_path, None)
    env = _model_env()
    assert isinstance(make_policy(f"learned:{model}", env), LearnedPolicy)
    pol = make_policy(
        f"learned:{model}?trial=greedy_migration&trial_every=2&trial_futures=2", env, seed=0
    )
    assert isinstance(pol, TrialGuard) and isinstance(pol.policy, LearnedPolicy)
    assert (pol.every, pol.futures, pol.base_name) == (2, 2, "greedy_migration")
    assert pol.describe()["trial"]["every"] == 2
    _play(env, pol, seed=0)
    assert pol.trials == 2
    with pytest.raises(PolicyError, match="trial=ANCHOR"):
        make_policy(f"learned:{model}?trial_every=2", env)
    with pytest.raises(PolicyError, match="futures"):
        make_policy(f"learned:{model}?trial=greedy_migration&trial_futures=0", env)
    with pytest.raises(PolicyError, match="unknown policy"):
        make_policy(f"learned:{model}?trial=nonesuch", env)
    with pytest.raises(PolicyError, match="departure model only"):
        make_policy(f"learned:{model}?trial=greedy_migration&trial_thresholds=0.1", env)
    with pytest.raises(PolicyError, match="trial familiar applies to a departure model only"):
        make_policy(f"learned:{model}?trial=greedy_migration&trial_familiar=off", env)


def test_a_model_ships_its_trial_in_meta_and_trial_off_plays_the_network(
    tmp_path: Path,
) -> None:
    model = _model(tmp_path, {"anchor": "greedy_migration", "futures": 2, "every": 4})
    env = _model_env()
    pol = make_policy(f"learned:{model}", env, seed=0)
    assert isinstance(pol, TrialGuard) and pol.every == 4 and pol.futures == 2
    assert isinstance(make_policy(f"learned:{model}?trial=off", env), LearnedPolicy)
    tuned = make_policy(f"learned:{model}?trial_every=1", env)
    assert isinstance(tuned, TrialGuard) and tuned.every == 1 and tuned.futures == 2
    with pytest.raises(PolicyError, match="trial=off takes no other"):
        make_policy(f"learned:{model}?trial=off&trial_every=1", env)


def test_the_shipped_entries_play_under_their_trial_guards() -> None:
    from rlsched.policies.departures import DeparturePolicy
    from tests.conftest import small_dag_entry

    pol = make_policy("learned:zoo/pod-rebalancing-anchored-ppo", _model_env(), seed=0)
    assert isinstance(pol, TrialGuard) and pol.base_name == "greedy_migration"
    llm = make_env("rlsched/LLMAutoscaling-v0", episode_duration=60.0)
    pol = make_policy("learned:zoo/llm-autoscaling-slo-ppo", llm, seed=0)
    assert isinstance(pol, TrialGuard) and pol.base_name == "threshold" and pol.every == 15
    # the cost-goal entry: its network over its heuristic, cheaper than HPA at no loss of SLO
    pol = make_policy("learned:zoo/llm-autoscaling-hpa-threshold-residual-ppo", llm, seed=0)
    assert isinstance(pol, TrialGuard) and isinstance(pol.policy, ResidualPolicy)
    assert (pol.base_name, pol.metric, pol.keep) == ("hpa", "cost", "slo_attainment")
    assert pol.sampler == "blocks"  # round H2: futures that keep the trace's bursts
    # the small-DAG entry: PEFT and the networks at their own threshold and two more
    name = small_dag_entry()
    kwargs = json.loads((ZOO_DIR / name / "card.json").read_text())["env_kwargs"]
    wf = make_env("rlsched/WorkflowOffloading-v0",
                  "synthetic:placement?workflows=5&tasks=15&seed=90", **kwargs)  # fmt: skip
    pol = make_policy(f"learned:zoo/{name}", wf, seed=0)
    assert isinstance(pol, TrialGuard) and pol.base_name == "peft" and pol.futures == 1
    assert all(isinstance(p, DeparturePolicy) for p in pol.candidates)
    assert [p.threshold for p in pol.candidates][1:] == [-0.008, -0.003]
    # the congested entry (round C7): the network free of its familiarity guard under trials
    # over PEFT; alone (trial=off) it keeps the familiarity guard
    card = json.loads((ZOO_DIR / "workflow-congested-vetted" / "card.json").read_text())
    wf = make_env(card["env"], "wfinstances:blast-43,helloworld-10", **card["env_kwargs"])
    pol = make_policy("learned:zoo/workflow-congested-vetted", wf, seed=0)
    assert isinstance(pol, TrialGuard) and (pol.base_name, pol.every) == ("peft", 10)
    assert isinstance(pol.policy, DeparturePolicy) and pol.policy.guard is None
    alone = make_policy("learned:zoo/workflow-congested-vetted?trial=off", wf)
    assert isinstance(alone, DeparturePolicy) and alone.guard is not None


def test_a_kept_metric_vetoes_a_candidate_that_gives_it_up() -> None:
    # greedy beats no_migration on violations, but moves pods where no_migration moves none:
    # keeping migrations, it loses that metric in every future and is never followed
    env = _env()
    kwargs: dict[str, Any] = {"futures": 4, "horizon": None, "every": 4}
    free = _guard(env, GreedyMigrationPolicy(), NoMigrationPolicy(), **kwargs)
    _play(env, free, seed=3)
    assert free.trusted > 0
    vetoed = _guard(env, GreedyMigrationPolicy(), NoMigrationPolicy(), keep="migrations",
                    **kwargs)  # fmt: skip
    acts, _ = _play(env, vetoed, seed=3)
    assert vetoed.trials == 2 and vetoed.trusted == 0 and not any(acts)
    # scored by migrations, fewer is the gain: no_migration is followed over greedy
    by_moves = _guard(env, NoMigrationPolicy(), GreedyMigrationPolicy(), metric="migrations",
                      **kwargs)  # fmt: skip
    acts, _ = _play(env, by_moves, seed=3)
    assert by_moves.trusted == by_moves.decisions and not any(acts)
    assert by_moves.describe()["trial"]["metric"] == "migrations"
    for bad, match in (({"keep": "nonesuch"}, "reports"), ({"metric": "requests"}, "descriptive")):
        with pytest.raises(PolicyError, match=match):
            _guard(env, GreedyMigrationPolicy(), NoMigrationPolicy(), **bad)
    with pytest.raises(PolicyError, match="keep"):
        trial_settings({"anchor": "hpa", "keep": 3}, "here")


def test_a_residual_model_plays_under_a_trial_guard_with_its_heuristic() -> None:
    env = make_env("rlsched/LLMAutoscaling-v0", episode_duration=60.0)
    spec = "learned:zoo/llm-autoscaling-hpa-threshold-residual-ppo"
    pol = make_policy(f"{spec}?trial=hpa&trial_metric=cost&trial_keep=slo_attainment"
                      "&trial_futures=2&trial_every=10&trial_horizon=end", env, seed=0)  # fmt: skip
    assert isinstance(pol, TrialGuard) and isinstance(pol.policy, ResidualPolicy)
    assert (pol.base_name, pol.metric, pol.keep) == ("hpa", "cost", "slo_attainment")
    obs, _ = env.reset(seed=4)
    pol.reset(4)
    done = False
    while not done:
        obs, _, term, trunc, _ = env.step(pol.act(obs, env.unwrapped.action_masks()))
        done = term or trunc
    assert pol.trials == 3 and pol.decisions == 30
    assert isinstance(make_policy(f"{spec}?trial=off", env), ResidualPolicy)


def _trajectory(t: Any) -> str:
    """A rollout's actions, rewards, score and metrics, compared as text (NaN equals NaN)."""
    return repr(([np.asarray(a).tolist() for a in t.actions], t.rewards, t.score, t.done,
                 t.metrics))  # fmt: skip


@pytest.mark.parametrize("entry", ["llm-autoscaling-hpa-threshold-residual-ppo", "pods",
                                   "committed"])  # fmt: skip
def test_paired_rollouts_are_the_two_rollouts_with_their_common_steps_taken_once(
    entry: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trial plays its anchor and first candidate as one while their actions have the same
    effect (LLMAutoscaling: the same instance deltas; elsewhere the same action): the same
    trajectories as two rollouts, and the env left where the trial found it; a committed
    candidate (the residual scaler for 3 decisions, then HPA, which reads the simulator) too,
    its shared steps after its block taken without the observation."""
    if entry == "pods":
        env = _model_env()
        guard = make_policy("learned:zoo/pod-rebalancing-anchored-ppo?trial_futures=2"
                            "&trial_every=1", env, seed=0)  # fmt: skip
    else:
        env = make_env("rlsched/LLMAutoscaling-v0", episode_duration=60.0)
        guard = make_policy("learned:zoo/llm-autoscaling-hpa-threshold-residual-ppo?trial=hpa"
                            "&trial_futures=2&trial_every=1&trial_horizon=end", env,
                            seed=0)  # fmt: skip
    assert isinstance(guard, TrialGuard)
    cand = Committed(guard.policy, guard.base, 3) if entry == "committed" else guard.policy
    u = env.unwrapped
    steps = {"shared": 0, "checked": 0}
    same_effect = type(u).same_effect

    def counted(self: Any, a: Any, b: Any) -> bool:
        steps["checked"] += 1
        return same_effect(self, a, b)

    observed = {"on": 0, "steps": 0, "calls": 0}  # observations the paired rollouts build
    take = guard._take

    def watched(a: Any, observe: bool) -> Any:
        observed["steps"] += int(observe and bool(observed["on"]))
        return take(a, observe)

    guard._take = watched  # type: ignore[method-assign]

    obs, _ = env.reset(seed=5)
    guard.reset(5)
    done, k = False, 0
    while not done:
        mask = u.action_masks()
        snap = u.snapshot()
        for future in (11, 12):
            guard._future = future
            with monkeypatch.context() as m:
                m.setattr(type(u), "same_effect", counted)
                observed["on"], observed["calls"] = 1, observed["calls"] + 1
                paired = guard._paired_rollouts(snap, guard.base, cand, obs, mask)
                observed["on"] = 0
            alone = [guard._rollout(snap, p, obs, mask, None) for p in (guard.base, cand)]
            assert [_trajectory(t) for t in paired] == [_trajectory(t) for t in alone]
            steps["shared"] += next(
                (i for i, (x, y) in enumerate(zip(*[t.actions for t in alone], strict=False))
                 if not u.same_effect(x, y)), len(alone[0].actions))  # fmt: skip
        guard._future = None
        u.restore(snap)
        obs, _, term, trunc, _ = env.step(guard.policy.act(obs, mask))
        done, k = term or trunc, k + 1
    assert k >= 3
    if entry == "committed":  # after its block the candidate is HPA: it never parts
        assert steps["shared"] > 20 and 0 < observed["steps"] <= 2 * observed["calls"]
    if entry != "pods":  # the residual and HPA agree for many steps: each checked, then shared
        assert steps["shared"] > 20 and steps["checked"] > steps["shared"]


def test_a_trial_may_draw_its_futures_another_way_and_leaves_the_envs_own() -> None:
    env = make_env("rlsched/LLMAutoscaling-v0", episode_duration=60.0)
    spec = "learned:zoo/llm-autoscaling-slo-ppo?trial=hpa&trial_futures=2&trial_every=10"
    drawn: list[str] = []
    u = env.unwrapped
    own = u.resample_future

    def seen(rng: np.random.Generator, sampler: str | None = None) -> None:
        drawn.append(sampler or u.future_sampler)
        own(rng, sampler)

    u.resample_future = seen
    pol = make_policy(f"{spec}&trial_sampler=blocks", env, seed=0)
    assert isinstance(pol, TrialGuard) and pol.describe()["trial"]["sampler"] == "blocks"
    obs, _ = env.reset(seed=2)
    pol.reset(2)
    pol.act(obs, u.action_masks())
    # one draw per future: the anchor and the candidate play it together
    assert drawn == ["blocks"] * 2 and u.future_sampler == "poisson"
    with pytest.raises(PolicyError, match="samples futures by poisson, blocks"):
        make_policy(f"{spec}&trial_sampler=weekly", env, seed=0)
    with pytest.raises(PolicyError, match="one way"):
        _guard(_env(), GreedyMigrationPolicy(), NoMigrationPolicy(), sampler="blocks")
