"""Issue 13, after round C3, descriptive (nothing chosen on it): the significance-gated search
on the other two unused families. Round C3's summary named the next step for `congested`: the
gated teacher (``significance=2``), checked on all three unused families before any label is
collected. ``wf_congested_gated_search.py`` measured it on round C3's 10 cycles validation
episodes; this plays it on the round's 10 seismology and 10 soykb ones (``seed=23``
workflows, seeds 63,000+), beside PEFT, paired with PEFT and with the ungated search's values
recorded on the same episodes (``wf_congested_families_search.json``), on two processes.

    python docs/results/wf_congested_gated_families.py   # about 10 min

Writes ``docs/results/wf_congested_gated_families.json``.
"""

import json
from multiprocessing import Pool

import numpy as np
from make_zoo import ROOT
from make_zoo_wf_congested_families import PER_FAMILY, VAL_SEED, VALIDATION
from make_zoo_wf_congested_unseen import play
from wf_congested_gated_search import gated_row
from wf_congested_soykb_significance import GATED, SEARCH

from rlsched.splits import SPLITS

ENV = "rlsched/WorkflowOffloading-v0"
FAMILIES = tuple(d for d in VALIDATION if not d.startswith("wfcommons:cycles"))
OUT = ROOT / "docs/results/wf_congested_gated_families.json"


def main() -> None:
    kw = dict(SPLITS[ENV].env_kwargs)
    old = json.loads((ROOT / "docs/results/wf_congested_families_search.json").read_text())
    jobs = [(d, VAL_SEED, PER_FAMILY, ["peft", GATED], kw) for d in FAMILIES]
    with Pool(2) as pool:
        parts = pool.starmap(play, jobs)
    out: dict = {}
    for data, part in zip(FAMILIES, parts, strict=True):
        rec = old["episode_values"][data]
        assert np.allclose(rec["peft"], part["peft"]), "not the recorded episodes"
        out[data] = gated_row(data, part, rec[SEARCH], seeds=[VAL_SEED, VAL_SEED + PER_FAMILY - 1])
    OUT.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
