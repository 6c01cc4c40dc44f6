"""A zoo entry on data it never saw, paired per dataset with the best heuristic measured there
(descriptive; ``vm_trace_risk.py`` and ``serverless_family_risk.py`` use it)."""

from collections import Counter
from typing import Any

import numpy as np

from rlsched.evaluate import compare
from rlsched.zoo import card


def entry_on(
    name: str, datasets: dict[str, str], episodes: int, seed: int
) -> tuple[dict[str, dict[str, Any]], dict[str, tuple[np.ndarray, np.ndarray]], dict[str, int]]:
    """Zoo entry ``name`` and every heuristic that does not search on each of ``datasets``
    (label -> dataset), ``episodes`` seeded episodes from ``seed``, with the card's env
    arguments and preset. Returns, per label, the best heuristic measured there, both means
    and the entry's paired verdict against it; per label the entry's and that heuristic's
    episode values; and how many labels got each verdict."""
    c = card(name)
    kwargs = {**c["env_kwargs"], "scenario": c["preset"]}
    entry = f"learned:zoo/{name}"
    per: dict[str, dict[str, Any]] = {}
    played: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for label, dataset in datasets.items():
        rep = compare(c["env"], dataset, f"plain,{entry}", episodes=episodes, seed=seed,
                      env_kwargs=kwargs)  # fmt: skip
        rows = {r["policy"]: r for r in rep["results"]}
        ref, p = rep["reference"], rows[entry]["paired"]
        mine, best = (np.asarray(rows[s]["episode_values"], float) for s in (entry, ref))
        played[label] = (mine, best)
        per[label] = {"dataset": dataset, "reference": ref, "reference_mean": float(best.mean()),
                      "entry_mean": float(mine.mean()), "entry_vs_best": p}  # fmt: skip
        lo, hi = p["ci95"]
        print(f"{label}: {ref} {best.mean():.2f}, entry {mine.mean():.2f}: "
              f"{p['mean_diff']:+.2f} [{lo:+.2f}, {hi:+.2f}] {p['verdict']} "
              f"({p['wins']}/{p['ties']}/{p['losses']})", flush=True)  # fmt: skip
    counts = Counter(d["entry_vs_best"]["verdict"] for d in per.values())
    return per, played, dict(counts)
