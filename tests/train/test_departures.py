"""``algo: departures``: the teacher's labels, the fit, the threshold chosen on validation,
a self-describing model folder; a rerun reuses the labels."""

import json

import numpy as np
import pytest

from rlsched.errors import ConfigError
from rlsched.train import TrainConfig, train
from rlsched.train.departures import (
    CHUNK,
    LABELS_RECORD,
    departure_labels,
    gain_targets,
    workflow_groups,
)
from rlsched.train.imitation import Demonstrations
from tests.conftest import TINY_DEPARTURES


def test_run_writes_the_model_the_labels_and_its_threshold_choice(departure_run) -> None:
    rec = json.loads((departure_run / "run.json").read_text())
    meta = json.loads((departure_run / "model" / "meta.json").read_text())
    assert meta["algo"] == "departures" and meta["base"] == "peft"
    assert (departure_run / "model" / "dagnet.npz").is_file()
    table = rec["threshold_choice"]
    assert len(table) == 7 and table[-1]["threshold"] == "inf"  # six quantiles and never
    assert table[-1]["departures"] == 0
    best = max(r["mean_return"] for r in table)
    assert rec["best_eval_mean_reward"] == best
    kept = [r for r in table if r["mean_return"] == best]
    assert meta["threshold"] == max(kept, key=lambda r: float(r["threshold"]))["threshold"]
    assert rec["teacher"]["episodes"] == 12 and rec["teacher"]["departures"] > 0
    assert "git_commit" in rec
    assert "versions" in rec and rec["config"]["algo"] == "departures"
    assert sorted(p.name for p in (departure_run / "teacher").iterdir()) == [
        f"chunk000_{min(CHUNK, 12)}.npz", LABELS_RECORD
    ]


def test_labels_mark_the_best_server_only_where_it_gains_enough() -> None:
    obs = {"node_peft_gap": np.array([[0.0, 1.0, 2.0], [0.0, 1.0, 2.0], [2.0, 0.0, 1.0]])}
    masks = np.ones((3, 3), bool)
    values = np.array(
        [
            [-10.0, -9.0, -9.5],  # 10% better at server 1
            [-10.0, -9.8, np.nan],  # 2%: below min_gain
            [-8.0, -5.0, np.nan],
        ],
        np.float32,
    )  # base is server 1: no gain
    d = Demonstrations(obs, masks, np.zeros(3, np.int64), np.zeros(3, np.float32), 3, 0.0,
                       values=values)  # fmt: skip
    lab = departure_labels(d, lambda o, m: int(np.argmin(o["node_peft_gap"])), 0.05)
    assert lab["base"].tolist() == [0, 0, 1]
    assert lab["y"].tolist() == [[0, 1, 0], [0, 0, 0], [0, 0, 0]]
    assert lab["on"].tolist() == [[False, True, True], [False, True, False],
                                  [True, False, False]]  # fmt: skip


def test_gain_targets_are_each_servers_relative_gain_clipped() -> None:
    obs = {"node_peft_gap": np.array([[0.0, 1.0, 2.0], [2.0, 0.0, 1.0]])}
    values = np.array([[-10.0, -9.0, -14.0], [-8.0, -4.0, np.nan]], np.float32)
    d = Demonstrations(obs, np.ones((2, 3), bool), np.zeros(2, np.int64),
                       np.zeros(2, np.float32), 2, 0.0, values=values)  # fmt: skip
    lab = departure_labels(d, lambda o, m: int(np.argmin(o["node_peft_gap"])), 0.05)
    y = gain_targets(lab, np.arange(2), 0.25)
    # base 0: +10% at server 1, -40% at 2 (clipped to -25%); base 1: server 0 loses 100%
    assert np.allclose(y, [[0.0, 0.1, -0.25], [-0.25, 0.0, 0.0]])
    assert lab["on"].tolist() == [[False, True, True], [True, False, False]]
    # a floor bounds the losses only: the +10% gain stays, both losses count as -5%
    y = gain_targets(lab, np.arange(2), 0.25, floor=0.05)
    assert np.allclose(y, [[0.0, 0.1, -0.05], [-0.05, 0.0, 0.0]])
    assert np.allclose(gain_targets(lab, np.arange(2), 0.05, floor=0.25),
                       [[0.0, 0.05, -0.25], [-0.25, 0.0, 0.0]])  # fmt: skip


