"""The whole-workflow network: its inputs, numpy forward = torch forward, the fit."""

import numpy as np
import pytest
import torch

from rlsched.agents.dag_net import (
    DagNet,
    DagScorer,
    dag_inputs,
    dag_inputs_of_rows,
    data_scale,
    fit_dag_net,
    torch_scores,
)
from rlsched.agents.node_numpy import symlog
from rlsched.envs.workflow_offloading import WorkflowOffloadingEnv
from rlsched.policies.offloading import peft_choice


def _states(episodes: int = 3, plan: bool = False) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """PEFT's observations on random small workflows (``plan``: with PEFT's schedule)."""
    if plan:
        pytest.importorskip("numba")  # the env computes the schedule compiled
    env = WorkflowOffloadingEnv(
        dataset="synthetic:placement?workflows=6&tasks=8&seed=15", num_workflows=1,
        task_order="rank", lookahead=True, finish_gap=True, optimistic_cost=True,
        contention=True, dag=True, dag_plan=plan)  # fmt: skip
    obs_l, base = [], []
    for seed in range(episodes):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            a = peft_choice(obs, env.action_masks())
            obs_l.append(obs)
            base.append(a)
            obs, _, done, _, _ = env.step(a)
    return {k: np.stack([o[k] for o in obs_l]) for k in obs_l[0]}, np.array(base)


def test_inputs_mark_the_current_task_and_all_its_descendants() -> None:
    obs, base = _states(1)
    x = dag_inputs(obs, base)
    links = obs["dag_links"] > 0  # [child, parent]
    for i in range(len(base)):
        cur = int(np.flatnonzero(obs["dag_tasks"][i, :, 7])[0])
        want, front = set(), {cur}
        while front:  # every task reachable along child links
            front = {c for p in front for c in np.flatnonzero(links[i][:, p])} - want
            want |= front
        assert set(np.flatnonzero(x["desc"][i])) == want
        assert x["cur"][i].sum() == 1 and x["cur"][i, cur] == 1
    n = obs["dag_oct"].shape[2]
    # per server: 18 keys, the same less the base server's, task and subtree, one-hot, origin
    assert x["server"].shape == (len(base), n, 18 + 18 + 11 + n + 1)
    # the base's own server reads zero in the "less the base's" block
    assert np.allclose(x["server"][np.arange(len(base)), base, 18:36], 0.0)


@pytest.mark.parametrize(("relative_data", "plan"), [(False, False), (True, False), (True, True)])
def test_numpy_forward_equals_torch_and_survives_a_save(
    tmp_path, relative_data: bool, plan: bool
) -> None:
    obs, base = _states(2, plan)
    x = dag_inputs(obs, base, relative_data, plan)
    torch.manual_seed(3)
    net = DagNet(x["task"].shape[2], x["server"].shape[2], hidden=16, rounds=2,
                 relative_data=relative_data, plan=plan)  # fmt: skip
    with torch.no_grad():
        for p in net.parameters():
            p.add_(torch.randn_like(p) * 0.1)  # layer norms' weights away from 1 too
        net.task_mu.normal_()
        net.server_sd.uniform_(0.5, 2.0)
    net.save(tmp_path / "n.npz")
    scorer = DagScorer.load(tmp_path / "n.npz")
    batch = scorer.scores(x)
    assert np.allclose(batch, torch_scores(net, x), atol=1e-5)
    assert scorer.num_servers() == obs["dag_oct"].shape[2]
    assert scorer.relative_data == relative_data and scorer.plan == plan
    # the serving path (one observation, inputs never assembled) gives the same scores, compiled
    # (numba, where installed) and in numpy
    paths = [True, False] if scorer.compiled else [False]
    for compiled in paths:
        scorer.compiled = compiled
        for i in range(len(base)):
            one = scorer.score_one({k: v[i] for k, v in obs.items()}, int(base[i]))
            assert np.allclose(one, batch[i], atol=1e-4), (compiled, i)


