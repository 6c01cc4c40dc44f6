"""Accounting of :class:`~rlsched.core.llm.simulator.LLMSimulator`: timeline samples,
cumulative cost and energy, latencies and the SLO."""

from __future__ import annotations

import bisect
import math
from operator import itemgetter

import numpy as np

from rlsched.core.llm.cluster import (
    InstanceState,
    Server,
    get_sku,
)
from rlsched.core.llm.slo import unloaded_latencies
from rlsched.core.llm.state import _SAMPLE, SimulatorState


class Accounting(SimulatorState):
    """Samples, cumulative accounting, latencies and SLO attainment."""

    def _quiescent(self) -> bool:
        return self.done and all(i.state is InstanceState.ACTIVE for i in self.instances)

    def _arm_sampling(self) -> None:
        if self.sample_interval > 0 and not self._sampling and not self._quiescent():
            k = math.floor(self.now / self.sample_interval) + 1
            self._sampling = True
            self._push(k * self.sample_interval, _SAMPLE, None, None)

    def _sample(self) -> None:
        self.timeline.append(self.snapshot())
        self._checkpoint()
        if self._quiescent():
            self._sampling = False
        else:
            self._sampling = True
            self._push(self.now + self.sample_interval, _SAMPLE, None, None)

    def _cumulative(self) -> tuple[float, float, float]:
        """GPU-hours, US$ and kWh from time 0 to now."""
        now = self.now
        gpu_c, cost_c, joules_c = self._acc_closed
        gpu_s = cost = joules = 0.0
        still_open: list[Server] = []
        for s in self._acc_open:
            g, c, j = _server_totals(s, now)
            inst = s.instance
            if s.removed is not None and s.removed <= now and (inst is None or not inst.busy):
                gpu_c, cost_c, joules_c = gpu_c + g, cost_c + c, joules_c + j  # final
            else:
                still_open.append(s)
                gpu_s, cost, joules = gpu_s + g, cost + c, joules + j
        self._acc_closed = (gpu_c, cost_c, joules_c)
        self._acc_open = still_open
        return (gpu_c + gpu_s) / 3600.0, cost_c + cost, (joules_c + joules) / 3.6e6

    def _checkpoint(self) -> None:
        v = self._cumulative()
        if self._ck_t and self._ck_t[-1] == self.now:
            self._ck_v[-1] = v
        elif self.now > self._ck_t[-1]:
            self._ck_t.append(self.now)
            self._ck_v.append(v)

    def _cumulative_at(self, t: float) -> tuple[float, float, float]:
        if t >= self.now:
            return self._cumulative()
        if t <= 0.0:
            return (0.0, 0.0, 0.0)
        j = bisect.bisect_left(self._ck_t, t)
        if j < len(self._ck_t) and self._ck_t[j] == t:
            return self._ck_v[j]
        t0, v0 = self._ck_t[j - 1], self._ck_v[j - 1]
        if j < len(self._ck_t):
            t1, v1 = self._ck_t[j], self._ck_v[j]
        else:
            t1, v1 = self.now, self._cumulative()
        w = (t - t0) / (t1 - t0) if t1 > t0 else 0.0
        (a0, a1, a2), (b0, b1, b2) = v0, v1
        return (a0 + w * (b0 - a0), a1 + w * (b1 - a1), a2 + w * (b2 - a2))

    # ================================================================== latencies and SLO
    def _latencies(self, idx: list[int]) -> dict[str, np.ndarray]:
        if not idx:
            z = np.zeros(0)
            return {"ttft": z, "tbt": z.copy(), "e2e": z.copy()}
        # the per-request lists stay lists (the engine writes one entry at a time); one C-level
        # gather per list instead of a Python generator each
        pick = itemgetter(*idx)
        one = len(idx) == 1  # itemgetter of one index returns the item, not a tuple
        arr, first, fin, o = (
            np.array([pick(c)] if one else pick(c), float)
            for c in (self._arr, self._first, self._finish, self._O)
        )
        ttft = first - arr
        e2e = fin - arr
        tbt = np.where(o > 1, (e2e - ttft) / np.maximum(o - self._tbt_div, 1), 0.0)
        return {"ttft": ttft, "tbt": tbt, "e2e": e2e}

    def _unloaded_reference(self) -> dict[str, np.ndarray]:
        """Per-request latencies alone on an idle instance of the start state's pools."""
        ss = self.start_state
        ptag = "prompt" if "prompt" in ss.pools else "mixed"
        ttag = "token" if "token" in ss.pools else "mixed"
        pp, tp_ = ss.pool(ptag), ss.pool(ttag)
        m = self.model.name
        pcurve = self.perf_model.prompt_curve(m, get_sku(pp.server_sku).hardware, pp.parallelism)
        tcurve = self.perf_model.token_curve(m, get_sku(tp_.server_sku).hardware, tp_.parallelism)
        return unloaded_latencies(
            self.requests.prompt_tokens,
            self.requests.output_tokens,
            pcurve,
            float(tcurve(1)),
            self._kv_spt,
            self._lat,
            disaggregated=ptag != ttag,
        )


def _server_totals(s: Server, now: float) -> tuple[float, float, float]:
    """GPU-seconds, US$ and joules of one server from its creation to ``now``."""
    alive = s.alive_seconds(now)
    sku = s.sku
    busy = s.instance.busy_seconds(now) if s.instance is not None else 0.0
    joules = sku.idle_power_w * alive + (sku.peak_power_w - sku.idle_power_w) * busy
    return sku.gpus * alive, sku.cost_per_hour * alive / 3600.0, joules
