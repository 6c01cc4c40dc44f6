"""Issue 13, a diagnosis (not a verdict): the LLM entry with its token floor, and with a raise
gate on one pool at that pool's conv-1x 75th-percentile demand (``llm_demand_diag.py``), on the
training trace (conv) at 1x, 2x and 3x, 6 episodes each on diagnosis seeds 20,960-20,965
(neither validation nor test). Means, printed on 2026-11-28 (ninth session):

    conv-1x hpa 0.989 $12.43 | tf 0.994 $13.11 | tf_tq75 0.992 $12.73 | tf_pq75 0.990 $12.61
    conv-2x hpa 0.911 $27.53 | tf 0.920 $27.56 | tf_tq75 0.914 $27.74 | tf_pq75 0.914 $27.15
    conv-3x hpa 0.870 $47.71 | tf 0.872 $44.27 | tf_tq75 0.875 $47.95 | tf_pq75 0.867 $40.99

    cd docs/results && PYTHONPATH=. python llm_floor_raise_diag.py
"""


from make_zoo import ROOT
from make_zoo_llm_residual_down import ENV, SPLITS, played_copy

from rlsched.evaluate import compare

SRC = ROOT / "runs/zoo/llm_residual_hpa_ref/seed0"
P = ["prompt_demand", "token_demand"]
V = {
 "tf": {"feature": P, "lower_below": [1e9, 0.0]},
 "tf_tq75": {"feature": P, "lower_below": [1e9, 0.0], "raise_at_least": [0.0, 0.162]},
 "tf_pq75": {"feature": P, "lower_below": [1e9, 0.0], "raise_at_least": [0.069, 0.0]},
}
specs = {}
for n, g in V.items():
    out = ROOT / f"runs/zoo/llm_floor_raise_diag/{n}"
    played_copy(SRC, out, "residual_play_gate", g, "gate")
    specs[n] = f"learned:{out}/model"
for sc in ("conv-1x", "conv-2x", "conv-3x"):
    rep = compare(ENV, "azure-llm:conv", ["hpa", *specs.values()], episodes=6, seed=20_960,
                  env_kwargs={**SPLITS[ENV].env_kwargs, "scenario": sc})
    rows = {r["policy"]: r["metrics"] for r in rep["results"]}
    shown = [("hpa", "hpa"), *specs.items()]
    print(sc, " | ".join(f"{n} {rows[s]['slo_attainment']:.3f} ${rows[s]['cost']:.2f}"
                         for n, s in shown), flush=True)  # fmt: skip
