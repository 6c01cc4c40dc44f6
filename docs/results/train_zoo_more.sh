#!/usr/bin/env bash
# Issue 13 item 6: the zoo's VMPlacement, WorkflowOffloading and KubeScheduling policies, each
# env's default preset, seeds 0-2, one run at a time; an interrupted run resumes from its
# checkpoint. Then docs/results/make_zoo_more.py selects each env's seed on validation and
# measures it on validation and test.
set -u
cd "$(dirname "$0")/../.."
R=.venv/bin/rlsched
for c in vm_placement_recovering5 kube_scheduling_gang workflow_offloading_congested; do
  for s in 0 1 2; do
    out=runs/zoo/$c/seed$s
    [ -f $out/run.json ] && continue
    if [ -f $out/checkpoint/state.json ]; then
      $R train --resume $out --no-progress
    else
      $R train --config configs/$c.yaml --seed $s --out $out --no-progress
    fi
  done
done
echo done
