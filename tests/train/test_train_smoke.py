"""A short real training run: the run folder describes itself and the model plays by the mask."""

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from rlsched.errors import ConfigError
from rlsched.evaluate import make_env
from rlsched.policies import make_policy
from rlsched.train import TrainConfig, train


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run")
    cfg = TrainConfig(
        dataset="wfinstances:srasearch-22",
        eval_dataset="wfinstances:srasearch-22",
        total_steps=512,
        n_envs=2,
        n_steps=128,
        batch_size=64,
        n_epochs=2,
        eval_freq=256,
        eval_episodes=1,
        env_kwargs={"episode_length": 50},
        seed=3,
    )
    train(cfg, out, progress=False)
    return out


def test_run_folder_is_self_describing(run_dir: Path) -> None:
    for f in (
        "config.yaml",
        "run.json",
        "metrics.json",
        "model/model.zip",
        "model/meta.json",
        "final/model.zip",
        "eval/evaluations.npz",
    ):
        assert (run_dir / f).is_file(), f
    assert list((run_dir / "monitor").glob("*.monitor.csv"))
    assert list((run_dir / "tb").iterdir())
    run = json.loads((run_dir / "run.json").read_text())
    assert run["seed"] == 3 and run["steps"] >= 512
    assert {"torch", "gymnasium", "stable-baselines3", "numpy"} <= set(run["versions"])
    meta = json.loads((run_dir / "model" / "meta.json").read_text())
    assert meta["env_id"] == "rlsched/ServerlessPlacement-v0"
    assert meta["env_kwargs"] == {"episode_length": 50}
    cfg = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert cfg["total_steps"] == 512


def test_trained_model_loads_and_acts_within_the_mask(run_dir: Path) -> None:
    env = make_env("rlsched/ServerlessPlacement-v0", "wfinstances:blast-43", episode_length=50)
    pol = make_policy(f"learned:{run_dir}", env)
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        mask = env.unwrapped.action_masks()
        a = pol.act(obs, mask)
        assert mask[a]
        obs, _, done, _, info = env.step(a)
    assert info["metrics"]["invalid_actions"] == 0


@pytest.mark.parametrize("num_nodes", [20, 100])
def test_node_model_trained_at_10_nodes_acts_validly_at_other_sizes(
    run_dir: Path, num_nodes: int
) -> None:
    from rlsched.evaluate import evaluate

    env = make_env(
        "rlsched/ServerlessPlacement-v0",
        "wfinstances:blast-43",
        num_nodes=num_nodes,
        episode_length=50,
    )
    assert env.action_space.n == num_nodes  # the model was trained with Discrete(10)
    pol = make_policy(f"learned:{run_dir}", env)
    assert pol.resized
    (ep,) = evaluate(pol, env, episodes=1, seed=4)
    assert ep.length == 50 and ep.metrics["invalid_actions"] == 0
    # the network scores nodes, not slots: reordering the nodes reorders their scores
    from rlsched.agents.networks import node_logits

    obs, _ = env.reset(seed=4)
    for _ in range(5):
        obs, *_ = env.step(pol.act(obs, env.unwrapped.action_masks()))
    perm = np.random.default_rng(0).permutation(num_nodes)
    shuffled = {k: (v[perm] if k.startswith("node_") else v) for k, v in obs.items()}
    scores = node_logits(pol.model.policy, obs)
    assert scores.shape == (num_nodes,) and np.ptp(scores) > 0
    np.testing.assert_allclose(node_logits(pol.model.policy, shuffled), scores[perm], rtol=1e-5)


def test_vm_node_model_without_the_grid_runs_at_other_server_counts(tmp_path: Path) -> None:
    """VMPlacement with `grid_obs: false` and no observation statistics: a node-scoring model
    trained at 5 servers acts by the mask at 20 (the zoo's VM entry transfers this way)."""
    from rlsched.evaluate import evaluate

    kw = {"scenario": "recovering-5", "grid_obs": False}
    cfg = TrainConfig(
        env_id="rlsched/VMPlacement-v0", dataset="synthetic:vm?creations=3000&days=3&seed=0",
        env_kwargs=kw, total_steps=256, n_envs=2, n_steps=64, batch_size=64, n_epochs=1,
        eval_freq=0, normalize_obs=False, node_value="pooled", tensorboard=False, seed=1,
    )  # fmt: skip
    train(cfg, tmp_path, progress=False)
    env = make_env("rlsched/VMPlacement-v0", "synthetic:vm?creations=3000&days=3&seed=1",
                   **{**kw, "num_nodes": 20, "episode_length": 60})  # fmt: skip
    pol = make_policy(f"learned:{tmp_path}/model", env)
    assert pol.resized and env.action_space.n == 40
    (ep,) = evaluate(pol, env, episodes=1, seed=2)
    assert ep.length > 0 and ep.metrics["invalid_actions"] == 0