def test_relative_data_divides_every_data_size_by_the_workflows_mean_data_out() -> None:
    obs, base = _states(1)
    x, rel = dag_inputs(obs, base), dag_inputs(obs, base, relative_data=True)
    scale = data_scale(obs["dag_tasks"])
    real = obs["dag_tasks"][..., 11] > 0
    want = (obs["dag_tasks"][..., 3] * real).sum(1) / real.sum(1)
    assert np.allclose(scale, want) and (scale > 1.0).all()  # bytes: far above one
    # data out (column 3) and data in (the last task column) read sizes over the scale
    assert np.allclose(rel["task"][..., 3], symlog(obs["dag_tasks"][..., 3] / scale[:, None]),
                       atol=1e-5)  # fmt: skip
    assert np.allclose(rel["task"][..., -1],
                       symlog(obs["dag_links"].sum(2) / scale[:, None]), atol=1e-5)  # fmt: skip
    # the current task's data in and out (the server rows' task block), nothing else changed
    g0 = 18 + 18
    assert np.allclose(rel["server"][..., g0 + 3],
                       symlog(obs["task"][:, 3] / scale)[:, None], atol=1e-5)  # fmt: skip
    same = np.ones(x["server"].shape[2], bool)
    same[[g0 + 3, g0 + 4]] = False
    assert np.array_equal(rel["server"][..., same], x["server"][..., same])


def test_fit_learns_a_rule_it_can_see_and_keeps_the_best_epoch() -> None:
    """Label the server with the lowest optimistic cost among the others: a fit must rank it
    first on decisions it was not fitted on, far above chance."""
    obs, base = _states(8)
    x = dag_inputs(obs, base)
    n = len(base)
    on = np.ones((n, obs["dag_oct"].shape[2]), bool)
    on[np.arange(n), base] = False
    key = np.where(on, obs["node_oct"], np.inf)
    y = np.zeros(on.shape, np.float32)
    y[np.arange(n), key.argmin(1)] = 1.0
    fit, held = np.arange(n)[: n * 3 // 4], np.arange(n)[n * 3 // 4 :]
    net, curve = fit_dag_net(x, y, on, fit, held, epochs=60, patience=60, hidden=32)
    assert len(curve) == 60 and min(curve) < curve[0]
    s = np.where(on, torch_scores(net, x), -np.inf)
    hit = (s.argmax(1) == key.argmin(1))[held].mean()
    assert hit > 1.5 / on[held].sum(1).mean()  # chance is one in the candidates
    # early stop: the kept weights are the epoch of least held-out loss
    with torch.no_grad():
        z = net({k: torch.as_tensor(v[held]) for k, v in x.items()})
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            z, torch.as_tensor(y[held]), reduction="none"
        )
        loss = float((loss * torch.as_tensor(on[held], dtype=torch.float32)).sum() / on[held].sum())
    assert loss == pytest.approx(min(curve), rel=1e-4)


def test_plan_inputs_hold_pefts_schedule_and_leave_the_rest_alone() -> None:
    obs, base = _states(1, plan=True)
    x, p = dag_inputs(obs, base), dag_inputs(obs, base, plan=True)
    n = obs["dag_oct"].shape[2]
    f, g = x["task"].shape[2], x["server"].shape[2]
    assert p["task"].shape[2] == f + n + 1 and p["server"].shape[2] == g + 4
    assert np.array_equal(p["task"][..., :f], x["task"]) and np.array_equal(
        p["server"][..., :g], x["server"])  # fmt: skip
    real = obs["dag_tasks"][..., 11] > 0
    planned = obs["dag_plan"][..., 0]
    # every real task has a server in the plan, and its one-hot names it
    assert (planned[real] >= 0).all() and (planned[~real] == -1).all()
    onehot = p["task"][..., f : f + n]
    assert np.array_equal(onehot.argmax(-1)[real], planned[real].astype(int))
    assert (onehot[~real] == 0).all()
    assert np.allclose(p["task"][..., -1], symlog(obs["dag_plan"][..., 1]), atol=1e-6)
    # the base's own server reads zero in the plan's "less the base's" block
    assert np.allclose(p["server"][np.arange(len(base)), base, g + 2 :], 0.0)


def test_inputs_of_rows_built_in_batches_are_the_inputs_of_those_rows() -> None:
    obs, base = _states(2, plan=True)
    rows = np.arange(len(base))[::-2]  # a subset, out of order
    whole = dag_inputs({k: v[rows] for k, v in obs.items()}, base[rows], True, True)
    parts = dag_inputs_of_rows(obs, rows, base[rows], True, True, batch=5)
    assert whole.keys() == parts.keys()
    for k in whole:
        assert parts[k].dtype == np.float32 and np.array_equal(parts[k], whole[k])
    none = dag_inputs_of_rows(obs, rows[:0], base[:0], True, True)
    assert {k: v.shape[1:] for k, v in none.items()} == {k: v.shape[1:] for k, v in whole.items()}
    assert all(len(v) == 0 for v in none.values())


