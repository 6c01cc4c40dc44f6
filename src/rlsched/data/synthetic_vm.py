"""``synthetic:vm?creations=125430&days=30&seed=0``: a seeded VM request trace with the
published statistics of Huawei Cloud's ``Huawei-East-1`` dataset (VMAgent).

Published facts the generator reproduces (VMAgent's dataset page): 15 VM types, 125,430
creations and 116,313 deletions over 30 days (92.73 % of the VMs created are deleted within
the window, about 9,100 stay alive at the end, so the number of live VMs grows from 0 to
over 8,000), more than two thirds of the requests are 1 core with at most 2 GB, and 1U1G,
1U2G, 2U4G and 4U8G make the main body of the requests. What it chooses (not published):

**VM types** (cores / GB, the Huawei Cloud general-purpose s6 / c6 flavours of 1-64 vCPUs,
memory 1, 2 or 4 GB per core, each fitting one server of two 40-core / 90 GB NUMA nodes,
halved per NUMA for a double-NUMA VM) and their share of creations:

- 1 core: 1 GB 33 %, 2 GB 34 %, 4 GB 2 %;
- 2 cores: 4 GB 12 %, 8 GB 2.5 %;   4 cores: 8 GB 7 %, 16 GB 2 %;
- 8 cores: 16 GB 3 %, 32 GB 1 %;    16 cores: 32 GB 1.5 %, 64 GB 0.5 %;
- 24 cores: 48 GB 0.4 %;            32 cores: 64 GB 0.6 %, 128 GB 0.3 %;
- 64 cores: 128 GB 0.2 %.

(1 core with <= 2 GB: 67 %; mean 2.5 cores and 5.4 GB per VM.)

**Arrivals**: exactly ``creations`` VMs over ``days`` days, i.i.d. with a diurnal and weekly
intensity ``(1 + 0.5 sin(2 pi (hour - 8) / 24)) x (0.75 on days 6 and 7 of each week, else
1)`` (a Poisson process conditioned on its count: peak at 14:00, trough at 02:00), at whole
seconds. ``vmid`` numbers the creations 0, 1, ... in time order.

**Lifetimes** (independent of the type): a mixture of short-lived VMs, lognormal with median
2 h and sigma 1.5, and long-lived ones, lognormal with median 30 days and sigma 1.0; the
long-lived share (about 8.5 %) is solved so that, over the 30-day window and the arrival
intensity above, the expected deleted fraction is 116,313 / 125,430. The same lifetimes are used
for any ``days``, so shorter windows delete a smaller share. A VM lives at least 1 s; its
deletion (at a whole second) is in the trace when it falls within the window. Events are
sorted by time; at equal times deletions come first (a release before an allocation).

Everything comes from one ``numpy.random.Generator(seed)``; a trace of 125,430 creations takes
well under a second. See ``docs/vm_placement.md`` for the statistics achieved.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from rlsched.core.vm import VMRequests
from rlsched.data._util import float_param, int_param
from rlsched.data.dataset import Dataset

#: Published (VMAgent, Huawei-East-1): creations, deletions, days, VM types.
PUBLISHED = {"creations": 125_430, "deletions": 116_313, "days": 30, "vm_types": 15}

#: (cores, GB, share of creations); shares sum to 1.
VM_TYPES: tuple[tuple[int, int, float], ...] = (
    (1, 1, 0.33),
    (1, 2, 0.34),
    (1, 4, 0.02),
    (2, 4, 0.12),
    (2, 8, 0.025),
    (4, 8, 0.07),
    (4, 16, 0.02),
    (8, 16, 0.03),
    (8, 32, 0.01),
    (16, 32, 0.015),
    (16, 64, 0.005),
    (24, 48, 0.004),
    (32, 64, 0.006),
    (32, 128, 0.003),
    (64, 128, 0.002),
)

DIURNAL_AMPLITUDE = 0.5
PEAK_HOUR = 14.0
WEEKEND_FACTOR = 0.75
SHORT_MEDIAN_S, SHORT_SIGMA = 2 * 3600.0, 1.5
LONG_MEDIAN_S, LONG_SIGMA = 30 * 86400.0, 1.0
_BIN_S = 60.0

DERIVED = {
    "cpu": "synthetic: 15 Huawei Cloud flavours, 1-64 cores (see rlsched.data.synthetic_vm)",
    "mem": "synthetic: 1, 2 or 4 GB per core by flavour",
    "time": "synthetic: diurnal and weekly Poisson arrivals over 'days'; deletions at "
    "creation + lifetime (lognormal mixture: 2 h and 30 days medians)",
    "type": "synthetic: a creation per VM, a deletion when its lifetime ends in the window",
}


def intensity(t: np.ndarray) -> np.ndarray:
    """Relative arrival intensity at times ``t`` (s from the trace start, day 0 a Monday)."""
    hour = (t % 86400.0) / 3600.0
    day = (t // 86400.0) % 7
    diurnal = 1.0 + DIURNAL_AMPLITUDE * np.sin(2 * np.pi * (hour - (PEAK_HOUR - 6.0)) / 24.0)
    return diurnal * np.where(day >= 5, WEEKEND_FACTOR, 1.0)


def _lognormal_cdf(x: np.ndarray, median: float, sigma: float) -> np.ndarray:
    z = (np.log(np.maximum(x, 1e-12)) - math.log(median)) / (sigma * math.sqrt(2.0))
    erf = np.frompyfunc(math.erf, 1, 1)
    return 0.5 * (1.0 + erf(z).astype(np.float64))


@functools.cache
def long_lived_share(days: float = PUBLISHED["days"]) -> float:
    """Share of long-lived VMs for which the expected fraction of VMs deleted within a window
    of ``days`` (arrivals by :func:`intensity`) is the published 116,313 / 125,430."""
    span = days * 86400.0
    mid = np.arange(0.0, span, 600.0) + 300.0
    w = intensity(mid)
    w /= w.sum()
    short = float(np.sum(w * _lognormal_cdf(span - mid, SHORT_MEDIAN_S, SHORT_SIGMA)))
    long = float(np.sum(w * _lognormal_cdf(span - mid, LONG_MEDIAN_S, LONG_SIGMA)))
    target = PUBLISHED["deletions"] / PUBLISHED["creations"]
    share_short = (target - long) / (short - long)
    return float(np.clip(1.0 - share_short, 0.0, 1.0))


def generate_vm_requests(creations: int, days: float, seed: int) -> VMRequests:
    """The trace described in the module docstring."""
    rng = np.random.default_rng(seed)
    span = days * 86400.0
    # arrivals: a bin by the intensity, then uniform within the bin
    n_bins = max(1, math.ceil(span / _BIN_S))
    edges = np.minimum(np.arange(n_bins + 1) * _BIN_S, span)
    cum = np.cumsum(intensity(edges[:-1] + 0.5 * np.diff(edges)) * np.diff(edges))
    b = np.searchsorted(cum, rng.random(creations) * cum[-1], side="right")
    b = np.minimum(b, n_bins - 1)
    t = edges[b] + rng.random(creations) * (edges[b + 1] - edges[b])
    t = np.sort(np.floor(t))
    # flavours
    table = np.array([(c, m) for c, m, _ in VM_TYPES], dtype=np.float64)
    share = np.array([s for *_, s in VM_TYPES])
    kind = rng.choice(len(VM_TYPES), size=creations, p=share / share.sum())
    cpu, mem = table[kind, 0], table[kind, 1]
    # lifetimes
    long = rng.random(creations) < long_lived_share()
    z = rng.standard_normal(creations)
    life = np.where(
        long,
        LONG_MEDIAN_S * np.exp(LONG_SIGMA * z),
        SHORT_MEDIAN_S * np.exp(SHORT_SIGMA * z),
    )
    end = t + np.maximum(1.0, np.ceil(life))
    gone = np.flatnonzero(end < span)
    vmid = np.arange(creations, dtype=np.int64)
    times = np.concatenate([t, end[gone]])
    types = np.concatenate([np.zeros(creations, np.int8), np.ones(len(gone), np.int8)])
    ids = np.concatenate([vmid, vmid[gone]])
    # by time; at equal times deletions first, then by vmid
    order = np.lexsort((ids, 1 - types, times))
    return VMRequests(
        ids[order],
        np.concatenate([cpu, cpu[gone]])[order],
        np.concatenate([mem, mem[gone]])[order],
        times[order],
        types[order],
    )


def load_synthetic_vm(path: str, params: dict[str, str]) -> Dataset:
    source = f"synthetic:{path}"
    n = int_param(params, "creations", source, minimum=1, default=PUBLISHED["creations"])
    days = float_param(params, "days", source, default=float(PUBLISHED["days"]))
    seed = int_param(params, "seed", source, minimum=0, default=0)
    assert n is not None and days is not None and seed is not None
    reqs = generate_vm_requests(n, days, seed)
    s = reqs.summary()
    return Dataset(
        name=source,
        workflows=[],
        description=(
            f"synthetic VM requests with Huawei-East-1's statistics: {s['creations']:,} "
            f"creations, {s['deletions']:,} deletions over {days:g} days, "
            f"{s['vm_types']} VM types (seed {seed})"
        ),
        source="rlsched.data.synthetic_vm (seeded generator)",
        license="generated (no license)",
        derived_fields=dict(DERIVED),
        trace=reqs,
    )
