"""Sizing and load measurement of the LLM serving cluster (numpy only).

- the **sizing rule** (:func:`pool_throughput`, :func:`static_peak_sizes`): one instance's
  prefill and decode throughput from the performance model and the instances per pool that
  serve a rate at a target utilisation (see :mod:`rlsched.policies.llm` for the rule in words);
- :func:`cluster_cost_per_s`: US$ per second of a cluster;
- :class:`BusyTracker`: the busy fraction of instances between calls.

The env adapter (:mod:`rlsched.envs.llm_rl`) and the baselines (:mod:`rlsched.policies.llm`)
both use them, so they live below both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlsched.core.llm.cluster import GIB, Instance, get_model, get_sku
from rlsched.errors import ConfigError


# ============================================================================ sizing
@dataclass(frozen=True)
class PoolThroughput:
    """One instance of a pool at full load (see the module docstring)."""

    tag: str
    prefill_tokens_per_s: float
    decode_batch: int
    """``b*``: the largest decode batch within the TBT limit (and KV capacity)."""
    decode_tokens_per_s: float


def pool_throughput(
    start_state: Any,
    perf_model: Any,
    slo: Any,
    tag: str,
    mean_context: float | None = None,
    tbt_headroom: float = 0.9,
) -> PoolThroughput:
    """Prefill and decode throughput of one instance of pool ``tag`` of ``start_state``."""
    pool = start_state.pool(tag)
    sku = get_sku(pool.server_sku)
    model = get_model(start_state.model, start_state.kv_heads_ratio)
    cfg = pool.instance
    pt = perf_model.prompt_curve(model.name, sku.hardware, pool.parallelism)
    tt = perf_model.token_curve(model.name, sku.hardware, pool.parallelism)
    B = cfg.max_batch_tokens
    prefill = B / float(pt(B))
    limit = slo.limits(slo.attainment_level)["tbt"] * tbt_headroom * float(tt(1))
    bs = np.arange(1, cfg.max_batch_size + 1)
    ok = np.asarray(tt(bs)) <= limit
    b = int(bs[ok].max()) if ok.any() else 1
    if mean_context:
        cap = (pool.parallelism * sku.gpu_memory_gib * GIB - model.weights_bytes) / (
            model.kv_bytes_per_token
        )
        b = max(1, min(b, int(0.9 * cap / mean_context)))
    return PoolThroughput(tag, prefill, b, b / float(tt(b)))


def peak_rates(requests: Any, window: float = 60.0) -> dict[str, float]:
    """Highest request, prompt-token and output-token rates (per second) over windows of
    ``window`` s starting at each arrival (the whole span when shorter)."""
    n = len(requests)
    if n == 0:
        return {"requests_per_s": 0.0, "prompt_tokens_per_s": 0.0, "output_tokens_per_s": 0.0}
    a = requests.arrival
    w = float(window)
    if requests.span < w:
        w = max(requests.span, 1.0)
    j = np.searchsorted(a, a + w, side="left")
    i = np.arange(n)
    cp = np.concatenate([[0], np.cumsum(requests.prompt_tokens)])
    co = np.concatenate([[0], np.cumsum(requests.output_tokens)])
    return {
        "requests_per_s": float((j - i).max()) / w,
        "prompt_tokens_per_s": float((cp[j] - cp[i]).max()) / w,
        "output_tokens_per_s": float((co[j] - co[i]).max()) / w,
    }


#: Default target utilisation per pool of the sizing rule. The prompt pool must stay lightly
#: loaded: a prefill waiting behind one full batch (``prompt_time(2048)`` = 0.13 s on an H100)
#: already doubles the TTFT of a median prompt (1,020 tokens, 0.07 s), against a 3x limit (and
#: the E2E limit of 1.5x binds TTFT for short outputs). The token pool's SLO batch ``b*``
#: already keeps 10 % TBT headroom.
DEFAULT_TARGET_UTILIZATION = {"prompt": 0.4, "token": 0.9}


def mean_rates(requests: Any) -> dict[str, float]:
    """Mean request, prompt-token and output-token rates over the trace's span (>= 1 s)."""
    n = len(requests)
    span = max(requests.span, 1.0) if n else 1.0
    return {
        "requests_per_s": n / span,
        "prompt_tokens_per_s": float(requests.prompt_tokens.sum()) / span if n else 0.0,
        "output_tokens_per_s": float(requests.output_tokens.sum()) / span if n else 0.0,
    }


