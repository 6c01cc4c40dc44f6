#!/usr/bin/env bash
# docs/results.md: every (env, preset) row; each learned model joins the preset it was trained on
set -u
cd "$(dirname "$0")/../.."
.venv/bin/rlsched results --budget full --presets all --out runs/results/presets \
  --learned "ServerlessPlacement:edge=runs/results/serverless/seed*/model" \
  --learned "PodRebalancing:today=runs/results/pods/seed*/model" \
  --learned "KubeScheduling:note=runs/results/kube/seed*/model" \
  --learned "VMPlacement:fading-20=runs/results/vm/seed*/model" \
  --learned "LLMAutoscaling:code-1x=runs/results/llm/seed*/model" \
  --learned "WorkflowOffloading:cloud-dominant=runs/results/offloading/seed*/model"
echo presets done
# issue 18: the KubeScheduling rows (note, and gang: the env's new default) were re-run alone and
# spliced into docs/results.md and results_presets.json ("partial_reruns"):
# .venv/bin/rlsched results --budget full --env KubeScheduling-v0 --presets all \
#   --out runs/results/kube18 --learned "KubeScheduling:note=runs/results/kube/seed*/model"
