"""Where the search teacher over PEFT departs from PEFT on the small-DAG WorkflowOffloading
split (descriptive, training workflows only; nothing is chosen on it).

The teacher (every valid server tried, PEFT finishing the workflow, ties to PEFT's own server)
plays 60 episodes of the training workflows (seeds 70,000+); at each decision PEFT's server is
asked too, and where the two differ the servers' observations are compared: is each the
workflow's origin, does it hold the task's image, how many placed tasks it has not finished.

    python docs/results/wf_small_peft_departures.py    (about a minute here)
"""

from collections import Counter

import numpy as np
from make_zoo_wf_small import ENV, KWARGS, PRESET, TRAIN

from rlsched.evaluate import make_env
from rlsched.policies.registry import make_policy, make_rollout

EPISODES, SEED = 60, 70_000


def main() -> None:
    env = make_env(ENV, TRAIN, **KWARGS, scenario=PRESET)
    base = env.unwrapped
    peft = make_policy("peft", env)
    teacher = make_rollout(env, "peft", horizon=None, futures=0, top_k=base.num_servers,
                           prefer_base=True, score="return", reward="makespan")  # fmt: skip
    moves: list[tuple[int, int, int]] = []  # (decision index, PEFT's server, teacher's)
    rows: list[dict[str, np.ndarray]] = []
    decisions = 0
    for k in range(EPISODES):
        obs, _ = env.reset(seed=SEED + k)
        teacher.reset(SEED + k)
        done, i = False, 0
        while not done:
            mask = base.action_masks()
            mine, theirs = peft.act(obs, mask), teacher.act(obs, mask)
            if mine != theirs:
                moves.append((i, mine, theirs))
                rows.append({key: obs[key].copy() for key in ("node_origin", "node_image",
                                                              "node_queue")})  # fmt: skip
            obs, _, done, _, _ = env.step(theirs)
            i, decisions = i + 1, decisions + 1
    print(f"the teacher departs from PEFT on {len(moves)} of {decisions} decisions")
    for key, what in (("node_origin", "on the origin"), ("node_image", "holding the image")):
        c = Counter((int(r[key][p]), int(r[key][t])) for (_, p, t), r in zip(moves, rows))
        print(f"  {what} (PEFT's server, the teacher's): {dict(sorted(c.items()))}")
    q = np.array([(r["node_queue"][p], r["node_queue"][t]) for (_, p, t), r in zip(moves, rows)])
    print(f"  placed, unfinished tasks: PEFT's server {q[:, 0].mean():.2f}, "
          f"the teacher's {q[:, 1].mean():.2f} (means)")
    print(f"  by decision index: {dict(sorted(Counter(m[0] for m in moves).items()))}")


if __name__ == "__main__":
    main()
