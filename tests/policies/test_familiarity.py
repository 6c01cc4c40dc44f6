"""The familiarity guard: a workflow's shape profile from the observation, a radius from the
training datasets, and a departure model that keeps its base on an unfamiliar workflow."""

import json

import numpy as np
import pytest

from rlsched.errors import PolicyError
from rlsched.evaluate import make_env
from rlsched.policies.departures import DeparturePolicy
from rlsched.policies.familiarity import (
    FEATURES,
    Familiarity,
    calibrate,
    dataset_profiles,
    profile,
    vet,
)
from rlsched.policies.offloading import peft_choice
from rlsched.policies.registry import make_policy
from tests.conftest import TINY_DEPARTURES


def _observation(work, parents, data, rank, pad: int = 6) -> dict[str, np.ndarray]:
    """A ``dag_tasks`` / ``dag_links`` pair as the env writes them (padded to ``pad``)."""
    n = len(work)
    rows = np.zeros((pad, 12), np.float32)
    links = np.zeros((pad, pad), np.float32)
    depth = np.zeros(n)
    for c, ps in enumerate(parents):  # parents come first, as in a template
        depth[c] = 1 + max((depth[p] for p in ps), default=-1)
        for p in ps:
            links[c, p] = data[p]
    has_kids = {p for ps in parents for p in ps}
    rows[:n, 0], rows[:n, 3], rows[:n, 4], rows[:n, 5] = work, data, rank, depth
    rows[:n, 8] = [c not in has_kids for c in range(n)]
    rows[:n, 9] = [not ps for ps in parents]
    rows[:n, 11] = 1.0
    rows[n:, 0] = 99.0  # padding is never read
    return {"dag_tasks": rows, "dag_links": links}


def test_profile_reads_the_shape_of_the_valid_tasks() -> None:
    chain = profile(_observation([1.0, 2.0, 3.0], [[], [0], [1]], [1.0, 1.0, 1.0], [6, 5, 3]))
    want = {"log_tasks": np.log(3), "levels_share": 1.0, "width_share": 1 / 3,
            "entry_share": 1 / 3, "sink_share": 1 / 3, "edges_per_task": 2 / 3,
            "fan_out": 1 / 3, "fan_in": 1 / 3, "work_cv": np.std([1, 2, 3]) / 2,
            "critical_share": 1.0, "data_cv": 0.0}  # fmt: skip
    assert dict(zip(FEATURES, chain, strict=True)) == pytest.approx(want)
    # a fork-join of four: one source, two in parallel, one sink
    fork = dict(zip(FEATURES, profile(_observation(
        [1.0, 1.0, 1.0, 1.0], [[], [0], [0], [1, 2]], [2.0, 1.0, 1.0, 0.0], [3, 2, 2, 1]
    )), strict=True))  # fmt: skip
    assert fork["levels_share"] == 0.75 and fork["width_share"] == 0.5
    assert fork["fan_out"] == fork["fan_in"] == 0.5 and fork["edges_per_task"] == 1.0
    assert fork["critical_share"] == 0.75
    with pytest.raises(PolicyError, match="dag_links"):
        profile({"dag_tasks": np.zeros((2, 12), np.float32)})
    with pytest.raises(PolicyError, match="none is valid"):
        profile({"dag_tasks": np.zeros((2, 12), np.float32), "dag_links": np.zeros((2, 2))})


def test_the_radius_is_the_farthest_nearest_workflow_of_another_dataset() -> None:
    rng = np.random.default_rng(0)
    a, b, c = (rng.normal(size=(3, len(FEATURES))) for _ in range(3))
    guard = calibrate({"a": a, "b": b, "c": c})
    ref = np.concatenate([a, b, c])
    scale = ref.std(axis=0)
    assert np.allclose(guard.scale, scale) and len(guard.reference) == 9

    def nearest(x, rows):
        return np.sqrt((((rows - x) / scale) ** 2).sum(1)).min()

    want = max(nearest(x, np.concatenate(o)) for rows, o in
               ((a, (b, c)), (b, (a, c)), (c, (a, b))) for x in rows)  # fmt: skip
    assert guard.radius == pytest.approx(want)
    # a reference workflow is familiar; one far beyond the spread is not
    assert guard.distance(a[0]) == 0.0
    assert guard.distance(a[0] + 10 * scale) > guard.radius
    with pytest.raises(PolicyError, match="two datasets"):
        calibrate({"a": a})