def test_the_gate_caps_gains_where_the_teacher_kept_the_base() -> None:
    obs = {"node_peft_gap": np.array([[0.0, 1.0, 2.0]] * 3)}
    values = np.array([[-10.0, -9.0, -14.0]] * 3, np.float32)  # server 1 gains 10%
    actions = np.array([0, 1, 2])  # kept the base's server; left it for 1; left it for 2
    d = Demonstrations(obs, np.ones((3, 3), bool), actions, np.zeros(3, np.float32), 3, 0.0,
                       values=values)  # fmt: skip
    base = lambda o, m: int(np.argmin(o["node_peft_gap"]))  # noqa: E731
    plain = departure_labels(d, base, 0.05)
    lab = departure_labels(d, base, 0.05, gate=True)
    assert not plain["gated"].any() and lab["gated"].tolist() == [True, False, False]
    assert plain["y"][:, 1].tolist() == [1, 1, 1]
    assert lab["y"][:, 1].tolist() == [0, 1, 1]  # the values decide where the teacher left
    y = gain_targets(lab, np.arange(3), 0.25)
    assert np.allclose(y, [[0.0, 0.0, -0.25], [0.0, 0.1, -0.25], [0.0, 0.1, -0.25]])
    assert np.array_equal(lab["on"], plain["on"])  # the same candidates, capped targets


def test_groups_are_workflow_templates() -> None:
    tasks = np.zeros((4, 3, 12), np.float32)
    tasks[:, :, 0] = [[1, 2, 3], [1, 2, 3], [1, 2, 4], [1, 2, 3]]
    tasks[3, 0, 7] = 1.0  # another current task: the same workflow
    links = np.zeros((4, 3, 3), np.float32)
    links[1, 1, 0] = 5.0  # another link: another workflow
    g = workflow_groups({"dag_tasks": tasks, "dag_links": links})
    assert g[0] == g[3] and len({g[0], g[1], g[2]}) == 3


def test_groups_of_rows_number_templates_in_byte_order(monkeypatch) -> None:
    """Ids follow the keys' byte order (as ``np.unique`` numbered them before the keys were
    built in slices): the same workflows kept aside by a rerun of an earlier config."""
    from rlsched.train import departures

    monkeypatch.setattr(departures, "INPUT_BATCH", 2)  # keys built across several slices
    rng = np.random.default_rng(0)
    tasks = rng.integers(0, 3, (9, 4, 12)).astype(np.float32)
    links = rng.integers(0, 2, (9, 4, 4)).astype(np.float32)
    tasks[5], links[5] = tasks[1], links[1]
    rows = np.array([8, 1, 5, 0, 3])
    key = np.concatenate([tasks[rows][:, :, :4].reshape(5, -1), links[rows].reshape(5, -1)], 1)
    _, expected = np.unique(key.view(np.dtype((np.void, key.shape[1] * 4))), return_inverse=True)
    got = workflow_groups({"dag_tasks": tasks, "dag_links": links}, rows)
    assert got.tolist() == np.asarray(expected).reshape(-1).tolist()
    assert got[1] == got[2]


def test_a_rerun_reuses_the_labels(departure_run, tmp_path, monkeypatch) -> None:
    import shutil

    from rlsched.train import imitation

    run = tmp_path / "again"
    shutil.copytree(departure_run / "teacher", run / "teacher")
    monkeypatch.setattr(imitation, "collect", lambda *a, **k: pytest.fail("collected again"))
    train(TrainConfig.from_dict(dict(TINY_DEPARTURES)), run, progress=False)
    a = json.loads((departure_run / "run.json").read_text())
    b = json.loads((run / "run.json").read_text())
    assert a["threshold_choice"] == b["threshold_choice"]  # the same labels, the same seed


