"""Does a network that reads the whole workflow find the search teacher's departures from PEFT
on workflows it has not seen? (descriptive, training data only: nothing here reads a validation
or test set, and nothing is chosen on it).

``wf_small_departures_unseen.py`` found that, from the entry's per-decision observation, neither
a network nor boosted trees recover more than 4.3% of the teacher's gain on new workflows, and
that, at 1,500 episodes, six times more training workflows did not help. It suggested a model
of the whole DAG. This builds one and asks the same question on four times the episodes.

Data: PEFT plays episodes of a pool of 10,000 workflows nothing else used
(``synthetic:placement?workflows=10000&tasks=15&seed=15``, episode seeds 90,000+, so most
episodes meet a new workflow); at every decision the teacher (the rollout over PEFT to the
workflow's end, every valid server) values each server, as in ``wf_small_departures_unseen.py``,
and the state of the whole workflow is recorded beside the entry's observation: per task its
work, demands, output, upward rank, depth, whether it is decided, where and when it runs, its
row of PEFT's optimistic cost table; the parent links and the data they carry. Chunks of 500
episodes go to ``runs/wf_dag/`` (reused when present, so the collection resumes).

Learners, on the same per-server departure labels (binary cross-entropy; a departure: the best
server beating PEFT's by at least 5% of PEFT's return), each judged on workflows held out of its
fit (5 folds grouped by workflow; the share of the teacher's gain recovered at the best of six
thresholds, read in sample, which flatters every learner alike):

- per-decision: the network and, when scikit-learn is installed (not a dependency), the
  boosted trees of ``wf_small_departures_unseen.py``, on the entry's observation;
- whole DAG: a message-passing network over the workflow's tasks (three rounds, each task
  reading the mean of its parents' and of its children's embeddings; each task's data in and
  out, placement and finish among its inputs), whose embeddings of the current task, of its
  descendants and of the whole workflow score each server together with the per-server rows
  the per-decision learners read (among them ``node_child_done``, the critical child's finish).
  Its fit stops on a tenth of its own training workflows (the epoch of least loss there).

Then played, the honest measure (the shares above add up departures that overlap): the whole-DAG
network fitted on three folds' workflows, its threshold the best of the six on the fourth's
decisions, plays PEFT with its departures on every episode of the fifth fold's workflows,
paired with PEFT alone on the same episodes (mean completion, 95% bootstrap interval).
``--curve 1500,3000`` judges the learners again on the first N episodes only (fewer training
workflows), to see how the shares grow with data.

    PYTHONPATH=<scikit-learn> python docs/results/wf_small_dag_learner.py [--episodes N]
        [--collect-only] [--chunks A-B [--reverse]] [--curve N1,N2]

(--chunks: collect only those, to run collections side by side. Here the teacher took 7,654 s
of process time for 6,000 episodes, two collections at a time; the analysis then 636 s.)

Writes ``docs/results/wf_small_dag_learner.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import multiprocessing
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from make_zoo import ROOT
from wf_small_departures_unseen import (
    FOLDS,
    candidates,
    collect,
    fit_network,
    fit_trees,
    observed,
    pair_features,
    rows,
    threshold_table,
)

from rlsched.agents.dag_net import fit_dag_net, torch_scores
from rlsched.agents.node_numpy import symlog
from rlsched.stats import paired

OUT = ROOT / "docs/results/wf_small_dag_learner.json"
CACHE = ROOT / "runs/wf_dag"
DATASET = "synthetic:placement?workflows=10000&tasks=15&seed=15"
FIRST = 90_000
CHUNK = 500
T_MAX = 20  # tasks per workflow, padded


def dag_state(base: Any) -> dict[str, np.ndarray]:
    """The whole workflow at the current decision: per task features, placements, links."""
    w, k = base.current_instance(), base.current_workflow
    n, s = len(w.tasks), base.num_servers
    if n > T_MAX:
        raise ValueError(f"workflow of {n} tasks, more than {T_MAX}")
    unit = base.time_unit
    now = base._now
    decided = base._server >= 0
    feats = np.zeros((T_MAX, 12), np.float32)
    feats[:n, 0] = [t.work / unit for t in w.tasks]
    feats[:n, 1] = [t.cpu for t in w.tasks]
    feats[:n, 2] = [t.mem for t in w.tasks]
    feats[:n, 3] = [t.data for t in w.tasks]
    feats[:n, 4] = np.asarray(base._ranks[k]) / unit
    feats[:n, 5] = base._depth[k]
    feats[:n, 6] = decided
    feats[base.current_task, 7] = 1.0
    feats[:n, 8] = [not kids for kids in base._children[k]]
    feats[:n, 9] = [not t.parents for t in w.tasks]
    feats[:n, 10] = np.where(decided, np.nan_to_num(base._finish - now), 0.0) / unit
    feats[:n, 11] = 1.0  # a real task, not padding
    place = np.full(T_MAX, -1, np.int8)
    place[:n] = base._server
    parents = np.zeros((T_MAX, T_MAX), np.float32)  # [child, parent] = data on the link
    for i, t in enumerate(w.tasks):
        for p in t.parents:
            parents[i, p] = w.tasks[p].data
    oct_ = np.zeros((T_MAX, s), np.float32)
    oct_[:n] = base.optimistic_costs() / unit
    return {"dag_feats": feats, "dag_place": place, "dag_parents": parents, "dag_oct": oct_,
            "dag_origin": np.int8(w.origin)}  # fmt: skip


def collect_chunks(
    episodes: int, only: set[int] | None = None, reverse: bool = False
) -> dict[str, np.ndarray]:
    """The teacher's records with the workflow's state, ``episodes`` from seed ``FIRST``
    (``only``: collect just these chunks, ``reverse``: the last first, to run several
    collections side by side)."""
    parts = []
    for k in range(0, episodes, CHUNK)[:: -1 if reverse else 1]:
        if only is not None and k // CHUNK not in only:
            continue
        path = CACHE / f"15_{FIRST + k}_{CHUNK}.npz"
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            t0 = time.perf_counter()
            rec = collect(DATASET, FIRST + k, CHUNK, extra=dag_state)
            np.savez_compressed(path, **rec)
            print(f"chunk {k // CHUNK}: {time.perf_counter() - t0:.0f} s", flush=True)
        parts.append(dict(np.load(path)))
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


def dag_inputs(d: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    """Tensors of the whole-DAG network: per task, per link, and the per-server rows."""
    feats = d["dag_feats"].astype(np.float64)
    s = d["dag_oct"].shape[2]
    logged = feats.copy()
    for c in (0, 2, 3, 4, 10):  # work, mem, data, rank, finish: heavy-tailed
        logged[..., c] = symlog(feats[..., c])
    place = d["dag_place"].astype(np.int64)
    onehot = (place[..., None] == np.arange(s)).astype(np.float64)
    oct_ = symlog(d["dag_oct"].astype(np.float64))
    origin = (d["dag_origin"][:, None] == np.arange(s)).astype(np.float64)
    real = feats[..., 11] > 0
    parents = d["dag_parents"] > 0  # [child, parent]
    data_in = symlog((d["dag_parents"]).sum(2))
    task = np.concatenate([logged, onehot, oct_, oct_ - oct_.min(2, keepdims=True),
                           data_in[..., None]], 2)  # fmt: skip
    # descendants of the current task: the closure of the child links from it
    cur = feats[..., 7] > 0
    desc = np.zeros_like(cur)
    front = cur.copy()
    kids = np.swapaxes(parents, 1, 2)  # [parent, child]
    for _ in range(T_MAX):
        front = np.einsum("bt,btc->bc", front.astype(np.float64), kids.astype(np.float64)) > 0
        front &= ~desc
        if not front.any():
            break
        desc |= front
    servers = pair_features(d, log=True)
    n = servers.shape[0]
    server_id = np.broadcast_to(np.eye(s), (n, s, s))

    def as_t(a: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(np.ascontiguousarray(a), dtype=torch.float32)

    server = np.concatenate([servers, server_id, origin[:, :, None]], 2)
    wf = torch.as_tensor(d["wf"] if "wf" in d else np.zeros(n, np.int64))
    return {"wf": wf, "task": as_t(task), "real": as_t(real), "cur": as_t(cur), "desc": as_t(desc),
            "par": as_t(parents), "kid": as_t(kids), "server": as_t(server)}  # fmt: skip


def train_dag(
    x: dict[str, torch.Tensor], y: np.ndarray, on: np.ndarray, train: np.ndarray,
    epochs: int = 40, patience: int = 5,
) -> Callable[[dict[str, torch.Tensor]], np.ndarray]:  # fmt: skip
    """A DagNet fitted on the ``train`` decisions, as a scorer of (decision, server) inputs.
    A tenth of the training workflows (``x["wf"]``) is kept aside to stop the fit: the weights
    of the epoch with the least loss there are kept. (The package's
    :func:`rlsched.agents.dag_net.fit_dag_net`, shuffling with the generator that chose the
    workflows kept aside, as when the study ran.)"""
    rng = np.random.default_rng(0)
    wf = x["wf"].numpy()
    own = np.unique(wf[train])
    aside = np.isin(wf, rng.choice(own, max(1, len(own) // 10), replace=False)) & train
    fit = train & ~aside
    net, _ = fit_dag_net(x, y, on, np.flatnonzero(fit), np.flatnonzero(aside), epochs=epochs,
                         patience=patience, seed=0, rng=rng)  # fmt: skip
    return lambda b: torch_scores(net, b)


def fit_dag(
    x: dict[str, torch.Tensor], y: np.ndarray, on: np.ndarray, train: np.ndarray
) -> np.ndarray:  # fmt: skip
    """Scores of every (decision, server) from a DagNet fitted on the ``train`` decisions."""
    return train_dag(x, y, on, train)(x)


@functools.cache
def _env() -> Any:
    """The entry's env on the pool, built once (its dataset takes seconds to load)."""
    from make_zoo_wf_small import ENV, KWARGS, PRESET
    from make_zoo_wf_small_margin import EXTRA

    from rlsched.evaluate import make_env

    return make_env(ENV, DATASET, **KWARGS, **EXTRA, scenario=PRESET)


