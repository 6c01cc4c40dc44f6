"""Where the small-DAG entry's gap to the optimum goes (descriptive, nothing chosen on it):
each test episode's gap less PEFT's, split into the episodes where the entry is ahead and
where it is behind, on a round's test record (default round W28's, the entry since then).

    python docs/results/wf_small_dag_losses.py [RECORD]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

RECORD = Path(__file__).with_name("wf_small_dag_ensemble_iteration_choice.json")


def split(record: dict) -> dict[str, float]:
    """Points of mean gap (percent of the optimum) the entry gains where it is ahead of PEFT
    and loses where it is behind, and its mean gap, over the test's episodes."""
    c = record["test"]["candidate"]
    ours, peft = c["learned"]["episode_gaps"], c["peft"]["episode_gaps"]
    diff = [a - b for a, b in zip(ours, peft, strict=True)]
    n = len(diff)
    return {"episodes": n, "ahead": sum(d < -1e-9 for d in diff),
            "behind": sum(d > 1e-9 for d in diff),
            "points_gained_where_ahead": 100 * sum(d for d in diff if d < -1e-9) / n,
            "points_lost_where_behind": 100 * sum(d for d in diff if d > 1e-9) / n,
            "mean_gap_pct": 100 * sum(ours) / n, "peft_mean_gap_pct": 100 * sum(peft) / n}  # fmt: skip


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else RECORD
    print(json.dumps(split(json.loads(path.read_text())), indent=1))