def test_labels_of_another_config_are_refused_and_older_ones_adopted(
    departure_run, tmp_path, monkeypatch
) -> None:
    """A run folder's chunks say what made them; a config whose teacher or workloads differ
    would reuse labels it would not have collected: refused, naming the field. Chunks from
    before the record (none beside them) are taken as the config's, and the record written."""
    import shutil

    from rlsched.errors import ConfigError
    from rlsched.train import imitation

    run = tmp_path / "other"
    shutil.copytree(departure_run / "teacher", run / "teacher")
    teacher = dict(TINY_DEPARTURES["expert_teacher"], significance=2)
    with pytest.raises(ConfigError, match="expert_teacher"):
        train(TrainConfig.from_dict(dict(TINY_DEPARTURES, expert_teacher=teacher)), run,
              progress=False)  # fmt: skip
    with pytest.raises(ConfigError, match="seed: 0"):
        train(TrainConfig.from_dict(dict(TINY_DEPARTURES, seed=5)), run, progress=False)
    (run / "teacher" / LABELS_RECORD).unlink()  # as a folder made before the record
    monkeypatch.setattr(imitation, "collect", lambda *a, **k: pytest.fail("collected again"))
    train(TrainConfig.from_dict(dict(TINY_DEPARTURES)), run, progress=False)
    made = json.loads((run / "teacher" / LABELS_RECORD).read_text())
    assert made == json.loads((departure_run / "teacher" / LABELS_RECORD).read_text())


def test_relative_data_reaches_the_saved_net_and_its_play(departure_run, tmp_path) -> None:
    """The same labels refitted with ``departure_relative_data``: the file says so, and the
    policy plays from it."""
    import shutil

    from rlsched.agents.dag_net import DagScorer
    from rlsched.policies.departures import DeparturePolicy

    run = tmp_path / "relative"
    shutil.copytree(departure_run / "teacher", run / "teacher")
    cfg = dict(TINY_DEPARTURES, departure_relative_data=True)
    train(TrainConfig.from_dict(cfg), run, progress=False)
    assert DagScorer.load(run / "model" / "dagnet.npz").relative_data
    assert not DagScorer.load(departure_run / "model" / "dagnet.npz").relative_data
    rec = json.loads((run / "run.json").read_text())
    assert rec["config"]["departure_relative_data"] is True
    from rlsched.evaluate import make_env

    env = make_env(cfg["env_id"], cfg["eval_dataset"], **cfg["env_kwargs"])
    pol = DeparturePolicy(run / "model", threshold=-np.inf)  # departs wherever it can
    pol.check_env(env.unwrapped)
    obs, _ = env.reset(seed=0)
    done, decisions = False, 0
    while not done:
        mask = env.unwrapped.action_masks()
        assert np.isfinite(pol.scores(obs, int(np.argmax(mask)))).all()
        obs, _, term, trunc, _ = env.step(pol.act(obs, mask))
        done, decisions = term or trunc, decisions + 1
    assert 0 < pol.departures <= decisions


