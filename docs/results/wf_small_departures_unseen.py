"""Can the search teacher's departures from PEFT be learned for workflows not trained on?
(descriptive, training data only: nothing here reads a validation or test set, and nothing is
chosen on it).

Rounds W4-W7 distilled the search teacher (the rollout over PEFT to the workflow's end, every
valid server tried) into the node-scoring network, and each student recognised too few of the
teacher's departures from PEFT: the refits reproduced at most 29% of them on their own training
states, and on test the few departures the students made lost. This asks whether *any* learner
can tell those decisions apart from the entry's observation (every key of the env the entry
plays: ``lookahead``, ``finish_gap``, ``optimistic_cost``, ``contention``) on workflows it has
not seen.

Data: PEFT plays episodes of a training pool; at every decision the teacher values each valid
server (the return left to the workflow's end when the task goes there and PEFT places the
rest: PEFT's exact Q-values, one workflow per episode, nothing sampled). A *departure* is a
server whose value beats PEFT's server by at least 5% of PEFT's (the ``min_gain`` of round W7),
the best such server per decision. Two pools:

- ``seed=2``: the entry's own 200 training workflows, episodes seeds 80,000+;
- ``seed=13``: 3,000 workflows of the same generator that nothing else used (episodes seeds
  82,000+, so most episodes meet a workflow once).

Learners (5-fold cross-validation): a network scoring each server from its features, its
features less those of PEFT's server, the task's and the subtree's (binary cross-entropy: is
this server the departure; signed-log inputs; 128 ReLU units, 2 layers, 60 epochs, Adam 1e-3),
and, when scikit-learn is installed (not a dependency of rlsched), gradient-boosted trees on the
same per-server rows (``HistGradientBoostingClassifier``, 300 iterations, rate 0.05). Each
decision departs to its highest-scored server when the score clears a threshold. Reported for
each threshold: departures, how many gain and lose by the teacher's values, and the sum of
their gains (seconds of the workflow's completion), against the sum over the teacher's own
departures. The folds split once by episode (a workflow can be in training and held-out folds:
what a learner can memorise) and once by workflow (held-out folds meet only new workflows).
Thresholds are read in sample, which flatters the learners.

    PYTHONPATH=<scikit-learn> python docs/results/wf_small_departures_unseen.py
        (about 30 minutes here: the two pools' teacher runs in parallel, then the fits)

Writes ``docs/results/wf_small_departures_unseen.json``; the teacher's records are kept in
``runs/wf_departures/`` (reused when present).
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from make_zoo import ROOT
from make_zoo_wf_small import ENV, KWARGS, PRESET
from make_zoo_wf_small_margin import EXTRA

from rlsched.agents.node_numpy import symlog

OUT = ROOT / "docs/results/wf_small_departures_unseen.json"
CACHE = ROOT / "runs/wf_departures"
POOLS = {  # name -> (dataset, first episode seed, episodes)
    "seed=2 (the entry's 200 training workflows)": (
        "synthetic:placement?workflows=200&tasks=15&seed=2", 80_000, 1500),
    "seed=13 (3,000 new training workflows)": (
        "synthetic:placement?workflows=3000&tasks=15&seed=13", 82_000, 1500),
}  # fmt: skip
MIN_GAIN = 0.05
NODE_KEYS = (
    "node_busy", "node_child_done", "node_done", "node_done_gap", "node_finish", "node_image",
    "node_is_cloud", "node_oct", "node_origin", "node_peft_gap", "node_queue", "node_speed",
    "node_start", "node_subtree", "node_transfer", "node_width",
)  # fmt: skip
FOLDS = 5


def observed(obs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The observation as the learners read it: per-server rows and the task's and subtree's."""
    nodes = np.concatenate([np.stack([obs[k] for k in NODE_KEYS], 1), obs["node_free"]], 1)
    return nodes, np.concatenate([obs["task"], obs["subtree"]])


