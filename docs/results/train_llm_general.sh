#!/usr/bin/env bash
# Issue 13 item 4: the LLM scaler trained over randomised loads (configs/llm_autoscaling_general.yaml),
# seeds 0-2, one at a time; an interrupted run resumes from its checkpoint.
set -u
cd "$(dirname "$0")/../.."
R=.venv/bin/rlsched
for s in 0 1 2; do
  out=runs/llm_general/seed$s
  [ -f $out/run.json ] && continue
  if [ -f $out/checkpoint/state.json ]; then
    $R train --resume $out --no-progress
  else
    $R train --config configs/llm_autoscaling_general.yaml --seed $s --out $out --no-progress
  fi
done
echo done