def test_a_plan_model_reads_pefts_schedule_where_the_env_gives_it(tmp_path) -> None:
    """``departure_plan``: the labels hold the env's ``dag_plan`` keys, the saved net reads
    them and the policy plays from them; an env without them is refused, by the trainer and
    by the policy."""
    pytest.importorskip("numba")
    from rlsched.agents.dag_net import DagScorer
    from rlsched.errors import PolicyError
    from rlsched.evaluate import make_env
    from rlsched.policies.departures import DeparturePolicy

    kwargs = dict(TINY_DEPARTURES["env_kwargs"], dag_plan=True)
    cfg = dict(TINY_DEPARTURES, departure_plan=True, env_kwargs=kwargs, imitation_episodes=6)
    with pytest.raises(ConfigError, match="dag_plan"):
        train(TrainConfig.from_dict(dict(cfg, env_kwargs=TINY_DEPARTURES["env_kwargs"])),
              tmp_path / "bare", progress=False)  # fmt: skip
    run = tmp_path / "plan"
    train(TrainConfig.from_dict(cfg), run, progress=False)
    scorer = DagScorer.load(run / "model" / "dagnet.npz")
    assert scorer.plan and scorer.num_servers() == 6
    pol = DeparturePolicy(run / "model", threshold=-np.inf)
    with pytest.raises(PolicyError, match="dag_plan"):
        pol.check_env(make_env(cfg["env_id"], cfg["eval_dataset"],
                               **TINY_DEPARTURES["env_kwargs"]).unwrapped)  # fmt: skip
    env = make_env(cfg["env_id"], cfg["eval_dataset"], **kwargs)
    pol.check_env(env.unwrapped)
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        mask = env.unwrapped.action_masks()
        assert np.isfinite(pol.scores(obs, int(np.argmax(mask)))).all()
        obs, _, term, trunc, _ = env.step(pol.act(obs, mask))
        done = term or trunc
    assert pol.departures > 0


