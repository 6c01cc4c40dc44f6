"""Build the zoo entry `serverless-edge-maskable-ppo` from the run that docs/results.md measured.

The kept seed is the one best on validation (run.json / evaluations), never on test. Its card
takes the validation verdict measured here (10 episodes of the validation set, seeds 10,000+)
and the test verdict from docs/results/results_presets.json (the full results run).

    python docs/results/make_zoo.py
"""

import argparse
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from rlsched.agents.export import export_model, write_card
from rlsched.evaluate import compare
from rlsched.gate import write_gate
from rlsched.splits import SPLITS, TEST_SEED
from rlsched.stats import paired
from rlsched.zoo import ZOO_DIR

ENV = "rlsched/ServerlessPlacement-v0"
NAME = "serverless-edge-maskable-ppo"
ROOT = Path(__file__).resolve().parents[2]
RUNS = [ROOT / f"runs/results/serverless/seed{s}" for s in (0, 1, 2)]
#: the cards' usual episodes per verdict, and the first validation seed
CARD_EPISODES, VAL_SEED = 10, 10_000


def compare_in_envs(env: str, dataset: str, ref: str, groups: list[tuple[list[str], dict]],
                    episodes: int, seed: int) -> list[dict]:
    """``compare``'s rows for groups of policies that each need their own env arguments (one
    that shapes the observation, such as PodRebalancing's ``history_features``): each group
    plays beside ``ref`` on the same seeded episodes, which such arguments leave unchanged, and
    ``ref`` must score the same in every group (checked). ``ref``'s row first, then the
    groups'."""
    merged: dict[str, tuple[list[str], dict]] = {}  # groups with the same arguments play once
    for policies, kwargs in groups:
        key = json.dumps(kwargs, sort_keys=True)
        merged.setdefault(key, ([], kwargs))[0].extend(policies)
    rows: list[dict] = []
    for policies, kwargs in merged.values():
        rep = compare(env, dataset, [ref, *policies], episodes=episodes, seed=seed,
                      env_kwargs=kwargs, reference=ref)
        mine = next(r for r in rep["results"] if r["policy"] == ref)
        if not rows:
            rows.append(mine)
        assert np.allclose(mine["episode_values"], rows[0]["episode_values"]), (
            f"{dataset}: {ref} played other episodes with env arguments {kwargs}")
        rows += [r for r in rep["results"] if r["policy"] != ref]
    return rows


def best_validation(run: Path) -> float:
    """The run's best periodic evaluation; a run whose only evaluation was its warm start's
    (no periodic one ran) has that one, in ``metrics.json``."""
    if not (run / "eval" / "evaluations.npz").is_file():
        return float(json.loads((run / "metrics.json").read_text())["best_eval_mean_reward"])
    ev = np.load(run / "eval" / "evaluations.npz")
    return float(ev["results"].mean(axis=1).max())


def select(runs: list[Path]) -> tuple[dict[Path, float], Path]:
    """Each run's best validation reward, and the run best on it (never on test)."""
    vals = {run: best_validation(run) for run in runs}
    return vals, max(vals, key=vals.__getitem__)


def candidate_runs(configs: tuple[str, ...]) -> list[Path]:
    """The finished runs (``runs/zoo/CONFIG/seedN`` with a ``run.json``) of each config, seed
    by seed: the candidates of a pooled choice."""
    return [r for c in configs for r in sorted(
        (r for r in (ROOT / "runs/zoo" / c).glob("seed*") if (r / "run.json").exists()),
        key=lambda p: int(p.name[4:]))]  # fmt: skip


def label(run: Path) -> str:
    """``config/seedN``: the candidates of a pooled choice come from more than one config."""
    return f"{run.parent.name}/{run.name}"


def _seed(run: Path) -> int:
    return int(json.loads((run / "run.json").read_text())["seed"])


