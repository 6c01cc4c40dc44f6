"""Leaderboard tables: from a ``compare`` report (terminal, Markdown), and from a sweep's trial
results (mean and 95% confidence interval per metric, a score against a reference policy;
terminal, Markdown, CSV, JSON and, through :mod:`rlsched.report.html`, a self-contained page)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from rich.markup import escape
from rich.table import Table
from scipy.stats import t as student_t

from rlsched.envs import ENV_IDS
from rlsched.envs.args import env_class as registered_env_class
from rlsched.envs.base import REWARD_METRIC, Metric, RlschedEnv
from rlsched.stats import Direction, Paired, headline, paired_matrix

# Labels, units and directions of metrics are the envs' own: ``METRICS`` of each env class
# (rlsched.envs.base.Metric), read through metric_spec.


def env_class(env_id: str) -> type[RlschedEnv] | None:
    """The class registered as ``env_id``, or None (unknown id, or it cannot be imported)."""
    try:
        return registered_env_class(env_id)
    except Exception:  # an env this process cannot import still gets a table
        return None


def declared_metrics(env_id: str) -> list[str]:
    """The env class's ``leaderboard_metrics`` (main metric first), or [] for an env this
    process cannot import."""
    cls = env_class(env_id)
    return [] if cls is None else list(cls.leaderboard_metrics)


def metric_spec(metric: str, env_id: str | None = None) -> Metric:
    """The :class:`~rlsched.envs.base.Metric` of ``metric``: from ``env_id``'s ``METRICS``;
    without an env (or for a metric it does not declare), from the first registered env that
    declares it; else its own name as label and no direction."""
    cls = env_class(env_id) if env_id else None
    if cls is not None and (metric in cls.METRICS or metric == "reward"):
        return cls.metric_spec(metric)
    if metric == "reward":
        return REWARD_METRIC
    for other in ENV_IDS:
        c = env_class(other)
        if c is not None and metric in c.METRICS:
            return c.METRICS[metric]
    return Metric(metric)


def leaderboard_metrics(report: dict[str, Any]) -> list[str]:
    """The env's own leaderboard metrics, else every metric the results share."""
    wanted = declared_metrics(report["env"])
    have = set(report["results"][0]["metrics"]) if report["results"] else set()
    return [m for m in wanted if m in have] or sorted(have)


def _fmt(x: float) -> str:
    if x != x:  # NaN
        return "-"
    a = abs(x)
    return f"{x:.4f}" if a < 10 else f"{x:.2f}" if a < 1000 else f"{x:.0f}"


def main_mean(r: Mapping[str, Any]) -> float:
    """Mean of a compare row's per-episode main-metric values (NaN ignored)."""
    v = [x for x in r.get("episode_values", []) if x == x]
    return sum(v) / len(v) if v else float("nan")


