"""After a zoo entry is replaced and its replacement tested (``confirm_test.py ENTRY --seed S``):
the replaced model on the same test episodes, for the record. Measured after the test and
never used to choose.

    python docs/results/confirm_vs_replaced.py ENTRY --seed S --replaced REV

``REV``: a git revision whose ``src/rlsched/zoo/ENTRY/model`` is the replaced model. Writes
``docs/results/confirm_ENTRY_seedS_vs_replaced.json``: the replaced model against the
reference of ``confirm_ENTRY_seedS.json`` and the replacement against the replaced model, both
paired 95% intervals on those episodes (the reference's values must be the recorded ones).
"""

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from make_zoo import compare_in_envs

from rlsched.stats import paired
from rlsched.zoo import card

ROOT = Path(__file__).resolve().parents[2]


def _show(rev: str, path: str) -> bytes:
    """A file as git revision ``rev`` holds it."""
    return subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True,
                          check=True).stdout  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("entry")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--replaced", required=True, help="git revision holding the replaced model")
    a = ap.parse_args()
    rec = json.loads((ROOT / f"docs/results/confirm_{a.entry}_seed{a.seed}.json").read_text())
    ref, metric, n = rec["reference"], rec["main_metric"], rec["episodes"]
    direction = "lower" if rec["learned_vs_best"]["direction"] == "lower" else "higher"
    with tempfile.TemporaryDirectory() as tmp:
        old_dir = Path(tmp) / "model"
        old_dir.mkdir()
        for f in ("model.zip", "meta.json"):
            (old_dir / f).write_bytes(_show(a.replaced, f"src/rlsched/zoo/{a.entry}/model/{f}"))
        new, old = f"learned:zoo/{a.entry}", f"learned:{old_dir}"
        # the replaced model plays with its own card's env arguments where they differ (an
        # argument that shapes the observation, such as PodRebalancing's history_features)
        old_card = json.loads(_show(a.replaced, f"src/rlsched/zoo/{a.entry}/card.json"))
        old_kwargs = {**old_card["env_kwargs"], "scenario": rec["env_kwargs"].get("scenario")}
        old_kwargs = {k: v for k, v in old_kwargs.items() if v is not None}
        groups = [([new], rec["env_kwargs"]), ([old], old_kwargs)]
        results = compare_in_envs(card(a.entry)["env"], rec["dataset"], ref, groups, n, a.seed)
    v = {r["policy"]: np.asarray(r["episode_values"]) for r in results}
    assert np.allclose(v[ref], rec["episode_values"][ref]), "not the test's episodes"
    out = {
        "episodes": f"those of confirm_{a.entry}_seed{a.seed}.json ({n}, seeds {a.seed}+)",
        "replaced_model": f"git {a.replaced}",
        "replaced_vs_reference": paired(v[old], v[ref], direction=direction, reference=ref,
                                        metric=metric).to_json(),
        "new_vs_replaced": paired(v[new], v[old], direction=direction,
                                  reference="the replaced entry", metric=metric).to_json(),
    }  # fmt: skip
    path = ROOT / f"docs/results/confirm_{a.entry}_seed{a.seed}_vs_replaced.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    for k in ("replaced_vs_reference", "new_vs_replaced"):
        x = out[k]
        print(f"{k}: {x['mean_diff']:+.3f} [{x['ci95'][0]:+.3f}, {x['ci95'][1]:+.3f}] "
              f"{x['verdict']}, {x['wins']}/{x['ties']}/{x['losses']}")


if __name__ == "__main__":
    main()