def training_card(
    name: str, env: str, run: Path, vals: dict[Path, float], size: int, selected_by: str
) -> dict:
    """The card fields every zoo entry shares: where it came from and how it was chosen."""
    split = SPLITS[env]
    metrics = json.loads((run / "metrics.json").read_text())
    return {
        "name": name,
        "env": env,
        "env_kwargs": dict(split.env_kwargs),
        "config": f"configs/zoo/{name}.yaml",
        "seed": _seed(run),
        "seeds_trained": sorted(_seed(r) for r in vals),
        "selected_by": selected_by,
        "training": {
            "steps": metrics.get("steps") or metrics.get("total_steps"),
            "dataset": split.train,
            "validation_dataset": split.validation,
            "best_validation_reward_per_seed": {r.name: v for r, v in vals.items()},
        },
        "size_bytes": size,
    }


def main() -> None:
    vals, run = select(RUNS)
    size = export_model(run, ZOO_DIR / NAME / "model")
    split = SPLITS[ENV]
    spec = f"learned:{ZOO_DIR / NAME / 'model'}"
    val = compare(ENV, split.validation, ["all", spec], episodes=10, seed=10_000,
                  env_kwargs=dict(split.env_kwargs))
    vrow = next(r for r in val["results"] if r["policy"].startswith("learned:"))
    full = json.loads((ROOT / "docs/results/results_presets.json").read_text())
    rep = next(r for r in full["reports"] if r["env"] == ENV)
    group = next(r for r in rep["results"] if r.get("kind") == "learned")
    rel = run.relative_to(ROOT)
    trow = next(s for s in group["seeds"] if s["policy"].startswith(f"learned:{rel}/"))
    card = {
        **training_card(
            NAME, ENV, run, vals, size,
            "best validation reward of the three seeds (periodic evaluation)",
        ),
        "preset": "edge",
        "algo": "maskable_ppo",
        "policy_net": "node",
        "validation": {
            "dataset": val["dataset"], "episodes": 10, "seed": 10_000,
            "reference": val["reference"], "mean_reward": vrow["mean_reward"],
            "paired": vrow["paired"],
        },
        "test": {
            "dataset": rep["dataset"], "episodes": rep["episodes"], "seed": TEST_SEED,
            "reference": rep["reference"], "mean_reward": trow["mean_reward"],
            "paired": trow["paired"],
        },
    }
    ship(card, run)


def verdict(rep: dict, spec: str, episodes: int, metrics: tuple[str, ...] = ()) -> dict:
    """The card's record of ``spec`` in a compare report: its main metric's paired verdict."""
    row = next(r for r in rep["results"] if r["policy"] == spec)
    out = {"dataset": rep["dataset"], "episodes": episodes, "reference": rep["reference"],
           "main_metric": rep["main_metric"], "mean_reward": row["mean_reward"]}
    if metrics:
        out["metrics"] = {k: row["metrics"][k] for k in metrics if k in row["metrics"]}
    return {**out, "paired": row["paired"]}


def held_out_entry(
    name: str, env: str, runs: list[Path], episodes: int, val_kwargs: dict, test_kwargs: dict,
    selected_by: str, card_fields: dict, metrics: tuple[str, ...] = (), critic: bool = True,
) -> None:
    """Select the run best on validation, export it (``critic=False``: actor only, see
    ``export_model``), measure it against every heuristic on the validation set (seeds
    10,000+) and the test set (seeds 1000+), and ship its card."""
    vals, run = select(runs)
    size = export_model(run, ZOO_DIR / name / "model", critic=critic)
    spec = f"learned:{ZOO_DIR / name / 'model'}"
    val, test = card_runs(env, spec, episodes, val_kwargs, test_kwargs)
    card = {
        **training_card(name, env, run, vals, size, selected_by),
        **card_fields,
        "validation": {**verdict(val, spec, episodes, metrics), "seed": 10_000},
        "test": {**verdict(test, spec, episodes, metrics), "seed": TEST_SEED},
    }
    ship(card, run)


