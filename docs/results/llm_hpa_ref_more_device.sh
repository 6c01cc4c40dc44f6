#!/usr/bin/env bash
# Twelve more seeds (4-15) of the entry's recipe (configs/llm_autoscaling_residual_hpa_ref.yaml),
# all at once on a 16-core machine, one process and one torch thread each. Each run stops after
# SECONDS_PER_RUN (default 520) if it has not finished its 120,832 steps; its checkpoint then
# lets `rlsched train --resume runs/zoo/llm_residual_hpa_ref_more/seedS` finish it anywhere.
#   docs/results/llm_hpa_ref_more_device.sh [OUT_DIR]   (OUT_DIR gets runs.tgz)
set -u
secs=${SECONDS_PER_RUN:-520}
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
root=runs/zoo/llm_residual_hpa_ref_more
mkdir -p "$root"
"${PYTHON:-python3}" -c "
import os, time
t = time.perf_counter(); s = 0
for i in range(10**6): s += i
print(os.cpu_count(), 'CPUs;', round((time.perf_counter() - t) * 1e3, 1), 'ms per 10^6 Python additions')"
pids=()
for seed in $(seq 4 15); do
  rm -rf "$root/seed$seed"
  timeout "$secs" "${PYTHON:-python3}" -c "from rlsched.cli import main; main()" train \
    --config configs/llm_autoscaling_residual_hpa_ref.yaml --seed "$seed" \
    --out "$root/seed$seed" --no-progress >"$root/seed$seed.log" 2>&1 &
  pids+=($!)
done
wait "${pids[@]}"
for seed in $(seq 4 15); do
  d=$root/seed$seed
  echo "== seed $seed: $( [ -f "$d/run.json" ] && echo finished || echo stopped)"
  tail -2 "$d.log"
  cat "$d/progress.json" 2>/dev/null; echo
done
[ $# -ge 1 ] && tar czf "$1/runs.tgz" --exclude=tb --exclude=monitor "$root"
exit 0
