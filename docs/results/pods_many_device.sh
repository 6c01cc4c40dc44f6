#!/usr/bin/env bash
# Expert iteration on PodRebalancing `today` with many teacher labels
# (configs/exit/pod_rebalancing_today_many.yaml): 15 processes play the teacher's 200
# episodes (imitation_workers), so the round that takes about 70 minutes on 2 cores takes a few
# on a 16-core machine. The run stops after SECONDS_LIMIT (default 510); its checkpoint (labels
# included) lets `rlsched train --resume runs/exit/pods-today-many-s0` continue it anywhere.
#   docs/results/pods_many_device.sh [OUT_DIR]   (OUT_DIR gets run.tgz and the labels in parts)
set -u
secs=${SECONDS_LIMIT:-510}
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
run=runs/exit/pods-today-many-s0
mkdir -p runs/exit && rm -rf "$run"
"${PYTHON:-python3}" -c "
import os, time
t = time.perf_counter(); s = 0
for i in range(10**6): s += i
print(os.cpu_count(), 'CPUs;', round((time.perf_counter() - t) * 1e3, 1), 'ms per 10^6 Python additions')"
timeout "$secs" "${PYTHON:-python3}" -c "from rlsched.cli import main; main()" train \
  --config configs/exit/pod_rebalancing_today_many.yaml --out "$run" --no-progress >"$run.log" 2>&1
echo "train exit status $?"
tail -3 "$run.log"
"${PYTHON:-python3}" -c "
import json, sys
d = json.load(open(sys.argv[1]))
print(d['steps'], 'steps', round(d['seconds']), 's; best', d['best_eval_mean_reward'])
for r in d['expert_rounds']: print({k: r.get(k) for k in ('new_samples', 'student_agreement', 'accuracy', 'changed_accuracy', 'eval_mean_reward', 'seconds')})
" "$run/run.json" 2>/dev/null || cat "$run/checkpoint/state.json" 2>/dev/null
if [ $# -ge 1 ]; then
  tar czf "$1/run.tgz" --exclude=checkpoint/demos.npz "$run" "$run.log"
  [ -f "$run/checkpoint/demos.npz" ] && split -b 15M "$run/checkpoint/demos.npz" "$1/demos.npz.part-"
fi
exit 0