@pytest.mark.parametrize(
    ("change", "message"),
    [({"imitation_policy": None}, "needs imitation_policy"),
     ({"env_kwargs": {"reward": "makespan"}}, "dag: true"),
     ({"departure_quantiles": [1.5]}, "departure_quantiles"),
     ({"departure_rounds": 0}, "departure_rounds"),
     ({"departure_target": "values"}, "departure_target"),
     ({"departure_gain_clip": 0.0}, "departure_gain_clip"),
     ({"departure_gain_floor": -0.1}, "departure_gain_floor")],
)  # fmt: skip
def test_config_refuses_what_the_recipe_cannot_run(change: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        TrainConfig.from_dict({**TINY_DEPARTURES, **change})


def _departing_copy(model, dest):
    """``model`` with its threshold at -inf: it departs wherever it can (a DAgger behaviour
    whose states leave the base's)."""
    import shutil

    shutil.copytree(model, dest)
    meta = json.loads((dest / "meta.json").read_text())
    (dest / "meta.json").write_text(json.dumps({**meta, "threshold": "-inf"}))
    return dest


def test_dagger_labels_the_students_states_joins_earlier_labels_and_keeps_a_warm_net(
    departure_run, tmp_path
) -> None:
    """``departure_behaviour`` acts while the teacher labels (its states leave the base's);
    ``departure_label_runs`` adds the earlier run's labels; ``init_model`` with no epochs
    keeps that net's weights and only chooses the threshold again."""
    from rlsched.agents.dag_net import DagScorer

    student = _departing_copy(departure_run / "model", tmp_path / "student")
    run = tmp_path / "dagger"
    cfg = dict(TINY_DEPARTURES, imitation_episodes=6, imitation_epochs=0,
               departure_behaviour=str(student), departure_label_runs=[str(departure_run)],
               init_model=str(departure_run / "model"), departure_quantiles=[0.5, 0.9])  # fmt: skip
    train(TrainConfig.from_dict(cfg), run, progress=False)
    rec = json.loads((run / "run.json").read_text())
    assert rec["teacher"]["episodes"] == 6 + 12 and rec["teacher"]["label_runs"] == [
        str(departure_run)
    ]
    assert rec["teacher"]["behaviour"] == str(student) and rec["fit"]["epochs"] == 0
    assert len(rec["threshold_choice"]) == 3  # two quantiles and never
    ours = Demonstrations.load(next((run / "teacher").glob("chunk*.npz")))
    base = Demonstrations.load(next((departure_run / "teacher").glob("chunk*.npz")))
    first = {k: v[: len(ours)] for k, v in base.obs.items()}
    assert np.array_equal(ours.obs["dag_tasks"][0], first["dag_tasks"][0])  # the same reset
    assert not np.array_equal(ours.obs["dag_tasks"], first["dag_tasks"])  # then its own states
    a = DagScorer.load(run / "model" / "dagnet.npz").w
    b = DagScorer.load(departure_run / "model" / "dagnet.npz").w
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_a_teacher_base_values_the_servers_under_the_students_play(
    departure_run, tmp_path
) -> None:
    """``departure_teacher_base``: the base still acts (the same states as the base run's), but
    the teacher's rollouts continue with the student, so its values of the servers differ."""
    student = _departing_copy(departure_run / "model", tmp_path / "student")
    run = tmp_path / "iteration"
    cfg = dict(TINY_DEPARTURES, imitation_episodes=6, imitation_epochs=0,
               departure_teacher_base=f"learned:{student}",
               init_model=str(departure_run / "model"), departure_quantiles=[0.5])  # fmt: skip
    train(TrainConfig.from_dict(cfg), run, progress=False)
    rec = json.loads((run / "run.json").read_text())
    assert rec["teacher"]["rollout_base"] == f"learned:{student}"
    assert rec["teacher"]["behaviour"] == "peft"
    ours = Demonstrations.load(next((run / "teacher").glob("chunk*.npz")))
    base = Demonstrations.load(next((departure_run / "teacher").glob("chunk*.npz")))
    n = len(ours)
    assert np.array_equal(ours.obs["dag_tasks"], base.obs["dag_tasks"][:n])  # PEFT's states
    assert ours.values is not None and base.values is not None
    same = np.isfinite(ours.values) == np.isfinite(base.values[:n])
    assert same.all()  # the same servers valued
    on = np.isfinite(ours.values)
    assert not np.allclose(ours.values[on], base.values[:n][on])  # under another play


def test_a_warm_start_is_kept_unless_an_epoch_beats_it(departure_run, tmp_path) -> None:
    """Epochs at a step size that only ruins the net: the kept net is the start's."""
    import shutil

    from rlsched.agents.dag_net import DagScorer

    run = tmp_path / "warm"
    shutil.copytree(departure_run / "teacher", run / "teacher")
    cfg = dict(TINY_DEPARTURES, init_model=str(departure_run), imitation_lr=1e4,
               imitation_epochs=2, departure_patience=2)  # fmt: skip
    train(TrainConfig.from_dict(cfg), run, progress=False)
    assert json.loads((run / "run.json").read_text())["fit"]["epochs"] == 2
    a = DagScorer.load(run / "model" / "dagnet.npz").w
    b = DagScorer.load(departure_run / "model" / "dagnet.npz").w
    assert all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize(
    ("change", "message"),
    [({"departure_hidden": 32}, "width, rounds"),
     ({"departure_relative_data": True}, "relative data"),
     ({"init_model": None, "departure_label_runs": ["nowhere"]}, "no teacher labels")],
)  # fmt: skip
def test_a_start_net_or_label_run_that_does_not_fit_is_refused(
    departure_run, tmp_path, monkeypatch, change: dict, message: str
) -> None:
    from rlsched.train import imitation

    monkeypatch.setattr(imitation, "collect", lambda *a, **k: pytest.fail("collected"))
    cfg = {**TINY_DEPARTURES, "init_model": str(departure_run), **change}
    with pytest.raises(ConfigError, match=message):
        train(TrainConfig.from_dict(cfg), tmp_path / "refused", progress=False)


def _with_threshold(model, dest, threshold, scale: float = 1.0):
    """A copy of ``model`` with another threshold, its scores times ``scale`` (the head's last
    layer scaled: another network, whose scores are known from the first's)."""
    import shutil

    shutil.copytree(model, dest)
    meta = json.loads((dest / "meta.json").read_text())
    (dest / "meta.json").write_text(json.dumps({**meta, "threshold": threshold}))
    with np.load(dest / "dagnet.npz") as z:
        w = {k: z[k] for k in z.files}
    for k in ("head.4.weight", "head.4.bias"):
        w[k] = w[k] * np.float32(scale)
    np.savez(dest / "dagnet.npz", **w)
    return dest


def test_members_join_into_one_model_scoring_their_mean_less_their_thresholds(
    departure_run, tmp_path
) -> None:
    """``departure_members``: nothing collected or fitted; the joined model (and its zoo
    export) scores each server as the mean over the members of their score less their
    threshold, and its threshold is chosen among ``departure_thresholds`` and never."""
    from rlsched.agents.export import export_model
    from rlsched.evaluate import make_env
    from rlsched.policies.departures import DeparturePolicy

    a = _with_threshold(departure_run / "model", tmp_path / "a", 0.01)
    b = _with_threshold(departure_run / "model", tmp_path / "b", -0.02, scale=3.0)
    run = tmp_path / "joined"
    cfg = dict(TINY_DEPARTURES, departure_members=[str(a), str(b)],
               departure_thresholds=[0.0, 0.05])  # fmt: skip
    train(TrainConfig.from_dict(cfg), run, progress=False)
    rec = json.loads((run / "run.json").read_text())
    assert not (run / "teacher").exists() and "fit" not in rec
    assert [r["threshold"] for r in rec["threshold_choice"]] == [0.0, 0.05, "inf"]
    assert rec["joined"] == [{"model": str(a), "threshold": 0.01},
                             {"model": str(b), "threshold": -0.02}]  # fmt: skip
    export_model(run, tmp_path / "exported")
    assert sorted(p.name for p in (tmp_path / "exported").iterdir()) == [
        "dagnet.npz", "member1.npz", "meta.json"]  # fmt: skip
    joined = DeparturePolicy(tmp_path / "exported", threshold=-0.7)  # departs now and then
    one = DeparturePolicy(a)
    assert joined.describe()["networks"] == 2 and one.describe()["networks"] == 1
    env = make_env(TINY_DEPARTURES["env_id"], TINY_DEPARTURES["eval_dataset"],
                   **TINY_DEPARTURES["env_kwargs"])  # fmt: skip
    joined.check_env(env.unwrapped)
    assert (joined._stacked is not None) == joined.scorer.compiled
    obs, _ = env.reset(seed=3)
    done, decisions = False, 0
    while not done:
        mask = env.unwrapped.action_masks()
        base = int(joined._base(obs, mask))
        z = one.scores(obs, base)
        want = ((z - 0.01) + (3.0 * z + 0.02)) / 2  # b scores 3z
        got = joined.scores(obs, base)
        assert np.allclose(got, want, atol=1e-5)
        if joined._stacked is not None:  # compiled: one call, the same numbers as the loop
            stacked, joined._stacked = joined._stacked, None
            assert np.array_equal(joined.scores(obs, base), got)
            joined._stacked = stacked
        cand = np.where(mask, want, -np.inf)
        cand[base] = -np.inf
        best = int(np.argmax(cand))
        expect = best if mask.sum() > 1 and cand[best] >= -0.7 else base
        assert joined.act(obs, mask) == expect
        obs, _, term, trunc, _ = env.step(expect)
        done, decisions = term or trunc, decisions + 1
    assert 0 < joined.departures < decisions


def test_one_member_joins_as_its_network_less_its_threshold(departure_run, tmp_path) -> None:
    """``departure_members`` of one model: its network alone, each score less the model's own
    threshold, the threshold of that chosen again (a recipe's member on its own)."""
    from rlsched.agents.export import export_model
    from rlsched.evaluate import make_env
    from rlsched.policies.departures import DeparturePolicy

    a = _with_threshold(departure_run / "model", tmp_path / "a", 0.01)
    run = tmp_path / "alone"
    cfg = dict(TINY_DEPARTURES, departure_members=[str(a)], departure_thresholds=[-0.7])
    train(TrainConfig.from_dict(cfg), run, progress=False)
    rec = json.loads((run / "run.json").read_text())
    assert rec["joined"] == [{"model": str(a), "threshold": 0.01}]
    assert [r["threshold"] for r in rec["threshold_choice"]] == [-0.7, "inf"]
    export_model(run, tmp_path / "exported")
    assert sorted(p.name for p in (tmp_path / "exported").iterdir()) == ["dagnet.npz",
                                                                        "meta.json"]
    alone = DeparturePolicy(tmp_path / "exported", threshold=-0.7)
    one = DeparturePolicy(a)
    assert alone.describe()["networks"] == 1
    env = make_env(TINY_DEPARTURES["env_id"], TINY_DEPARTURES["eval_dataset"],
                   **TINY_DEPARTURES["env_kwargs"])  # fmt: skip
    obs, _ = env.reset(seed=3)
    done = False
    while not done:
        mask = env.unwrapped.action_masks()
        base = int(alone._base(obs, mask))
        z = one.scores(obs, base)
        assert np.array_equal(alone.scores(obs, base), z - np.float32(0.01))
        obs, _, term, trunc, _ = env.step(alone.act(obs, mask))
        done = term or trunc


@pytest.mark.parametrize(
    ("change", "message"),
    [({"departure_thresholds": []}, "needs departure_thresholds"),
     ({"init_model": "x"}, "belong to a fit"),
     ({"departure_familiar": True}, "belong to a fit"),
     ({"departure_thresholds": [float("inf")]}, "finite numbers")],
)  # fmt: skip
def test_config_refuses_members_it_cannot_join(change: dict, message: str) -> None:
    cfg = {**TINY_DEPARTURES, "departure_members": ["x", "y"], "departure_thresholds": [0.0]}
    with pytest.raises(ConfigError, match=message):
        TrainConfig.from_dict({**cfg, **change})


@pytest.mark.parametrize(
    ("member", "message"),
    [("never", "never to depart"), ("joined", "joins networks itself"),
     ("pods", "is a maskable_ppo model")],
)  # fmt: skip
def test_a_member_that_cannot_join_is_refused(departure_run, tmp_path, member, message) -> None:
    ok = _with_threshold(departure_run / "model", tmp_path / "ok", 0.01)
    other = {
        "never": lambda: _with_threshold(departure_run / "model", tmp_path / "n", "inf"),
        "joined": lambda: _joined_copy(ok, tmp_path / "j"),
        "pods": lambda: "zoo/pod-rebalancing-anchored-ppo",
    }[member]()
    cfg = dict(TINY_DEPARTURES, departure_members=[str(ok), str(other)],
               departure_thresholds=[0.0])  # fmt: skip
    with pytest.raises(ConfigError, match=message):
        train(TrainConfig.from_dict(cfg), tmp_path / "refused", progress=False)


def _joined_copy(model, dest):
    """``model`` with a meta that says it joins networks (of which it holds one)."""
    import shutil

    shutil.copytree(model, dest)
    meta = json.loads((dest / "meta.json").read_text())
    members = [{"weights": "dagnet.npz", "offset": 0.0}]
    (dest / "meta.json").write_text(json.dumps({**meta, "members": members}))
    return dest


def test_train_datasets_without_every_dataset_are_refused() -> None:
    """The teacher's episodes play ``dataset`` alone unless ``imitation_every_dataset``, so a
    list of other workloads would be ignored without a word: refused instead."""
    other = ["synthetic:placement?workflows=5&tasks=4&seed=99"]
    with pytest.raises(ConfigError, match="imitation_every_dataset"):
        TrainConfig.from_dict(dict(TINY_DEPARTURES, train_datasets=other))
    cfg = TrainConfig.from_dict(dict(TINY_DEPARTURES, train_datasets=other,
                                     imitation_every_dataset=True))  # fmt: skip
    assert cfg.train_datasets == other


def test_a_familiar_model_carries_the_profiles_of_every_workflow_it_learned_from(
    departure_run, tmp_path
) -> None:
    """``departure_familiar``: the datasets of the config and of its label runs, every
    workflow's profile, and the radius the guarded policy departs within."""
    from rlsched.policies.departures import DeparturePolicy
    from rlsched.policies.familiarity import FEATURES

    other = "synthetic:placement?workflows=3&tasks=6&seed=98"
    cfg = dict(TINY_DEPARTURES, train_datasets=[other], imitation_every_dataset=True,
               imitation_episodes=2, departure_label_runs=[str(departure_run)],
               departure_familiar=True)  # fmt: skip
    train(TrainConfig.from_dict(cfg), tmp_path / "run", progress=False)
    meta = json.loads((tmp_path / "run/model/meta.json").read_text())
    record = meta["familiar"]
    # the label run's dataset is this config's own: counted once
    assert record["datasets"] == [TINY_DEPARTURES["dataset"], other]
    assert np.array(record["reference"]).shape == (20 + 3, len(FEATURES))
    assert record["radius"] > 0
    assert DeparturePolicy(tmp_path / "run/model").guard is not None
    assert "open" not in record  # not vetted: every workflow within the radius is open
    # the threshold was chosen as the guarded policy plays: each row counts what it kept
    assert all("guarded" in row for row in meta["threshold_choice"])
    import shutil  # labels without the run record that says which workflows they played

    shutil.copytree(departure_run / "teacher", tmp_path / "bare/teacher")
    with pytest.raises(ConfigError, match=r"run\.json"):
        train(TrainConfig.from_dict(dict(cfg, departure_label_runs=[str(tmp_path / "bare")])),
              tmp_path / "again", progress=False)  # fmt: skip


def test_vetting_closes_the_workflows_near_which_departures_did_not_pay(
    departure_run, tmp_path
) -> None:
    """``departure_vet_datasets``: the guarded model plays new workloads beside its base, and
    each training workflow near them is open only where the departures paid there."""
    from rlsched.policies.familiarity import Familiarity

    vet_data = ["synthetic:placement?workflows=3&tasks=8&seed=41",
                "synthetic:placement?workflows=3&tasks=8&seed=42"]  # fmt: skip
    cfg = dict(TINY_DEPARTURES, train_datasets=["synthetic:placement?workflows=3&tasks=6&seed=98"],
               imitation_every_dataset=True, imitation_episodes=2,
               departure_label_runs=[str(departure_run)], departure_familiar=True,
               departure_vet_datasets=vet_data, departure_vet_episodes=3,
               departure_vet_seed=500)  # fmt: skip
    train(TrainConfig.from_dict(cfg), tmp_path / "run", progress=False)
    rec = json.loads((tmp_path / "run/run.json").read_text())
    meta = json.loads((tmp_path / "run/model/meta.json").read_text())
    guard = Familiarity.from_meta(meta["familiar"])
    rows = rec["vetting"]
    assert [r["dataset"] for r in rows] == vet_data and all(len(r["values"]) == 3 for r in rows)
    handed: dict[int, list[float]] = {}
    for r in rows:
        for k in {k for k in r["nearest"] if k is not None}:
            handed.setdefault(k, []).extend(r["values"])
    assert handed  # the new workloads lie near some training workflows
    want = [k in handed and np.mean(handed[k]) < 0 for k in range(len(guard.reference))]
    assert guard.open.tolist() == want
    with pytest.raises(ConfigError, match="departure_familiar"):
        TrainConfig.from_dict(dict(cfg, departure_familiar=False))
    with pytest.raises(ConfigError, match="test set"):
        TrainConfig.from_dict(dict(cfg, departure_vet_datasets=["wfinstances:blast-43"],
                                   env_id="rlsched/WorkflowOffloading-v0"))  # fmt: skip
