"""Whether ``rlsched train`` reproduces the zoo's ``workflow-congested-vetted`` (descriptive):
a run folder's model against the shipped one, field by field, written to
``docs/results/wf_congested_vetted_reproduced.json`` under ``--label``.

    rlsched train --config configs/zoo/workflow-congested-vetted.yaml --seed 0 --out RUN
    python docs/results/wf_congested_vetted_reproduce.py RUN --label from_scratch
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "src/rlsched/zoo/workflow-congested-vetted/model"
OUT = ROOT / "docs/results/wf_congested_vetted_reproduced.json"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compare(run: Path) -> dict:
    """Each part of the model that decides its play, equal or not, and the run's times."""
    a = json.loads((run / "model/meta.json").read_text())
    b = json.loads((SHIPPED / "meta.json").read_text())
    fa, fb = a["familiar"], b["familiar"]
    record = json.loads((run / "run.json").read_text())
    return {
        "weights_equal": digest(run / "model/dagnet.npz") == digest(SHIPPED / "dagnet.npz"),
        "threshold_equal": a["threshold"] == b["threshold"],
        **{f"guard_{k}_equal": fa.get(k) == fb.get(k)
           for k in ("reference", "scale", "radius", "open", "datasets")},
        "vetting_values_equal": [r["values"] for r in a["vetting"]]
        == [r["values"] for r in b["vetting"]],
        "init_model": record["config"].get("init_model") or "none (from scratch)",
        "seconds": record["seconds"], "git_commit": record["git_commit"],
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--label", required=True)
    args = ap.parse_args()
    out = json.loads(OUT.read_text()) if OUT.is_file() else {}
    out[args.label] = compare(args.run)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out[args.label], indent=1))


if __name__ == "__main__":
    main()