def test_the_record_round_trips_and_refuses_another_feature_set() -> None:
    rng = np.random.default_rng(1)
    guard = calibrate({"a": rng.normal(size=(2, len(FEATURES))),
                       "b": rng.normal(size=(2, len(FEATURES)))})  # fmt: skip
    meta = json.loads(json.dumps(guard.to_meta(["a", "b"])))
    again = Familiarity.from_meta(meta)
    assert again.radius == pytest.approx(guard.radius) and meta["datasets"] == ["a", "b"]
    assert np.allclose(again.reference, guard.reference)
    with pytest.raises(PolicyError, match="features"):
        Familiarity.from_meta({**meta, "features": meta["features"][:-1]})
    with pytest.raises(PolicyError, match="positive"):
        Familiarity(guard.reference, np.zeros(len(FEATURES)), 1.0)


def _env(dataset: str):
    return make_env(TINY_DEPARTURES["env_id"], dataset, **TINY_DEPARTURES["env_kwargs"])


def test_dataset_profiles_holds_every_workflow_of_the_dataset() -> None:
    data = "synthetic:placement?workflows=3&tasks=8&seed=15"
    rows = dataset_profiles(_env, data)  # one workflow per episode: as many as it takes
    assert rows.shape == (3, len(FEATURES))
    env = _env(data)
    for seed in range(6):  # each row is its workflow's, whichever episode drew it
        obs, _ = env.reset(seed=seed)
        assert np.array_equal(profile(obs), rows[env.unwrapped.current_template])
    with pytest.raises(PolicyError, match="drew 1 of its 3"):
        dataset_profiles(_env, data, max_episodes=1)


def test_a_guarded_model_keeps_its_base_on_an_unfamiliar_workflow(departure_run, tmp_path):
    import shutil

    model = tmp_path / "model"
    shutil.copytree(departure_run / "model", model)
    meta = json.loads((model / "meta.json").read_text())
    env = _env(TINY_DEPARTURES["eval_dataset"])
    seen = dataset_profiles(_env, TINY_DEPARTURES["eval_dataset"])
    always = DeparturePolicy(model, threshold=-1e9)  # departs wherever it can
    # a reference far from every workflow: each is unfamiliar, the base plays
    far = Familiarity(seen[:1] + 100.0, np.ones(len(FEATURES)), 1.0)
    (model / "meta.json").write_text(json.dumps({**meta, "familiar": far.to_meta(["far"])}))
    guarded = DeparturePolicy(model, threshold=-1e9)
    unguarded = make_policy(f"learned:{model}?threshold=-1e9&familiar=off", env)
    moved = 0
    for seed in range(4):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            base = peft_choice(obs, mask)
            assert guarded.act(obs, mask) == base
            assert unguarded.act(obs, mask) == always.act(obs, mask)
            moved += always.act(obs, mask) != base
            obs, _, done, _, _ = env.step(base)
    assert moved > 0 and guarded.departures == 0 and guarded.guarded > 0
    assert guarded.describe()["familiar"] == 1.0 and unguarded.describe()["familiar"] is None
    # the reference itself: every workflow familiar, the guarded model departs as the network
    near = Familiarity(seen, np.ones(len(FEATURES)), 1e-6)  # the record keeps 9 digits
    (model / "meta.json").write_text(json.dumps({**meta, "familiar": near.to_meta(["near"])}))
    guarded = make_policy(f"learned:{model}?threshold=-1e9&familiar=on", env)
    for seed in range(2):
        obs, _ = env.reset(seed=seed)
        mask = env.unwrapped.action_masks()
        assert guarded.act(obs, mask) == always.act(obs, mask)
    with pytest.raises(PolicyError, match="on or off"):
        DeparturePolicy(model, familiar="maybe")
    with pytest.raises(PolicyError, match="no familiarity guard"):
        DeparturePolicy(departure_run / "model", familiar="on")


