#!/usr/bin/env bash
# The LLMAutoscaling long-budget runs (configs/llm_autoscaling_long*.yaml), four at once on a
# 16-core machine: slo_penalty 20 and 40, seeds 0 and 1, each with 4 envs in subprocesses.
# Each run stops after SECONDS_PER_RUN (default 450); its best-on-validation model is in
# runs/llm_long/NAME/model and its checkpoint in runs/llm_long/NAME/checkpoint, so
# `rlsched train --resume runs/llm_long/NAME` continues it. Usage:
#   docs/results/llm_long_device.sh [OUT_TARBALL]
set -u
secs=${SECONDS_PER_RUN:-450}
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
mkdir -p runs/llm_long
pids=()
for cfg in long long_p40; do
  for seed in 0 1; do
    name=${cfg#long}; name=p${name#_p}; [ "$name" = p ] && name=p20
    rm -rf "runs/llm_long/$name-seed$seed"
    timeout "$secs" "${PYTHON:-python3}" -c "from rlsched.cli import main; main()" train \
      --config "configs/llm_autoscaling_$cfg.yaml" --seed "$seed" \
      --out "runs/llm_long/$name-seed$seed" --no-progress \
      >"runs/llm_long/$name-seed$seed.log" 2>&1 &
    pids+=($!)
  done
done
wait "${pids[@]}"
for f in runs/llm_long/*.log; do echo "== $f"; tail -3 "$f"; done
for d in runs/llm_long/*/; do echo "== $d"; cat "$d/progress.json" 2>/dev/null; echo;
  "${PYTHON:-python3}" -c "import numpy as n,sys; e=n.load(sys.argv[1]); [print(int(t), round(float(r.mean()),2)) for t,r in zip(e['timesteps'], e['results'])]" "$d/eval/evaluations.npz" 2>/dev/null; done
[ $# -ge 1 ] && tar czf "$1" runs/llm_long
exit 0
