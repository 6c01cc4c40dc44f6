"""``rlsched results``: one table across all six problems, with honest verdicts.

For each env, on its documented held-out test data (:mod:`rlsched.splits`), every heuristic,
the clairvoyant oracle (:mod:`rlsched.policies.oracle`) and every learned policy given run the
same seeded episodes. The reference is the best heuristic measured there on the env's main
metric; each learned policy and the oracle get a paired 95% bootstrap interval against it
(:mod:`rlsched.stats`), and the verdict is read off that interval alone. Headroom is the
oracle minus the best heuristic: how much better than the heuristic any policy could be.

With ``presets="all"`` (the CLI's default) every named scenario preset of each env
(:mod:`rlsched.scenarios`) is a row of its own, keyed by (env, preset), and each row carries
the two spreads of :mod:`rlsched.spread`: the best heuristic against the env's simplest
baseline, and the oracle against the best heuristic, with the ``informative`` flag. A preset
that names a training trace (LLMAutoscaling's ``conv-*``) runs on that trace with the
heuristics and the oracle only: its spreads are measured, and no learned policy is judged on
data it was trained on.

``split`` (``--split``) runs the envs that have a named split (:data:`rlsched.splits.VARIANTS`,
e.g. ``code-time``) on that split's test set instead; a model trained under a named split is
judged only there (:func:`rlsched.evaluate.check_not_trained_on`).

Writes ``DIR/results.md`` (one row per env or (env, preset), then each full leaderboard) and
``DIR/results.json`` (the same, with every compare report).
"""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from rlsched.agreement import reward_agreement
from rlsched.data.registry import parse_name
from rlsched.envs.make import make_env
from rlsched.errors import ConfigError
from rlsched.evaluate import check_not_trained_on, compare, learned_observation_args
from rlsched.policies.registry import applicable_heuristics
from rlsched.report.leaderboard import main_mean, markdown_table, metric_label
from rlsched.runtime import git_commit, versions
from rlsched.scenarios import presets
from rlsched.splits import SPLITS, TEST_SEED, VARIANTS, EnvSplit, split_of
from rlsched.spread import spreads

BUDGETS = ("quick", "full")
#: Policies left out of the quick budget: an exact CP-SAT solve per workflow is minutes.
QUICK_SKIP = {"rlsched/WorkflowOffloading-v0": ("optimal",)}


def env_key(name: str) -> str:
    """``ServerlessPlacement-v0``, ``ServerlessPlacement`` or the full id -> the full id."""
    for env_id in SPLITS:
        short = env_id.split("/", 1)[1]
        if name in (env_id, short, short.rsplit("-", 1)[0]):
            return env_id
    raise ConfigError(f"unknown env {name!r}; one of {', '.join(SPLITS)}")


def parse_learned(items: Sequence[str]) -> dict[str, list[str]]:
    """``ENV=PATH`` (repeatable) -> env id -> ``learned:PATH`` specs (a ``*`` in PATH names
    several training seeds of one policy). ``ENV:PRESET=PATH`` puts the policy in that preset's
    row only (key ``ENV_ID:PRESET``): a model is judged on the preset it was trained for."""
    out: dict[str, list[str]] = {}
    for item in items:
        if "=" not in item:
            raise ConfigError(f"--learned {item!r} is not ENV=PATH")
        env, path = item.split("=", 1)
        spec = path if path.startswith("learned:") else f"learned:{path}"
        name, _, preset = env.strip().partition(":")
        key = env_key(name)
        if preset:
            if preset not in presets(key):
                raise ConfigError(
                    f"--learned {item!r}: {key} has no preset {preset!r}; "
                    f"one of {', '.join(presets(key))}"
                )
            key = f"{key}:{preset}"
        out.setdefault(key, []).append(spec)
    return out


def preset_kwargs(
    env_id: str, preset: str | None, split: EnvSplit | None = None
) -> dict[str, Any]:
    """The env arguments of one row: the split's (default: the env's default split), with
    ``scenario=preset``; the preset's own values win over the split's (the preset is the
    setting the row names)."""
    kw = dict((split or SPLITS[env_id]).env_kwargs)
    if preset is None:
        return kw

    own = presets(env_id).get(preset, {})
    return {**{k: v for k, v in kw.items() if k not in own}, "scenario": preset}


