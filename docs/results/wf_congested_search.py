"""Issue 13, descriptive (nothing chosen or shipped): is the search over PEFT, rolled out to the
episode's end over sampled futures, faster than HEFT online?

The goal asks WorkflowOffloading's shipped policy to be significantly faster than HEFT online
(the ``congested`` preset: four workflows arriving at random edge servers, queues, image
pulls). The learned entries never were, and a committed rule ends the zoo's rounds on that
preset. The search teacher of docs/results.md (``rollout`` over HEFT, horizon 32 decisions,
4 sampled futures) was worse than HEFT there: a finite horizon scores the workflows finished
by then. This measures one configuration, fixed before it ran and not tuned:
``rollout:peft?horizon=end&futures=2&top_k=4`` (meant: PEFT's 4 best servers; as run, PEFT's
own, the lowest valid one and two drawn at random, since PEFT ranked no servers until a fix
later on 2026-12-03; each rolled out with
PEFT to the episode's end over 2 sampled futures of the workflows not yet arrived, scored by
the env's main metric, mean workflow completion). A one-episode smoke run (seed 1000) checked
it first: 157.96 s against HEFT's 164.11 and PEFT's 159.50.

The split's test data (``rlsched.splits``: ``wfinstances:blast-43,helloworld-10``, preset
``congested``), 30 episodes, seeds 1000-1029, on two processes (15 each); HEFT, PEFT and the
search on the same episodes, paired.

    python docs/results/wf_congested_search.py   # about 4 min on this machine's 2 cores

Writes ``docs/results/wf_congested_search.json``.
"""

import json
import time
from multiprocessing import Pool
from pathlib import Path

from make_zoo import ROOT, paired_rows

from rlsched.evaluate import compare
from rlsched.splits import SPLITS, TEST_SEED

ENV = "rlsched/WorkflowOffloading-v0"
SEARCH = "rollout:peft?horizon=end&futures=2&top_k=4"
POLICIES = ("heft", "peft", SEARCH)
EPISODES, HALF = 30, 15
OUT = ROOT / "docs/results/wf_congested_search.json"


def half(
    first: int, extra: dict | None = None, n: int = HALF, dataset: str | None = None
) -> dict[str, list[float]]:
    """HEFT, PEFT and the search on ``n`` episodes from seed ``first`` of ``dataset`` (the
    split's test set), env arguments ``extra`` over the split's."""
    split = SPLITS[ENV]
    rep = compare(ENV, dataset or split.test, ",".join(POLICIES), episodes=n, seed=first,
                  env_kwargs={**split.env_kwargs, **(extra or {})})  # fmt: skip
    return {r["policy"]: r["episode_values"] for r in rep["results"]}


def main(first: int = TEST_SEED, extra: dict | None = None, out_path: Path = OUT) -> None:
    """The run above; ``wf_congested_search_rank.py`` runs it again in HEFT's task order
    (``extra``: env arguments over the split's)."""
    t0 = time.time()
    with Pool(2) as pool:
        parts = pool.starmap(half, [(first, extra), (first + HALF, extra)])
    values = {p: parts[0][p] + parts[1][p] for p in POLICIES}
    out: dict = {"dataset": SPLITS[ENV].test, "preset": "congested", "episodes": EPISODES,
                 "env_kwargs": extra or {},
                 "seeds": [first, first + EPISODES - 1], "search": SEARCH,
                 "mean_completion": {p: sum(v) / len(v) for p, v in values.items()}}  # fmt: skip
    pairs = [(SEARCH, "heft"), (SEARCH, "peft"), ("peft", "heft")]
    for a, b, p in paired_rows(values, pairs, "mean_completion", " s"):
        out[f"{a} vs {b}"] = p
    out["episode_values"] = values
    out["seconds"] = round(time.time() - t0)
    out_path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"means: {out['mean_completion']}; wrote {out_path} in {out['seconds']} s")


if __name__ == "__main__":
    main()