def test_node_model_acts_like_predict_at_its_own_size(run_dir: Path) -> None:
    from rlsched.agents.networks import node_logits

    env = make_env("rlsched/ServerlessPlacement-v0", "wfinstances:blast-43", episode_length=50)
    pol = make_policy(f"learned:{run_dir}", env)
    assert not pol.resized
    obs, _ = env.reset(seed=2)
    for _ in range(20):
        mask = env.unwrapped.action_masks()
        scores = np.where(mask, node_logits(pol.model.policy, obs), -np.inf)
        assert pol.act(obs, mask) == int(np.argmax(scores))
        obs, _, done, _, _ = env.step(pol.act(obs, mask))
        if done:
            break


def test_config_from_yaml_rejects_unknown_fields(tmp_path: Path) -> None:
    p = tmp_path / "c.yaml"
    p.write_text("algo: maskable_ppo\nsteps_total: 5\n")
    with pytest.raises(ConfigError, match="steps_total"):
        TrainConfig.from_yaml(p)
    p.write_text("algo: a2c\n")
    with pytest.raises(ConfigError, match="a2c"):
        TrainConfig.from_yaml(p)


def test_shipped_configs_load() -> None:
    """Every training config, the zoo's and its retired entries' (``configs/zoo/start``)
    included; the sweeps' have their own schema."""
    root = Path(__file__).resolve().parents[2] / "configs"
    files = [f for f in sorted(root.rglob("*.yaml")) if "sweeps" not in f.relative_to(root).parts]
    assert len(files) > len(list(root.glob("*.yaml")))
    for f in files:
        TrainConfig.from_yaml(f)


def test_dataset_ranges_are_spelled_out_in_order(tmp_path: Path) -> None:
    """``{A..B}`` in a train_datasets entry stands for one entry per integer, in order; the
    run's saved config holds them spelled out."""
    p = tmp_path / "c.yaml"
    p.write_text(
        "dataset: wfinstances:srasearch-22\n"
        "train_datasets:\n"
        "- synthetic:placement?tasks=15&seed={101..103}\n"
        "- wfinstances:montage-58\n"
        "- synthetic:pods?nodes={4..5}&seed={7..8}\n"
    )
    cfg = TrainConfig.from_yaml(p)
    assert cfg.train_datasets == [
        "synthetic:placement?tasks=15&seed=101",
        "synthetic:placement?tasks=15&seed=102",
        "synthetic:placement?tasks=15&seed=103",
        "wfinstances:montage-58",
        "synthetic:pods?nodes=4&seed=7",
        "synthetic:pods?nodes=4&seed=8",
        "synthetic:pods?nodes=5&seed=7",
        "synthetic:pods?nodes=5&seed=8",
    ]
    cfg.save(tmp_path / "saved.yaml")
    assert TrainConfig.from_yaml(tmp_path / "saved.yaml").train_datasets == cfg.train_datasets
    assert "..}" not in (tmp_path / "saved.yaml").read_text()


def test_an_empty_dataset_range_is_refused_with_its_line(tmp_path: Path) -> None:
    p = tmp_path / "c.yaml"
    p.write_text("algo: maskable_ppo\ntrain_datasets:\n- synthetic:placement?seed={9..3}\n")
    with pytest.raises(ConfigError, match=r"c.yaml:2: train_datasets entry .*\{9..3\} is empty"):
        TrainConfig.from_yaml(p)


