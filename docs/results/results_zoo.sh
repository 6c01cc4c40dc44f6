#!/usr/bin/env bash
# Issue 13's goals are measured "with `rlsched results --budget full`". The table in
# docs/results.md was run on 2026-11-24 with models trained for it, not with the zoo. This runs
# the same command with each shipped zoo entry in the preset it was made for (a measurement:
# nothing is chosen on it; every entry was chosen on validation data before). The small-DAG
# entry has no row here: its setting (one synthetic workflow, CP-SAT optimum) is measured by
# docs/results/wf_small_dag_confirm.py and the round scripts. One env at a time, one process.
set -eu
cd "$(dirname "$0")/../.."
OUT=${OUT:-runs/results/zoo}
R=".venv/bin/rlsched results --budget full"
$R --env ServerlessPlacement-v0 --presets edge --out "$OUT/serverless" \
  --learned "ServerlessPlacement:edge=zoo/serverless-edge-maskable-ppo"
$R --env VMPlacement-v0 --presets recovering-5 --out "$OUT/vm" \
  --learned "VMPlacement:recovering-5=zoo/vm-recovering-5-ppo"
$R --env PodRebalancing-v0 --presets today --out "$OUT/pods" \
  --learned "PodRebalancing:today=zoo/pod-rebalancing-anchored-ppo"
$R --env LLMAutoscaling-v0 --presets code-1x,code-2x,code-3x --out "$OUT/llm" \
  --learned "LLMAutoscaling=zoo/llm-autoscaling-slo-ppo" \
  --learned "LLMAutoscaling=zoo/llm-autoscaling-hpa-threshold-residual-ppo"
$R --env KubeScheduling-v0 --presets gang --out "$OUT/kube" \
  --learned "KubeScheduling:gang=zoo/kube-gang-ppo"
$R --env WorkflowOffloading-v0 --presets congested --out "$OUT/wf" \
  --learned "WorkflowOffloading:congested=zoo/workflow-congested-vetted"
echo zoo rows done
