"""The anchored PodRebalancing entry over all its fresh tests together (issue 13's headroom
goal): the 30-episode tests fixed before they ran (``confirm_test.py
pod-rebalancing-anchored-ppo --seed S``, S = 2000, 3000, 4000, 6000; those recorded), pooled
episode by episode. A summary of recorded episodes, not a new measurement. All four are of the
model shipped under that name until 2026-11-29 (git e432d8c; seed 2 of
``configs/pod_rebalancing_anchored.yaml``); the one that replaced it was tested on seeds 7000
and 8000 (``--seeds 7000,8000``).

    python docs/results/pods_tests_pooled.py [--seeds 2000,3000,4000,6000]

Writes ``docs/results/pods_tests_pooled.json`` (``pods_tests_pooled_SEEDS.json`` for other
seeds).
"""

import argparse
import json

import numpy as np
from confirm_test import headroom_share
from make_zoo import ROOT

from rlsched.stats import paired

NAME = "pod-rebalancing-anchored-ppo"
SEEDS = (2000, 3000, 4000, 6000)


def main(seeds: tuple[int, ...] = SEEDS) -> None:
    tests = {s: f"confirm_{NAME}.json" if s == 2000 else f"confirm_{NAME}_seed{s}.json"
             for s in seeds}  # fmt: skip
    runs = {s: ROOT / "docs/results" / f for s, f in tests.items()}
    found = {s: json.loads(p.read_text()) for s, p in runs.items() if p.is_file()}
    spec = f"learned:zoo/{NAME}"
    ref = {d["reference"] for d in found.values()}
    assert len(ref) == 1, f"the tests have different references: {ref}"
    (best_name,) = ref

    def values(name: str) -> np.ndarray:
        return np.concatenate(
            [np.asarray(d["episode_values"][name], float) for d in found.values()]
        )

    best, learned, oracle = values(best_name), values(spec), values("clairvoyant")
    vs = paired(learned, best, direction="lower", reference=best_name, metric="violations")
    out = {
        "entry": NAME,
        "tests": {str(s): tests[s] for s in found},
        "episodes": len(best),
        "reference": best_name,
        "means": {best_name: best.mean(), NAME: learned.mean(), "clairvoyant": oracle.mean()},
        "learned_vs_best": vs.to_json(),
        "headroom_pct": 100 * (best.mean() - oracle.mean()) / best.mean(),
        "headroom_closed": headroom_share(best, learned, oracle, lower=True),
    }
    tag = "" if seeds == SEEDS else "_" + "_".join(map(str, seeds))
    path = ROOT / f"docs/results/pods_tests_pooled{tag}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default=",".join(map(str, SEEDS)),
                    help="first seeds of the recorded tests to pool")
    main(tuple(int(x) for x in ap.parse_args().seeds.split(",")))