@pytest.mark.parametrize("algo,net", [("ppo", "node"), ("dqn", "mlp"), ("maskable_ppo", "mlp")])
def test_other_algorithms_train_and_act(
    tmp_path: Path, algo: str, net: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "tmpdir"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    cfg = TrainConfig(
        dataset="wfinstances:srasearch-22",
        algo=algo,
        policy_net=net,
        total_steps=256,
        n_envs=1,
        n_steps=128,
        batch_size=64,
        n_epochs=1,
        learning_starts=64,
        eval_freq=0,
        tensorboard=False,
        env_kwargs={"episode_length": 40},
    )
    train(cfg, tmp_path / "run", progress=False)
    # without TensorBoard, SB3's logger would have made an empty tempdir/SB3-<time> folder
    assert list(scratch.glob("SB3-*")) == []
    env = make_env("rlsched/ServerlessPlacement-v0", "wfinstances:blast-43", episode_length=40)
    pol = make_policy(f"learned:{tmp_path}/run/model", env)
    obs, _ = env.reset(seed=1)
    for _ in range(40):
        mask = env.unwrapped.action_masks()
        a = pol.act(obs, mask)
        assert mask[a]
        obs, _, done, _, _ = env.step(a)
        if done:
            break
    if net == "mlp":  # a flat MLP has one input per node slot: another size is refused
        from rlsched.errors import PolicyError

        bigger = make_env("rlsched/ServerlessPlacement-v0", "wfinstances:blast-43", num_nodes=12)
        with pytest.raises(PolicyError, match=r"not a node-scoring network.*Discrete\(10\)"):
            make_policy(f"learned:{tmp_path}/run/model", bigger)


def test_pods_node_model_reading_no_per_node_globals_runs_at_other_node_counts(
    tmp_path: Path,
) -> None:
    """PodRebalancing's network with `node_global_keys: [clock]` reads only the per-move rows and
    the clock, so a model trained at 4 nodes acts by the mask at 6 (whose `load`, `capacity`,
    ... are larger); one that reads every key cannot."""
    from rlsched.errors import PolicyError
    from rlsched.evaluate import evaluate

    kw = {"max_pods_per_node": 30, "action_features": True, "episode_length": 4}
    base = dict(env_id="rlsched/PodRebalancing-v0", dataset="synthetic:pods", env_kwargs=kw,
                total_steps=64, n_envs=1, n_steps=32, batch_size=32, n_epochs=1, eval_freq=0,
                policy_net="node", node_value="pooled", tensorboard=False, seed=0)  # fmt: skip
    train(TrainConfig(**base, node_global_keys=["clock"]), tmp_path / "clock", progress=False)
    train(TrainConfig(**base), tmp_path / "all", progress=False)
    env = make_env("rlsched/PodRebalancing-v0", "synthetic:pods", **kw, num_nodes=6)
    pol = make_policy(f"learned:{tmp_path / 'clock'}/model", env)
    assert pol.resized and env.action_space.n == 1 + 6 * 30 * 6
    (ep,) = evaluate(pol, env, episodes=1, seed=1)
    assert ep.length == 4 and ep.metrics["invalid_actions"] == 0
    with pytest.raises(PolicyError, match="shape"):
        make_policy(f"learned:{tmp_path / 'all'}/model", env)
    with pytest.raises(ConfigError, match="node_global_keys"):
        train(TrainConfig(**base, node_global_keys=["nope"]), tmp_path / "bad", progress=False)


def test_pods_model_trained_on_candidates_acts_among_them_in_any_env(tmp_path: Path) -> None:
    """A PodRebalancing model trained with `candidates: k` picks among greedy_migration's first
    k moves also where the env offers every move (another node count included): the anchor is
    part of the policy, not only of its training env."""
    from rlsched.policies.pods import anchored_mask

    kw = {"max_pods_per_node": 30, "action_features": True, "episode_length": 4}
    train(
        TrainConfig(env_id="rlsched/PodRebalancing-v0", dataset="synthetic:pods",
                    env_kwargs={**kw, "candidates": 2}, total_steps=64, n_envs=1, n_steps=32,
                    batch_size=32, n_epochs=1, eval_freq=0, policy_net="node",
                    node_value="pooled", node_global_keys=["clock"], tensorboard=False, seed=0),
        tmp_path / "run", progress=False,
    )  # fmt: skip
    for nodes in (None, 6):
        env = make_env("rlsched/PodRebalancing-v0", "synthetic:pods", **kw, num_nodes=nodes)
        pol = make_policy(f"learned:{tmp_path / 'run'}/model", env)
        assert pol.candidates == 2
        obs, _ = env.reset(seed=3)
        for _ in range(4):
            mask = env.unwrapped.action_masks()
            assert mask.sum() > 3  # the env itself offers more than the anchor's 2 + noop
            a = pol.act(obs, mask)
            assert anchored_mask(obs, mask, 2)[a]
            obs, *_ = env.step(a)


def test_offloading_model_trained_on_candidates_acts_among_them_in_any_env(
    tmp_path: Path,
) -> None:
    """A WorkflowOffloading model trained with `candidates: k` picks among the k servers of
    earliest finish also where the env offers every server (another server count included),
    computed from the observation as the env computes them."""
    from rlsched.policies.offloading import anchored_servers

    data = "synthetic:placement?workflows=20&tasks=8&seed=5"
    kw = {"num_workflows": 2, "reward": "makespan"}
    train(
        TrainConfig(env_id="rlsched/WorkflowOffloading-v0", dataset=data, eval_dataset=None,
                    env_kwargs={**kw, "num_nodes": 4, "candidates": 2}, total_steps=64,
                    n_envs=1, n_steps=32, batch_size=32, n_epochs=1, eval_freq=0,
                    policy_net="node", tensorboard=False, seed=0),
        tmp_path / "run", progress=False,
    )  # fmt: skip
    decisions = 0
    for nodes in (4, 7):
        env = make_env("rlsched/WorkflowOffloading-v0", data, **kw, num_nodes=nodes)
        pol = make_policy(f"learned:{tmp_path / 'run'}/model", env)
        assert pol.candidates == 2
        obs, _ = env.reset(seed=3)
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            assert mask.sum() > 2  # the env itself offers more than the anchor's 2
            a = pol.act(obs, mask)
            assert a in anchored_servers(obs, mask, 2)
            obs, _, done, _, _ = env.step(a)
            decisions += 1
    assert decisions >= 30


def test_train_datasets_give_each_sub_env_its_workload(tmp_path: Path) -> None:
    """`train_datasets`: sub-env r trains on the r-th of [dataset, *train_datasets]; none may
    share data with the test set."""
    from rlsched.train.envs import mixed_vec_env

    kw = {"max_pods_per_node": 30, "action_features": True, "episode_length": 4}
    base = dict(env_id="rlsched/PodRebalancing-v0", dataset="synthetic:pods", env_kwargs=kw,
                eval_dataset="synthetic:pods?seed=1", n_envs=4, tensorboard=False,
                seed=0)  # fmt: skip
    cfg = TrainConfig(**base, train_datasets=["synthetic:pods?seed=3"])
    venv = mixed_vec_env(cfg, tmp_path / "monitor")
    names = [e.unwrapped.dataset_name for e in venv.envs]
    assert names[0] == names[2] != names[1] == names[3] and "seed=3" in names[1]
    # the two clusters differ: other services and sizes
    assert not np.array_equal(venv.envs[0].unwrapped.workload.request_cpu,
                              venv.envs[1].unwrapped.workload.request_cpu)  # fmt: skip
    venv.close()
    with pytest.raises(ConfigError, match="test set"):
        TrainConfig(**base, train_datasets=["synthetic:pods?seed=2"]).validate()  # test cluster
    with pytest.raises(ConfigError, match="validation"):
        TrainConfig(**base, train_datasets=["synthetic:pods?seed=1"]).validate()
    train(TrainConfig(**{**base, "n_envs": 2}, train_datasets=["synthetic:pods?seed=3"],
                      total_steps=64, n_steps=32, batch_size=32, n_epochs=1, eval_freq=0,
                      policy_net="node", node_global_keys=["clock"]),
          tmp_path / "run", progress=False)  # fmt: skip
    assert (tmp_path / "run" / "monitor" / "1.monitor.csv").is_file()


def test_a_model_trained_under_a_named_split_says_so_and_is_judged_on_its_test_only(
    tmp_path: Path,
) -> None:
    """`split: code-time` lets the code trace's first half train beside conv; the model's
    meta.json records the split and the datasets, and the verdict check reads them."""
    from rlsched.evaluate import check_not_trained_on
    from rlsched.splits import split_of
    from rlsched.train.envs import mixed_vec_env

    cfg = TrainConfig(
        env_id="rlsched/LLMAutoscaling-v0", dataset="azure-llm:conv", eval_dataset=None,
        train_datasets=["azure-llm:code?end=1800"], split="code-time", algo="ppo",
        policy_net="mlp", total_steps=64, n_envs=2, n_steps=32, batch_size=32, n_epochs=1,
        eval_freq=0, checkpoint_freq=0, tensorboard=False, seed=0,
        env_kwargs={"episode_duration": 40.0},
    )  # fmt: skip
    venv = mixed_vec_env(cfg, tmp_path / "monitor")
    first_half = venv.envs[1].unwrapped
    assert first_half.dataset_name == "azure-llm:code?end=1800"
    assert first_half._base.span < 1800 < first_half._base.span + 60  # the half, not the trace
    venv.close()
    train(cfg, tmp_path / "run", progress=False)
    meta = json.loads((tmp_path / "run" / "model" / "meta.json").read_text())
    assert meta["split"] == "code-time" and meta["train_datasets"] == ["azure-llm:code?end=1800"]
    model = f"learned:{tmp_path / 'run' / 'model'}"
    check_not_trained_on([model], split_of(cfg.env_id, "code-time").test, "code-time")
    with pytest.raises(ConfigError, match="trained under the split 'code-time'"):
        check_not_trained_on([model], "azure-llm:code")


def _dual_cfg(**kw: Any) -> TrainConfig:
    import rlsched.policies.llm  # noqa: F401  (registers HPA as a reference)

    base: dict[str, Any] = dict(
        env_id="rlsched/LLMAutoscaling-v0", dataset="azure-llm:conv", algo="ppo",
        policy_net="mlp", total_steps=240, n_envs=2, n_steps=30, batch_size=30, n_epochs=1,
        eval_freq=0, checkpoint_freq=0, seed=0,
        env_kwargs={"episode_duration": 40.0, "rate_scale": [0.5, 4.0], "slo_reference": "hpa",
                    "reward_weights": {"slo": 0.0, "slo_target": 0.9, "slo_penalty": 20.0},
                    "slo_dual": {"lr": 10.0, "margin": 1.0}},
    )  # fmt: skip
    return TrainConfig(**{**base, **kw})


def test_slo_dual_multipliers_are_learned_across_envs_and_recorded(tmp_path: Path) -> None:
    res = train(_dual_cfg(), tmp_path / "run", progress=False)
    dual = json.loads((res.run_dir / "run.json").read_text())["slo_dual"]
    # 240 steps of 20-step episodes over two envs: 12 episodes, each one step of its bucket;
    # a margin of 1.0 (all of attainment) cannot be beaten: no step lowers a multiplier
    assert dual["updates"] == 12 and len(dual["trace"]) == 12
    last: dict[str, float] = {}
    before, at = dict(last), -1  # the table as the episodes ending at one step played it
    for steps, bucket, violation, paid, lam in dual["trace"]:
        if steps != at:
            before, at = dict(last), steps
        assert violation >= 0.0
        assert paid == before.get(bucket, 20.0)  # each env charged the shared table's value
        assert lam == pytest.approx(last.get(bucket, 20.0) + 10.0 * violation)
        last[bucket] = lam
    assert any(paid > 20.0 for *_, paid, _ in dual["trace"])
    assert dual["table"] == pytest.approx(last)


def test_slo_dual_multipliers_carry_over_a_resume(tmp_path: Path) -> None:
    train(_dual_cfg(total_steps=120, checkpoint_freq=60), tmp_path, progress=False)
    first = json.loads((tmp_path / "run.json").read_text())["slo_dual"]
    train(_dual_cfg(total_steps=240, checkpoint_freq=60), tmp_path, progress=False, resume=True)
    dual = json.loads((tmp_path / "run.json").read_text())["slo_dual"]
    assert first["updates"] == 6 and dual["updates"] == 12
    assert dual["trace"][:6] == first["trace"]  # the steps before the resume, kept
    # the episodes after it paid the table the checkpoint held, not the starting value
    table = first["table"]
    for _, bucket, _, paid, _ in dual["trace"][6:8]:
        assert paid == table.get(bucket, 20.0)


def test_slo_dual_learns_the_same_table_with_envs_in_subprocesses(tmp_path: Path) -> None:
    runs = {}
    for vec_env in ("dummy", "subproc"):
        train(_dual_cfg(total_steps=120, vec_env=vec_env), tmp_path / vec_env, progress=False)
        runs[vec_env] = json.loads((tmp_path / vec_env / "run.json").read_text())["slo_dual"]
    assert runs["subproc"]["updates"] == 6 and runs["subproc"] == runs["dummy"]
