"""The zoo table of docs/results.md, generated from the shipped cards (``rlsched.zoo``): each
entry's env, preset, training, size and its validation and test verdicts on the env's main
metric against the best heuristic measured there.

    python docs/results/zoo_table.py
"""

from rlsched.zoo import card, names


def verdict(v: dict | None) -> str:
    if not v or "paired" not in v:
        return "-"
    p = v["paired"]
    lo, hi = p["ci95"]
    word = p["verdict"] if p["verdict"] == "no significant difference" else f"**{p['verdict']}**"
    return (f"{word} vs {p['reference']}: {p['mean_diff']:+.3g} [{lo:+.3g}, {hi:+.3g}] "
            f"{p.get('metric', '')}, {p['wins']}/{p['ties']}/{p['losses']}")


def main() -> None:
    print("| entry | env | preset | training | size | validation | test |")
    print("|---|---|---|---|---:|---|---|")
    for n in names():
        c = card(n)
        t = c.get("training", {})
        seeds = c.get("seeds_trained", [])
        # a pooled choice names its candidates ``config/seedN``, from more than one config
        configs = {str(x).split("/")[0] for x in seeds if isinstance(x, str)}
        of = (f"(best of {len(seeds)} runs of {len(configs)} configs)" if configs
              else f"of {len(seeds)}")
        train = f"{c.get('algo', '')}, {t.get('steps', '?'):,} steps, seed {c.get('seed')} {of}"
        split = c.get("split") or "default"  # a named split: its own test set
        preset = f"`{c.get('preset', '')}`" + (f" (split `{split}`)" if split != "default" else "")
        print(f"| `{n}` | {c['env'].removeprefix('rlsched/')} | {preset} | "
              f"{train} | {c['size_bytes'] / 1024:,.0f} KiB | {verdict(c.get('validation'))} | "
              f"{verdict(c.get('test'))} |")


if __name__ == "__main__":
    main()
