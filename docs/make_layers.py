"""Draw docs/figures/layers.png, the layer contract of pyproject.toml ([tool.importlinter]).

    python docs/make_layers.py
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

ROOT = Path(__file__).resolve().parents[1]


def main() -> Path:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = [[n.strip() for n in layer.split("|")] for layer in cfg["contracts"][0]["layers"]]
    h, gap, width = 0.6, 0.12, 10.0
    fig, ax = plt.subplots(figsize=(7.5, 0.42 * len(layers) + 0.8))
    y = 0.0
    for row in reversed(layers):  # the bottom layer first
        w = (width - gap * (len(row) - 1)) / len(row)
        for k, name in enumerate(row):
            x = k * (w + gap)
            ax.add_patch(
                FancyBboxPatch(
                    (x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.08",
                    facecolor="#dbe9f6" if len(row) == 1 else "#e8f3e0", edgecolor="#44546a",
                )
            )  # fmt: skip
            ax.text(x + w / 2, y + h / 2, name, ha="center", va="center", fontsize=9)
        y += h + gap
    ax.annotate(
        "", xy=(width + 0.35, 0.1), xytext=(width + 0.35, y - gap - 0.1),
        arrowprops={"arrowstyle": "->", "color": "#44546a"},
    )  # fmt: skip
    ax.text(width + 0.5, y / 2, "imports point down", rotation=90, va="center", fontsize=8)
    ax.set_xlim(-0.1, width + 0.9)
    ax.set_ylim(-0.1, y)
    ax.axis("off")
    ax.set_title("rlsched.* layers (green: independent siblings)", fontsize=10)
    out = ROOT / "docs" / "figures" / "layers.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return out


if __name__ == "__main__":
    print(main())
