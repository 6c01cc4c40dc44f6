#!/usr/bin/env bash
# Issue 13 item 4: the LLM scaler over randomised loads and request mixes
# (configs/llm_autoscaling_mix.yaml), seeds 0-2, resumable.
set -u
cd "$(dirname "$0")/../.."
R=.venv/bin/rlsched
for s in 0 1 2; do
  out=runs/llm_mix/seed$s
  [ -f $out/run.json ] && continue
  if [ -f $out/checkpoint/state.json ]; then
    $R train --resume $out --no-progress
  else
    $R train --config configs/llm_autoscaling_mix.yaml --seed $s --out $out --no-progress
  fi
done
echo done