def collect(
    dataset: str, first: int, episodes: int, extra: Callable[[Any], dict] | None = None
) -> dict[str, np.ndarray]:
    """PEFT's episodes with the teacher's value of every valid server at each decision;
    ``extra(base)``, when given, adds more arrays per decision from the unwrapped env (read
    before PEFT's step)."""
    from rlsched.evaluate import make_env
    from rlsched.policies.registry import make_policy, make_rollout

    torch.set_num_threads(1)
    env = make_env(ENV, dataset, **KWARGS, **EXTRA, scenario=PRESET)
    base = env.unwrapped
    n = base.num_servers
    teacher = make_rollout(env, "peft", horizon=None, futures=0, top_k=n, prefer_base=True,
                           score="return", reward="makespan")  # fmt: skip
    peft = make_policy("peft", env, seed=0)
    rec: dict[str, list] = {k: [] for k in ("nodes", "glob", "mask", "peft", "q", "ep", "wf")}
    for k in range(episodes):
        obs, _ = env.reset(seed=first + k)
        teacher.reset(first + k)
        done = False
        while not done:
            mask = base.action_masks()
            p = int(peft.act(obs, mask))
            teacher.act(obs, mask)
            q = np.full(n, np.nan)
            for a, v in (teacher.action_values() or {}).items():
                q[a] = v * base.time_unit  # the return is in time units: seconds
            nodes, glob = observed(obs)
            rec["nodes"].append(nodes)
            rec["glob"].append(glob)
            rec["mask"].append(mask.copy())
            rec["peft"].append(p)
            rec["q"].append(q)
            rec["ep"].append(first + k)
            rec["wf"].append(int(base._picks[base._w]))
            for key, value in (extra(base) if extra else {}).items():
                rec.setdefault(key, []).append(value)
            obs, _, done, _, _ = env.step(p)  # PEFT's states: the ones a gated student meets
        if (k + 1) % 100 == 0:
            print(f"{dataset}: {k + 1}/{episodes} episodes", flush=True)
    return {k: np.asarray(v) for k, v in rec.items()}


def _cached(args: tuple[str, str, int, int]) -> Path:
    _, dataset, first, episodes = args
    path = CACHE / f"{dataset.split('seed=')[-1]}_{first}_{episodes}.npz"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, **collect(dataset, first, episodes))
    return path


