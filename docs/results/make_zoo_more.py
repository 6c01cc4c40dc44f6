"""Build the zoo entries of the envs whose default preset the learned policies had not yet
covered (issue 13 item 6), from the runs of ``docs/results/train_seeds.sh`` (its header
has the commands):

- ``vm-recovering-5-ppo``: VMPlacement `recovering-5`, best_fit cloned, then MaskablePPO;
- ``kube-gang-ppo``: KubeScheduling `gang`, k8s_balanced cloned, then MaskablePPO;
- ``workflow-congested-ppo``: WorkflowOffloading `congested`, HEFT cloned, then MaskablePPO;
- ``vm-recovering-5-ppo`` again, from ``configs/vm_placement_recovering5_nodes.yaml`` (``--nodes``):
  the same recipe without VMAgent's fixed-size grid (and with a pooled critic), so that the
  network runs at any server count. It replaces the first one only when its validation verdict
  is not "worse" (the same validation episodes, the same reference rule).

For each, the kept seed is the one best on validation (its periodic evaluation, the same
validation episodes every time), never on test. Its card takes the validation verdict measured
here (the validation set, seeds 10,000+) and the test verdict measured here (the held-out test
set, seeds 1000+), both on the env's main metric against the best heuristic measured there.

    python docs/results/make_zoo_more.py [NAME ...]
"""

import json
import sys

import numpy as np
from make_zoo import ROOT, held_out_entry  # the ServerlessPlacement entry's

from rlsched.envs.make import make_env
from rlsched.evaluate import evaluate
from rlsched.policies.registry import make_policy
from rlsched.splits import SPLITS

EPISODES = 10
#: name -> (env, preset, config, policy_net, main metrics for the card[, env arguments])
ENTRIES = {
    "vm-recovering-5-ppo": ("rlsched/VMPlacement-v0", "recovering-5",
                            "vm_placement_recovering5", "node", ("placed",)),
    "kube-gang-ppo": ("rlsched/KubeScheduling-v0", "gang", "kube_scheduling_gang", "mlp",
                      ("mean_job_jct", "makespan")),
    "workflow-congested-ppo": ("rlsched/WorkflowOffloading-v0", "congested",
                               "workflow_offloading_congested", "node", ("mean_completion",)),
}
#: ``--nodes``: the size-agnostic VMPlacement entry
NODES = {"vm-recovering-5-ppo": ("rlsched/VMPlacement-v0", "recovering-5",
                                 "vm_placement_recovering5_nodes", "node", ("placed",),
                                 {"grid_obs": False})}


def same_episodes_choice(
    env: str, runs: list, kwargs: dict, metric: str, lower_is_better: bool = False
) -> tuple:
    """Each run's model on the same validation episodes (seeds 10,000+; a run's periodic
    evaluation uses episodes of its own seed, so their rewards do not compare across seeds):
    the run with the best mean main metric, and every run's mean."""
    e = make_env(env, SPLITS[env].validation, **kwargs)
    means = {}
    for r in runs:
        eps = evaluate(make_policy(f"learned:{r / 'model'}", e, seed=10_000), e, EPISODES, 10_000)
        means[r] = float(np.mean([x.metrics[metric] for x in eps]))
    sign = -1.0 if lower_is_better else 1.0
    return max(means, key=lambda r: sign * means[r]), means


def build(name: str, entries: dict = ENTRIES) -> None:
    env, preset, config, net, metrics, *extra = entries[name]
    runs = sorted((ROOT / "runs/zoo" / config).glob("seed*"), key=lambda p: int(p.name[4:]))
    runs = [r for r in runs if (r / "run.json").exists()]
    extra_kwargs = extra[0] if extra else {}
    kwargs = {**SPLITS[env].env_kwargs, **extra_kwargs, "scenario": preset}
    selected_by = (f"best validation reward of the {len(runs)} seeds (periodic evaluation, the "
                   "same validation episodes every time; the clone before PPO is the first "
                   "candidate)")
    fields: dict = {"preset": preset, "trained_on": f"{SPLITS[env].train}, preset {preset}",
                    "algo": "maskable_ppo", "policy_net": net}
    if extra_kwargs:  # the size-agnostic entry: every seed on the same validation episodes
        fields["env_kwargs"] = {**SPLITS[env].env_kwargs, **extra_kwargs}
        kept, means = same_episodes_choice(env, runs, kwargs, metrics[0])
        print(json.dumps({r.name: m for r, m in means.items()}), "->", kept.name, flush=True)
        selected_by = (f"best mean {metrics[0]} of the {len(runs)} seeds' kept models (each "
                       f"its best periodic evaluation) on the same {EPISODES} validation "
                       "episodes (seeds 10,000+)")
        fields["validation_mean_per_seed"] = {r.name: m for r, m in means.items()}
        fields["seeds_trained"] = sorted(int(r.name[4:]) for r in runs)
        runs = [kept]
    held_out_entry(name, env, runs, EPISODES, kwargs, kwargs, selected_by, fields,
                   metrics=metrics)


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--nodes" in args:
        for n in [a for a in args if a != "--nodes"] or list(NODES):
            build(n, NODES)
    else:
        for n in args or list(ENTRIES):
            build(n)
