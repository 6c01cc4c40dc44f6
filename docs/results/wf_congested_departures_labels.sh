#!/usr/bin/env bash
# Issue 13, round C1: collect the teacher labels of
# configs/workflow_offloading_congested_departures.yaml on a many-core machine (16 workers;
# the same episodes as on two: imitation.collect plays them in a fixed order), chunk by chunk
# into runs/zoo/workflow_offloading_congested_departures/seed0/teacher, stopping after LIMIT
# seconds (a chunk cut short is lost; `rlsched train` collects what is missing), then packs
# the chunks with xz into ARCHIVE.partNN pieces of 15 MB.
#   bash docs/results/wf_congested_departures_labels.sh [WORKERS] [LIMIT] [ARCHIVE]
set -u
workers=${1:-16}
limit=${2:-420}
archive=${3:-labels.tar.xz}
run=runs/zoo/workflow_offloading_congested_departures/seed0
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONUNBUFFERED=1
mkdir -p "$run"
t0=$SECONDS
timeout "$limit" python3 - "$run" "$workers" <<'PY'
import sys
from pathlib import Path

from rlsched.train.config import TrainConfig
from rlsched.train.departures import collect_labels

cfg = TrainConfig.from_yaml("configs/workflow_offloading_congested_departures.yaml")
cfg.imitation_workers = int(sys.argv[2])
collect_labels(cfg, Path(sys.argv[1]), progress=True)
PY
echo "labels: $((SECONDS - t0)) s"
ls -la "$run/teacher"
tar cf - -C "$run" teacher | xz -6 -T0 | split -b 15M -d - "$archive.part"
ls -la "$archive".part*
