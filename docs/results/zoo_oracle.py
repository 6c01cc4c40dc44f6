"""Record in each zoo card the clairvoyant oracle of its test setting, from the full results run
(``docs/results/results_presets.json``, ``rlsched results --budget full``), so the demo's zoo
stage can set the oracle beside every entry without re-running it (minutes per env).

The oracle is recorded per episode with the reference heuristic's per-episode values from the
same run: the demo re-measures that heuristic and pairs the zoo policy with the recorded oracle
only when its values are the recorded ones (the same episodes). A card whose test setting
(env, dataset, preset, episodes, seed) has no report in the run gets no oracle.

    python docs/results/zoo_oracle.py      (after any make_zoo*.py that rewrites a card)
"""

import json
from pathlib import Path

from rlsched.agents.export import write_card
from rlsched.zoo import card, names

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "docs/results/results_presets.json"


def main() -> None:
    full = json.loads(RUN.read_text())
    src = f"docs/results/results_presets.json (git {full['git'][:7]}, {full['machine']})"
    when = f"rlsched results --budget {full['budget']}, {full['date']}"
    for name in names():
        c = card(name)
        t = c["test"]
        reps = [r for r in full["reports"]
                if r["env"] == c["env"] and r["dataset"] == t["dataset"]
                and r["env_kwargs"].get("scenario") == c["preset"]
                and r["episodes"] == t["episodes"] and r["seed"] == t["seed"]]
        oracle = [x for r in reps for x in r["results"] if x.get("kind") == "oracle"]
        if len(reps) != 1 or len(oracle) != 1:
            print(f"{name}: {len(reps)} matching reports, no oracle recorded")
            continue
        rep, o = reps[0], oracle[0]
        ref = next(x for x in rep["results"] if x["policy"] == rep["reference"])
        t["oracle"] = {
            "policy": o["policy"], "recorded": when, "source": src,
            "main_metric": rep["main_metric"], "direction": rep["direction"],
            "episode_values": o["episode_values"],
            "reference": rep["reference"], "reference_episode_values": ref["episode_values"],
        }
        write_card(name, c)
        print(f"{name}: {o['policy']} recorded against {rep['reference']} "
              f"({rep['main_metric']}, {len(o['episode_values'])} episodes)")


if __name__ == "__main__":
    main()
