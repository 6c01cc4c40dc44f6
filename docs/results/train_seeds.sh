#!/usr/bin/env bash
# Train one config over several seeds, one run at a time; an interrupted run resumes from its
# checkpoint, a finished one is skipped.
#   docs/results/train_seeds.sh CONFIG OUT_DIR [SEED ...]    (seeds default to 0 1 2)
# Issue 13's runs:
#   docs/results/train_seeds.sh configs/llm_autoscaling_general.yaml runs/llm_general
#   docs/results/train_seeds.sh configs/llm_autoscaling_mix.yaml runs/llm_mix
#   docs/results/train_seeds.sh configs/llm_autoscaling_code_time.yaml runs/llm_code_time 0 1 2 3 4
#   docs/results/train_seeds.sh configs/llm_autoscaling_code_time_conv_only.yaml runs/llm_code_time_conv 0 1 2 3 4
#   docs/results/train_seeds.sh configs/llm_autoscaling_code_time_poisson.yaml runs/llm_code_time_poisson 0 1 2 3 4
#   for c in vm_placement_recovering5 kube_scheduling_gang workflow_offloading_congested; do
#     docs/results/train_seeds.sh configs/$c.yaml runs/zoo/$c; done    (then make_zoo_more.py)
set -u
cd "$(dirname "$0")/../.."
R=.venv/bin/rlsched
config=$1 dir=$2
shift 2
seeds=("$@")
[ ${#seeds[@]} -eq 0 ] && seeds=(0 1 2)
for seed in "${seeds[@]}"; do
  out=$dir/seed$seed
  [ -f "$out/run.json" ] && continue
  if [ -f "$out/checkpoint/state.json" ]; then
    $R train --resume "$out" --no-progress
  else
    $R train --config "$config" --seed "$seed" --out "$out" --no-progress
  fi
done