def play(score: Callable | None, threshold: float, seeds: np.ndarray) -> dict[str, np.ndarray]:
    """Mean completion (s) per episode of PEFT, departing to the top-scored other valid
    server where ``score`` clears ``threshold`` (``score`` None: PEFT alone)."""
    from rlsched.policies.registry import make_policy

    env = _env()
    base = env.unwrapped
    peft = make_policy("peft", env, seed=0)
    done_s, departed = [], []
    for seed in seeds:
        obs, _ = env.reset(seed=int(seed))
        done, dep = False, 0
        while not done:
            mask = base.action_masks()
            a = int(peft.act(obs, mask))
            if score is not None:
                nodes, glob = observed(obs)
                one = {"nodes": nodes[None], "glob": glob[None], "peft": np.array([a])}
                one.update({k: np.asarray(v)[None] for k, v in dag_state(base).items()})
                z = score(dag_inputs(one))[0]
                z = np.where(mask.astype(bool), z, -np.inf)
                z[a] = -np.inf
                if z.max() >= threshold:
                    a, dep = int(z.argmax()), dep + 1
            obs, _, done, _, info = env.step(a)
        done_s.append(float(info["metrics"]["mean_completion"]))
        departed.append(dep)
    return {"completion": np.asarray(done_s), "departures": np.asarray(departed)}