def card_runs(
    env: str, spec: str, episodes: int, val_kwargs: dict, test_kwargs: dict
) -> tuple[dict, dict]:
    """The compare reports a card's verdicts come from: ``spec`` beside every heuristic that
    does not search on the validation set (seeds 10,000+) and the test set (seeds 1000+).
    (WorkflowOffloading's CP-SAT `optimal` and `mdp_rollout` take minutes per episode and are
    never the reference.)"""
    split = SPLITS[env]
    val = compare(env, split.validation, f"plain,{spec}", episodes=episodes, seed=10_000,
                  env_kwargs=val_kwargs)  # fmt: skip
    test = compare(env, split.test, f"plain,{spec}", episodes=episodes, seed=TEST_SEED,
                   env_kwargs=test_kwargs)  # fmt: skip
    return val, test


def paired_rows(
    values: dict[str, list[float]], pairs: list[tuple[str, str]], metric: str, unit: str = ""
) -> list[tuple[str, str, dict]]:
    """``(a, b, paired a - b)`` for each pair of ``values``' per-episode lists (lower is
    better), each printed on a line as it comes."""
    out = []
    for a, b in pairs:
        p = paired(values[a], values[b], direction="lower", reference=b, metric=metric).to_json()
        lo, hi = p["ci95"]
        print(f"  {a} vs {b}: {p['mean_diff']:+.4g}{unit} [{lo:+.4g}, {hi:+.4g}] "
              f"{p['wins']}/{p['ties']}/{p['losses']} {p['verdict']}", flush=True)  # fmt: skip
        out.append((a, b, p))
    return out


def carry_oracle(card: dict, replaced: str | None = None) -> None:
    """Give ``card`` the recorded oracle (``test.oracle``) of the zoo card it replaces
    (``replaced``, or the one of its own name) where their test episodes are the same: it was
    measured on those very episodes, and the demo pairs the entry with it."""
    old_path = ZOO_DIR / (replaced or card["name"]) / "card.json"
    old = json.loads(old_path.read_text()).get("test", {}) if old_path.is_file() else {}
    if old.get("oracle") and "oracle" not in card["test"] and all(
        old.get(k) == card["test"].get(k) for k in ("dataset", "seed", "episodes")
    ):
        card["test"]["oracle"] = old["oracle"]


def ship(card: dict, run: Path) -> None:
    """Write the entry's card (with the replaced card's oracle: :func:`carry_oracle`) and the
    config that retrains it from its seed (the run's own)."""
    cfg = (run / "config.yaml").read_text()
    carry_oracle(card)
    write_card(card["name"], card)
    cfg_path = ROOT / card["config"]
    cfg_path.parent.mkdir(parents=True, exist_ok=True)
    cfg_path.write_text(
        f"# The zoo's {card['name']}: `rlsched train --config {card['config']} "
        f"--seed {card['seed']}`\n" + cfg
    )
    print(json.dumps({k: card[k] for k in ("seed", "size_bytes", "validation", "test")}, indent=1))


def retire(old: str, new: str, by: str) -> Path:
    """Move the zoo entry ``old`` (its model, card and config) to ``configs/zoo/start/OLD``,
    its config headed by why it left (``by``: the round and its script, which shipped
    ``new``); returns that folder."""
    retired = ROOT / "configs/zoo/start" / old
    shutil.copytree(ZOO_DIR / old / "model", retired / "model")
    shutil.copyfile(ZOO_DIR / old / "card.json", retired / "card.json")
    old_cfg = ROOT / "configs/zoo" / f"{old}.yaml"
    (retired / "config.yaml").write_text(
        f"# The zoo's {old} until {by} replaced it by {new}\n" + old_cfg.read_text()
    )
    old_cfg.unlink()
    shutil.rmtree(ZOO_DIR / old)
    print(f"shipped {new}; {old} retired to {retired.relative_to(ROOT)}", flush=True)
    return retired


