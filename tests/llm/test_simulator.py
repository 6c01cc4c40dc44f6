"""The serving simulator: latency decomposition, batching and memory limits, routing,
conservation, determinism, SLO attainment, windows and the timeline."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlsched.core.llm.cluster import GIB, TAGS, Instance, InstanceConfig, get_model
from rlsched.core.llm.perf_model import PerfModel
from rlsched.core.llm.simulator import MIXED_BATCH_FACTOR, LLMSimulator
from rlsched.core.llm.trace import LLMRequests
from rlsched.data.azure_llm import load_requests

from .helpers import requests, start_state

M = "llama2-70b"


def kv_transfer_s(tokens: int, gib_s: float = 200.0) -> float:
    return tokens * get_model(M).kv_bytes_per_token / (gib_s * GIB)


def test_single_request_latency_decomposition():
    """TTFT = prefill (the first token); then the KV transfer and o - 1 decode iterations."""
    pm = PerfModel.load()
    p, o, t0 = 1000, 50, 2.0
    sim = LLMSimulator(requests((t0, p, o)), start_state(1, 1, kv_link_latency_s=0.001))
    sim.run()
    ttft = pm.prompt_time(p, M, "h100-80gb", 8)
    xfer = kv_transfer_s(p + 1) + 0.001
    decode = (o - 1) * pm.token_time(1, M, "a100-80gb", 8)
    tab = sim.request_table()
    assert tab["first_token"][0] - t0 == pytest.approx(ttft, rel=1e-12)
    assert tab["finish"][0] - t0 == pytest.approx(ttft + xfer + decode, rel=1e-12)
    assert tab["tbt"][0] == pytest.approx((xfer + decode) / (o - 1), rel=1e-12)
    res = sim.results()
    assert res["ttft_p50"] == pytest.approx(ttft, rel=1e-12)
    assert res["e2e_p50"] == pytest.approx(ttft + xfer + decode, rel=1e-12)
    assert res["tbt_p50"] == pytest.approx((xfer + decode) / (o - 1), rel=1e-12)
    # alone on an idle cluster, every slowdown is 1 and the SLO is met
    assert res["slo_attainment"] == 1.0 and res["slo_met"]
    for c in res["slo_checks"].values():
        assert c["slowdown"] == pytest.approx(1.0)


def test_one_token_request_ends_at_prefill_and_mixed_has_no_transfer():
    pm = PerfModel.load()
    sim = LLMSimulator(requests((0.0, 300, 1), (100.0, 300, 10)), start_state(0, 0, mixed=1))
    sim.run()
    tab = sim.request_table()
    pt = pm.prompt_time(300, M, "a100-80gb", 8)
    assert tab["finish"][0] == tab["first_token"][0] == pytest.approx(pt)
    assert tab["token_instance"][0] == -1
    e2e = pt + 9 * pm.token_time(1, M, "a100-80gb", 8)
    assert tab["finish"][1] - 100.0 == pytest.approx(e2e, rel=1e-12)
    tbt = sim.window_stats(-1.0)["tbt"]  # in completion order
    assert tbt[0] == 0.0 and tbt[1] == pytest.approx(pm.token_time(1, M, "a100-80gb", 8))


def test_router_fewest_pending_tokens_and_least_memory():
    sim = LLMSimulator(requests((0.0, 500, 20)), start_state(3, 3))
    ps = [i for i in sim.instances if i.tag == "prompt"]
    ts = [i for i in sim.instances if i.tag == "token"]
    for inst, v in zip(ps, (700, 200, 900), strict=True):
        inst.sched_pending_tokens = v
    for inst, v in zip(ts, (5000, 9000, 1000), strict=True):
        inst.sched_memory_tokens = v
    pi, ti = sim._route(0)
    assert pi is ps[1] and ti is ts[2]


def test_router_behaviour_on_simultaneous_arrivals():
    sim = LLMSimulator(
        requests((0.0, 2000, 5), (0.0, 100, 5), (0.0, 100, 2500), (0.0, 50, 5)), start_state(2, 2)
    )
    sim.run()
    tab = sim.request_table()
    pi, ti = tab["prompt_instance"], tab["token_instance"]
    assert pi[1] != pi[0] and pi[2] == pi[1] and pi[3] == pi[1]  # the short queue takes them
    # the token side balances committed KV (prompt + output): 2005 | 105, 2005 | 2705, then r3
    assert ti[1] != ti[0] and ti[2] == ti[1] and ti[3] == ti[0]


def run_instrumented(reqs, ss, **kw):
    seen = {"iterations": 0, "prefill_tokens_max": 0, "decode_batch_max": 0}
    errors = []

    def hook(inst, n_pre, pre_tokens, n_dec, k, dt):
        cfg = inst.config
        seen["iterations"] += k
        seen["prefill_tokens_max"] = max(seen["prefill_tokens_max"], pre_tokens)
        seen["decode_batch_max"] = max(seen["decode_batch_max"], n_dec)
        if n_pre + n_dec > cfg.max_batch_size:
            errors.append(("batch size", inst.id, n_pre, n_dec))
        at_limit = sum(sim._npre[r] >= cfg.max_preemptions for r in inst.running)
        if pre_tokens + n_dec > cfg.max_batch_tokens and not (n_pre == 1 and n_dec <= at_limit):
            errors.append(("batch tokens", inst.id, n_pre, pre_tokens, n_dec))
        if inst.tag == "prompt" and n_dec:
            errors.append(("decode on a prompt instance", inst.id))
        if inst.tag == "token" and n_pre:
            errors.append(("prefill on a token instance", inst.id))
        if inst.kv_used + n_dec * k > inst.kv_capacity or inst.kv_used < 0:
            errors.append(("kv", inst.id, inst.kv_used, n_dec, k, inst.kv_capacity))

    sim = LLMSimulator(reqs, ss, on_iteration=hook, **kw)
    sim.run()
    return sim, seen, errors


def assert_conserved(sim):
    res = sim.results()
    assert res["requests"] + res["dropped"] == res["total_requests"]
    assert res["unfinished"] == 0 and sim.done
    tab = sim.request_table()
    done = tab["status"] == 1
    assert np.all(tab["finish"][done] >= tab["first_token"][done])
    assert np.all(tab["first_token"][done] >= tab["arrival"][done])
    for inst in sim.instances:
        assert inst.kv_used == 0 and inst.sched_memory_tokens == 0
        assert inst.sched_pending_tokens == 0 and inst.idle_and_empty


def test_batching_limits_are_respected():
    cfg = InstanceConfig(max_batch_size=4, max_batch_tokens=1024)
    reqs = load_requests("conv", rate_scale=3.0, duration=60.0)
    sim, seen, errors = run_instrumented(reqs, start_state(1, 1, prompt_cfg=cfg, token_cfg=cfg))
    assert errors == []
    assert seen["decode_batch_max"] == 4 and seen["prefill_tokens_max"] > 1024  # a long prompt
    assert_conserved(sim)


def test_kv_capacity_is_never_exceeded_and_preemption_happens():
    """Tensor parallelism 2 leaves 12.9k KV tokens per decode instance: memory runs out."""
    conv = load_requests("conv", rate_scale=2.0, duration=120.0)
    reqs = LLMRequests.from_arrays(  # plus two requests that can never fit
        np.r_[conv.arrival, 30.0, 60.0],
        np.r_[conv.prompt_tokens, 13_500, 9_000],
        np.r_[conv.output_tokens, 10, 5_000],
    )
    cfg = InstanceConfig(max_preemptions=2)
    sim, _, errors = run_instrumented(reqs, start_state(1, 2, token_cfg=cfg, token_tp=2))
    assert errors == []
    res = sim.results()
    assert res["preemptions"] > 0
    cap = next(i for i in sim.instances if i.tag == "token").kv_capacity
    tab = sim.request_table()
    too_big = tab["prompt_tokens"] + tab["output_tokens"] > cap
    assert too_big.sum() == 2 and res["dropped_unservable"] == 2
    assert np.all(tab["status"][too_big] == 2) and np.all(tab["status"][~too_big] == 1)
    assert_conserved(sim)


def test_mixed_pool_batches_prefills_and_decodes():
    reqs = load_requests("conv", duration=120.0)
    sim, _, errors = run_instrumented(reqs, start_state(0, 0, mixed=2))
    assert errors == []
    assert_conserved(sim)
    assert (sim.request_table()["token_instance"] == sim.request_table()["prompt_instance"]).all()
    assert MIXED_BATCH_FACTOR == 1.1


def test_conservation_and_determinism_on_the_full_conv_trace():
    reqs = load_requests("conv")
    a = LLMSimulator(reqs, seed=3)
    a.run()
    assert_conserved(a)
    b = LLMSimulator(reqs, seed=3)
    b.run()
    ta, tb = a.request_table(), b.request_table()
    for k in ta:
        np.testing.assert_array_equal(ta[k], tb[k])
    assert a.results() == b.results()
    assert a.results()["requests"] == len(reqs)


def test_slo_attainment_light_vs_overloaded():
    light = LLMSimulator(load_requests("conv", rate_scale=0.05, duration=3000.0))
    light.run()
    lr = light.results()
    assert lr["requests"] > 100 and lr["slo_attainment"] >= 0.99 and lr["slo_met"]
    heavy = LLMSimulator(load_requests("conv", rate_scale=8.0, duration=60.0), start_state(1, 1))
    heavy.run()
    hr = heavy.results()
    assert hr["slo_attainment"] < 0.2 and not hr["slo_met"]
    assert hr["ttft_p50"] > 10 * lr["ttft_p50"]


def test_window_stats_cost_and_timeline():
    reqs = load_requests("conv", duration=120.0)
    sim = LLMSimulator(reqs, sample_interval=5.0)
    total = 0
    for t in range(30, 121, 30):
        w = sim.window_stats(sim.now) if t == 30 else None
        sim.run_until(float(t))
        w = sim.window_stats(t - 30.0)
        total += w["completed"]
        assert w["arrivals"] == int(np.sum((reqs.arrival > t - 30) & (reqs.arrival <= t)))
        assert len(w["ttft"]) == w["completed"] and np.all(w["e2e"] >= w["ttft"])
        # four DGX servers for 30 s
        assert w["gpu_hours"] == pytest.approx(4 * 8 * 30 / 3600)
        assert w["cost"] == pytest.approx((2 * 38.08 + 2 * 17.68) * 30 / 3600)
        assert 0 < w["energy_kwh"] < (2 * 10.2 + 2 * 6.5) * 30 / 3600
        # the slowdowns alone, as a latency-driven scaler reads them, are the window's own
        sd = sim.window_slowdowns(t - 30.0)
        assert set(sd) == {"ttft", "tbt", "e2e"} and len(sd["ttft"]) == w["completed"] > 0
        for m, v in sd.items():
            np.testing.assert_array_equal(v, w[f"slowdown_{m}"])
        # the arrivals alone, as the RL state reads its longer window, are the window's own
        a = sim.arrival_stats(t - 30.0)
        assert a == {k: w[k] for k in a} and a["prompt_tokens"] == int(
            reqs.prompt_tokens[(reqs.arrival > t - 30) & (reqs.arrival <= t)].sum()
        )
    assert total == sim.results()["requests"]
    assert [s["time"] for s in sim.timeline[:3]] == [0.0, 5.0, 10.0]
    s = sim.timeline[5]
    assert s["pools"]["prompt"]["active"] == 2 and s["pools"]["token"]["active"] == 2
    assert set(s["pools"]["token"]) >= {"running_decodes", "kv_utilization", "draining"}
    sim.run()
    res = sim.results()
    assert res["gpu_hours"] == pytest.approx(32 * res["duration"] / 3600)
    assert math.isclose(sim.window_stats(0.0)["cost"], res["cost"])


def test_requests_wait_for_a_scale_up_when_no_pool_is_active():
    sim = LLMSimulator(requests((1.0, 100, 5)), start_state(1, 1), min_instances_per_pool=0)
    sm = sim.scaling_manager
    assert sm.scale_down("token")
    sim.run_until(5.0)
    assert sim.snapshot()["router_queue"] == 1
    sm.scale_up("token")
    sim.run()
    tab = sim.request_table()
    assert tab["status"][0] == 1 and tab["first_token"][0] > 15.0


def test_run_ends_when_waiting_requests_can_never_be_served():
    sim = LLMSimulator(
        requests((1.0, 100, 5), (2.0, 100, 1)), start_state(1, 1), min_instances_per_pool=0
    )
    assert sim.scaling_manager.scale_down("token")
    sim.run()
    res = sim.results()
    assert res["requests"] == 1 and res["unfinished"] == 1 and res["dropped"] == 1
    assert sim.now < 10.0


def test_a_deep_copy_runs_on_alone_and_shares_only_what_never_changes() -> None:
    import copy

    reqs = requests(*[(0.5 * i, 300 + 10 * i, 20) for i in range(12)])
    sim = LLMSimulator(reqs, start_state(1, 1))
    sim.run_until(2.0)
    dup = copy.deepcopy(sim)
    assert dup.requests is sim.requests and dup.perf_model is sim.perf_model
    assert dup._finish == sim._finish and dup._finish is not sim._finish
    # each request's instances are the copy's own (mapped through all_instances)
    own = {id(i): k for k, i in enumerate(dup.all_instances)}
    for mine, theirs in ((dup._pinst, sim._pinst), (dup._tinst, sim._tinst)):
        routed = [(a, b) for a, b in zip(mine, theirs, strict=True) if b is not None]
        assert routed and all(a is not b and id(a) in own for a, b in routed)
        assert [own[id(a)] for a, _ in routed] == [sim.all_instances.index(b) for _, b in routed]
        assert [a is None for a in mine] == [b is None for b in theirs]
    # each instance is copied field by field (Instance.__deepcopy__): equal values, its own
    # containers, its own server (the one in all_servers), the frozen config shared
    servers = {id(s) for s in dup.all_servers}
    for a, b in zip(dup.all_instances, sim.all_instances, strict=True):
        assert a is not b and a.server is not b.server and id(a.server) in servers
        assert a.server.instance is a and a.server.sku is b.server.sku and a.config is b.config
        for name in Instance.__slots__:
            x, y = getattr(a, name), getattr(b, name)
            if name in ("server", "kv_wait"):
                continue
            assert x == y, name
            if name in ("prefill_queue", "_pend_heap", "_dec_heap", "running", "_run_prefills"):
                assert x is not y, name
        assert [(r, c) for r, c, _ in a.kv_wait] == [(r, c) for r, c, _ in b.kv_wait]
        assert all(src is None or id(src) in own for _, _, src in a.kv_wait)
    assert any(i.running or i.prefill_queue for i in sim.all_instances)  # copied mid-run
    before = (list(sim._finish), list(sim._done_idx), len(sim.timeline), sim.now)
    dup.run()
    assert len(dup._done_idx) > len(before[1])  # the copy ran on: requests finished
    assert (list(sim._finish), list(sim._done_idx), len(sim.timeline), sim.now) == before
    sim.run()  # the original, run on, ends where its copy did
    assert sim._finish == dup._finish and sim._done_idx == dup._done_idx and sim.now == dup.now
    for x in (sim, dup):  # the kept active lists are the scan's instances
        for tag in TAGS:
            scanned = x.scaling_manager.get_active_instances(tag=tag)
            assert sorted(i.id for i in x.active(tag)) == sorted(i.id for i in scanned)


def _fresh_window(sim: LLMSimulator, since: float) -> dict[str, np.ndarray]:
    """A window's latencies and slowdowns computed at once from the request table (what the
    simulator keeps request by request as they complete)."""
    tab = sim.request_table()
    idx = [r for r, t in zip(sim._done_idx, sim._done_t, strict=True) if t > since]
    arr, first, fin = (tab[k][idx] for k in ("arrival", "first_token", "finish"))
    out = np.asarray(sim.requests.output_tokens, dtype=float)[idx]
    ttft, e2e = first - arr, fin - arr
    lat = {"ttft": ttft, "e2e": e2e,
           "tbt": np.where(out > 1, (e2e - ttft) / np.maximum(out - 1, 1), 0.0)}  # fmt: skip
    sd = {}
    for m, v in lat.items():
        u = tab[f"unloaded_{m}"][idx]
        sd[m] = np.where(u > 0, v / np.where(u > 0, u, 1.0), 1.0)
    return {**lat, **{f"slowdown_{m}": v for m, v in sd.items()}}


@pytest.mark.parametrize("scalar_rows", [0, 48, 10**9])  # numpy only, as shipped, Python only
def test_window_latencies_are_kept_as_requests_complete_and_copies_keep_their_own(
    scalar_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import copy

    monkeypatch.setattr(LLMSimulator, "SCALAR_ROWS", scalar_rows)
    reqs = load_requests("conv", duration=90.0)
    sim = LLMSimulator(reqs, start_state(1, 1))
    dup = None
    for t in range(5, 91, 5):  # windows that overlap, as a scaler's 10 s at 5 s decisions
        sim.run_until(float(t))
        w = sim.window_stats(t - 10.0)
        fresh = _fresh_window(sim, t - 10.0)
        for k, v in fresh.items():  # the same floats as computing the window at once
            np.testing.assert_array_equal(w[k], v, err_msg=k)
            assert not w[k].flags.writeable  # the kept rows cannot be changed through a window
        if t == 30:
            dup = copy.deepcopy(sim)
            dup.scaling_manager.scale_up("prompt")  # the copy's requests finish otherwise
    assert dup is not None and len(sim._done_idx) > 64  # the kept rows grew past their start
    dup.run_until(90.0)
    for x in (sim, dup):
        for since in (-1.0, 40.0, 85.0):
            w, fresh = x.window_stats(since), _fresh_window(x, since)
            for k, v in fresh.items():
                np.testing.assert_array_equal(w[k], v, err_msg=k)
    assert not np.array_equal(sim.window_stats(30.0)["ttft"], dup.window_stats(30.0)["ttft"])
    res = sim.results()  # the run's percentiles read the same rows
    for m in ("ttft", "tbt", "e2e"):
        for p in (50, 90, 99):
            assert res[f"{m}_p{p}"] == float(np.percentile(_fresh_window(sim, -1.0)[m], p))