def row_dataset(test: str, preset: str | None, env_id: str) -> str | None:
    """The test data of one row. A preset that names a dataset of the test set's family gets
    the test set's parameters on top (its seed: still held-out data, at the preset's load);
    one that names another trace (e.g. a training trace) has no test row: None (its row runs
    on :func:`preset_dataset`, spreads only)."""
    ds = presets(env_id).get(preset or "", {}).get("dataset")
    if not isinstance(ds, str):
        return test
    s1, p1, q1 = parse_name(test)
    s2, p2, q2 = parse_name(ds)
    if (s1, p1) != (s2, p2):
        return None
    q = {**q2, **q1}
    return f"{s1}:{p1}" + ("?" + "&".join(f"{k}={v}" for k, v in sorted(q.items())) if q else "")


def preset_dataset(env_id: str, preset: str | None) -> str:
    """The dataset ``preset`` names itself (a training trace: its row has spreads only)."""
    return str(presets(env_id)[preset or ""]["dataset"])


def row_presets(env_id: str, which: str | Sequence[str] | None) -> list[str | None]:
    """The presets to run for ``env_id``: None -> the bare env (its default preset), ``"all"``
    -> every preset of the env, else the named ones this env has."""
    if which is None:
        return [None]
    names: list[str | None] = list(presets(env_id))
    if which == "all":
        return names or [None]
    wanted = [which] if isinstance(which, str) else list(which)
    return [n for n in wanted if n in names]


def _policies(
    env_id: str,
    budget: str,
    learned: Sequence[str],
    env_kwargs: Mapping[str, Any] | None = None,
    test: str | None = None,
) -> list[str]:
    split = SPLITS[env_id]
    kwargs = dict(split.env_kwargs if env_kwargs is None else env_kwargs)
    env = make_env(env_id, test or split.test, **kwargs)
    skip = QUICK_SKIP.get(env_id, ()) if budget == "quick" else ()
    names = [n for n in applicable_heuristics(env) if n not in skip]
    return [*names, *learned, "clairvoyant"]


def env_row(report: dict[str, Any]) -> dict[str, Any]:
    """The summary row of one env's compare report."""
    rows = {r["policy"]: r for r in report["results"]}
    ref = rows[report["reference"]]
    sign = 1.0 if report["direction"] == "higher" else -1.0


    heur = [r for r in report["results"] if r.get("kind") == "heuristic"]
    simplest = min(heur, key=lambda r: sign * main_mean(r))  # the worst heuristic, for the spread
    orc = rows.get("clairvoyant")
    learned = [r for r in report["results"] if r.get("kind") == "learned"]

    return {
        "env": report["env"],
        "preset": report.get("env_kwargs", {}).get("scenario"),
        **spreads(report),
        "dataset": report["dataset"],
        "env_kwargs": report.get("env_kwargs", {}),
        "episodes": report["episodes"],
        "main_metric": report["main_metric"],
        "direction": report["direction"],
        "best_heuristic": {"policy": ref["policy"], "mean": main_mean(ref)},
        "reward_agreement": reward_agreement(report),
        "worst_heuristic": {
            "policy": simplest["policy"],
            "mean": main_mean(simplest),
            "paired": simplest.get("paired"),
        },
        "oracle": None
        if orc is None
        else {"mean": main_mean(orc), "paired": orc.get("paired"), **orc.get("describe", {})},
        "learned": [
            {"policy": r["policy"], "mean": main_mean(r), "paired": r.get("paired"),
             "seeds": [{"policy": s["policy"], "mean": main_mean(s), "paired": s.get("paired")}
                       for s in r.get("seeds", [])]}
            for r in learned
        ],
    }