def rows(d: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Decisions with two or more valued servers and a nonzero return left; per decision the
    gain of each server over PEFT's (seconds, -inf where unvalued) and the departure label."""
    q, p = d["q"], d["peft"]
    i = np.arange(len(p))
    base = q[i, p]
    keep = (np.isfinite(q).sum(1) >= 2) & (np.abs(base) > 1e-6)
    d = {k: v[keep] for k, v in d.items()}
    q, p, base = d["q"], d["peft"], base[keep]
    gain = np.where(np.isfinite(q), q - base[:, None], -np.inf)
    best = gain.argmax(1)
    rel = gain[np.arange(len(p)), best] / np.abs(base)
    d["gain"], d["label"] = gain, np.where(rel >= MIN_GAIN, best, -1)  # -1: stay with PEFT
    return d


def pair_features(d: dict[str, np.ndarray], log: bool) -> np.ndarray:
    """Per decision and server: its features, less PEFT's server's, the task's and subtree's."""
    nodes, glob = d["nodes"], d["glob"]
    if log:
        nodes, glob = symlog(nodes), symlog(glob)
    at_peft = nodes[np.arange(len(nodes)), d["peft"]][:, None, :]
    n = nodes.shape[1]
    return np.concatenate([nodes, nodes - at_peft, np.repeat(glob[:, None, :], n, 1)], 2)


def candidates(d: dict[str, np.ndarray]) -> np.ndarray:
    """Servers a decision may depart to: valued and not PEFT's."""
    on = np.isfinite(d["gain"]) & d["mask"].astype(bool)
    on[np.arange(len(on)), d["peft"]] = False
    return on


def fit_network(x: np.ndarray, y: np.ndarray, on: np.ndarray, train: np.ndarray) -> np.ndarray:
    """Scores of every (decision, server) from a network fitted on the ``train`` decisions."""
    torch.manual_seed(0)
    flat = x[train][on[train]]
    mu, sd = flat.mean(0), flat.std(0) + 1e-6
    xt = torch.as_tensor((x - mu) / sd, dtype=torch.float32)
    yt = torch.as_tensor(y, dtype=torch.float32)
    ot = torch.as_tensor(on, dtype=torch.float32)
    net = torch.nn.Sequential(torch.nn.Linear(x.shape[2], 128), torch.nn.ReLU(),
                              torch.nn.Linear(128, 128), torch.nn.ReLU(),
                              torch.nn.Linear(128, 1))  # fmt: skip
    opt = torch.optim.Adam(net.parameters(), 1e-3)
    idx = np.where(train)[0]
    rng = np.random.default_rng(0)
    for _ in range(60):
        rng.shuffle(idx)
        for i in range(0, len(idx), 256):
            b = torch.as_tensor(idx[i : i + 256])
            z = net(xt[b]).squeeze(-1)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(z, yt[b], reduction="none")
            loss = (loss * ot[b]).sum() / ot[b].sum().clamp(min=1.0)
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        return net(xt).squeeze(-1).numpy()


def fit_trees(x: np.ndarray, y: np.ndarray, on: np.ndarray, train: np.ndarray) -> np.ndarray:
    """Log-odds of every (decision, server) from boosted trees fitted on the ``train`` ones."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(max_iter=300, learning_rate=0.05, random_state=0)
    sel = on & train[:, None]
    model.fit(x[sel], y[sel])
    out = np.full(on.shape, -np.inf)
    p = model.predict_proba(x[on])[:, 1].clip(1e-9, 1 - 1e-9)
    out[on] = np.log(p / (1 - p))
    return out


def threshold_table(scores: np.ndarray, d: dict[str, np.ndarray], on: np.ndarray) -> list[dict]:
    """Per threshold: what departing to each decision's top-scored server would gain."""
    s = np.where(on, scores, -np.inf)
    top = s.argmax(1)
    best = s.max(1)
    g = d["gain"][np.arange(len(top)), top]
    finite = best[np.isfinite(best)]
    qs = (0.9, 0.95, 0.97, 0.98, 0.99, 0.995)
    out = []
    for t in np.quantile(finite, qs):
        dep = best >= t
        out.append({"threshold": float(t), "departures": int(dep.sum()),
                    "gain": int((g[dep] > 0).sum()), "lose": int((g[dep] < 0).sum()),
                    "seconds": float(g[dep].sum())})  # fmt: skip
    return out


def main() -> None:
    t0 = time.perf_counter()
    jobs = [(name, *spec) for name, spec in POOLS.items()]
    with multiprocessing.get_context("spawn").Pool(len(jobs)) as pool:
        paths = pool.map(_cached, jobs)
    try:
        import sklearn  # noqa: F401

        learners = {"network": fit_network, "trees": fit_trees}
    except ImportError:
        print("scikit-learn is not installed: the network only")
        learners = {"network": fit_network}
    out: dict = {"min_gain": MIN_GAIN, "pools": {}}
    for (name, dataset, first, episodes), path in zip(jobs, paths, strict=True):
        d = rows(dict(np.load(path)))
        on = candidates(d)
        y = np.zeros(on.shape)
        dep = d["label"] >= 0
        y[np.where(dep)[0], d["label"][dep]] = 1.0
        teacher_s = float(d["gain"][np.where(dep)[0], d["label"][dep]].sum())
        res: dict = {"dataset": dataset, "episodes": episodes, "first_seed": first,
                     "workflows": len(np.unique(d["wf"])), "decisions": len(dep),
                     "teacher": {"departures": int(dep.sum()), "seconds": teacher_s}}  # fmt: skip
        print(f"{name}: {res['decisions']} decisions, {res['workflows']} workflows; the teacher "
              f"departs {int(dep.sum())} times for {teacher_s:.1f} s", flush=True)  # fmt: skip
        x = {lname: pair_features(d, log=lname == "network") for lname in learners}
        for split in ("episode", "workflow"):
            groups = np.unique(d["ep" if split == "episode" else "wf"])
            np.random.default_rng(0).shuffle(groups)
            folds = np.array_split(groups, FOLDS)
            key = d["ep" if split == "episode" else "wf"]
            for lname, fit in learners.items():
                scores = np.full(on.shape, -np.inf)
                for f in folds:
                    held = np.isin(key, f)
                    scores[held] = fit(x[lname], y, on, ~held)[held]
                table = threshold_table(scores, d, on)
                res[f"{lname}, folds by {split}"] = table
                top = max(table, key=lambda r: r["seconds"])
                share = top["seconds"] / max(teacher_s, 1e-9)
                print(f"  {lname:7s} folds by {split:8s}: best threshold departs "
                      f"{top['departures']} ({top['gain']} gain, {top['lose']} lose), "
                      f"{top['seconds']:+.1f} s = {share:.1%} of the teacher's",
                      flush=True)  # fmt: skip
        out["pools"][name] = res
    out["seconds"] = time.perf_counter() - t0
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{out['seconds']:.0f} s; wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
