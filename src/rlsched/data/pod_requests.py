"""Per-pod request traces for ``rlsched/PodRebalancing-v0``: a seeded generator and a CSV loader.

Both return a :class:`~rlsched.data.Dataset` whose ``trace`` is a
:class:`~rlsched.core.pods.PodWorkload` (``kind == "pod-requests"``) and ``workflows == []``.

**Generator** (``synthetic:pods?nodes=4&pods=40&windows=288&seed=0&mode=serial``): ``nodes``
nodes of 16, 24 or 32 allocatable cores with 4 GB per core; ``pods`` pods of about ``pods / 4``
services. Each service has its own request size (cpu and memory each log-uniform over a 12x
range before the scaling below; per-request spread sigma 0.15-0.5), diurnal traffic (a sine
over the day of 288 windows with its own amplitude and phase, 8-40 requests per replica per
window on average, Poisson counts) dispatched round-robin to its replicas (so replicas get
nearly equal counts, as the design note says), a request size that also drifts over the day,
and a Kubernetes cpu request of 0.35-1.3 times its typical demand (most services
under-request cpu; memory is requested with 0-40 % headroom; requests are capped at half the
smallest node and, in total, half the cluster). Sizes are scaled so that one request of every
pod adds up to 75 % of the cluster's cpu and 40 % of its memory (the peak of a serial window).
Pods are placed the way a bin-packing scheduler (kube-scheduler's ``MostAllocated`` scoring)
places them by their *requests*, in random order, up to 80 % of each node's allocatable: the
first nodes end up full of under-requesting pods and overloaded, the last ones light or empty
(as after a scale-out), so rebalancing pays off. In
``parallel`` mode request sizes are divided by the mean concurrency (requests per pod per window
/ 10 slots), so pods load the cluster about as much as in ``serial`` mode.

**CSV** (``pod-requests:PATH?mode=serial``), one row per pod and window::

    window,pod,node,requests,cpu,mem[,request_cpu,request_mem,node_cpu,node_mem,spread,service]

- ``window``: integer >= 0, the 5-minute window; windows no row names have no requests.
- ``pod``: pod name; ``node``: the node the pod runs on at the start (the same in every row of
  the pod).
- ``requests``: integer >= 0, requests dispatched to the pod in the window.
- ``cpu``, ``mem``: cores and GB one request of the pod uses in the window (its mean size).
- optional ``request_cpu``, ``request_mem``: the pod's Kubernetes requests (the same in every
  row of the pod); without them: the pod's request-weighted mean ``cpu`` / ``mem``.
- optional ``node_cpu``, ``node_mem``: the node's allocatable (the same in every row of the
  node); without them every node gets ``ceil(1.25 x`` the largest per-node sum of requests``)``.
- optional ``spread``: lognormal sigma of one request's size around ``cpu`` / ``mem`` (the
  same in every row of the pod; default 0.3); optional ``service``: the pod's service.

A pod with no row for a window has no requests in it. A node whose pods request more cpu or
memory than its allocatable is an error (a Kubernetes scheduler would not have placed them).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from rlsched.core.pods import MODES, PodWorkload
from rlsched.data._util import CsvTable, abs_path, existing_file, int_param, req_float
from rlsched.data.dataset import Dataset
from rlsched.data.registry import register
from rlsched.errors import DatasetError

#: Windows in a day (5-minute windows).
WINDOWS_PER_DAY = 288
#: Mean demand / allocatable the generator aims at (cpu, memory).
TARGET_CPU, TARGET_MEM = 0.75, 0.40
#: Fraction of a node's allocatable the bin-packing placement fills with requests.
PACK_FILL = 0.8
#: Slots per window the generator assumes in ``parallel`` mode (the env's default).
GEN_SLOTS = 10
#: Default lognormal sigma of a request's size when a CSV has no ``spread`` column.
DEFAULT_SPREAD = 0.3
#: Largest ``windows x pods`` a CSV may describe (the arrays are dense).
MAX_CELLS = 50_000_000

CSV_COLUMNS = ("window", "pod", "node", "requests", "cpu", "mem")

GEN_FIELDS = {
    "node_cpu": "synthetic: 16, 24 or 32 cores per node",
    "node_mem": "synthetic: 4 GB per allocatable core",
    "requests": "synthetic: per service Poisson(diurnal rate), round-robin over its replicas",
    "cpu": "synthetic: per service lognormal size x daily drift; sizes sum to 75 % of the cpu",
    "mem": "synthetic: per service lognormal size x daily drift; sizes sum to 40 % of memory",
    "request_cpu": "synthetic: 0.35-1.3 x the service's mean size (mostly under-requested)",
    "request_mem": "synthetic: 1.0-1.4 x the service's mean memory",
    "node": "synthetic: bin packing by requests (MostAllocated) up to 80 % of allocatable",
}


def _mode_param(params: dict[str, str], source: str) -> str:
    mode = params.get("mode") or "serial"
    if mode not in MODES:
        raise DatasetError(
            f"parameter mode={mode!r} must be one of {', '.join(MODES)}",
            source=source,
            field="mode",
        )
    return mode


# ---------------------------------------------------------------------------- generator
def _pack(
    rc: np.ndarray, rm: np.ndarray, cap_cpu: np.ndarray, cap_mem: np.ndarray, order: np.ndarray
) -> np.ndarray:
    """Bin packing by requests: each pod (in ``order``) goes to the most-allocated node that
    keeps it within ``PACK_FILL`` of the allocatable, else to the node with the most room."""
    N = len(cap_cpu)
    used_c, used_m = np.zeros(N), np.zeros(N)
    node = np.zeros(len(rc), dtype=np.int64)
    for p in order:  # generation time only, not in an env step
        fill_c = (used_c + rc[p]) / cap_cpu
        fill_m = (used_m + rm[p]) / cap_mem
        ok = (fill_c <= PACK_FILL) & (fill_m <= PACK_FILL)
        if ok.any():
            score = np.where(ok, (used_c / cap_cpu + used_m / cap_mem), -np.inf)
            n = int(np.argmax(score))
        else:
            n = int(np.argmin(np.maximum(fill_c, fill_m)))
        node[p] = n
        used_c[n] += rc[p]
        used_m[n] += rm[p]
    return node


def generate_pods(nodes: int, pods: int, windows: int, seed: int, mode: str) -> PodWorkload:
    """The seeded synthetic workload of ``synthetic:pods`` (module docstring)."""
    rng = np.random.default_rng(seed)
    N, P, W = nodes, pods, windows
    node_cpu = rng.choice([16.0, 24.0, 32.0], N)
    node_mem = 4.0 * node_cpu
    n_svc = max(1, min(P, round(P / 4)))
    svc = np.sort(np.concatenate([np.arange(n_svc), rng.integers(0, n_svc, P - n_svc)]))
    replicas = np.bincount(svc, minlength=n_svc)

    size_c = np.exp(rng.uniform(np.log(0.2), np.log(2.5), n_svc))
    size_m = np.exp(rng.uniform(np.log(0.25), np.log(3.0), n_svc))
    spread = rng.uniform(0.15, 0.5, n_svc)
    under = np.exp(rng.uniform(np.log(0.35), np.log(1.3), n_svc))
    headroom = rng.uniform(1.0, 1.4, n_svc)
    rate = np.exp(rng.uniform(np.log(8.0), np.log(40.0), n_svc))  # per replica per window
    amp = rng.uniform(0.2, 0.6, n_svc)
    phase = rng.uniform(0.0, 2 * np.pi, n_svc)
    drift_amp = rng.uniform(0.0, 0.25, n_svc)
    drift_phase = rng.uniform(0.0, 2 * np.pi, n_svc)

    day = 2 * np.pi * np.arange(W)[:, None] / WINDOWS_PER_DAY  # (W, 1)
    lam = rate * replicas * (1.0 + amp * np.sin(day + phase))  # (W, n_svc)
    total = rng.poisson(lam)
    # round-robin over the replicas, continuing across windows: replica j of a service gets
    # total // r requests, plus one if it is among the next (total % r) in the rotation
    rank = np.arange(P) - np.searchsorted(svc, svc)  # replica index within its service
    r = replicas[svc]
    offset = np.concatenate([np.zeros((1, n_svc), np.int64), np.cumsum(total, axis=0)[:-1]])
    counts = total[:, svc] // r + (((rank - offset[:, svc]) % r) < (total[:, svc] % r))
    drift = 1.0 + drift_amp * np.sin(day + drift_phase)  # (W, n_svc)

    # scale sizes: serial demand of a pod is one request's size
    scale_c = TARGET_CPU * node_cpu.sum() / size_c[svc].sum()
    scale_m = TARGET_MEM * node_mem.sum() / size_m[svc].sum()
    size_c, size_m = size_c * scale_c, size_m * scale_m
    # requests: at most half of the smallest node, and in total at most half the cluster
    rc = np.minimum(size_c[svc] * under[svc], 0.5 * node_cpu.min())
    rm = np.minimum(size_m[svc] * headroom[svc], 0.5 * node_mem.min())
    rc *= min(1.0, 0.5 * node_cpu.sum() / rc.sum())
    rm *= min(1.0, 0.5 * node_mem.sum() / rm.sum())
    rc = np.maximum(np.round(rc, 2), 0.01)
    rm = np.maximum(np.round(rm, 2), 0.01)
    if mode == "parallel":
        conc = max(counts.mean() / GEN_SLOTS, 1e-9)
        size_c, size_m = size_c / conc, size_m / conc
    demand_c = size_c[svc] * drift[:, svc]
    demand_m = size_m[svc] * drift[:, svc]
    pod_node = _pack(rc, rm, node_cpu, node_mem, rng.permutation(P))
    return PodWorkload(
        node_names=tuple(f"node{n + 1}" for n in range(N)),
        node_cpu=node_cpu,
        node_mem=node_mem,
        pod_names=tuple(f"pod{p + 1}" for p in range(P)),
        pod_node=pod_node,
        request_cpu=rc,
        request_mem=rm,
        requests=counts.astype(np.int64),
        demand_cpu=demand_c,
        demand_mem=demand_m,
        spread=spread[svc],
        mode=mode,
        pod_service=tuple(f"svc{s + 1}" for s in svc),
    )


def load_synthetic_pods(path: str, params: dict[str, str]) -> Dataset:
    """``synthetic:pods?nodes=4&pods=40&windows=288&seed=0&mode=serial``."""
    source = f"synthetic:{path}"
    nodes = int_param(params, "nodes", source, minimum=1, default=4)
    pods = int_param(params, "pods", source, minimum=1, default=40)
    windows = int_param(params, "windows", source, minimum=1, default=288)
    seed = int_param(params, "seed", source, minimum=0, default=0)
    assert nodes and pods and windows and seed is not None
    mode = _mode_param(params, source)
    wl = generate_pods(nodes, pods, windows, seed, mode)
    return Dataset(
        name=source,
        workflows=[],
        description=(
            f"{pods} synthetic pods of {len(set(wl.pod_service))} services on {nodes} nodes, "
            f"{windows} 5-minute windows, {mode} requests (seed {seed})"
        ),
        source=f"rlsched.data.pod_requests seed={seed}",
        license="generated (no license)",
        real_fields={},
        derived_fields=dict(GEN_FIELDS),
        trace=wl,
    )


# ---------------------------------------------------------------------------- CSV
def _int_cell(value: str, source: Path, line: int, field: str) -> int:
    v = value.strip()
    try:
        x = int(v)
    except ValueError:
        raise DatasetError(
            f"{value!r} is not an integer", source=source, line=line, field=field
        ) from None
    if x < 0:
        raise DatasetError(f"{x} is negative", source=source, line=line, field=field)
    return x


def _same(
    table: dict[str, tuple[float, int]],
    key: str,
    value: float,
    source: Path,
    line: int,
    field: str,
    what: str,
) -> None:
    """Record ``value`` for ``key``; a different value on a later row is an error."""
    seen = table.get(key)
    if seen is None:
        table[key] = (value, line)
    elif not math.isclose(seen[0], value, rel_tol=1e-9, abs_tol=1e-12):
        raise DatasetError(
            f"{what} {key!r} has {field}={value:g} here but {seen[0]:g} on line {seen[1]}",
            source=source,
            line=line,
            field=field,
        )


def load_pod_requests_file(path: str | Path, mode: str = "serial") -> Dataset:
    """Read a per-pod request CSV (module docstring) into a ``pod-requests`` dataset."""
    p = existing_file(path, "pod request CSV")
    table = CsvTable(p, CSV_COLUMNS)
    h = table.header
    opt = {
        c: (h.index(c) if c in h else None)
        for c in ("request_cpu", "request_mem", "node_cpu", "node_mem", "spread", "service")
    }
    col = table.cols
    pods: dict[str, int] = {}
    nodes: dict[str, int] = {}
    pod_node: dict[str, tuple[str, int]] = {}
    per_pod: dict[str, dict[str, tuple[float, int]]] = {
        k: {} for k in ("request_cpu", "request_mem", "spread")
    }
    per_node: dict[str, dict[str, tuple[float, int]]] = {"node_cpu": {}, "node_mem": {}}
    service: dict[str, str] = {}
    seen: dict[tuple[int, int], int] = {}
    rows: list[tuple[int, int, int, float, float]] = []
    for line, cells in table.rows():
        w = _int_cell(cells[col["window"]], p, line, "window")
        pod = cells[col["pod"]].strip()
        node = cells[col["node"]].strip()
        if not pod:
            raise DatasetError("empty pod name", source=p, line=line, field="pod")
        if not node:
            raise DatasetError("empty node name", source=p, line=line, field="node")
        n_req = _int_cell(cells[col["requests"]], p, line, "requests")
        cpu = req_float(cells[col["cpu"]], p, line, "cpu", minimum=0.0)
        mem = req_float(cells[col["mem"]], p, line, "mem", minimum=0.0)
        first = pod_node.setdefault(pod, (node, line))
        if first[0] != node:
            raise DatasetError(
                f"pod {pod!r} is on node {node!r} here but on {first[0]!r} on line {first[1]} "
                "(node is the pod's initial node, the same in every row)",
                source=p,
                line=line,
                field="node",
            )
        pi = pods.setdefault(pod, len(pods))
        nodes.setdefault(node, len(nodes))
        if (w, pi) in seen:
            raise DatasetError(
                f"pod {pod!r} has a second row for window {w} (first on line {seen[w, pi]})",
                source=p,
                line=line,
                field="window",
            )
        seen[w, pi] = line
        for name in ("request_cpu", "request_mem", "spread"):
            j = opt[name]
            if j is not None and cells[j].strip():
                v = req_float(cells[j], p, line, name, minimum=0.0)
                _same(per_pod[name], pod, v, p, line, name, "pod")
        for name in ("node_cpu", "node_mem"):
            j = opt[name]
            if j is not None and cells[j].strip():
                v = req_float(cells[j], p, line, name, minimum=0.0)
                if v <= 0:
                    raise DatasetError("must be > 0", source=p, line=line, field=name)
                _same(per_node[name], node, v, p, line, name, "node")
        j = opt["service"]
        if j is not None and cells[j].strip():
            service.setdefault(pod, cells[j].strip())
        rows.append((w, pi, n_req, cpu, mem))
    if not rows:
        raise DatasetError("no data rows", source=p, line=2)
    W = max(r[0] for r in rows) + 1
    P, N = len(pods), len(nodes)
    if W * P > MAX_CELLS:
        raise DatasetError(
            f"{W} windows x {P} pods is more than {MAX_CELLS} cells", source=p, field="window"
        )
    arr = np.array(rows, dtype=float)
    wi, pi_ = arr[:, 0].astype(np.int64), arr[:, 1].astype(np.int64)
    counts = np.zeros((W, P), dtype=np.int64)
    counts[wi, pi_] = arr[:, 2].astype(np.int64)
    weight = np.bincount(pi_, weights=arr[:, 2], minlength=P)
    mean_c = np.bincount(pi_, weights=arr[:, 3] * arr[:, 2], minlength=P)
    mean_m = np.bincount(pi_, weights=arr[:, 4] * arr[:, 2], minlength=P)
    plain_c = np.bincount(pi_, weights=arr[:, 3], minlength=P) / np.bincount(pi_, minlength=P)
    plain_m = np.bincount(pi_, weights=arr[:, 4], minlength=P) / np.bincount(pi_, minlength=P)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_c = np.where(weight > 0, mean_c / weight, plain_c)
        mean_m = np.where(weight > 0, mean_m / weight, plain_m)
    # windows a pod has no row for: its mean size (they have no requests anyway)
    demand_c = np.broadcast_to(mean_c, (W, P)).copy()
    demand_m = np.broadcast_to(mean_m, (W, P)).copy()
    demand_c[wi, pi_] = arr[:, 3]
    demand_m[wi, pi_] = arr[:, 4]

    names = list(pods)
    real = {
        "requests": "column requests",
        "cpu": "column cpu",
        "mem": "column mem",
        "node": "column node (initial placement)",
    }
    derived: dict[str, str] = {}

    def per_pod_array(name: str, fallback: np.ndarray, rule: str) -> np.ndarray:
        got = per_pod[name]
        real_desc = f"column {name}"
        out = np.array([got[n][0] if n in got else fallback[i] for i, n in enumerate(names)])
        if len(got) == P:
            real[name] = real_desc
        elif not got:
            derived[name] = rule
        else:
            real[name] = f"{real_desc} ({len(got)} of {P} pods)"
            derived[name] = f"{rule} (other {P - len(got)} pods)"
        return out

    rc = per_pod_array("request_cpu", mean_c, "the pod's request-weighted mean cpu")
    rm = per_pod_array("request_mem", mean_m, "the pod's request-weighted mean mem")
    spread = per_pod_array("spread", np.full(P, DEFAULT_SPREAD), f"{DEFAULT_SPREAD} per pod")
    node_of = np.array([nodes[pod_node[n][0]] for n in names], dtype=np.int64)
    node_names = list(nodes)
    res_c = np.bincount(node_of, weights=rc, minlength=N)
    res_m = np.bincount(node_of, weights=rm, minlength=N)
    alloc: dict[str, np.ndarray] = {}
    for name, res in (("node_cpu", res_c), ("node_mem", res_m)):
        got = per_node[name]
        default = float(max(1.0, math.ceil(1.25 * res.max())))
        if got and len(got) != N:
            missing = next(n for n in node_names if n not in got)
            raise DatasetError(
                f"node {missing!r} has no {name} while other nodes have one",
                source=p,
                field=name,
            )
        if got:
            real[name] = f"column {name}"
            alloc[name] = np.array([got[n][0] for n in node_names])
        else:
            derived[name] = "ceil(1.25 x the largest per-node sum of pod requests), every node"
            alloc[name] = np.full(N, default)
    for name, res, what in (("node_cpu", res_c, "cpu"), ("node_mem", res_m, "memory")):
        over = np.flatnonzero(res > alloc[name] * (1 + 1e-9))
        if len(over):
            n = int(over[0])
            raise DatasetError(
                f"the pods on node {node_names[n]!r} request {res[n]:g} {what}, more than its "
                f"allocatable {alloc[name][n]:g}",
                source=p,
                line=per_node[name][node_names[n]][1] if per_node[name] else None,
                field=name,
            )
    wl = PodWorkload(
        node_names=tuple(node_names),
        node_cpu=alloc["node_cpu"],
        node_mem=alloc["node_mem"],
        pod_names=tuple(names),
        pod_node=node_of,
        request_cpu=rc,
        request_mem=rm,
        requests=counts,
        demand_cpu=demand_c,
        demand_mem=demand_m,
        spread=spread,
        mode=mode,
        pod_service=tuple(service.get(n, n) for n in names) if service else (),
    )
    return Dataset(
        name=f"pod-requests:{p}",
        workflows=[],
        description=f"{P} pods on {N} nodes over {W} 5-minute windows ({mode} requests)",
        source=str(p),
        real_fields=real,
        derived_fields=derived,
        trace=wl,
    )


def load_pod_requests(path: str, params: dict[str, str]) -> Dataset:
    """``pod-requests:PATH?mode=serial``."""
    mode = _mode_param(params, f"pod-requests:{path}")
    return load_pod_requests_file(path, mode)


register(
    "pod-requests",
    load_pod_requests,
    "Per-pod request counts per 5-minute window (CSV window,pod,node,requests,cpu,mem "
    "[,request_cpu,request_mem,node_cpu,node_mem,spread,service]) for PodRebalancing-v0",
    ["pod-requests:./pods.csv", "pod-requests:/data/pods.csv?mode=parallel"],
    "the file's own",
    params={"mode": "serial"},
    canonical_path=abs_path,
)