def sizes_for_rates(
    rates: Mapping[str, float],
    throughputs: Mapping[str, PoolThroughput],
    target_utilization: Mapping[str, float] | float | None = None,
    min_instances: int = 1,
) -> dict[str, int]:
    """Instances per pool (``prompt`` / ``token``) to serve ``rates`` (as :func:`peak_rates`
    returns them) at the target utilisation (default :data:`DEFAULT_TARGET_UTILIZATION`)."""
    if target_utilization is None or isinstance(target_utilization, Mapping):
        tu = {**DEFAULT_TARGET_UTILIZATION, **(target_utilization or {})}
    else:
        tu = dict.fromkeys(DEFAULT_TARGET_UTILIZATION, float(target_utilization))
    out = {}
    for tag, tp in throughputs.items():
        u = float(tu.get(tag, 1.0))
        if not 0 < u <= 1:
            raise ConfigError(f"target utilisation of {tag!r} must be in (0, 1], got {u}")
        if tag == "prompt":
            need = rates["prompt_tokens_per_s"] / (u * tp.prefill_tokens_per_s)
        elif tag == "token":
            need = rates["output_tokens_per_s"] / (u * tp.decode_tokens_per_s)
        else:
            raise ConfigError(f"the sizing rule supports prompt and token pools, not {tag!r}")
        out[tag] = max(int(min_instances), math.ceil(need - 1e-9))
    return out


def pool_throughputs(
    requests: Any, start_state: Any, perf_model: Any, slo: Any, pools: Sequence[str]
) -> dict[str, PoolThroughput]:
    """:func:`pool_throughput` of each pool, with the mean context of ``requests``."""
    ctx = requests.prompt_tokens + requests.output_tokens
    mean_ctx = float(ctx.mean()) if len(ctx) else None
    return {
        t: pool_throughput(start_state, perf_model, slo, t, mean_context=mean_ctx) for t in pools
    }


def static_peak_sizes(
    requests: Any,
    start_state: Any,
    perf_model: Any,
    slo: Any,
    pools: Sequence[str] = ("prompt", "token"),
    window: float = 60.0,
    target_utilization: Mapping[str, float] | float | None = None,
    min_instances: int = 1,
) -> dict[str, int]:
    """Instances per pool for the peak of ``requests`` (the sizing rule of the module
    docstring)."""
    tps = pool_throughputs(requests, start_state, perf_model, slo, pools)
    return sizes_for_rates(peak_rates(requests, window), tps, target_utilization, min_instances)


def cluster_cost_per_s(start_state: Any, sizes: Mapping[str, int]) -> float:
    """US$ per second of ``sizes[tag]`` servers of each pool's SKU."""
    return (
        sum(n * get_sku(start_state.pool(t).server_sku).cost_per_hour for t, n in sizes.items())
        / 3600.0
    )


class BusyTracker:
    """Busy fraction of instances between consecutive calls (per instance id)."""

    def __init__(self) -> None:
        self._last: dict[int, tuple[float, float, float]] = {}

    def reset(self) -> None:
        self._last.clear()

    def utilization(self, instances: Sequence[Instance], now: float) -> list[float]:
        """For each instance, the fraction of the time since the previous call (or since it
        became active, whichever is later) it spent iterating. A call at the same time as the
        previous one repeats its values (0 for an instance that has just become active)."""
        out = []
        for inst in instances:
            busy = inst.busy_seconds(now)
            start = inst.activated if inst.activated is not None else inst.created
            prev = self._last.get(inst.id)
            # no work before activation: busy time is 0 then
            t0, b0, u0 = (start, 0.0, 0.0) if prev is None or prev[0] < start else prev
            span = now - t0
            if span > 0:
                u = min(1.0, max(0.0, (busy - b0) / span))
                self._last[inst.id] = (now, busy, u)
            else:
                u = u0
            out.append(u)
        return out
