#!/usr/bin/env bash
# Learned policies for `rlsched results` (one heavy job at a time on 2 cores).
set -u
cd "$(dirname "$0")/../.."
R=.venv/bin/rlsched
for s in 0 1 2; do
  [ -f runs/results/serverless/seed$s/model/meta.json ] || \
    $R train --config configs/serverless_placement.yaml --steps 300000 --seed $s --out runs/results/serverless/seed$s --no-progress
done
[ -f runs/results/pods/seed0/model/meta.json ] || \
  $R train --config configs/pod_rebalancing.yaml --seed 0 --out runs/results/pods/seed0 --no-progress
[ -f runs/results/kube/seed0/model/meta.json ] || \
  $R train --config configs/kube_scheduling.yaml --seed 0 --out runs/results/kube/seed0 --no-progress
echo done
