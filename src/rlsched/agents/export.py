"""Put a trained run into the zoo: the model without optimizer state, and its card."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from rlsched.agents.models import load_model, read_meta, resolve_model_dir
from rlsched.zoo import ZOO_DIR


def export_model(run_dir: str | Path, dest: str | Path) -> int:
    """Save the run's model to ``dest`` (``model.zip`` + ``meta.json``) with a fresh optimizer,
    so the file holds the weights only (acting never reads the optimizer). Returns its size."""
    src = resolve_model_dir(run_dir)
    meta = read_meta(src)
    model = load_model(meta["algo"], src / "model.zip")
    opt = model.policy.optimizer
    model.policy.optimizer = type(opt)(model.policy.parameters(), **opt.defaults)
    out = Path(dest)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        model.save(Path(tmp) / "model.zip")
        shutil.copyfile(Path(tmp) / "model.zip", out / "model.zip")
    for extra in ("meta.json", "vecnormalize.pkl"):
        if (src / extra).is_file():
            shutil.copyfile(src / extra, out / extra)
    return sum(f.stat().st_size for f in out.iterdir() if f.is_file())


def write_card(name: str, card: dict[str, Any], root: Path = ZOO_DIR) -> Path:
    path = root / name / "card.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(card, indent=2) + "\n")
    return path