def run_results(
    out: str | Path,
    budget: str = "quick",
    learned: Mapping[str, Sequence[str]] | None = None,
    envs: Sequence[str] | None = None,
    console: Console | None = None,
    presets: str | Sequence[str] | None = None,
    split: str = "default",
) -> dict[str, Any]:
    """Every heuristic, ``clairvoyant`` and the ``learned`` policies on each env's test set
    (module doc); ``presets``: see :func:`row_presets`; ``split``: the envs' named split
    (default: every env, its default split; a name: the envs that have it)."""
    if budget not in BUDGETS:
        raise ConfigError(f"--budget {budget!r} is not one of {', '.join(BUDGETS)}")
    console = console or Console()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if envs:
        env_ids = [env_key(e) for e in envs]
    elif split == "default":
        env_ids = list(SPLITS)
    else:
        env_ids = [e for e, n in VARIANTS if n == split]
        if not env_ids:
            raise ConfigError(f"--split {split!r}: no env has it (rlsched.splits.VARIANTS)")
    env_splits = {e: split_of(e, split) for e in env_ids}  # every name checked before a row
    learned = dict(learned or {})
    t0 = time.perf_counter()
    rows, reports, seconds = [], [], {}
    for env_id in env_ids:
        env_split = env_splits[env_id]
        episodes = env_split.episodes[budget]
        for preset in row_presets(env_id, presets):
            kwargs = preset_kwargs(env_id, preset, env_split)
            key = env_id if preset is None else f"{env_id}:{preset}"
            test = row_dataset(env_split.test, preset, env_id)
            # a preset naming a training trace gets the spreads only: no learned policy is
            # judged on the data it was trained on
            on_train = test is None
            if on_train:
                test = preset_dataset(env_id, preset)
                mine = []
            else:
                mine = [*learned.get(env_id, []), *(learned.get(key, []) if preset else [])]
                check_not_trained_on(mine, str(test), split)
                added = learned_observation_args(env_id, mine, kwargs)
                if added:  # features a learned model reads; the heuristics' episodes are unchanged
                    console.print(f"  {key}: env arguments of the learned models added: {added}")
                    kwargs = {**kwargs, **added}
            pols = _policies(env_id, budget, mine, kwargs, test)
            console.print(f"[bold]{key}[/] on {test}: {len(pols)} policies x {episodes} episodes")
            t = time.perf_counter()
            rep = compare(
                env_id, test, pols, episodes=episodes, seed=TEST_SEED,
                env_kwargs=kwargs, progress=console.is_terminal,
            )
            seconds[key] = time.perf_counter() - t
            row = env_row(rep)
            row["seconds"] = seconds[key]
            row["training_data"] = on_train
            rows.append(row)
            reports.append(rep)
            console.print(f"  {summary_line(row)} ({seconds[key]:.0f} s)", highlight=False)
    wall = time.perf_counter() - t0

    result = {
        "budget": budget,
        "split": split,
        "seconds": wall,
        "machine": f"{platform.machine()}, {_cpus()} CPUs, {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "git": git_commit(),
        "versions": versions(),
        "test_seed": TEST_SEED,
        "rows": rows,
        "reports": reports,
    }
    (out / "results.json").write_text(json.dumps(result, indent=2, default=float))
    (out / "results.md").write_text(markdown(result))
    console.print(f"wrote {out / 'results.md'} and {out / 'results.json'} in {wall:.0f} s")
    return result


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _f(x: float | None) -> str:
    if x is None or x != x:
        return "-"
    a = abs(x)
    return f"{x:.4f}" if a < 10 else f"{x:.2f}" if a < 1000 else f"{x:,.0f}"


def _interval(p: Mapping[str, Any] | None, pct: bool = True) -> str:
    if not p:
        return "-"
    lo, hi = p["ci95"]
    s = f"{_f(p['mean_diff'])} [{_f(lo)}, {_f(hi)}]"
    if pct and p.get("pct_diff") == p.get("pct_diff"):
        s += f" ({p['pct_diff']:+.1f}%)"
    return s


def _gain(p: Mapping[str, Any]) -> str:
    """A spread: the paired interval, the improvement in percent and the verdict."""
    lo, hi = p["ci95"]
    return (
        f"{_f(p['mean_diff'])} [{_f(lo)}, {_f(hi)}] ({p['gain_pct']:+.1f}%), {p['verdict']}"
    )


def summary_line(row: Mapping[str, Any]) -> str:
    m = metric_label(row["main_metric"], row.get("env"))
    bh = row["best_heuristic"]
    parts = [f"best heuristic {bh['policy']} {m} {_f(bh['mean'])}"]
    for lr in row["learned"]:
        v = lr["paired"]["verdict"] if lr.get("paired") else "-"
        parts.append(f"{lr['policy']} {_f(lr['mean'])} ({v})")
    orc = row["oracle"]
    if orc:
        parts.append(f"oracle {_f(orc['mean'])}, headroom {_interval(orc['paired'])}")
    if row.get("spread"):
        parts.append(
            f"spread vs {row['baseline']['policy']} {row['spread']['gain_pct']:+.1f}% "
            f"({row['spread']['verdict']})"
        )
    if "informative" in row:
        parts.append("informative" if row["informative"] else "not informative")
    return "; ".join(parts)


