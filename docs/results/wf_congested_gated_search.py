"""Issue 13, after round C3, descriptive (nothing chosen on it): does a significance gate cost
the search its gain where departures are worth much? The search with ``significance=2``
beside PEFT on episodes where the ungated search was measured before: 20 of round C1's
validation episodes (the split's validation set, epigenomics, a training family, seeds
40,000-40,019; ``wf_congested_departures_search_val.json``) and round C3's 10 cycles
validation episodes (``seed=23`` workflows, seeds 63,000+; ``wf_congested_families_search.
json``), on two processes; paired with PEFT and with the ungated search's recorded values.

    python docs/results/wf_congested_gated_search.py   # about 10 min

Writes ``docs/results/wf_congested_gated_search.json``.
"""

import json
from multiprocessing import Pool

import numpy as np
from make_zoo import ROOT
from make_zoo_wf_congested_unseen import play
from wf_congested_soykb_significance import GATED, SEARCH

from rlsched.splits import SPLITS
from rlsched.stats import paired

ENV = "rlsched/WorkflowOffloading-v0"
CYCLES = "wfcommons:cycles?tasks=80&seed=23&workflows=4"
SETS = {  # name: (dataset, first seed, episodes)
    "epigenomics (validation split)": (SPLITS[ENV].validation, 40_000, 20),
    "cycles (unused family)": (CYCLES, 63_000, 10),
}
OUT = ROOT / "docs/results/wf_congested_gated_search.json"


def recorded(name: str) -> dict[str, list[float]]:
    """PEFT's and the ungated search's values recorded on the same episodes."""
    if name.startswith("epigenomics"):
        ev = json.loads((ROOT / "docs/results/wf_congested_departures_search_val.json")
                        .read_text())["episode_values"]  # fmt: skip
        return {k: ev[k][: SETS[name][2]] for k in ("peft", SEARCH)}
    ev = json.loads((ROOT / "docs/results/wf_congested_families_search.json").read_text())
    return {k: ev["episode_values"][CYCLES][k] for k in ("peft", SEARCH)}


def gated_row(name: str, part: dict[str, list[float]], plain: list[float],
              **fields: object) -> dict:  # fmt: skip
    """``part``'s gated search and the ungated one's recorded values (``plain``) on the same
    episodes, each relative to PEFT's, paired with PEFT and with each other."""
    peft = np.array(part["peft"])
    rel_gated, rel_plain = np.array(part[GATED]) / peft - 1, np.array(plain) / peft - 1
    row: dict = {**fields, "peft": part["peft"], GATED: part[GATED], SEARCH: plain}
    for what, x, y in [("gated vs peft", rel_gated, 0 * rel_gated),
                       ("plain vs peft", rel_plain, 0 * rel_plain),
                       ("gated vs plain", rel_gated, rel_plain)]:  # fmt: skip
        p = paired(x, y, direction="lower")
        row[what] = {"mean_relative": p.mean_diff, "ci95": list(p.ci95),
                     "wins_ties_losses": [p.wins, p.ties, p.losses], "verdict": p.verdict}
        print(name, what, row[what], flush=True)
    return row


def main() -> None:
    kw = dict(SPLITS[ENV].env_kwargs)
    jobs = [(d, first, n, ["peft", GATED], kw) for d, first, n in SETS.values()]
    with Pool(2) as pool:
        parts = pool.starmap(play, jobs)
    OUT.with_suffix(".raw.json").write_text(json.dumps(parts))  # kept if a check below fails
    out: dict = {}
    for (name, (data, first, n)), part in zip(SETS.items(), parts, strict=True):
        old = recorded(name)
        assert np.allclose(old["peft"], part["peft"]), "not the recorded episodes"
        out[name] = gated_row(name, part, old[SEARCH], dataset=data, seeds=[first, first + n - 1])
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    OUT.with_suffix(".raw.json").unlink()


if __name__ == "__main__":
    main()