_JOB: dict[str, Any] = {}  # what the forked fold fits read


def _fit_fold(held: np.ndarray) -> np.ndarray:
    torch.set_num_threads(1)
    j = _JOB
    return j["fit"](j["x"], j["y"], j["on"], ~held)


def optimum(seed: int) -> float:
    """The CP-SAT optimum of the workflow episode ``seed`` draws (the env's isolated optimum
    within its deterministic work limit, as the split's optimality gaps use)."""
    env = _env()
    env.reset(seed=seed)
    return float(env.unwrapped.isolated_optimum(0))


def played(
    d: dict[str, np.ndarray], on: np.ndarray, y: np.ndarray, folds: list[np.ndarray],
    x: dict[str, torch.Tensor], sample: int = 150,
) -> dict:  # fmt: skip
    """The whole-DAG network fitted on three folds' workflows, its threshold from the fourth's,
    playing PEFT with departures on the fifth's episodes, paired with PEFT. The change of the
    optimality gap is exact (only episodes where the two differ contribute, and their optima
    are solved); PEFT's own gap is estimated on ``sample`` episodes drawn at random."""
    t1 = time.perf_counter()
    fit_on = np.isin(d["wf"], np.concatenate(folds[:3]))
    tune, held = np.isin(d["wf"], folds[3]), np.isin(d["wf"], folds[4])
    score = train_dag(x, y, on, fit_on)
    sub = {k: v[tune] for k, v in d.items()}
    table = threshold_table(score({k: v[torch.as_tensor(tune)] for k, v in x.items()}),
                            sub, on[tune])  # fmt: skip
    best = max(table, key=lambda r: r["seconds"])
    threshold = best["threshold"] if best["seconds"] > 0 else float("inf")
    seeds = np.unique(d["ep"][held])
    base, gated = play(None, threshold, seeds), play(score, threshold, seeds)
    p = paired(gated["completion"], base["completion"], direction="lower", reference="peft",
               metric="mean_completion")  # fmt: skip
    hd = d["label"][held] >= 0
    held_teacher = float(d["gain"][held][np.where(hd)[0], d["label"][held][hd]].sum())
    diff = gated["completion"] - base["completion"]
    differ = np.flatnonzero(np.abs(diff) > 1e-9)
    drawn = np.random.default_rng(0).choice(len(seeds), min(sample, len(seeds)), replace=False)
    opt = {int(i): optimum(int(seeds[i])) for i in sorted({*differ.tolist(), *drawn.tolist()})}
    change = float(sum(diff[i] / opt[i] for i in differ) / len(seeds))
    peft_gap = float(np.mean([base["completion"][i] / opt[int(i)] - 1 for i in drawn]))
    res = {
        "fit_workflows": int(sum(len(f) for f in folds[:3])), "threshold_from": "fold 4",
        "threshold": threshold, "threshold_table": table, "episodes": len(seeds),
        "peft_mean": float(base["completion"].mean()),
        "gated_mean": float(gated["completion"].mean()),
        "departures": int(gated["departures"].sum()),
        "teacher_seconds_there": held_teacher,
        "vs_peft": dataclasses.asdict(p),
        "gap_change": change, "episodes_differing": len(differ),
        "peft_gap_sampled": peft_gap, "gap_sample": len(drawn),
        "seconds": time.perf_counter() - t1,
    }  # fmt: skip
    print(f"played on {len(seeds)} episodes of fold 5's workflows: PEFT "
          f"{base['completion'].mean():.2f} s, gated {gated['completion'].mean():.2f} s, "
          f"{p.mean_diff:+.3f} [{p.ci95[0]:+.3f}, {p.ci95[1]:+.3f}] {p.wins}/{p.ties}/"
          f"{p.losses} {p.verdict}; {int(gated['departures'].sum())} departures; the teacher's "
          f"would gain {held_teacher:.0f} s there; optimality gap {change:+.2%} points "
          f"(PEFT's about {peft_gap:.2%} on {len(drawn)} episodes)", flush=True)  # fmt: skip
    return res


