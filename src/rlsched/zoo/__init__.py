"""Pretrained policies shipped with the package: ``learned:zoo/NAME`` wherever ``learned:PATH``
works (compare, evaluate, results, serve), ``rlsched zoo list`` to see them.

Each entry is a folder ``rlsched/zoo/NAME/`` holding the model (``model/model.zip`` +
``meta.json``, saved without optimizer state to stay small) and ``card.json``: the env and
scenario preset it was trained and tested on, its config (``configs/zoo/NAME.yaml`` reproduces it
from its seed), the training record, and its validation and test results with paired verdicts
against the best heuristic measured there. An entry is shipped only where its test verdict was
measured on held-out data (``rlsched.splits``); the card says which verdict it was, whatever it
was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rlsched.errors import PolicyError
from rlsched.suggest import did_you_mean

ZOO_DIR = Path(__file__).resolve().parent
PREFIX = "zoo/"


def names() -> list[str]:
    return sorted(p.name for p in ZOO_DIR.iterdir() if (p / "card.json").is_file())


def card(name: str) -> dict[str, Any]:
    path = ZOO_DIR / name / "card.json"
    if not path.is_file():
        raise PolicyError(
            f"no zoo policy {name!r}{did_you_mean(name, names())}; "
            f"shipped: {', '.join(names()) or 'none'}"
        )
    return dict(json.loads(path.read_text()))


def model_dir(name: str) -> Path:
    card(name)  # a clear error for an unknown name
    return ZOO_DIR / name / "model"


def resolve(path: str | Path) -> Path:
    """``zoo/NAME`` -> the shipped model folder; any other path is returned as it is (a local
    folder of that name wins, so a user's own ``zoo/`` directory still works)."""
    p = Path(path)
    s = str(path)
    if s.startswith(PREFIX) and not p.exists():
        return model_dir(s[len(PREFIX) :])
    return p


def resolve_model_dir(path: str | Path) -> Path:
    """A model folder, a run folder (its ``model/``), or ``zoo/NAME`` (a shipped policy).
    Torch-free, so that ``rlsched serve`` can resolve a model without loading torch."""
    p = resolve(path)
    if (p / "meta.json").is_file():
        return p
    if (p / "model" / "meta.json").is_file():
        return p / "model"
    raise PolicyError(f"{p}: no trained model here (expected meta.json in it or in {p}/model)")


def entries() -> list[dict[str, Any]]:
    """``[{"name", "env", "preset", "env_kwargs", "path", "size_bytes", "validation",
    "test", "gate", "split"}]``; ``gate``: the margin gate the entry plays under (``{"anchor",
    "margin"}``, :class:`~rlsched.policies.learned.LearnedPolicy`), or None; ``split``: the
    split (:mod:`rlsched.splits`) it was trained under and is judged on, ``default`` unless
    its card names another."""
    out = []
    for n in names():
        c = card(n)
        d = ZOO_DIR / n / "model"
        out.append(
            {
                "name": n,
                "env": c["env"],
                "preset": c.get("preset"),
                "env_kwargs": dict(c.get("env_kwargs") or {}),
                "path": f"learned:{PREFIX}{n}",
                "size_bytes": sum(f.stat().st_size for f in d.iterdir() if f.is_file()),
                "validation": c.get("validation"),
                "test": c.get("test"),
                "gate": c.get("gate"),
                "split": c.get("split") or "default",
            }
        )
    return out