def agreement_markdown(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The table of :func:`rlsched.agreement.reward_agreement` per row (rows without it are
    left out: reports of older runs)."""
    lines = [
        "Does the env's reward rank the heuristics as the main metric does? Kendall's tau "
        "between the two orders (1: the same order), the best heuristic by each, and the pairs "
        "they order oppositely (reward's choice first). Every verdict above is read on the main "
        "metric (`rlsched.agreement`).",
        "",
        "| env | preset | main metric | tau | best by reward | best by main metric | "
        "ordered oppositely |",
        "|---|---|---|---:|---|---|---|",
    ]
    for r in rows:
        a = r.get("reward_agreement")
        if not a:
            continue
        opp = ", ".join(f"{x} > {y}" for x, y in a["discordant"][:4])
        if len(a["discordant"]) > 4:
            opp += f" (+{len(a['discordant']) - 4})"
        lines.append(
            f"| {r['env'].split('/', 1)[1]} | {r.get('preset') or '(default)'} | "
            f"{metric_label(a['metric'])} | {a['tau']:.2f} | {a['best_by_reward']} | "
            f"{a['best_by_metric']} | {opp or 'none'} |"
        )
    return lines


def markdown(result: Mapping[str, Any]) -> str:
    rows = result["rows"]
    split = result.get("split", "default")
    flag = "" if split == "default" else f" --split {split}"
    where = "" if split == "default" else f", split `{split}`"
    lines = [
        "# Results: learned schedulers against the heuristics operators use",
        "",
        f"Generated by `rlsched results --budget {result['budget']}{flag}` in "
        f"{result['seconds']:.0f} s on {result['date']} ({result['machine']}; git "
        f"{result['git']}). Every policy runs the same seeded episodes (seeds "
        f"{result['test_seed']}, {result['test_seed']} + 1, ...) on each env's held-out test "
        f"set (`rlsched.splits`{where}). The reference is the best heuristic measured there on "
        "the env's main metric; Δ is policy minus reference per episode, with a 95% paired "
        "bootstrap interval (BCa, 10,000 resamples; several training seeds: IQM with a "
        "stratified bootstrap). A verdict is `better` or `worse` only when the interval "
        "excludes zero. The oracle (`clairvoyant`) reads the true future: it is not "
        "deployable, it measures headroom.",
        "",
        "Spread (a): the best heuristic minus the env's simplest baseline (the best of "
        "`rlsched.scenarios.SIMPLEST` measured), paired; headroom (b): the oracle minus the "
        "best heuristic. Percentages are improvements (positive: better). A row is "
        "*informative* when (a) excludes zero and is at least 3% and (b) excludes zero and is "
        "at least 2% (`rlsched.spread`).",
        "",
        "| env | preset | test data | main metric | best heuristic | spread (a): best − "
        "baseline [95% CI] | learned: Δ [95% CI], verdict | oracle | headroom (b): oracle − "
        "best [95% CI] | informative |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        arrow = "↑" if r["direction"] == "higher" else "↓"
        bh = r["best_heuristic"]
        learned = "<br>".join(
            f"`{lr['policy']}` {_f(lr['mean'])}: {_interval(lr['paired'])}, "
            f"**{lr['paired']['verdict'] if lr.get('paired') else '-'}**"
            for lr in r["learned"]
        ) or ("n/a: training data" if r.get("training_data") else "none given")
        orc = r["oracle"]
        head = "-"
        if orc and orc["paired"]:
            head = f"{_interval(orc['paired'])}, {orc['paired']['verdict']}"
        spread = "-"
        if r.get("spread"):
            spread = f"vs {r['baseline']['policy']} {_f(r['baseline']['mean'])}: " + _gain(
                r["spread"]
            )
        if r.get("headroom"):
            head = _gain(r["headroom"])
        lines.append(
            f"| {r['env'].split('/', 1)[1]} | {r.get('preset') or '(default)'} | "
            f"`{r['dataset']}` | {metric_label(r['main_metric'], r['env'])}"
            f" {arrow} | {bh['policy']} {_f(bh['mean'])} | {spread} | {learned} | "
            f"{_f(orc['mean']) if orc else '-'} | "
            f"{head} | {'yes' if r.get('informative') else 'no'} |"
        )
    lines += ["", *agreement_markdown(rows)]
    lines += ["", "Per env: the oracle's base heuristic, horizon and candidates; time taken.", ""]
    for r in rows:
        orc = r["oracle"] or {}
        h = orc.get("horizon")
        lines.append(
            f"- {r['env']} {r.get('preset') or ''}: {r['episodes']} episodes, env arguments "
            f"`{json.dumps(r['env_kwargs'])}`; oracle over `{orc.get('base', '-')}`, horizon "
            f"{'to the episode end (fortified)' if h is None else f'{h} decisions'}, up to "
            f"{orc.get('top_k', '-')} candidates per decision"
            + (f", searching at about {d} decisions per episode" if (d := orc.get("decisions"))
               else "")
            + f"; {r['seconds']:.0f} s."
        )
    for rep in result["reports"]:
        preset = rep.get("env_kwargs", {}).get("scenario")
        title = f"{rep['env']}" + (f", preset `{preset}`" if preset else "")
        lines += ["", f"## {title} on `{rep['dataset']}`", "", markdown_table(rep)]
    return "\n".join(lines) + "\n"