def remeasure_card(card: dict, env: str, entry: str, kwargs: dict, metric: str) -> None:
    """``card``'s validation and test verdicts measured again for ``entry`` (a ``learned:``
    spec) as a card records them: every plain heuristic beside it, the card's own episode
    counts (``CARD_EPISODES`` where it has none) of the split's validation and test data
    (seeds ``VAL_SEED``+ and ``TEST_SEED``+), with the metrics it records. A test oracle
    recorded on those episodes stays."""
    split = SPLITS[env]
    n_val = int(card.get("validation", {}).get("episodes", CARD_EPISODES))
    n_test = int(card.get("test", {}).get("episodes", CARD_EPISODES))
    val = compare(env, split.validation, f"plain,{entry}", episodes=n_val, seed=VAL_SEED,
                  env_kwargs=kwargs)  # fmt: skip
    test = compare(env, split.test, f"plain,{entry}", episodes=n_test, seed=TEST_SEED,
                   env_kwargs=kwargs)  # fmt: skip
    oracle = card.get("test", {}).get("oracle")
    # the metrics the card records (the cost-goal LLM entry's cost too), its main one first
    keys = (metric, *(k for k in card.get("test", {}).get("metrics") or {} if k != metric))
    card["validation"] = {**verdict(val, entry, n_val, keys), "seed": VAL_SEED}
    card["test"] = {**verdict(test, entry, n_test, keys), "seed": TEST_SEED}
    if oracle is not None:
        card["test"]["oracle"] = oracle


def ship_gate(name: str, gate: dict, script: str) -> dict:
    """Ship a margin gate (``{"anchor": H, "margin": M}``), chosen by round script ``script``,
    with zoo entry ``name``: its model's ``meta.json`` ``gate`` (what ``learned:zoo/NAME``
    plays), its card's, and a line in its retraining config; returns the card, for the caller
    to complete and write."""
    write_gate(ZOO_DIR / name / "model", gate["anchor"], gate["margin"])
    card = json.loads((ZOO_DIR / name / "card.json").read_text())
    card["gate"] = gate
    a, m = gate["anchor"], f"{gate['margin']:g}"
    note_in_config(
        card,
        f"It plays gated by {a} at margin {m} (meta.json \"gate\", chosen on validation by "
        f"{script}): the model leaves {a}'s choice only where its logit beats it by {m}; "
        "training does not read the gate.",
    )
    return card


def trial_spec(entry: str, settings: dict) -> str:
    """``entry`` (a ``learned:`` spec without arguments) under the trial guard ``settings``
    (a ``meta.json`` ``trial``): ``?trial=ANCHOR&trial_KEY=V``, other thresholds joined by
    ``/`` (none: left out)."""
    args = [f"trial={settings['anchor']}"]
    for k, v in settings.items():
        if k == "thresholds":
            if v:
                args.append("trial_thresholds=" + "/".join(f"{t:g}" for t in v))
        elif k != "anchor":
            args.append(f"trial_{k}={v}")
    return f"{entry}?{'&'.join(args)}"