def test_a_trial_guard_may_turn_the_familiarity_guard_off(departure_run, tmp_path):
    """A model's shipped trial with ``familiar: off`` plays the network without its
    familiarity guard under the trial guard; a spec's ``familiar=`` wins; alone (``trial=off``)
    the model keeps its guard; a model without departures cannot take the setting."""
    import shutil

    from rlsched.policies.trial import TrialGuard

    model = tmp_path / "model"
    shutil.copytree(departure_run / "model", model)
    meta = json.loads((model / "meta.json").read_text())
    seen = dataset_profiles(_env, TINY_DEPARTURES["eval_dataset"])
    far = Familiarity(seen[:1] + 100.0, np.ones(len(FEATURES)), 1.0)  # nothing familiar
    trial = {"anchor": "peft", "futures": 2, "every": 3, "familiar": "off"}
    (model / "meta.json").write_text(
        json.dumps({**meta, "familiar": far.to_meta(["far"]), "trial": trial})
    )
    env = _env(TINY_DEPARTURES["eval_dataset"])
    shipped = make_policy(f"learned:{model}", env, seed=0)
    assert isinstance(shipped, TrialGuard) and isinstance(shipped.policy, DeparturePolicy)
    assert shipped.policy.guard is None
    on = make_policy(f"learned:{model}?familiar=on", env, seed=0)
    assert isinstance(on, TrialGuard) and on.policy.guard is not None
    on = make_policy(f"learned:{model}?trial_familiar=on", env, seed=0)
    assert isinstance(on, TrialGuard) and on.policy.guard is not None
    alone = make_policy(f"learned:{model}?trial=off", env)
    assert isinstance(alone, DeparturePolicy) and alone.guard is not None
    # the guard's candidate departs where its network does; the model alone keeps PEFT
    free = DeparturePolicy(model, familiar="off")
    obs, _ = env.reset(seed=0)
    mask = env.unwrapped.action_masks()
    cand = shipped.policy
    assert cand.act(obs, mask) == free.act(obs, mask)
    assert alone.act(obs, mask) == peft_choice(obs, mask)
    with pytest.raises(PolicyError, match="trial familiar must be on or off"):
        make_policy(f"learned:{model}?trial_familiar=maybe", env)


def test_vetting_opens_only_the_workflows_near_which_departures_paid() -> None:
    ref = np.zeros((4, len(FEATURES)))
    ref[:, 0] = [0.0, 1.0, 2.0, 10.0]
    guard = Familiarity(ref, np.ones(len(FEATURES)), radius=0.5)
    near = ref.copy()
    near[:, 0] += 0.1
    vetted = vet(guard, [
        (near[:2], [-0.2, 0.1]),  # rows 0 and 1: -0.05 on average, paid
        (near[1:2], [0.3]),  # row 1 again: with the first, +0.067, did not pay
        (near[2:3], [0.0, 0.0]),  # row 2: level, not below 0
        (near[3:] + 5.0, [-1.0]),  # beyond the radius: hands nothing; row 3 had no evidence
    ])  # fmt: skip
    assert vetted.open.tolist() == [True, False, False, False]
    assert vetted.allows(near[0]) and not vetted.allows(near[1])
    assert not vetted.allows(near[0] + 1.0)  # beyond the radius, open or not
    again = Familiarity.from_meta(json.loads(json.dumps(vetted.to_meta(["x"]))))
    assert again.open.tolist() == vetted.open.tolist() and guard.open is None
    assert "open" not in guard.to_meta()
    with pytest.raises(PolicyError, match="open flags"):
        Familiarity(ref, np.ones(len(FEATURES)), 0.5, np.ones(3, bool))
