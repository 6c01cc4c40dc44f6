#!/usr/bin/env bash
# Issue 13 item 5: does the faster setting (minibatch 512, 5 epochs) learn as well as the fast
# one (minibatch 256, 10 epochs)? 3 seeds each at 300k steps, model selection as in both
# configs (periodic validation); resumable (finished runs are skipped). Then both judged on
# the validation and the held-out test set (IQM over seeds, paired with the best heuristic and
# with each other) by docs/results/throughput_quality.py.
set -u
cd "$(dirname "$0")/../.."
R=.venv/bin/rlsched
for s in 0 1 2; do
  [ -f runs/tput/fast/seed$s/run.json ] || \
    $R train --config configs/serverless_placement_fast.yaml --seed $s --out runs/tput/fast/seed$s --no-progress 2>/dev/null
  [ -f runs/tput/faster/seed$s/run.json ] || \
    $R train --config configs/serverless_placement_faster.yaml --seed $s --out runs/tput/faster/seed$s --no-progress 2>/dev/null
done
echo done