def ranked(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows best first on the env's main metric (on reward for reports without one)."""
    metric = report.get("main_metric")
    if not metric or not all("episode_values" in r for r in report["results"]):
        return sorted(report["results"], key=lambda r: -r["mean_reward"])
    sign = -1.0 if report.get("direction", "higher") == "higher" else 1.0

    def key(r: dict[str, Any]) -> float:
        m = main_mean(r)
        return sign * m if m == m else math.inf

    return sorted(report["results"], key=key)


def paired_cells(report: dict[str, Any], r: dict[str, Any]) -> tuple[str, str]:
    """``(difference [95% CI], verdict)`` of a row against the report's reference."""
    p = r.get("paired")
    if p is None:
        return ("reference", "-") if r["policy"] == report.get("reference") else ("-", "-")
    lo, hi = p["ci95"]
    return f"{p['mean_diff']:+.3g} [{lo:+.3g}, {hi:+.3g}]", p["verdict"]


def _main_header(report: dict[str, Any]) -> list[str]:
    if not report.get("main_metric"):
        return []
    m = report["main_metric"]
    ref = report.get("reference") or "reference"
    arrow = "↑" if report.get("direction", "higher") == "higher" else "↓"
    return [f"{metric_label(m, report['env'])} {arrow}", f"Δ vs {ref} [95% CI]", "verdict"]


def _main_cells(report: dict[str, Any], r: dict[str, Any]) -> list[str]:
    if not report.get("main_metric"):
        return []
    return [_fmt(main_mean(r)), *paired_cells(report, r)]


def verdict_lines(
    report: dict[str, Any], kinds: tuple[str, ...] = ("learned", "oracle")
) -> list[str]:
    """One generated sentence per learned policy and oracle: its verdict against the
    reference (every other row's verdict is in the table)."""
    out = []
    for r in ranked(report):
        p = r.get("paired")
        if p is None or r.get("kind") not in kinds:
            continue
        out.append(headline(r["policy"], Paired.from_json(p)))
    return out


def rich_table(report: dict[str, Any], title: str | None = None) -> Table:
    metrics = [m for m in leaderboard_metrics(report) if m != report.get("main_metric")]
    t = Table(title=title or f"{report['env']} on {report['dataset']}", show_lines=False)
    t.add_column("#", justify="right", no_wrap=True)
    # a long spec (a model's path, a search's budget) wraps rather than squeezing the figures
    # of every other column out of a narrow terminal
    widest = max((len(r["policy"]) for r in report["results"]), default=6)
    t.add_column("policy", overflow="fold", min_width=min(widest, 24))
    for h in _main_header(report):
        t.add_column(h, justify="right", no_wrap=True)
    t.add_column("reward (mean ± std)", justify="right")
    for m in metrics:
        t.add_column(metric_label(m, report["env"]), justify="right")
    for k, r, sub in _rows_with_seeds(report):
        t.add_row(
            str(k) if not sub else "",
            escape(r["policy"] if not sub else f"  └ {r['policy']}"),
            *_main_cells(report, r),
            f"{r['mean_reward']:.3f} ± {r['std_reward']:.3f}",
            *(_fmt(r["metrics"].get(m, float("nan"))) for m in metrics),
        )
    return t


def _rows_with_seeds(report: dict[str, Any]) -> list[tuple[int, dict[str, Any], bool]]:
    """Ranked rows, each seed group followed by its per-seed rows (``sub`` = True)."""
    out = []
    for k, r in enumerate(ranked(report), 1):
        out.append((k, r, False))
        out += [(k, s, True) for s in r.get("seeds", [])]
    return out


def markdown_table(report: dict[str, Any]) -> str:
    metrics = [m for m in leaderboard_metrics(report) if m != report.get("main_metric")]
    head = ["#", "policy", *_main_header(report), "reward (mean ± std)"] + [
        metric_label(m, report["env"]) for m in metrics
    ]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k, r, sub in _rows_with_seeds(report):
        cells = [str(k) if not sub else "", r["policy"] if not sub else f"└ {r['policy']}",
                 *_main_cells(report, r)]
        cells.append(f"{r['mean_reward']:.3f} ± {r['std_reward']:.3f}")
        cells += [_fmt(r["metrics"].get(m, float("nan"))) for m in metrics]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


# ---------------------------------------------------------------------------- sweep leaderboards
# A sweep's results folder holds one result.json per finished trial (rlsched.sweep.trial). The
# leaderboard groups trials by env setting (env id, test dataset, env arguments): one table
# each, one row per policy label. The sample unit is the trial: one seed's mean over its
# episodes. Mean and 95% confidence interval per metric use Student's t with n - 1 degrees of
# freedom over those per-seed means (no interval with one seed).

SAMPLE_UNIT = "trial (one seed: the mean over its test episodes)"


def metric_direction(env_id: str, metric: str) -> str | None:
    """``"higher"`` or ``"lower"`` (is better) for ``metric`` of ``env_id`` (its ``METRICS``,
    see :func:`metric_spec`), None if unknown or descriptive."""
    return metric_spec(metric, env_id).direction


def t_quantile(p: float, df: int) -> float:
    """Quantile of Student's t distribution with ``df`` >= 1 degrees of freedom (scipy)."""
    if df < 1:
        raise ValueError("df must be >= 1")
    if not 0 < p < 1:
        raise ValueError("p must be in (0, 1)")
    return float(student_t.ppf(p, df))


def mean_ci95(values: Sequence[float]) -> dict[str, float]:
    """``{"n", "mean", "std", "ci95", "low", "high"}`` of the non-NaN ``values``: sample std
    (ddof 1) and the half-width ``t(0.975, n-1) * std / sqrt(n)``; NaN where undefined."""
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    n = len(xs)
    nan = float("nan")
    if n == 0:
        return {"n": 0, "mean": nan, "std": nan, "ci95": nan, "low": nan, "high": nan}
    mean = math.fsum(xs) / n
    if n < 2:
        return {"n": 1, "mean": mean, "std": nan, "ci95": nan, "low": nan, "high": nan}
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    half = t_quantile(0.975, n - 1) * std / math.sqrt(n)
    return {"n": n, "mean": mean, "std": std, "ci95": half, "low": mean - half, "high": mean + half}


def _variant(result: dict[str, Any]) -> str:
    """Hash of a trial's config without its seed: trials of one row share it."""
    cfg = {k: v for k, v in (result.get("config") or {}).items() if k != "seed"}
    text = json.dumps(cfg, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:6]


def _value(result: dict[str, Any], metric: str) -> float:
    if metric == "reward":
        return float(result["mean_reward"])
    v = result["metrics"].get(metric)
    return float("nan") if v is None else float(v)


def _kwargs_text(kwargs: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(kwargs.items()))


def sweep_main_metric(env_id: str, trials: Sequence[dict[str, Any]]) -> str:
    """The metric a sweep table of ``env_id`` ranks and scores on: the env's ``main_metric``,
    the one ``compare``, the verdicts and ``rlsched results`` use. Taken as ``compare``
    recorded it in the trials (a scenario may set it per env instance), else from the env
    class; ``"reward"`` for an env this process cannot import or a metric no trial measured."""
    recorded = {r.get("main_metric") for r in trials} - {None}
    if len(recorded) == 1:
        main = str(recorded.pop())
    else:
        cls = env_class(env_id)
        main = "reward" if cls is None else cls.main_metric
    measured = main == "reward" or any(main in r["metrics"] for r in trials)
    return main if measured else "reward"


def sweep_tables(
    results: Sequence[dict[str, Any]],
    reference: str | dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Leaderboard tables (one per env setting) from trial results.

    ``reference``: a policy label for every env, or env id -> label. Rows are ranked best first
    on the env's main metric (:func:`sweep_main_metric`, in the direction of its ``METRICS``
    entry), the first of the table's ``metrics``; the other columns are the reward and the
    env's leaderboard metrics. Each row's ``score`` is its mean main metric divided by the
    reference row's; ``score_better`` says whether a lower or a higher score beats the
    reference (a ratio flips direction when the reference value is negative).
    """
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in results:
        key = (r["env"], str(r["dataset"]), json.dumps(r.get("env_kwargs") or {}, sort_keys=True))
        groups.setdefault(key, []).append(r)
    tables = []
    for (env, dataset, kw), rs in sorted(groups.items()):
        kwargs = json.loads(kw)
        declared = declared_metrics(env)
        have = set().union(*(set(r["metrics"]) for r in rs))
        env_metrics = [m for m in declared if m in have] or sorted(have)
        main = sweep_main_metric(env, rs)
        columns = ["reward"] + [m for m in env_metrics if m != "reward"]
        metrics = [main] + [m for m in columns if m != main]
        directions = {m: metric_direction(env, m) for m in metrics}
        # one row per label; a label whose trials differ in more than the seed (results of an
        # earlier config of the sweep) gets one row per config: "label #hash"
        by_variant: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in sorted(rs, key=lambda r: (r["policy"], r["seed"])):
            by_variant.setdefault((r["policy"], _variant(r)), []).append(r)
        variants: dict[str, int] = {}
        for policy, _ in by_variant:
            variants[policy] = variants.get(policy, 0) + 1
        rows = []
        for (policy, var), prs in by_variant.items():
            rows.append(
                {
                    "policy": policy if variants[policy] == 1 else f"{policy} #{var}",
                    "kind": prs[0].get("kind", ""),
                    "seeds": [p["seed"] for p in prs],
                    "trials": [p["trial_id"] for p in prs],
                    "episodes": sum(int(p.get("episodes", 0)) for p in prs),
                    "stats": {m: mean_ci95([_value(p, m) for p in prs]) for m in metrics},
                }
            )
        sign = {"lower": 1.0, "higher": -1.0}.get(directions[main] or "higher", -1.0)

        def order(row: dict[str, Any], sign: float = sign, main: str = main) -> tuple[float, str]:
            v = row["stats"][main]["mean"]
            return (sign * v if v == v else math.inf, row["policy"])

        rows.sort(key=order)
        for k, row in enumerate(rows, 1):
            row["rank"] = k
        ref = reference.get(env) if isinstance(reference, dict) else reference
        if not ref:  # default: the best heuristic measured here
            ref = next((r["policy"] for r in rows if r["kind"] == "heuristic"), None)
        ref_row = next((r for r in rows if r["policy"] == ref), None) if ref else None
        if ref_row is not None and ref:
            trials_of = {tuple(p["trial_id"] for p in prs): prs for prs in by_variant.values()}
            ref_trials = trials_of[tuple(ref_row["trials"])]
            for row in rows:
                prs = trials_of[tuple(row["trials"])]
                if row is not ref_row:
                    row["paired"] = _sweep_paired(prs, ref_trials, ref, directions[main], main)
        ref_mean = ref_row["stats"][main]["mean"] if ref_row else float("nan")
        for row in rows:
            m = row["stats"][main]["mean"]
            ok = ref_row is not None and ref_mean == ref_mean and ref_mean != 0
            row["score"] = m / ref_mean if ok else float("nan")
        better = None
        if ref_row is not None and directions[main] is not None and ref_mean == ref_mean:
            better = "lower" if (directions[main] == "lower") != (ref_mean < 0) else "higher"
        title = f"{env} on {dataset}" + (f" ({_kwargs_text(kwargs)})" if kwargs else "")
        tables.append(
            {
                "env": env,
                "dataset": dataset,
                "env_kwargs": kwargs,
                "title": title,
                "metrics": metrics,
                "main_metric": main,
                "directions": directions,
                "reference": ref,
                "reference_found": ref_row is not None,
                "score_better": better,
                "sample_unit": SAMPLE_UNIT,
                "rows": rows,
            }
        )
    return tables


def _sweep_paired(
    trials: Sequence[dict[str, Any]],
    ref_trials: Sequence[dict[str, Any]],
    ref: str,
    direction: str | None,
    metric: str,
) -> dict[str, Any] | None:
    """A row's trials paired seed by seed with the reference's (the same seed meets the same
    episodes); None where the episodes do not line up or there are fewer than 2."""
    by_seed = {t["seed"]: t for t in ref_trials}
    a, b = [], []
    for t in trials:
        r = by_seed.get(t["seed"])
        va, vb = t.get("episode_values") or [], (r or {}).get("episode_values") or []
        if r is None or len(va) != len(vb) or t.get("episode_seed") != r.get("episode_seed"):
            continue
        a.append(va)
        b.append(vb)
    if not a or len(a[0]) < 2 or direction not in ("higher", "lower"):
        return None
    d: Direction = "higher" if direction == "higher" else "lower"
    return paired_matrix(
        a, b, direction=d, reference=ref, metric=metric
    ).to_json()


def metric_label(metric: str, env_id: str | None = None) -> str:
    """The column label of ``metric`` (of ``env_id``'s ``METRICS``, see :func:`metric_spec`)."""
    return metric_spec(metric, env_id).label


def cell(stats: dict[str, float]) -> str:
    """``mean ± half-width`` of a 95% CI, or the mean alone (one sample)."""
    if stats["n"] >= 2 and stats["ci95"] == stats["ci95"]:
        return f"{_fmt(stats['mean'])} ± {_fmt(stats['ci95'])}"
    return _fmt(stats["mean"])


def score_note(table: dict[str, Any]) -> str:
    """One sentence: what the score is and which direction beats the reference."""
    main = metric_label(table["main_metric"], table["env"])
    d = table["directions"].get(table["main_metric"])
    main_dir = f"{d} is better" if d else "direction unknown"
    if not table["reference"]:
        return f"Main metric: {main} ({main_dir}). No reference policy: no score."
    if not table["reference_found"]:
        return (
            f"Main metric: {main} ({main_dir}). Reference {table['reference']} has no trial "
            "here: no score."
        )
    better = table["score_better"]
    tail = f"a {better} score beats the reference" if better else "direction unknown"
    return (
        f"Main metric: {main} ({main_dir}). Score = policy's mean {main} / "
        f"{table['reference']}'s ({tail})."
    )


def sweep_header(table: dict[str, Any]) -> list[str]:
    head = ["#", "policy", "seeds"] + [metric_label(m, table["env"]) for m in table["metrics"]]
    if table["reference"]:
        head.append(f"score vs {table['reference']}")
        head += [f"Δ {metric_label(table['main_metric'], table['env'])} vs {table['reference']}"
                 " [95% CI]",
                 "verdict"]
    return head


def sweep_row_cells(table: dict[str, Any], row: dict[str, Any]) -> list[str]:
    cells = [str(row["rank"]), row["policy"], str(len(row["seeds"]))]
    cells += [cell(row["stats"][m]) for m in table["metrics"]]
    if table["reference"]:
        cells.append(_fmt(row["score"]))
        p = row.get("paired")
        if row["policy"] == table["reference"]:
            cells += ["reference", "-"]
        elif p is None:
            cells += ["-", "-"]
        else:
            lo, hi = p["ci95"]
            cells += [f"{_fmt(p['mean_diff'])} [{_fmt(lo)}, {_fmt(hi)}]", p["verdict"]]
    return cells


def sweep_markdown(tables: Sequence[dict[str, Any]], title: str = "Leaderboard") -> str:
    """Markdown: the method, then one table per env setting."""
    out = [
        f"# {title}",
        "",
        f"Each cell: mean ± half-width of a 95% confidence interval (Student's t, n - 1 degrees "
        f"of freedom) over trials; the sample unit is a {SAMPLE_UNIT}. One seed: the mean "
        f"alone. Rows best first on the main metric.",
    ]
    for t in tables:
        out += ["", f"## {t['title']}", "", score_note(t), ""]
        head = sweep_header(t)
        out.append("| " + " | ".join(head) + " |")
        out.append("|---:|---|---:|" + "---:|" * (len(head) - 3))
        for row in t["rows"]:
            out.append("| " + " | ".join(sweep_row_cells(t, row)) + " |")
    return "\n".join(out) + "\n"


CSV_COLUMNS = (
    "env", "dataset", "env_kwargs", "rank", "policy", "kind", "seeds", "metric", "direction",
    "n", "mean", "std", "ci95_half_width", "ci95_low", "ci95_high", "main_metric", "reference",
    "score",
)  # fmt: skip


def _num(x: float) -> str:
    """Full precision (``repr``), empty for NaN."""
    return "" if x != x else repr(float(x))


def _json_safe(obj: Any) -> Any:
    """NaN -> None, so that the JSON is standard."""
    if isinstance(obj, float):
        return None if obj != obj else obj
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_json_safe(v) for v in obj]
    return obj


def sweep_csv(tables: Sequence[dict[str, Any]]) -> str:
    """Long format: one line per (table, policy, metric); numbers at full precision (``repr``),
    empty where undefined (a confidence interval from one seed, a score without reference)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for t in tables:
        for row in t["rows"]:
            for m in t["metrics"]:
                s = row["stats"][m]
                w.writerow(
                    [
                        t["env"],
                        t["dataset"],
                        json.dumps(t["env_kwargs"], sort_keys=True),
                        row["rank"],
                        row["policy"],
                        row["kind"],
                        " ".join(str(x) for x in row["seeds"]),
                        m,
                        t["directions"].get(m) or "",
                        s["n"],
                        *(_num(s[k]) for k in ("mean", "std", "ci95", "low", "high")),
                        t["main_metric"],
                        t["reference"] or "",
                        _num(row["score"]),
                    ]
                )
    return buf.getvalue()


def sweep_rich_table(table: dict[str, Any]) -> Table:
    t = Table(title=escape(table["title"]), caption=escape(score_note(table)))
    for k, h in enumerate(sweep_header(table)):
        t.add_column(h, justify="left" if k == 1 else "right", no_wrap=k == 1)
    for row in table["rows"]:
        t.add_row(*(escape(c) for c in sweep_row_cells(table, row)))  # labels may hold [...]
    return t