def test_the_huber_objective_regresses_the_scores_on_their_targets() -> None:
    """``objective="huber"``: the scores approach a real-valued target per server (here each
    candidate's optimistic cost, scaled), ranking servers as the target does on decisions the
    fit did not see."""
    obs, base = _states(8)
    x = dag_inputs(obs, base)
    n = len(base)
    on = np.ones((n, obs["dag_oct"].shape[2]), bool)
    on[np.arange(n), base] = False
    y = (-0.05 * np.log1p(obs["node_oct"])).astype(np.float32)
    fit, held = np.arange(n)[: n * 3 // 4], np.arange(n)[n * 3 // 4 :]
    net, curve = fit_dag_net(x, y, on, fit, held, epochs=40, patience=40, hidden=32,
                             objective="huber")  # fmt: skip
    assert min(curve) < curve[0] / 4
    s = torch_scores(net, x)[held][on[held]]
    assert np.corrcoef(s, y[held][on[held]])[0, 1] > 0.8


def test_the_compiled_forward_is_the_numpy_one_to_float32_rounding() -> None:
    """Over a trained-size net with every input block (relative data, PEFT's schedule), the
    compiled score of each server is the numpy one to float32 rounding, so a departure's
    decision (the top score against a threshold) is the same but for ties at that level."""
    pytest.importorskip("numba")
    obs, base = _states(3, plan=True)
    x = dag_inputs(obs, base, True, True)
    torch.manual_seed(5)
    net = DagNet(x["task"].shape[2], x["server"].shape[2], hidden=64, rounds=3,
                 relative_data=True, plan=True)  # fmt: skip
    net.task_mu[:], net.task_sd[:] = torch.as_tensor(x["task"].mean((0, 1))), 1.0
    scorer = DagScorer({k: v.detach().numpy() for k, v in net.state_dict().items()}
                       | {"__dims__": np.array([x["task"].shape[2], x["server"].shape[2], 64, 3,
                                                1, 1])})  # fmt: skip
    assert scorer.compiled
    for i in range(len(base)):
        one = {k: v[i] for k, v in obs.items()}
        fast = scorer.score_one(one, int(base[i]))
        scorer.compiled = False
        slow = scorer.score_one(one, int(base[i]))
        scorer.compiled = True
        assert fast.dtype == np.float32 and np.allclose(fast, slow, rtol=1e-5, atol=1e-5), i


def _scorer(x: dict, hidden: int, seed: int) -> DagScorer:
    torch.manual_seed(seed)
    net = DagNet(x["task"].shape[2], x["server"].shape[2], hidden=hidden, rounds=3,
                 relative_data=True, plan=True)  # fmt: skip
    dims = np.array([x["task"].shape[2], x["server"].shape[2], hidden, 3, 1, 1])
    return DagScorer({k: v.detach().numpy() for k, v in net.state_dict().items()}
                     | {"__dims__": dims})  # fmt: skip


def test_networks_of_one_shape_score_as_an_ensemble_in_one_compiled_call() -> None:
    """``stacked_kernel``: the mean of each network's score less its offset, the same float32
    numbers as scoring them one by one; refused (None) for networks of other shapes."""
    pytest.importorskip("numba")
    from rlsched.agents.dag_net import stacked_kernel

    obs, base = _states(3, plan=True)
    x = dag_inputs(obs, base, True, True)
    nets = [_scorer(x, 64, 1), _scorer(x, 64, 2), _scorer(x, 64, 3)]
    offsets = [0.01, -0.02, 0.5]
    kernel, weights = stacked_kernel(nets, offsets) or pytest.fail("not stacked")
    assert stacked_kernel([nets[0], _scorer(x, 32, 4)], [0.0, 0.0]) is None
    for i in range(len(base)):
        one = {k: v[i] for k, v in obs.items()}
        want = np.zeros(len(one["node_origin"]), np.float32)
        for s, o in zip(nets, offsets, strict=True):
            want = (want + s.score_one(one, int(base[i]))) - np.float32(o)
        want = want * np.float32(1 / 3)
        inputs = nets[0].kernel_inputs(one)
        assert np.array_equal(kernel(*inputs, int(base[i]), True, True, *weights), want), i
