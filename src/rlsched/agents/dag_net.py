"""A network that reads the whole workflow and scores each server as a departure from a base
heuristic's choice (WorkflowOffloading-v0 with ``dag=True``).

Why: the node-scoring network reads one row per server for the current task only, and on
workflows it had not seen it recovered under 5% of the search teacher's gain over PEFT
(``docs/results/wf_small_departures_unseen.py``); a message-passing model of the DAG recovered
13.8% and, played, beat PEFT on held-out workflows (``docs/results/wf_small_dag_learner.py``).

Inputs (:func:`dag_inputs`, from the observation and the base's action):

- per task: the env's ``dag_tasks`` row (work, memory, data, rank and finish signed-log), the
  one-hot of its server, its row of PEFT's optimistic cost table and that row less its least
  value, and its data in; a task mask, the current task and its descendants;
- per server: the entry's per-server keys (:data:`NODE_KEYS` and ``node_free``), the same less
  the base's server's, the task's and subtree's keys, the server's one-hot and the origin flag;
- with ``plan`` (the env's ``dag_plan=True``): per task, the one-hot of its server in PEFT's
  schedule of the rest of the workflow and its finish there; per server, the schedule's latest
  finish and task count on it (``dag_plan_servers``), and the same less the base's server's.

:class:`DagNet`: three rounds of messages (each task reads the mean of its parents' and its
children's embeddings; residual, layer-normalised), then a head scoring each server from the
current task's, its descendants' and the workflow's mean embeddings with the server's row. The
input normalisation is part of the module, so a saved net is complete.
:class:`DagScorer` is the same forward pass in numpy (the serving path: no torch per call).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rlsched.agents.node_numpy import symlog
from rlsched.optional import imported

#: per-server observation keys the network reads (one value per server each), then node_free
NODE_KEYS = (
    "node_busy", "node_child_done", "node_done", "node_done_gap", "node_finish", "node_image",
    "node_is_cloud", "node_oct", "node_origin", "node_peft_gap", "node_queue", "node_speed",
    "node_start", "node_subtree", "node_transfer", "node_width",
)  # fmt: skip
#: the observation keys a departure model needs (the env's ``dag=True`` keys among them)
REQUIRED_KEYS = (*NODE_KEYS, "node_free", "task", "subtree", "dag_tasks", "dag_placed",
                 "dag_links", "dag_oct")  # fmt: skip
#: the keys it needs besides with ``plan`` (the env's ``dag_plan=True``)
PLAN_KEYS = ("dag_plan", "dag_plan_servers")
#: ``dag_tasks`` columns that are heavy-tailed: work, mem, data, rank, finish
_LOGGED = (0, 2, 3, 4, 10)
#: the ``task`` key's data in and data out columns
_TASK_DATA = [3, 4]
_INPUTS = ("task", "real", "cur", "desc", "par", "kid", "server")


def data_scale(dag_tasks: np.ndarray) -> np.ndarray:
    """The workflow's mean data out over its real tasks (``(..., T, 12)`` rows; 1 where it
    sends none): what ``relative_data`` divides data sizes by."""
    real = dag_tasks[..., 11] > 0
    mean = (dag_tasks[..., 3] * real).sum(-1) / np.maximum(real.sum(-1), 1)
    return np.where(mean > 0, mean, 1.0)


def dag_inputs(
    obs: dict[str, np.ndarray], base: np.ndarray, relative_data: bool = False,
    plan: bool = False,
) -> dict[str, np.ndarray]:  # fmt: skip
    """The network's inputs (module docstring) for a batch of observations (every key with a
    leading batch axis) and the base heuristic's action in each: ``task (B, T, F)``, ``real``,
    ``cur``, ``desc`` ``(B, T)``, ``par``/``kid`` ``(B, T, T)`` (``[child, parent]`` /
    ``[parent, child]`` links), ``server (B, N, G)``; float32. ``relative_data``: data sizes
    over the workflow's :func:`data_scale`; ``plan``: with PEFT's schedule (module docstring)."""
    feats = np.asarray(obs["dag_tasks"], np.float64)
    b, t = feats.shape[:2]
    scale = data_scale(feats) if relative_data else np.ones(b)
    oct_ = symlog(np.asarray(obs["dag_oct"], np.float64))
    s = oct_.shape[2]
    logged = feats.copy()
    logged[..., 3] /= scale[:, None]
    logged[..., _LOGGED] = symlog(logged[..., _LOGGED])
    place = np.asarray(obs["dag_placed"]).astype(np.int64)
    onehot = (place[..., None] == np.arange(s)).astype(np.float64)
    links = np.asarray(obs["dag_links"], np.float64)
    data_in = symlog(links.sum(2) / scale[:, None])
    task = np.concatenate(
        [logged, onehot, oct_, oct_ - oct_.min(2, keepdims=True), data_in[..., None]], 2
    )
    if plan:
        task = np.concatenate([task, *_plan_tasks(obs["dag_plan"], s)], 2)
    par = (links > 0).astype(np.float64)
    kid = np.swapaxes(par, 1, 2)
    cur = feats[..., 7] > 0
    desc = np.zeros_like(cur)
    front = cur.astype(np.float64)
    for _ in range(t):  # the closure of the child links from the current task
        reach = np.einsum("bt,btc->bc", front, kid) > 0
        reach &= ~desc
        if not reach.any():
            break
        desc |= reach
        front = reach.astype(np.float64)
    nodes = np.concatenate(
        [np.stack([np.asarray(obs[k], np.float64) for k in NODE_KEYS], 2),
         np.asarray(obs["node_free"], np.float64)], 2)  # fmt: skip
    glob = np.concatenate([np.asarray(obs["task"], np.float64),
                           np.asarray(obs["subtree"], np.float64)], 1)  # fmt: skip
    glob[:, _TASK_DATA] /= scale[:, None]
    nodes, glob = symlog(nodes), symlog(glob)
    at_base = nodes[np.arange(b), np.asarray(base, np.int64)][:, None, :]
    origin = np.asarray(obs["node_origin"], np.float64)[..., None]
    server = np.concatenate(
        [nodes, nodes - at_base, np.repeat(glob[:, None, :], s, 1),
         np.broadcast_to(np.eye(s), (b, s, s)), origin], 2)  # fmt: skip
    if plan:
        ps = symlog(np.asarray(obs["dag_plan_servers"], np.float64))
        at = ps[np.arange(b), np.asarray(base, np.int64)][:, None, :]
        server = np.concatenate([server, ps, ps - at], 2)
    f32 = np.float32
    return {"task": task.astype(f32), "real": (feats[..., 11] > 0).astype(f32),
            "cur": cur.astype(f32), "desc": desc.astype(f32), "par": par.astype(f32),
            "kid": kid.astype(f32), "server": server.astype(f32)}  # fmt: skip


def dag_inputs_of_rows(
    obs: dict[str, np.ndarray], rows: np.ndarray, base: np.ndarray,
    relative_data: bool = False, plan: bool = False, batch: int = 32_768,
) -> dict[str, np.ndarray]:  # fmt: skip
    """:func:`dag_inputs` of the decisions ``rows`` of ``obs`` (``base``: one per row), built
    ``batch`` rows at a time into float32 arrays: the float64 intermediates of a whole
    training set (a million decisions) would not fit in memory. The same numbers."""
    n = len(rows)
    out: dict[str, np.ndarray] = {}
    for i in range(0, n, batch):
        pick = rows[i : i + batch]
        part = dag_inputs({k: v[pick] for k, v in obs.items()}, base[i : i + batch],
                          relative_data, plan)  # fmt: skip
        for k, v in part.items():
            out.setdefault(k, np.empty((n, *v.shape[1:]), v.dtype))[i : i + len(v)] = v
    if not out:  # no rows: the shapes of one
        one = dag_inputs({k: v[:1] for k, v in obs.items()}, np.zeros(1, np.int64),
                         relative_data, plan)  # fmt: skip
        out = {k: v[:0] for k, v in one.items()}
    return out


def _plan_tasks(dag_plan: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray]:
    """The task rows' plan blocks: the one-hot of each task's server in PEFT's schedule and
    its finish there (signed log), from ``dag_plan (..., T, 2)``."""
    dag_plan = np.asarray(dag_plan)
    onehot = (dag_plan[..., 0:1].astype(np.int64) == np.arange(s)).astype(dag_plan.dtype)
    return onehot, symlog(dag_plan[..., 1:2])


class DagNet(torch.nn.Module):
    """Messages along the workflow's links, then a score per server (module docstring)."""

    # the input normalisation, buffers set by the fit (saved with the weights)
    task_mu: torch.Tensor
    task_sd: torch.Tensor
    server_mu: torch.Tensor
    server_sd: torch.Tensor

    def __init__(
        self, task_dim: int, server_dim: int, hidden: int = 64, rounds: int = 3,
        relative_data: bool = False, plan: bool = False,
    ) -> None:  # fmt: skip
        super().__init__()
        self.task_dim, self.server_dim, self.hidden = task_dim, server_dim, hidden
        #: its inputs' data sizes are relative to the workflow's (:func:`dag_inputs`)
        self.relative_data = relative_data
        #: its inputs hold PEFT's schedule of the rest of the workflow (:func:`dag_inputs`)
        self.plan = plan
        self.embed = torch.nn.Sequential(torch.nn.Linear(task_dim, hidden), torch.nn.ReLU())
        self.rounds = torch.nn.ModuleList(
            torch.nn.Sequential(
                torch.nn.Linear(3 * hidden, hidden),
                torch.nn.ReLU(),
                torch.nn.Linear(hidden, hidden),
            )
            for _ in range(rounds)
        )
        self.norms = torch.nn.ModuleList(torch.nn.LayerNorm(hidden) for _ in range(rounds))
        self.head = torch.nn.Sequential(
            torch.nn.Linear(3 * hidden + server_dim, 128), torch.nn.ReLU(),
            torch.nn.Linear(128, 128), torch.nn.ReLU(), torch.nn.Linear(128, 1))  # fmt: skip
        # input normalisation (set by the fit): part of the saved net
        for name, dim in (("task_mu", task_dim), ("server_mu", server_dim)):
            self.register_buffer(name, torch.zeros(dim))
        for name, dim in (("task_sd", task_dim), ("server_sd", server_dim)):
            self.register_buffer(name, torch.ones(dim))

    def forward(self, b: dict[str, torch.Tensor]) -> torch.Tensor:
        real = b["real"].unsqueeze(-1)
        h = self.embed((b["task"] - self.task_mu) / self.task_sd) * real
        par = b["par"] / b["par"].sum(2, keepdim=True).clamp(min=1.0)
        kid = b["kid"] / b["kid"].sum(2, keepdim=True).clamp(min=1.0)
        for mlp, norm in zip(self.rounds, self.norms, strict=True):
            h = norm(h + mlp(torch.cat([h, par @ h, kid @ h], -1))) * real

        def pool(mask: torch.Tensor) -> torch.Tensor:
            m = mask.unsqueeze(-1)
            return (h * m).sum(1) / m.sum(1).clamp(min=1.0)

        ctx = torch.cat([pool(b["cur"]), pool(b["desc"]), pool(b["real"])], -1)
        s = b["server"].shape[1]
        server = (b["server"] - self.server_mu) / self.server_sd
        z = torch.cat([ctx.unsqueeze(1).expand(-1, s, -1), server], -1)
        return self.head(z).squeeze(-1)

    def save(self, path: str | Path) -> None:
        """Every weight and the dimensions, in one ``.npz`` (what :class:`DagScorer` loads)."""
        arrays = {k: v.detach().cpu().numpy() for k, v in self.state_dict().items()}
        dims = np.array([self.task_dim, self.server_dim, self.hidden, len(self.rounds),
                         int(self.relative_data), int(self.plan)])  # fmt: skip
        np.savez(path, __dims__=dims, **arrays)

    @classmethod
    def from_file(cls, path: str | Path) -> DagNet:
        """The net :meth:`save` wrote, as a torch module (to fit further: a warm start)."""
        with np.load(path) as z:
            dims = [int(v) for v in z["__dims__"]] + [0, 0]
            state = {k: torch.as_tensor(z[k]) for k in z.files if k != "__dims__"}
        task, server, hidden, rounds = dims[:4]
        net = cls(task, server, hidden, rounds, relative_data=bool(dims[4]), plan=bool(dims[5]))
        net.load_state_dict(state)
        net.eval()
        return net


