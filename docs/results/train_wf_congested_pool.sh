#!/usr/bin/env bash
# Issue 13: the candidate pool of docs/results/make_zoo_wf_congested_broad.py, trained in
# parallel, one process per run on one core each (a 16-core machine: 15 runs at once):
# configs/workflow_offloading_congested.yaml (the entry's recipe) seeds 3-9 and
# configs/workflow_offloading_congested_mix.yaml seeds 0-7, into runs/zoo/CONFIG/seedN.
#   bash docs/results/train_wf_congested_pool.sh [STEPS] [ARCHIVE] [LIMIT]
# STEPS overrides total_steps (a smoke test; '' keeps the configs'); ARCHIVE, when given,
# receives the run folders (without TensorBoard logs) as a .tar.gz; LIMIT stops every run after
# that many seconds (a run stopped so continues with `rlsched train --resume runs/zoo/...`).
set -u
steps=${1:-}
archive=${2:-}
limit=${3:-0}
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONUNBUFFERED=1
pids=()
for job in workflow_offloading_congested:3 workflow_offloading_congested:4 \
    workflow_offloading_congested:5 workflow_offloading_congested:6 \
    workflow_offloading_congested:7 workflow_offloading_congested:8 \
    workflow_offloading_congested:9 workflow_offloading_congested_mix:0 \
    workflow_offloading_congested_mix:1 workflow_offloading_congested_mix:2 \
    workflow_offloading_congested_mix:3 workflow_offloading_congested_mix:4 \
    workflow_offloading_congested_mix:5 workflow_offloading_congested_mix:6 \
    workflow_offloading_congested_mix:7; do
  cfg=${job%:*}; seed=${job#*:}; out=runs/zoo/$cfg/seed$seed
  mkdir -p "$out"
  timeout "$limit" python3 -c 'from rlsched.cli import main; main()' train --config "configs/$cfg.yaml" --seed "$seed" --out "$out" --no-progress \
    ${steps:+--steps "$steps"} >"$out.log" 2>&1 &
  pids+=($!)
done
t0=$SECONDS
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=$((fail + 1)); done
echo "15 runs in $((SECONDS - t0)) s, $fail failed"
tail -n 2 runs/zoo/workflow_offloading_congested*/seed*.log
if [ -n "$archive" ]; then
  tar czf "$archive" --exclude=tb \
    runs/zoo/workflow_offloading_congested/seed[3-9]* runs/zoo/workflow_offloading_congested_mix
fi
