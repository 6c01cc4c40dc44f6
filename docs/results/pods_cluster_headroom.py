"""Issue 13, descriptive (nothing is chosen on it): the headroom goal cluster by cluster.

The goal asks the shipped PodRebalancing policy to be significantly better than the best
heuristic (greedy_migration) and to close a third of the clairvoyant oracle's headroom, on
the test cluster (2). ``pods_cluster_risk.py`` showed the first half on 32 clusters no model
trained or was chosen on; this adds the oracle (over greedy_migration, to the episode's end,
as in ``rlsched results``) on the same 32 clusters (100-131), 10 episodes each on fresh seeds
38,000+, and gives per cluster the oracle's headroom, the entry's paired verdict against
greedy_migration and the share of the headroom it closes (``confirm_test.headroom_share``:
on the means, with a paired bootstrap interval). It counts the clusters where the entry meets
the goal as the test cluster would be judged (better than greedy_migration, headroom at least
5%, share at least a third).

    python docs/results/pods_cluster_headroom.py   (from docs/results; two processes;
                                                    writes pods_cluster_headroom.json)
"""

import json
import time
from multiprocessing import Pool

import numpy as np
from confirm_test import headroom_share
from make_zoo import ROOT
from pods_step_unseen import ENV, NAME, REF, entry_kwargs

from rlsched.evaluate import compare
from rlsched.stats import paired

CLUSTERS = tuple(range(100, 132))
EPISODES, SEED = 10, 38_000
ORACLE = f"clairvoyant:{REF}"
OUT = ROOT / "docs/results/pods_cluster_headroom.json"


def cluster(c: int) -> dict:
    """The entry, greedy_migration and the oracle on ``EPISODES`` episodes of cluster ``c``."""
    kwargs = entry_kwargs()
    entry = f"learned:zoo/{NAME}"
    rep = compare(ENV, f"synthetic:pods?seed={c}", [REF, entry, ORACLE], episodes=EPISODES,
                  seed=SEED, env_kwargs=kwargs, reference=REF)  # fmt: skip
    v = {r["policy"]: np.asarray(r["episode_values"], float) for r in rep["results"]}
    best, mine, oracle = v[REF], v[entry], v[ORACLE]
    vs = paired(mine, best, direction="lower", reference=REF, metric="violations").to_json()
    head = paired(oracle, best, direction="lower", reference=REF, metric="violations").to_json()
    headroom = float((best.mean() - oracle.mean()) / best.mean())
    share = headroom_share(best, mine, oracle, lower=True) if headroom > 0 else None
    closes = bool(share and share["share"] >= 1 / 3)
    meets = vs["verdict"] == "better" and headroom >= 0.05 and closes
    return {"cluster": c, "greedy": float(best.mean()), "entry": float(mine.mean()),
            "oracle": float(oracle.mean()), "headroom": headroom, "oracle_vs_greedy": head,
            "entry_vs_greedy": vs, "headroom_closed": share, "meets_goal": meets}  # fmt: skip


def main() -> None:
    t0 = time.perf_counter()
    with Pool(2) as pool:
        rows = pool.map(cluster, CLUSTERS)
    for r in rows:
        s = r["headroom_closed"]
        print(f"cluster {r['cluster']}: greedy {r['greedy']:.1f}, entry {r['entry']:.1f} "
              f"({r['entry_vs_greedy']['verdict']}), oracle {r['oracle']:.1f} (headroom "
              f"{r['headroom']:.1%}); closes {s['share'] if s else float('nan'):.0%}; "
              f"meets: {r['meets_goal']}")  # fmt: skip
    shares = [r["headroom_closed"]["share"] for r in rows if r["headroom_closed"]]
    out = {
        "clusters": list(CLUSTERS), "episodes_per_cluster": EPISODES, "seed": SEED,
        "oracle": ORACLE, "clusters_meeting_the_goal": sum(r["meets_goal"] for r in rows),
        "clusters_with_headroom_5pct": sum(r["headroom"] >= 0.05 for r in rows),
        "median_share_closed": float(np.median(shares)) if shares else None,
        "per_cluster": rows, "seconds": time.perf_counter() - t0,
    }  # fmt: skip
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{out['clusters_meeting_the_goal']} of {len(rows)} clusters meet the goal; "
          f"{out['clusters_with_headroom_5pct']} have a headroom of 5% or more; median share "
          f"closed {out['median_share_closed']:.0%}; {out['seconds']:.0f} s")  # fmt: skip


if __name__ == "__main__":
    main()