def _linear(x: np.ndarray, w: dict[str, np.ndarray], name: str) -> np.ndarray:
    return x @ w[f"{name}.weight"].T + w[f"{name}.bias"]


class DagScorer:
    """:class:`DagNet`'s forward pass in numpy, from the file :meth:`DagNet.save` wrote:
    :meth:`scores` for batches of :func:`dag_inputs`, :meth:`score_one` for one observation
    (the serving path: the same numbers, its inputs never assembled)."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.w = {k: np.asarray(v, np.float32) for k, v in weights.items() if k != "__dims__"}
        dims = np.asarray(weights["__dims__"])
        self.task_dim, self.server_dim, self.hidden, self.rounds = (int(x) for x in dims[:4])
        #: data sizes relative to the workflow's (a file saved before this had four dims)
        self.relative_data = bool(dims[4]) if len(dims) > 4 else False
        #: its inputs hold PEFT's schedule (a file saved before this had five dims)
        self.plan = bool(dims[5]) if len(dims) > 5 else False
        self._fold()
        self._closures: dict[bytes, np.ndarray] = {}
        #: the compiled forward's weights (:mod:`rlsched.agents.dag_kernels`), or None
        #: without numba; set ``compiled = False`` to use the numpy path
        self._kernel = self._kernel_weights()
        self.compiled = self._kernel is not None

    def _kernel_weights(self) -> tuple[Any, tuple[np.ndarray, ...]] | None:
        """:func:`rlsched.agents.dag_kernels.score_one` and the weights it takes, or None."""
        dag_kernels = imported("rlsched.agents.dag_kernels")
        if dag_kernels is None:  # numba is missing
            return None
        w, h = self.w, self.hidden

        def c(a: np.ndarray) -> np.ndarray:
            return np.ascontiguousarray(a, np.float32)

        rounds = range(self.rounds)
        head = w["head.0.weight"].T
        args = (
            c(w["task_mu"]), c(w["task_sd"]), c(w["embed.0.weight"].T), c(w["embed.0.bias"]),
            c(np.stack([self._rounds[r][0] for r in rounds])),  # (R, H, 3H): _fold's blocks
            c(np.stack([w[f"rounds.{r}.0.bias"] for r in rounds])),
            c(np.stack([w[f"rounds.{r}.2.weight"].T for r in rounds])),
            c(np.stack([w[f"rounds.{r}.2.bias"] for r in rounds])),
            c(np.stack([w[f"norms.{r}.weight"] for r in rounds])),
            c(np.stack([w[f"norms.{r}.bias"] for r in rounds])),
            c(w["server_mu"]), c(w["server_sd"]), c(head[: 3 * h]), c(head[3 * h :]),
            c(w["head.0.bias"]), c(w["head.2.weight"].T), c(w["head.2.bias"]),
            c(w["head.4.weight"].T), c(w["head.4.bias"]),
        )  # fmt: skip
        return dag_kernels.score_one, args

    @classmethod
    def load(cls, path: str | Path) -> DagScorer:
        with np.load(path) as z:
            return cls({k: z[k] for k in z.files})

    def num_servers(self) -> int:
        """The server count the net was trained at (its task rows hold three blocks per
        server: the placement's one-hot and two rows of the optimistic cost table; with the
        plan a fourth, the plan's one-hot, and its finish)."""
        if self.plan:
            return (self.task_dim - _TASK_FIXED - 1) // 4
        return (self.task_dim - _TASK_FIXED) // 3

    def scores(self, x: dict[str, np.ndarray]) -> np.ndarray:
        """Scores ``(B, N)`` of a batch of :func:`dag_inputs` (= :class:`DagNet`'s forward)."""
        w = self.w
        real = x["real"][..., None]
        h = np.maximum(_linear((x["task"] - w["task_mu"]) / w["task_sd"], w, "embed.0"), 0.0)
        h = h * real
        par = x["par"] / np.maximum(x["par"].sum(2, keepdims=True), 1.0)
        kid = x["kid"] / np.maximum(x["kid"].sum(2, keepdims=True), 1.0)
        for r in range(self.rounds):
            z = np.concatenate([h, par @ h, kid @ h], -1)
            y = h + _linear(np.maximum(_linear(z, w, f"rounds.{r}.0"), 0.0), w, f"rounds.{r}.2")
            y = y - y.mean(-1, keepdims=True)
            y = y / np.sqrt((y * y).mean(-1, keepdims=True) + 1e-5)
            h = (y * w[f"norms.{r}.weight"] + w[f"norms.{r}.bias"]) * real

        def pool(mask: np.ndarray) -> np.ndarray:
            m = mask[..., None]
            return (h * m).sum(1) / np.maximum(m.sum(1), 1.0)

        ctx = np.concatenate([pool(x["cur"]), pool(x["desc"]), pool(x["real"])], -1)
        s = x["server"].shape[1]
        server = (x["server"] - w["server_mu"]) / w["server_sd"]
        z = np.concatenate([np.repeat(ctx[:, None, :], s, 1), server], -1)
        z = np.maximum(_linear(z, w, "head.0"), 0.0)
        z = np.maximum(_linear(z, w, "head.2"), 0.0)
        return _linear(z, w, "head.4")[..., 0].astype(np.float32)

    def _fold(self) -> None:
        """Weights for :meth:`score_one`: each round's first layer split by the blocks it reads
        (own, parents', children's), the head's first layer split into the context's part and
        each block of the server rows (:func:`dag_inputs`), the constant blocks (a server's
        one-hot, the origin flag) computed once. The input normalisation stays explicit: a
        column constant in training has a tiny spread, and folding it into the weights would
        cancel catastrophically in float32."""
        w, h = self.w, self.hidden
        self._rounds = []
        for r in range(self.rounds):
            w0 = w[f"rounds.{r}.0.weight"].T  # (3H, H): own, parents', children's
            self._rounds.append((np.concatenate([w0[:h], w0[h : 2 * h], w0[2 * h :]], 1),
                                 w[f"rounds.{r}.0.bias"], w[f"rounds.{r}.2.weight"].T,
                                 w[f"rounds.{r}.2.bias"], w[f"norms.{r}.weight"],
                                 w[f"norms.{r}.bias"]))  # fmt: skip
        head = w["head.0.weight"].T.astype(np.float64)  # (3H + G, 128)
        mu, sd = w["server_mu"].astype(np.float64), w["server_sd"].astype(np.float64)
        k = len(NODE_KEYS) + 2  # per-server columns; then the same less the base's, the task's
        g, s = 11, self.num_servers()  # task (8) and subtree (3); the one-hot
        blocks = {"nodes": (0, k), "rel": (k, 2 * k), "glob": (2 * k, 2 * k + g)}
        self._norm = {key: (mu[a:b].astype(np.float32), sd[a:b].astype(np.float32))
                      for key, (a, b) in blocks.items()}  # fmt: skip
        f32 = np.float32
        self._head = {key: head[3 * h + a : 3 * h + b].astype(f32)
                      for key, (a, b) in blocks.items()}  # fmt: skip
        self._head["ctx"] = head[: 3 * h].astype(f32)
        e0 = 2 * k + g
        eye = (np.eye(s) - mu[e0 : e0 + s]) / sd[e0 : e0 + s]
        const = eye @ head[3 * h + e0 : 3 * h + e0 + s] + w["head.0.bias"]
        o = e0 + s  # the origin flag: its row for 0 and for 1
        off, on = ((np.array([v]) - mu[o]) / sd[o] * head[3 * h + o] for v in (0.0, 1.0))
        if self.plan:  # then the plan's per-server columns, and the same less the base's
            for key, (a, b) in {"plan": (o + 1, o + 3), "plan_rel": (o + 3, o + 5)}.items():
                self._norm[key] = (mu[a:b].astype(np.float32), sd[a:b].astype(np.float32))
                self._head[key] = head[3 * h + a : 3 * h + b].astype(f32)
        self._head["const"] = (const + off).astype(f32)
        self._head["origin"] = (on - off).astype(f32)
        self._task_norm = (w["task_mu"], w["task_sd"])

    def _descendants(self, kid: np.ndarray) -> np.ndarray:
        """``reach[p, c]``: task ``c`` descends from ``p`` (cached per workflow's links)."""
        key = kid.tobytes()
        hit = self._closures.get(key)
        if hit is None:
            reach = kid > 0
            for _ in range(max(1, int(np.ceil(np.log2(max(len(kid), 2)))))):
                reach = reach | ((reach.astype(np.float32) @ reach.astype(np.float32)) > 0)
            if len(self._closures) > 4096:  # a bounded cache: many workflows in one process
                self._closures.clear()
            hit = self._closures[key] = reach
        return hit

    def score_one(self, obs: dict[str, np.ndarray], base: int) -> np.ndarray:
        """The score of each server for one observation and the base's action (= ``scores``
        of :func:`dag_inputs` of it, to float32 rounding). Compiled where numba is installed
        (:mod:`rlsched.agents.dag_kernels`), else in numpy."""
        if self.compiled and self._kernel is not None:
            return self._score_compiled(obs, base)
        feats = obs["dag_tasks"]
        n = int(np.count_nonzero(feats[:, 11]))  # padding rows change nothing: drop them
        f = feats[:n].astype(np.float32)
        data = np.float32(data_scale(f)) if self.relative_data else np.float32(1.0)
        f[:, 3] /= data
        f[:, _LOGGED] = symlog(f[:, _LOGGED])
        s = self.num_servers()
        oct_ = symlog(obs["dag_oct"][:n].astype(np.float32))
        onehot = (obs["dag_placed"][:n, None] == np.arange(s)).astype(np.float32)
        links = obs["dag_links"][:n, :n]
        data_in = symlog(np.add.reduce(links, 1) / data)
        task = np.concatenate([f, onehot, oct_, oct_ - np.minimum.reduce(oct_, 1)[:, None],
                               data_in[:, None]], 1)  # fmt: skip
        if self.plan:
            task = np.concatenate([task, *_plan_tasks(obs["dag_plan"][:n], s)], 1)
        mu, sd = self._task_norm
        x = np.maximum(_linear((task - mu) / sd, self.w, "embed.0"), 0.0)
        kid = (links > 0).T.astype(np.float32)
        par = kid.T / np.maximum(np.add.reduce(kid, 0), 1.0)[:, None]
        kidn = kid / np.maximum(np.add.reduce(kid, 1), 1.0)[:, None]
        hdim, scale = self.hidden, 1.0 / self.hidden
        for w0, b0, w2, b2, gamma, beta in self._rounds:
            z = x @ w0
            z = z[:, :hdim] + par @ z[:, hdim : 2 * hdim] + kidn @ z[:, 2 * hdim :] + b0
            y = x + (np.maximum(z, 0.0) @ w2 + b2)
            y -= np.add.reduce(y, 1)[:, None] * scale
            x = y / np.sqrt(np.add.reduce(y * y, 1)[:, None] * scale + 1e-5) * gamma + beta
        cur = int(np.argmax(f[:, 7]))
        desc = self._descendants(kid)[cur]
        below = np.add.reduce(x[desc], 0) / max(int(np.count_nonzero(desc)), 1)
        ctx = np.concatenate([x[cur], below, np.add.reduce(x, 0) / n])
        hd = self._head
        nodes, glob = _server_keys(obs, s)
        nodes = symlog(nodes)
        glob[_TASK_DATA] /= data
        glob = symlog(glob)
        (mn, sn), (mr, sr), (mg, sg) = (self._norm[k] for k in ("nodes", "rel", "glob"))
        z = ((nodes - mn) / sn) @ hd["nodes"] + ((nodes - nodes[base] - mr) / sr) @ hd["rel"]
        z += ctx @ hd["ctx"] + ((glob - mg) / sg) @ hd["glob"] + hd["const"]
        z += np.asarray(obs["node_origin"], np.float32)[:, None] * hd["origin"]
        if self.plan:
            ps = symlog(np.asarray(obs["dag_plan_servers"], np.float32))
            (mp, sp), (mq, sq) = self._norm["plan"], self._norm["plan_rel"]
            z += ((ps - mp) / sp) @ hd["plan"] + ((ps - ps[base] - mq) / sq) @ hd["plan_rel"]
        z = np.maximum(z, 0.0)
        z = np.maximum(_linear(z, self.w, "head.2"), 0.0)
        return _linear(z, self.w, "head.4")[:, 0]

    def _score_compiled(self, obs: dict[str, np.ndarray], base: int) -> np.ndarray:
        assert self._kernel is not None
        kernel, weights = self._kernel
        return kernel(*self.kernel_inputs(obs), int(base), self.relative_data, self.plan,
                      *weights)  # fmt: skip

    def kernel_inputs(self, obs: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
        """The compiled forward's observation arrays (an ensemble of networks of one shape
        prepares them once: :func:`stacked_kernel`)."""
        s = self.num_servers()
        nodes, glob = _server_keys(obs, s)
        f32 = np.float32
        plan, per_server = (
            (obs["dag_plan"], obs["dag_plan_servers"]) if self.plan else (_NONE, _NONE)
        )
        return (
            np.asarray(obs["dag_tasks"], f32), np.asarray(obs["dag_oct"], f32),
            np.asarray(obs["dag_placed"], f32), np.asarray(obs["dag_links"], f32),
            np.asarray(plan, f32), np.asarray(per_server, f32), nodes, glob,
            np.asarray(obs["node_origin"], f32),
        )  # fmt: skip


def stacked_kernel(
    scorers: list[DagScorer], offsets: list[float]
) -> tuple[Any, tuple[np.ndarray, ...]] | None:
    """:func:`rlsched.agents.dag_kernels.score_mean` and its arguments after the observation's
    (the offsets, then each weight stacked over ``scorers``): an ensemble's forward in one
    compiled call. None where a scorer is not compiled or the networks' shapes or input
    flags differ."""
    kernels = [s._kernel for s in scorers]
    if any(k is None for k in kernels) or not all(s.compiled for s in scorers):
        return None
    first = scorers[0]
    if any((s.relative_data, s.plan) != (first.relative_data, first.plan) for s in scorers):
        return None
    weights = [k[1] for k in kernels if k is not None]
    if any(a.shape != b.shape for w in weights[1:] for a, b in zip(w, weights[0], strict=True)):
        return None
    from rlsched.agents import dag_kernels

    stacked = tuple(np.ascontiguousarray(np.stack(ws)) for ws in zip(*weights, strict=True))
    return dag_kernels.score_mean, (np.asarray(offsets, np.float32), *stacked)


def _server_keys(obs: dict[str, np.ndarray], s: int) -> tuple[np.ndarray, np.ndarray]:
    """One observation's per-server keys ``(s, 18)`` (:data:`NODE_KEYS`, then ``node_free``)
    and its task and subtree keys ``(11,)``, float32, raw (the serving paths' inputs)."""
    nodes = np.empty((s, len(NODE_KEYS) + 2), np.float32)
    nodes[:, :-2] = np.array([obs[key] for key in NODE_KEYS], np.float32).T  # one conversion
    nodes[:, -2:] = obs["node_free"]
    return nodes, np.concatenate([obs["task"], obs["subtree"]]).astype(np.float32)


#: no PEFT schedule (a scorer without ``plan``): what the compiled forward is passed instead
_NONE = np.zeros((1, 2), np.float32)

#: ``dag_tasks`` columns plus data in: the task inputs besides the three per-server blocks
_TASK_FIXED = 12 + 1


def fit_dag_net(
    x: dict[str, np.ndarray], y: np.ndarray, on: np.ndarray, fit: np.ndarray, held: np.ndarray,
    epochs: int = 40, patience: int = 5, lr: float = 1e-3, hidden: int = 64, rounds: int = 3,
    batch_size: int = 256, seed: int = 0, progress: Any = None, relative_data: bool = False,
    rng: np.random.Generator | None = None, plan: bool = False, objective: str = "bce",
    start: DagNet | None = None,
) -> tuple[DagNet, list[float]]:  # fmt: skip
    """A :class:`DagNet` fitted to the labels ``y (B, N)`` (1: the server the teacher departs
    to) by binary cross-entropy over the servers ``on`` (candidates: valid and not the base's),
    on the decisions ``fit`` (indices); the weights of the epoch with the least loss on the
    decisions ``held`` are kept (early stopping; at most ``epochs``, ``patience`` without
    improvement). Returns the net and the held-out loss per epoch. ``progress(epoch, loss)``
    is called after each epoch when given. ``relative_data`` and ``plan``: how ``x`` was built
    (:func:`dag_inputs`), saved with the net. ``rng`` shuffles the decisions each epoch
    (default: a generator seeded with ``seed``). ``objective``: ``bce`` (``y`` 0/1) or ``huber``
    (``y`` any target, e.g. the relative gain: the scores regress on it). ``start``: fit from a
    copy of this net (its width, rounds and input normalisation; warm start) instead of a
    fresh one; with ``epochs=0`` the copy is returned as it is."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed) if rng is None else rng
    t = {k: torch.as_tensor(x[k]) for k in _INPUTS}
    dims = (x["task"].shape[2], x["server"].shape[2])
    if start is not None:
        have = (start.task_dim, start.server_dim, start.relative_data, start.plan)
        if have != (*dims, relative_data, plan):
            raise ValueError(
                f"the start net reads (task, server, relative data, plan) = {have}, these "
                f"inputs are {(*dims, relative_data, plan)}"
            )
        net = copy.deepcopy(start)  # its normalisation stays: its weights were fitted to it
    else:
        net = DagNet(*dims, hidden, rounds, relative_data, plan)
        fit_t = torch.as_tensor(np.asarray(fit))
        rows = t["server"][fit_t][torch.as_tensor(on[fit])]
        net.server_mu[:], net.server_sd[:] = rows.mean(0), rows.std(0) + 1e-6
        tasks = t["task"][fit_t][t["real"][fit_t] > 0]
        net.task_mu[:], net.task_sd[:] = tasks.mean(0), tasks.std(0) + 1e-6
    yt = torch.as_tensor(y, dtype=torch.float32)
    ot = torch.as_tensor(on, dtype=torch.float32)
    opt = torch.optim.Adam(net.parameters(), lr)

    def summed(idx: torch.Tensor) -> torch.Tensor:
        z = net({k: v[idx] for k, v in t.items()})
        if objective == "huber":  # beta: gains under 2% count quadratically
            each = torch.nn.functional.smooth_l1_loss(z, yt[idx], reduction="none", beta=0.02)
        else:
            each = torch.nn.functional.binary_cross_entropy_with_logits(
                z, yt[idx], reduction="none"
            )
        return (each * ot[idx]).sum()

    def loss_of(idx: torch.Tensor) -> torch.Tensor:
        return summed(idx) / ot[idx].sum().clamp(min=1.0)

    def held_loss() -> float:  # in slices: the whole kept-aside set at once takes GBs
        total = sum(float(summed(held_t[i : i + 8192])) for i in range(0, len(held_t), 8192))
        return total / max(float(ot[held_t].sum()), 1.0)

    order, held_t = np.array(fit, np.int64), torch.as_tensor(np.asarray(held, np.int64))
    best, best_state, waited, curve = float("inf"), None, 0, []
    if start is not None and len(held_t):  # a warm start is kept unless an epoch beats it
        net.eval()
        with torch.no_grad():
            best = held_loss()
        best_state = {k: v.clone() for k, v in net.state_dict().items()}
    for epoch in range(epochs):
        rng.shuffle(order)
        net.train()
        for i in range(0, len(order), batch_size):
            loss = loss_of(torch.as_tensor(order[i : i + batch_size]))
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            now = held_loss() if len(held_t) else float("nan")
        curve.append(now)
        if progress is not None:
            progress(epoch, now)
        if now < best or not len(held_t):  # nothing held out: keep the last
            best, waited = now, 0
            best_state = {k: v.clone() for k, v in net.state_dict().items()}
        else:
            waited += 1
            if waited >= patience:
                break
    if best_state is not None:
        net.load_state_dict(best_state)
    net.eval()
    return net, curve


def torch_scores(net: DagNet, x: dict[str, np.ndarray], batch: int = 4096) -> np.ndarray:
    """``net``'s scores of many decisions (the fit's side; serving uses :class:`DagScorer`)."""
    n = len(x["task"])
    out = []
    with torch.inference_mode():
        for i in range(0, n, batch):
            out.append(net({k: torch.as_tensor(x[k][i : i + batch]) for k in _INPUTS}).numpy())
    return np.concatenate(out) if out else np.zeros((0, x["server"].shape[1]), np.float32)
