#!/usr/bin/env bash
set -u
cd "$(dirname "$0")/../.."
R=.venv/bin/rlsched
while pgrep -f runs/results/train.sh >/dev/null; do sleep 10; done
[ -f runs/results/vm/seed0/model/meta.json ] || \
  $R train --config configs/vm_placement_fading.yaml --seed 0 --out runs/results/vm/seed0 --no-progress
[ -f runs/results/llm/seed0/model/meta.json ] || \
  $R train --config configs/llm_autoscaling.yaml --seed 0 --out runs/results/llm/seed0 --no-progress
[ -f runs/results/offloading/seed0/model/meta.json ] || \
  $R train --config configs/workflow_offloading.yaml --seed 0 --out runs/results/offloading/seed0 --no-progress
echo done2
