"""Seeded synthetic workflows for placement experiments when no trace fits.

``synthetic:placement?workflows=50&tasks=20&types=5&seed=0&interarrival=60``: ``workflows``
layered random DAGs of ``tasks`` tasks drawn from ``types`` function types, submitted as a
Poisson process with mean ``interarrival`` seconds. Each type has its own lognormal runtime,
CPU and memory scale, so types differ the way real functions do; everything comes from one
``numpy.random.Generator(seed)``. Nothing is measured: all fields are flagged as synthetic.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlsched.core.workload import Task, Workflow
from rlsched.data._util import float_param, int_param
from rlsched.data.dataset import Dataset
from rlsched.data.registry import register
from rlsched.errors import DatasetError
from rlsched.suggest import did_you_mean

CORE_CHOICES = np.array([0.25, 0.5, 1.0, 2.0, 4.0])

DERIVED = {
    "type": "synthetic: uniform over 'types' types",
    "exec_time": "synthetic: lognormal per type (median 1-100 s, sigma 0.5 within a type)",
    "cpu_request": "synthetic: per type, one of 0.25, 0.5, 1, 2, 4 cores",
    "cpu_usage": "synthetic: cpu_request x uniform(0.3, 1.0)",
    "mem_request": "synthetic: lognormal per type (median 0.25-4 GB, sigma 0.3 within a type)",
    "io_network": "synthetic: lognormal bytes read / runtime",
    "io_disk": "synthetic: lognormal bytes written / runtime",
    "requests": "synthetic: 1 per task",
    "arrival_time": "synthetic: Poisson workflow submits (mean 'interarrival' s) + earliest "
    "start in the DAG",
}


def layered_dag(rng: np.random.Generator, n: int) -> list[tuple[int, ...]]:
    """Parents of ``n`` tasks in random layers; each non-root task has 1-3 earlier parents,
    one of them in the previous layer, so every layer is really one step deeper."""
    if n == 1:
        return [()]
    n_layers = int(rng.integers(2, max(2, int(np.ceil(np.sqrt(n)))) + 1))
    n_layers = min(n_layers, n)
    # every layer gets at least one task
    layer = np.sort(np.concatenate([np.arange(n_layers), rng.integers(0, n_layers, n - n_layers)]))
    parents: list[tuple[int, ...]] = []
    for i in range(n):
        if layer[i] == 0:
            parents.append(())
            continue
        prev = np.flatnonzero(layer == layer[i] - 1)
        earlier = np.flatnonzero(layer < layer[i])
        first = int(rng.choice(prev))
        k = int(rng.integers(0, min(2, len(earlier) - 1) + 1))
        extra: Any = rng.choice(earlier[earlier != first], size=k, replace=False) if k else []
        parents.append(tuple(sorted({first, *map(int, extra)})))
    return parents


def generate(
    workflows: int, tasks: int, types: int, seed: int, interarrival: float
) -> list[Workflow]:
    rng = np.random.default_rng(seed)
    t_runtime = np.exp(rng.uniform(np.log(1.0), np.log(100.0), types))
    t_cores = rng.choice(CORE_CHOICES, types)
    t_mem = np.exp(rng.uniform(np.log(0.25), np.log(4.0), types))
    t_io = np.exp(rng.uniform(np.log(1e6), np.log(1e9), types))
    submit = np.cumsum(rng.exponential(interarrival, workflows)) - interarrival
    submit[0] = 0.0
    out = []
    for w in range(workflows):
        ty = rng.integers(0, types, tasks)
        runtime = t_runtime[ty] * rng.lognormal(0.0, 0.5, tasks)
        usage = t_cores[ty] * rng.uniform(0.3, 1.0, tasks)
        mem = t_mem[ty] * rng.lognormal(0.0, 0.3, tasks)
        read = t_io[ty] * rng.lognormal(0.0, 1.0, tasks)
        write = t_io[ty] * rng.lognormal(-1.0, 1.0, tasks)
        parents = layered_dag(rng, tasks)
        ts = [
            Task(
                name=f"t{i}",
                type=f"f{ty[i]}",
                runtime=float(runtime[i]),
                parents=parents[i],
                cores=float(t_cores[ty[i]]),
                cpu_usage=float(usage[i]),
                memory_gb=float(mem[i]),
                read_bytes=float(read[i]),
                write_bytes=float(write[i]),
            )
            for i in range(tasks)
        ]
        out.append(
            Workflow(name=f"wf{w}", tasks=ts, submit_time=float(submit[w]), derived_fields=DERIVED)
        )
    return out


#: Other synthetic presets: ``path -> "module:function"`` loaders, imported on first use.
PRESETS: dict[str, str] = {
    "vm": "rlsched.data.synthetic_vm:load_synthetic_vm",
    "pods": "rlsched.data.pod_requests:load_synthetic_pods",
}
#: Their parameters and defaults (see :class:`rlsched.data.registry.Scheme.path_params`).
PRESET_PARAMS: dict[str, dict[str, str | None]] = {
    "vm": {"creations": "125430", "days": "30", "seed": "0"},
    "pods": {"nodes": "4", "pods": "40", "windows": "288", "seed": "0", "mode": "serial"},
}


def load_synthetic(path: str, params: dict[str, str]) -> Dataset:
    source = f"synthetic:{path}"
    if path in PRESETS:
        import importlib

        module, fn = PRESETS[path].split(":")
        return getattr(importlib.import_module(module), fn)(path, params)
    if path != "placement":
        raise DatasetError(
            f"unknown synthetic preset {path!r}{did_you_mean(path, ['placement', *PRESETS])}; "
            f"available: placement, {', '.join(PRESETS)}",
            source=source,
        )
    n = int_param(params, "workflows", source, minimum=1, default=50)
    tasks = int_param(params, "tasks", source, minimum=1, default=20)
    types = int_param(params, "types", source, minimum=1, default=5)
    seed = int_param(params, "seed", source, minimum=0, default=0)
    gap = float_param(params, "interarrival", source, default=60.0)
    assert n and tasks and types and seed is not None and gap
    wfs = generate(n, tasks, types, seed, gap)
    return Dataset(
        name=source,
        workflows=wfs,
        description=(
            f"{n} synthetic layered DAG workflows of {tasks} tasks over "
            f"{types} function types (seed {seed})"
        ),
        source=f"rlsched.data.synthetic seed={seed}",
        license="generated (no license)",
        real_fields={},
        derived_fields=dict(DERIVED),
    )


register(
    "synthetic",
    load_synthetic,
    "Seeded random layered-DAG workflows with lognormal per-type runtimes and resources "
    "(all fields synthetic)",
    ["synthetic:placement", "synthetic:placement?workflows=50&tasks=20&types=5&seed=0"],
    "generated (no license)",
    params={"workflows": "50", "tasks": "20", "types": "5", "seed": "0", "interarrival": "60"},
    path_params=PRESET_PARAMS,
)
