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