def workflow_folds(d: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The workflows in ``FOLDS`` random folds (seed 0)."""
    groups = np.unique(d["wf"])
    np.random.default_rng(0).shuffle(groups)
    return np.array_split(groups, FOLDS)


def cross_validate(
    d: dict[str, np.ndarray], on: np.ndarray, y: np.ndarray, teacher_s: float, out: dict
) -> tuple[list[np.ndarray], dict[str, tuple[Any, Callable]], dict[str, float]]:
    """Each learner's share of the teacher's gain on workflows held out of its fit (5 folds by
    workflow), written into ``out``; the folds, the learners' inputs and the shares."""
    folds = workflow_folds(d)
    learners = {"per-decision network": (pair_features(d, log=True), fit_network)}
    try:
        import sklearn  # noqa: F401

        learners["per-decision trees"] = (pair_features(d, log=False), fit_trees)
    except ImportError:
        print("scikit-learn is not installed: no trees")
    learners["whole-DAG network"] = (dag_inputs(d), fit_dag)
    shares = {}
    for name, (x, fit) in learners.items():
        t1 = time.perf_counter()
        helds = [np.isin(d["wf"], f) for f in folds]
        _JOB.update(fit=fit, x=x, y=y, on=on)
        with multiprocessing.get_context("fork").Pool(2) as pool:  # the folds two at a time
            fitted = pool.map(_fit_fold, helds)
        scores = np.full(on.shape, -np.inf)
        for held, s in zip(helds, fitted, strict=True):
            scores[held] = s[held]
        table = threshold_table(scores, d, on)
        top = max(table, key=lambda r: r["seconds"])
        share = top["seconds"] / max(teacher_s, 1e-9)
        out[name] = {"table": table, "best_share": share, "fit_seconds": time.perf_counter() - t1}
        shares[name] = share
        print(f"  {name:20s} folds by workflow: best threshold departs {top['departures']} "
              f"({top['gain']} gain, {top['lose']} lose), {top['seconds']:+.1f} s = "
              f"{share:.1%} of the teacher's ({time.perf_counter() - t1:.0f} s)",
              flush=True)  # fmt: skip
    return folds, learners, shares


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=6000)
    ap.add_argument("--collect-only", action="store_true")
    ap.add_argument("--chunks", help="collect only these chunks, e.g. 4-7")
    ap.add_argument("--reverse", action="store_true", help="collect the last chunks first")
    ap.add_argument("--play-only", action="store_true", help="only the played part, again")
    ap.add_argument("--curve", help="also judge on the first N episodes only, e.g. 1500,3000")
    args = ap.parse_args()
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    if args.chunks:
        lo, _, hi = args.chunks.partition("-")
        collect_chunks(args.episodes, set(range(int(lo), int(hi or lo) + 1)), args.reverse)
        return
    d = collect_chunks(args.episodes)
    if args.collect_only:
        return
    d = rows(d)
    on = candidates(d)
    y = np.zeros(on.shape)
    dep = d["label"] >= 0
    y[np.where(dep)[0], d["label"][dep]] = 1.0
    teacher_s = float(d["gain"][np.where(dep)[0], d["label"][dep]].sum())
    out: dict = {"dataset": DATASET, "episodes": args.episodes, "first_seed": FIRST,
                 "workflows": len(np.unique(d["wf"])), "decisions": len(dep),
                 "teacher": {"departures": int(dep.sum()), "seconds": teacher_s}}  # fmt: skip
    print(f"{out['decisions']} decisions, {out['workflows']} workflows; the teacher departs "
          f"{int(dep.sum())} times for {teacher_s:.1f} s", flush=True)  # fmt: skip
    if args.play_only:  # the played part again, into the written results
        res = json.loads(OUT.read_text())
        res["played"] = played(d, on, y, workflow_folds(d), dag_inputs(d))
        OUT.write_text(json.dumps(res, indent=1) + "\n")
        return
    if args.curve:  # the same on the first N episodes only, added to the written results
        res = json.loads(OUT.read_text())
        for n in (int(v) for v in args.curve.split(",")):
            keep = d["ep"] < FIRST + n
            sub = {k: v[keep] for k, v in d.items()}
            dep_n = sub["label"] >= 0
            t_n = float(sub["gain"][np.where(dep_n)[0], sub["label"][dep_n]].sum())
            print(f"first {n} episodes: {len(np.unique(sub['wf']))} workflows, "
                  f"{int(dep_n.sum())} departures", flush=True)  # fmt: skip
            part: dict = {"workflows": len(np.unique(sub["wf"])), "decisions": int(keep.sum()),
                          "teacher": {"departures": int(dep_n.sum()), "seconds": t_n}}  # fmt: skip
            _, _, part["shares"] = cross_validate(sub, on[keep], y[keep], t_n, part)
            res.setdefault("curve", {})[str(n)] = part
        OUT.write_text(json.dumps(res, indent=1) + "\n")
        return
    folds, learners, _ = cross_validate(d, on, y, teacher_s, out)
    out["played"] = played(d, on, y, folds, learners["whole-DAG network"][0])
    out["seconds"] = time.perf_counter() - t0
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{out['seconds']:.0f} s; wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
