"""Sweep configs expand to a fixed list of trials whose ids depend only on what determines the
result; bad configs fail with one line naming the file and field."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from rlsched.envs import ENV_IDS
from rlsched.errors import ConfigError
from rlsched.sweep import SweepConfig, load_sweep
from rlsched.sweep.runner import resolve_policies
from tests.sweep.conftest import ROOT


def _ids(data: dict[str, Any]) -> dict[str, str]:
    return {t.id: t.label for t in SweepConfig.from_dict(copy.deepcopy(data)).trials()}


def test_trials_and_ids_are_deterministic(tiny: dict[str, Any]) -> None:
    tiny["seeds"] = [0, 1]
    a, b = _ids(tiny), _ids(tiny)
    assert a == b and len(a) == 4
    assert sorted(a.values()) == ["first_fit", "first_fit", "maskable_ppo", "maskable_ppo"]
    for tid in a:  # readable: env, label, seed, hash
        assert tid.startswith("ServerlessPlacement-v0-") and ("-s0-" in tid or "-s1-" in tid)


def test_a_change_reaches_only_the_trials_it_affects(tiny: dict[str, Any]) -> None:
    before = _ids(tiny)
    changed = copy.deepcopy(tiny)
    changed["algos"][0]["learning_rate"] = 0.001
    changed["envs"][0]["validation_dataset"] = "wfinstances:montage-58"
    after = _ids(changed)
    heur = {k for k, v in before.items() if v == "first_fit"}
    assert heur == {k for k, v in after.items() if v == "first_fit"}  # untouched
    assert {k for k, v in before.items() if v != "first_fit"}.isdisjoint(after)
    # the test episodes do change every trial
    more = copy.deepcopy(tiny)
    more["episodes"] = 3
    assert set(_ids(more)).isdisjoint(before)


def test_grid_and_random_search(tiny: dict[str, Any]) -> None:
    tiny["seeds"] = [0, 1]
    tiny["algos"][0]["learning_rate"] = {"grid": [0.0003, 0.001]}
    tiny["algos"][0]["n_epochs"] = {"grid": [1, 2, 3]}
    grid = SweepConfig.from_dict(copy.deepcopy(tiny)).trials()
    learned = [t for t in grid if t.learned]
    assert len(learned) == 2 * 3 * 2
    assert {
        (t.config["train"]["learning_rate"], t.config["train"]["n_epochs"]) for t in learned
    } == {(lr, e) for lr in (0.0003, 0.001) for e in (1, 2, 3)}
    assert "maskable_ppo[learning_rate=0.001,n_epochs=2]" in {t.label for t in learned}

    rand = copy.deepcopy(tiny)
    rand.update(search="random", num_samples=4, search_seed=7)
    rand["algos"][0]["learning_rate"] = {"loguniform": [1e-4, 1e-2]}
    rand["algos"][0]["ent_coef"] = {"choice": [0.0, 0.01]}
    rand["algos"][0]["n_steps"] = {"randint": [32, 65]}
    t1 = [t for t in SweepConfig.from_dict(copy.deepcopy(rand)).trials() if t.learned]
    t2 = [t for t in SweepConfig.from_dict(copy.deepcopy(rand)).trials() if t.learned]
    assert [t.id for t in t1] == [t.id for t in t2]  # seeded: a rerun finds the same trials
    assert len(t1) == 4 * 3 * 2  # samples x n_epochs grid x seeds
    points = {tuple(sorted(t.config["hparams"].items())) for t in t1}
    assert len(points) == 12
    for t in t1:
        h = t.config["hparams"]
        assert 1e-4 <= h["learning_rate"] <= 1e-2 and h["ent_coef"] in (0.0, 0.01)
        assert 32 <= h["n_steps"] < 65 and isinstance(h["n_steps"], int)
    # both seeds of a point share its hyperparameters (the interval is over seeds)
    by_label: dict[str, set[int]] = {}
    for t in t1:
        by_label.setdefault(t.label, set()).add(t.config["seed"])
    assert all(s == {0, 1} for s in by_label.values())
    other = copy.deepcopy(rand)
    other["search_seed"] = 8
    assert {t.id for t in SweepConfig.from_dict(other).trials() if t.learned}.isdisjoint(
        t.id for t in t1
    )


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"envs": [{"id": "rlsched/Nope-v0"}]}, "unknown env 'rlsched/Nope-v0'"),
        ({"algos": [{"algo": "maskable_ppo", "no_such": 1}]}, "unknown TrainConfig field"),
        ({"algos": [{"algo": "maskable_ppo", "seed": 3}]}, "seed is set by the sweep"),
        ({"algos": [{"algo": "a2c"}]}, "algo 'a2c'"),
        ({"algos": [{"algo": "ppo", "learning_rate": {"uniform": [1, 0]}}]}, "low < high"),
        ({"algos": [{"algo": "ppo", "learning_rate": {"uniform": [0, 1]}}]}, "search: random"),
        ({"seeds": [0, 0]}, "seeds"),
        ({"episodes": 0}, "episodes"),
        ({"colour": "blue"}, "unknown field(s) colour"),
        ({"algos": [{"algo": "maskable_ppo", "n_envs": 0}]}, "n_envs must be >= 1"),
    ],
)
def test_bad_configs_name_the_field(
    tiny: dict[str, Any], patch: dict[str, Any], message: str
) -> None:
    tiny.update(patch)
    with pytest.raises(ConfigError, match=r"sweep\.yaml") as err:
        SweepConfig.from_dict(tiny, source="sweep.yaml").trials()
    assert message in str(err.value)


def test_unknown_policy_fails_before_anything_runs(tiny: dict[str, Any]) -> None:
    tiny["policies"] = ["first_fit", "magic"]
    with pytest.raises(ConfigError, match="policy 'magic'"):
        resolve_policies(SweepConfig.from_dict(tiny))


def test_yaml_file_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("envs: [\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml"):
        load_sweep(bad)


@pytest.mark.parametrize("path", sorted((ROOT / "configs" / "sweeps").glob("*.yaml")), ids=str)
def test_example_configs_expand(path: Path) -> None:
    sweep = load_sweep(path)
    trials = sweep.trials(resolve_policies(sweep))
    assert trials and len({t.id for t in trials}) == len(trials)
    assert sweep.name == path.stem
    for e in sweep.envs:  # every example names a reference among its policies
        assert (e.reference or sweep.reference) in {t.label for t in trials}


@pytest.mark.parametrize("env_id", list(ENV_IDS))
def test_every_registered_env_can_be_swept(env_id: str) -> None:
    """A new env needs no code here: `all` expands to the heuristics that apply to it."""
    sweep = SweepConfig.from_dict({"envs": [env_id.split("/")[1]], "policies": ["all"]})
    trials = sweep.trials(resolve_policies(sweep))
    assert trials and all(t.config["env"] == env_id for t in trials)
