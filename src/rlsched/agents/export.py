"""Put a trained run into the zoo: the model without optimizer state, and its card."""

from __future__ import annotations

import json
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import torch

from rlsched.agents.models import load_model, read_meta, resolve_model_dir
from rlsched.zoo import ZOO_DIR


def export_model(run_dir: str | Path, dest: str | Path, critic: bool = True) -> int:
    """Save the run's model to ``dest`` (``model.zip`` + ``meta.json``) with a fresh optimizer,
    so the file holds the weights only (acting never reads the optimizer), deflated. With
    ``critic=False`` the value function's weights are zeroed (acting never reads them either):
    a critic over every action row's embedding can dwarf the actor, and zeros deflate to almost
    nothing; fine-tuning from such a file starts its critic from zero. Returns the size."""
    src = resolve_model_dir(run_dir)
    meta = read_meta(src)
    out = Path(dest)
    if meta["algo"] == "departures":  # no SB3 model: its weights files as they are
        out.mkdir(parents=True, exist_ok=True)
        weights = [m["weights"] for m in meta.get("members") or [{"weights": "dagnet.npz"}]]
        for name in (*weights, "meta.json"):
            shutil.copyfile(src / name, out / name)
        return sum(f.stat().st_size for f in out.iterdir() if f.is_file())
    model = load_model(meta["algo"], src / "model.zip")
    opt = model.policy.optimizer
    model.policy.optimizer = type(opt)(model.policy.parameters(), **opt.defaults)
    if not critic:
        _zero_critic(model.policy)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        model.save(Path(tmp) / "model.zip")
        _deflate(Path(tmp) / "model.zip", out / "model.zip")
    for extra in ("meta.json", "vecnormalize.pkl"):
        if (src / extra).is_file():
            shutil.copyfile(src / extra, out / extra)
    return sum(f.stat().st_size for f in out.iterdir() if f.is_file())


def _zero_critic(policy: Any) -> None:
    """Zero the value head and the layers only it reads (not the shared feature extractor)."""
    parts = [getattr(policy, "value_net", None), getattr(policy.mlp_extractor, "value_net", None)]
    if not getattr(policy, "share_features_extractor", True):
        parts.append(getattr(policy, "vf_features_extractor", None))
    with torch.no_grad():
        for part in parts:
            for p in part.parameters() if part is not None else ():
                p.zero_()


def _deflate(src: Path, dest: Path) -> None:
    """Copy the zip ``src`` to ``dest`` with every member deflated (SB3 stores them raw)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info.filename))


def write_card(name: str, card: dict[str, Any], root: Path = ZOO_DIR) -> Path:
    path = root / name / "card.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(card, indent=2) + "\n")
    return path
