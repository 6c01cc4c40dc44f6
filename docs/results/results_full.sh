#!/usr/bin/env bash
set -u
cd "$(dirname "$0")/../.."
while pgrep -f "runs/results/train" >/dev/null; do sleep 10; done
.venv/bin/rlsched results --budget full --out runs/results/full \
  --learned "ServerlessPlacement=runs/results/serverless/seed*/model" \
  --learned "PodRebalancing=runs/results/pods/seed*/model" \
  --learned "KubeScheduling=runs/results/kube/seed*/model" \
  --learned "VMPlacement=runs/results/vm/seed*/model" \
  --learned "LLMAutoscaling=runs/results/llm/seed*/model" \
  --learned "WorkflowOffloading=runs/results/offloading/seed*/model"
echo results done
