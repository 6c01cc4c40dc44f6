"""The PodRebalancing entry as shipped now, replayed on every test its test cluster has served,
pooled (descriptive: each set was played after the choices it judged; nothing is chosen on it).

The test cluster (``synthetic:pods?seed=2``, preset ``today``) has served the card's 10
episodes (seeds 1000+) and eight confirmatory tests of 30 (seeds 2000+, 3000+, 4000+ and
6000+ to 9000+, 9300+), each judging the entry of its day. The entry now shipped (round L's
model under round L3's margin gate over greedy_migration) is significantly worse than
greedy_migration on one of them (9000+) and shows no significant difference on others. This
plays the entry and greedy_migration on all 250 episodes and pools them, as
``wf_small_contention_tests.py`` does for WorkflowOffloading's small DAGs
(``pods_tests_pooled.py`` pools the recorded tests of earlier models instead).

    python docs/results/pods_tests_replayed.py    (about 10 minutes here)

Writes ``docs/results/pods_tests_replayed.json``. A later entry replayed the same way:
``--tag L5 --also 9600`` adds the 30-episode tests fixed since (seeds 9600+, round L5's) and
writes ``pods_tests_replayed_L5.json``, keeping the earlier entry's record.
"""

import argparse
import json
import time

from make_zoo import ROOT

from rlsched.evaluate import compare
from rlsched.stats import paired
from rlsched.zoo import card

NAME = "pod-rebalancing-anchored-ppo"
REF = "greedy_migration"
SETS = ((1000, 10), (2000, 30), (3000, 30), (4000, 30), (6000, 30), (7000, 30), (8000, 30),
        (9000, 30), (9300, 30))  # fmt: skip
OUT = ROOT / "docs/results/pods_tests_replayed.json"


def main(tag: str | None = None, also: tuple[int, ...] = ()) -> None:
    t0 = time.perf_counter()
    sets = SETS + tuple((seed, 30) for seed in also)
    c = card(NAME)
    kwargs = {**c["env_kwargs"], "scenario": c["preset"]}
    entry = f"learned:zoo/{NAME}"
    values: dict[str, list[float]] = {REF: [], entry: []}
    out: dict = {"dataset": c["test"]["dataset"], "gate": c.get("gate"), "sets": {}}
    for seed, n in sets:
        rep = compare(c["env"], c["test"]["dataset"], f"{REF},{entry}", episodes=n, seed=seed,
                      env_kwargs=kwargs, reference=REF)  # fmt: skip
        rows = {r["policy"]: r for r in rep["results"]}
        for p in values:
            values[p] += rows[p]["episode_values"]
        pair = paired(rows[entry]["episode_values"], rows[REF]["episode_values"],
                      direction="lower", reference=REF, metric="violations").to_json()  # fmt: skip
        out["sets"][str(seed)] = {"episodes": n, "entry_vs_greedy": pair,
                                  "means": {p: rows[p]["metrics"]["violations"] for p in values}}
        print(f"seeds {seed}+ ({n}): entry − {REF} {pair['mean_diff']:+.2f} "
              f"[{pair['ci95'][0]:+.2f}, {pair['ci95'][1]:+.2f}] {pair['wins']}/{pair['ties']}/"
              f"{pair['losses']} {pair['verdict']}", flush=True)  # fmt: skip
    pooled = paired(values[entry], values[REF], direction="lower", reference=REF,
                    metric="violations").to_json()  # fmt: skip
    means = {p: sum(v) / len(v) for p, v in values.items()}
    out.update(pooled=pooled, pooled_means=means, seconds=time.perf_counter() - t0)
    out_path = OUT if tag is None else OUT.with_name(f"{OUT.stem}_{tag}.json")
    out_path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"pooled ({len(values[REF])}): entry {means[entry]:.2f}, {REF} {means[REF]:.2f}; "
          f"{pooled['mean_diff']:+.2f} [{pooled['ci95'][0]:+.2f}, {pooled['ci95'][1]:+.2f}] "
          f"{pooled['wins']}/{pooled['ties']}/{pooled['losses']} {pooled['verdict']}; "
          f"{out['seconds']:.0f} s")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--tag", help="write pods_tests_replayed_TAG.json instead")
    ap.add_argument("--also", type=int, nargs="*", default=[], help="more tests of 30 (seeds)")
    a = ap.parse_args()
    main(a.tag, tuple(a.also))