def ship_trial(name: str, settings: dict, chosen_by: str, line: str) -> dict:
    """Ship a trial guard (``settings``, a ``meta.json`` ``trial``) with zoo entry ``name``:
    its model's ``meta.json`` ``trial`` (what ``learned:zoo/NAME`` plays), its card's
    ``trial`` and ``trial_chosen_by``, and ``line`` in its retraining config; returns the
    card, for the caller to measure again and write."""
    model = ZOO_DIR / name / "model"
    meta = json.loads((model / "meta.json").read_text())
    meta["trial"] = settings
    (model / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    card = json.loads((ZOO_DIR / name / "card.json").read_text())
    card["trial"] = settings
    card["trial_chosen_by"] = chosen_by
    note_in_config(card, line)
    return card


def note_in_config(card: dict, line: str) -> None:
    """Say in the entry's retraining config (``card["config"]``), as a comment under its first
    line, what it plays with that training does not read (a gate, a trial guard)."""
    cfg = ROOT / card["config"]
    head, rest = cfg.read_text().split("\n", 1)
    cfg.write_text(f"{head}\n# {line}\n{rest}")


@dataclass(frozen=True)
class Choice:
    """A zoo entry chosen again over a pool of candidate runs by the validation rule of
    :func:`pooled_choice`."""

    name: str  # the zoo entry
    env: str
    preset: str
    extra: dict  # env arguments beside the split's and the preset
    pool: tuple[str, ...]  # configs whose finished runs (runs/zoo/CONFIG/seedN) are candidates
    metric: str  # the env's main metric
    unit: str  # how the metric reads in a sentence ("VMs placed")
    results: str  # docs/results/RESULTS[_N].json
    script: str  # the script that runs the choice (named in the card)
    episodes: int  # validation episodes by default
    heuristics: str = "plain"  # the heuristics played beside the candidates
    direction: str = "higher"  # of the metric
    card_fields: tuple[tuple[str, str], ...] = ()  # more (key, text) for a replacement's card
    val_seed: int = VAL_SEED  # the first validation episode's seed (fresh ones for a new round)


def record_choice(c: Choice, episodes: int, validation: dict, entry_eligible: bool,
                  kept: str | None, vs_entry: dict | None, replace: bool, t0: float,
                  **more: Any) -> dict:
    """The rule's record of one choice, written to ``docs/results/RESULTS.json`` (``_N`` when
    ``episodes`` is not the default); ``more``: fields a rule adds (before ``seconds``)."""
    out = {"validation": validation, "entry_eligible": entry_eligible, "kept": kept,
           "kept_vs_entry": vs_entry, "replaces": replace, **more,
           "seconds": time.perf_counter() - t0}  # fmt: skip
    name = c.results + ("" if episodes == c.episodes else f"_{episodes}")
    (ROOT / f"docs/results/{name}.json").write_text(json.dumps(out, indent=1) + "\n")
    return out


def pooled_choice(c: Choice) -> None:
    """The rule (``make_zoo_vm.py`` has its history): every candidate run's kept model, the
    shipped entry and ``c.heuristics`` play the same validation episodes (seeds ``c.val_seed``+;
    ``--episodes N``, default ``c.episodes``); a candidate is eligible when it is not
    significantly worse than the best heuristic there; the eligible one with the best mean
    replaces the entry when the entry is not eligible, or when that candidate is
    significantly better than the entry. Writes ``docs/results/RESULTS.json`` (``_N`` when N
    is not the default) and, on a replacement, the entry and its card (validation and test
    verdicts on the card's usual 10 episodes each)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=c.episodes)
    episodes = ap.parse_args().episodes
    t0 = time.perf_counter()
    split = SPLITS[c.env]
    kwargs = {**split.env_kwargs, **c.extra, "scenario": c.preset}
    runs = candidate_runs(c.pool)
    entry = f"learned:{ZOO_DIR / c.name / 'model'}"
    specs = {f"learned:{r / 'model'}": r for r in runs}
    rep = compare(c.env, split.validation, [c.heuristics, entry, *specs], episodes=episodes,
                  seed=c.val_seed, env_kwargs=kwargs)
    rows = {r["policy"]: r for r in rep["results"]}
    ref = rep["reference"]
    sign = 1.0 if c.direction == "higher" else -1.0

    def mean(spec: str) -> float:
        return float(rows[spec]["metrics"][c.metric])

    def eligible(spec: str) -> bool:
        return rows[spec]["paired"]["verdict"] != "worse"

    pool = [s for s in specs if eligible(s)]
    kept = max(pool, key=lambda s: sign * mean(s)) if pool else None
    vs_entry = None if kept is None else paired(
        rows[kept]["episode_values"], rows[entry]["episode_values"], direction=c.direction,
        reference="the entry so far", metric=c.metric).to_json()
    replace = kept is not None and (not eligible(entry) or vs_entry["verdict"] == "better")
    out = record_choice(
        c, episodes,
        {"dataset": split.validation, "episodes": episodes, "seed": c.val_seed, "reference": ref,
         "means": {(label(specs[s]) if s in specs else s): mean(s) for s in rows},
         "vs_best": {(label(specs[s]) if s in specs else s): rows[s]["paired"]
                     for s in rows if "paired" in rows[s]}},
        eligible(entry), None if kept is None else label(specs[kept]), vs_entry, replace, t0)
    print(f"reference {ref} {mean(ref):.2f}; entry {mean(entry):.2f} "
          f"({rows[entry]['paired']['verdict']})")
    for s, r in specs.items():
        p = rows[s]["paired"]
        print(f"  {label(r):45s} {mean(s):8.2f} {p['mean_diff']:+.2f} "
              f"[{p['ci95'][0]:+.2f}, {p['ci95'][1]:+.2f}] {p['verdict']}")
    print(f"kept {out['kept']}; vs the entry {vs_entry}; replaces: {replace}")
    if replace:
        _ship_choice(c, specs[kept], runs, kwargs, {label(r): mean(s) for s, r in specs.items()},
                     vs_entry, ref, episodes)


def export_and_judge(env: str, name: str, run: Path, kwargs: dict) -> tuple[int, str, dict, dict]:
    """Export ``run``'s model as zoo entry ``name``; its size, spec and the compare reports of
    it beside every plain heuristic on the card's validation and test episodes."""
    size = export_model(run, ZOO_DIR / name / "model")
    split = SPLITS[env]
    spec = f"learned:{ZOO_DIR / name / 'model'}"
    val = compare(env, split.validation, f"plain,{spec}", episodes=CARD_EPISODES,
                  seed=VAL_SEED, env_kwargs=kwargs)
    test = compare(env, split.test, f"plain,{spec}", episodes=CARD_EPISODES, seed=TEST_SEED,
                   env_kwargs=kwargs)
    return size, spec, val, test


def _more_datasets(run: Path) -> str:
    """The run's ``train_datasets`` in words (empty without them)."""
    more = yaml.safe_load((run / "config.yaml").read_text()).get("train_datasets") or []
    return f" and {len(more)} more workloads ({', '.join(more)})" if more else ""


def _ship_choice(c: Choice, run: Path, runs: list[Path], kwargs: dict, val_means: dict,
                 vs_entry: dict, ref: str, episodes: int, selected_by: str | None = None,
                 replaced_because: str | None = None) -> None:
    size, spec, val, test = export_and_judge(c.env, c.name, run, kwargs)
    split = SPLITS[c.env]
    lo, hi = vs_entry["ci95"]
    card = {
        **training_card(c.name, c.env, run, {r: best_validation(r) for r in runs}, size,
            selected_by or
            f"{'highest' if c.direction == 'higher' else 'lowest'} mean {c.metric} on the same "
            f"{episodes} validation episodes (seeds {c.val_seed:,}+) among the {len(runs)} "
            f"candidate runs' kept models not significantly worse than the best heuristic "
            f"there ({ref}); {c.script}"),
        "env_kwargs": {**split.env_kwargs, **c.extra},
        "preset": c.preset,
        "trained_on": f"{split.train}{_more_datasets(run)}, preset {c.preset}",
        "algo": "maskable_ppo",
        "policy_net": "node",
        "validation_mean_per_seed": val_means,
        "replaced_because": replaced_because or (
            f"on the same {episodes} validation episodes, against the entry so far: "
            f"{vs_entry['verdict']} ({vs_entry['mean_diff']:+.2f} {c.unit}, 95% CI "
            f"{lo:+.2f} to {hi:+.2f})"),
        "validation": {**verdict(val, spec, CARD_EPISODES, (c.metric,)), "seed": VAL_SEED},
        "test": {**verdict(test, spec, CARD_EPISODES, (c.metric,)), "seed": TEST_SEED},
    }  # fmt: skip
    card.update(dict(c.card_fields))
    card["seeds_trained"] = [label(r) for r in runs]
    card["training"]["best_validation_reward_per_seed"] = {
        label(r): best_validation(r) for r in runs}
    ship(card, run)
    print(json.dumps({k: np.round(v, 3) if isinstance(v, float) else v
                      for k, v in card["test"]["paired"].items()}))


if __name__ == "__main__":
    main()
