"""The ``rlsched`` command: a thin Typer app over the library."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.console import Console
from rich.table import Table

from rlsched.errors import ConfigError, RlschedError

app = typer.Typer(
    help="Learned resource scheduling: trace-driven envs, heuristics, RL training, comparison.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
datasets_app = typer.Typer(
    help="Datasets by name (real traces and generators).", no_args_is_help=True
)
envs_app = typer.Typer(help="Registered environments.", no_args_is_help=True)
app.add_typer(datasets_app, name="datasets")
app.add_typer(envs_app, name="envs")

# piped output (CI logs, files) gets full-width tables instead of rich's 80-column default
console = Console(width=None if sys.stdout.isatty() else 160)

DEFAULT_ENV = "rlsched/ServerlessPlacement-v0"
EnvArgs = Annotated[
    list[str] | None,
    typer.Option("--env-arg", help="Env constructor argument KEY=VALUE (repeatable)."),
]


def parse_env_args(pairs: list[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in pairs or []:
        if "=" not in p:
            raise typer.BadParameter(f"--env-arg {p!r} is not KEY=VALUE")
        k, v = p.split("=", 1)
        out[k.strip()] = yaml.safe_load(v)
    return out


def checked_env(
    env_id: str, dataset: str | None, env_arg: list[str] | dict[str, Any] | None
) -> tuple[str, dict[str, Any]]:
    """The env id and ``--env-arg`` values checked before anything runs or is written: a
    registered id (close-match suggestion otherwise), known argument names of the right types,
    and an env that builds with them (so out-of-range values are reported here, in one line)."""
    from rlsched.envs.args import check_env_builds, check_env_id, check_env_kwargs

    env_id = check_env_id(env_id)
    raw = env_arg if isinstance(env_arg, dict) else parse_env_args(env_arg)
    kwargs = check_env_kwargs(env_id, raw)
    check_env_builds(env_id, dataset, kwargs)
    return env_id, kwargs


# ---------------------------------------------------------------------------- datasets
@datasets_app.command("list")
def datasets_list() -> None:
    """Every dataset family with example names and license."""
    from rlsched.data import list_datasets

    datasets = list_datasets()
    widest = max((len(e) for d in datasets for e in d.get("examples", [])), default=10)
    t = Table(title="datasets")
    t.add_column("scheme", no_wrap=True, min_width=max(len(d["scheme"]) for d in datasets))
    # whole names on one line each, so they can be copied: the other columns wrap instead
    t.add_column("examples", no_wrap=True, min_width=widest)
    t.add_column("license", overflow="fold")
    t.add_column("description", overflow="fold")
    for d in datasets:
        t.add_row(
            d["scheme"],
            "\n".join(d.get("examples", [])),
            d.get("license", ""),
            d.get("description", ""),
        )
    console.print(t)


@datasets_app.command("show")
def datasets_show(name: str) -> None:
    """Load NAME and print its size, statistics and which fields are real or derived."""
    from rlsched.data import load_dataset

    s = load_dataset(name).summary()
    t = Table(title=str(s["name"]), show_header=False)
    t.add_column("key")
    t.add_column("value")
    for k, v in s.items():
        if isinstance(v, dict):
            v = "\n".join(f"{a}: {b}" for a, b in v.items()) or "-"
        elif isinstance(v, float):
            v = f"{v:.4g}"
        t.add_row(k, str(v))
    console.print(t)


# ---------------------------------------------------------------------------- envs
@envs_app.command("list")
def envs_list() -> None:
    """Registered env ids and their entry points."""
    from rlsched.envs import ENV_IDS

    t = Table(title="envs")
    t.add_column("id")
    t.add_column("entry point")
    for k, v in ENV_IDS.items():
        t.add_row(k, v)
    console.print(t)


@app.command("policies")
def policies_list() -> None:
    """Every policy name by env (``learned:PATH`` loads a trained model)."""
    from rlsched.policies.registry import policy_catalogue

    t = Table(title="policies")
    t.add_column("name")
    t.add_column("envs", overflow="fold")
    t.add_column("rule", overflow="fold")
    for name, envs, rule in policy_catalogue():
        t.add_row(name, envs, rule.replace("``", ""))  # a docstring's reST quotes
    console.print(t)


# ---------------------------------------------------------------------------- train
@app.command()
def train(
    env: Annotated[str, typer.Option(help="Env id.")] = DEFAULT_ENV,
    dataset: Annotated[str | None, typer.Option(help="Training dataset name.")] = None,
    eval_dataset: Annotated[
        str | None, typer.Option(help="Held-out dataset for evaluation.")
    ] = None,
    algo: Annotated[
        str | None, typer.Option(help="maskable_ppo | ppo | dqn | masked_dqn | departures.")
    ] = None,
    steps: Annotated[int | None, typer.Option(help="Total env steps.")] = None,
    seed: Annotated[int | None, typer.Option(help="Random seed.")] = None,
    out: Annotated[Path, typer.Option(help="Run folder to write.")] = Path("runs/train"),
    config: Annotated[
        Path | None, typer.Option(help="YAML TrainConfig; flags override it.")
    ] = None,
    n_envs: Annotated[int | None, typer.Option(help="Envs per process.")] = None,
    env_arg: EnvArgs = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    resume: Annotated[
        Path | None,
        typer.Option(
            help="Continue this run folder from its checkpoint, with its config.yaml "
            "(--steps may raise the budget; other flags are refused)."
        ),
    ] = None,
    max_seconds: Annotated[
        float | None,
        typer.Option(
            help="Stop after this many seconds of training in this sitting, with a checkpoint "
            "at a rollout boundary; --resume goes on from it (for wall-clock-limited jobs)."
        ),
    ] = None,
) -> None:
    """Train an agent; writes a self-describing run folder with the model in OUT/model."""
    from rlsched.train import TrainConfig
    from rlsched.train import train as run_train
    from rlsched.train.progress import held_out_text, plan_text

    if resume is not None:
        given = [n for n, v in (("--config", config), ("--dataset", dataset), ("--algo", algo),
                                ("--seed", seed), ("--n-envs", n_envs), ("--env-arg", env_arg),
                                ("--eval-dataset", eval_dataset)) if v]  # fmt: skip
        if given or env != DEFAULT_ENV:
            drop = ", ".join(given) or "--env"
            raise ConfigError(f"--resume continues a run with its own config.yaml: drop {drop}")
        cfg = TrainConfig.from_yaml(resume / "config.yaml")
        if steps is not None:
            cfg.total_steps = steps
        console.print(
            f"resuming [bold]{cfg.algo}[/] on {cfg.env_id} in {resume} up to {plan_text(cfg)}"
        )
        res = run_train(cfg, resume, progress=progress, resume=True, max_seconds=max_seconds)
        if not _paused(res, resume):
            console.print(
                f"done: {res.steps:,} steps; "
                f"{held_out_text(cfg, res.eval_mean_reward, res.steps)}; "
                f"model in [bold]{res.model_dir}[/]"
            )
        return
    cfg = TrainConfig.from_yaml(config) if config else TrainConfig()
    overrides = {
        "env_id": env if env != DEFAULT_ENV or not config else None,
        "dataset": dataset,
        "eval_dataset": eval_dataset,
        "algo": algo,
        "total_steps": steps,
        "seed": seed,
        "n_envs": n_envs,
    }
    for k, v in overrides.items():
        if v is not None:
            setattr(cfg, k, v)
    if config and cfg.env_kwargs:  # the config's own env_kwargs, named as such in errors
        from rlsched.envs.args import check_env_id, check_env_kwargs

        check_env_kwargs(check_env_id(cfg.env_id), cfg.env_kwargs, flag=f"{config}: env_kwargs")
    cfg.env_kwargs.update(parse_env_args(env_arg))
    cfg.validate()
    cfg.env_id, cfg.env_kwargs = checked_env(cfg.env_id, cfg.dataset, cfg.env_kwargs)
    console.print(
        f"training [bold]{cfg.algo}[/] on {cfg.env_id} / {cfg.dataset} "
        f"for {plan_text(cfg)} (seed {cfg.seed}) -> {out}"
    )
    res = run_train(cfg, out, progress=progress, max_seconds=max_seconds)
    if _paused(res, out):
        return
    done = (
        f"{res.steps:,} steps in {res.seconds:.1f}s ({res.steps_per_second:.0f} steps/s)"
        if cfg.total_steps else "imitation alone, no RL steps"
    )
    if cfg.algo == "departures":
        done = f"departures over {cfg.imitation_policy} in {res.seconds:.0f}s"
    if res.warm_start_seconds:  # the RL figures above leave the warm start out
        done += f", after a {res.warm_start_seconds:.0f}s imitation warm start"
    console.print(
        f"done: {done}; {held_out_text(cfg, res.eval_mean_reward, res.steps)}; "
        f"model in [bold]{res.model_dir}[/]"
    )


def _paused(res: Any, run: Path) -> bool:
    """Say so when ``--max-seconds`` stopped the run before its budget (True then)."""
    if res.finished:
        return False
    console.print(
        f"stopped by --max-seconds at {res.steps:,} steps ({res.seconds:.0f} s in all); "
        f"checkpoint in {run / 'checkpoint'}; go on with [bold]rlsched train --resume {run}[/]"
    )
    return True


# ---------------------------------------------------------------------------- evaluate / compare
def _print_report(report: dict[str, Any], json_path: Path | None) -> None:
    from rlsched.report.leaderboard import rich_table, verdict_lines

    console.print(rich_table(report))
    for line in verdict_lines(report):
        console.print(line, markup=False, highlight=False)
    if json_path is not None:
        from rlsched.evaluate import write_json

        write_json(report, json_path)
        console.print(f"wrote {json_path}")


def _check_episodes(episodes: int) -> None:
    from rlsched.stats import MIN_EPISODES

    if episodes < MIN_EPISODES:
        raise ConfigError(
            f"--episodes {episodes}: a paired interval needs at least {MIN_EPISODES} episodes"
        )


@app.command()
def compare(
    env: Annotated[str, typer.Option(help="Env id.")] = DEFAULT_ENV,
    dataset: Annotated[
        str | None, typer.Option(help="Dataset name (env default if omitted).")
    ] = None,
    policies: Annotated[
        str,
        typer.Option(
            help="Comma list: names, learned:PATH, all (every heuristic) or plain (the "
            "heuristics that do not search)."
        ),
    ] = "all",
    episodes: Annotated[int, typer.Option(help="Episodes per policy.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed of the first episode.")] = 0,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the results as JSON.")
    ] = None,
    env_arg: EnvArgs = None,
    gantt_dir: Annotated[
        Path | None,
        typer.Option(
            "--gantt",
            help="Write DIR/<policy>.png, a Gantt chart of each policy's first episode "
            "(envs with a schedule log, e.g. WorkflowOffloading-v0).",
        ),
    ] = None,
    reference: Annotated[
        str | None,
        typer.Option(
            help="Policy every verdict is paired against (default: the best heuristic measured "
            "on the env's main metric)."
        ),
    ] = None,
) -> None:
    """Evaluate policies on the same seeded episodes and print a leaderboard with paired
    verdicts against the reference."""
    _check_episodes(episodes)
    from rlsched.evaluate import compare as run_compare
    from rlsched.report.gantt import gantt_hook

    env, kwargs = checked_env(env, dataset, env_arg)
    written: list[Path] = []
    hook = None
    if gantt_dir is not None:
        hook = gantt_hook(gantt_dir, written=written, notify=console.print)
    report = run_compare(
        env,
        dataset,
        policies,
        episodes,
        seed,
        kwargs,
        progress=True,
        on_episode_end=hook,
        reference=reference,
    )
    _print_report(report, json_out)
    for path in written:
        console.print(f"wrote {path}")


@app.command()
def evaluate(
    model: Annotated[
        str, typer.Option(help="Model or run folder (or learned:PATH / a heuristic).")
    ],
    dataset: Annotated[str | None, typer.Option(help="Dataset (default: the model's).")] = None,
    episodes: Annotated[int, typer.Option(help="Episodes.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed of the first episode.")] = 0,
    env: Annotated[str | None, typer.Option(help="Env id (default: the model's).")] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the results as JSON.")
    ] = None,
    env_arg: EnvArgs = None,
    reference: Annotated[
        str | None,
        typer.Option(
            help="Policy every verdict is paired against (default: the best heuristic measured "
            "on the env's main metric)."
        ),
    ] = None,
) -> None:
    """Evaluate one policy (a trained model by default) and print its metrics; with
    ``--reference`` also that policy, and the paired verdict against it."""
    _check_episodes(episodes)
    from rlsched.agents.models import read_meta
    from rlsched.evaluate import compare as run_compare
    from rlsched.policies.heuristics import HEURISTICS

    spec = model if model in HEURISTICS or model.startswith("learned:") else f"learned:{model}"
    kwargs = parse_env_args(env_arg)
    env_id = env or DEFAULT_ENV
    if spec.startswith("learned:"):
        meta = read_meta(spec.split(":", 1)[1])
        env_id = env or meta["env_id"]
        kwargs = {**meta.get("env_kwargs", {}), **kwargs}
        dataset = dataset or meta.get("dataset")
    env_id, kwargs = checked_env(env_id, dataset, kwargs)
    specs = spec if reference is None or reference == spec else f"{spec},{reference}"
    report = run_compare(env_id, dataset, specs, episodes, seed, kwargs, reference=reference)
    _print_report(report, json_out)


# ---------------------------------------------------------------------------- simulate
@app.command()
def simulate(
    trace: Annotated[
        str, typer.Option(help="LLM request trace: azure-llm:conv, azure-llm:code or a path.")
    ] = "azure-llm:conv",
    policy: Annotated[
        str,
        typer.Option(
            help="none (start state as given), static_peak, hpa, threshold, hpa_threshold, "
            "random or learned:PATH."
        ),
    ] = "none",
    rate_scale: Annotated[float, typer.Option(help="Arrival rate multiplier.")] = 1.0,
    duration: Annotated[
        float | None, typer.Option(help="Seconds of the trace to replay (default: all).")
    ] = None,
    prompt: Annotated[int | None, typer.Option(help="Prompt instances at the start.")] = None,
    token: Annotated[int | None, typer.Option(help="Token instances at the start.")] = None,
    start_state: Annotated[
        Path | None, typer.Option(help="Start state YAML (default: the shipped one).")
    ] = None,
    decision_interval: Annotated[float, typer.Option(help="Seconds between decisions.")] = 2.0,
    seed: Annotated[int, typer.Option(help="Routing tie-break and policy seed.")] = 0,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the results as JSON.")
    ] = None,
    figure: Annotated[Path | None, typer.Option(help="Write the timeline figure (PNG).")] = None,
    env_arg: EnvArgs = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    compat: Annotated[
        str | None,
        typer.Option(
            help="splitwise-sim: reproduce splitwise-sim's performance-model readings and TBT "
            "(docs/fidelity.md)."
        ),
    ] = None,
    requests_csv: Annotated[
        Path | None, typer.Option(help="Write one row per request (latencies, instances).")
    ] = None,
) -> None:
    """Replay an LLM trace through the serving simulator with one autoscaling policy."""
    from rlsched.envs.args import check_env_kwargs
    from rlsched.llm_runner import simulate as run_simulate

    env_kwargs = check_env_kwargs("rlsched/LLMAutoscaling-v0", parse_env_args(env_arg))
    if compat not in (None, "splitwise-sim"):
        raise ConfigError(f"--compat {compat!r}: the only mode is splitwise-sim")
    run = run_simulate(
        trace=trace,
        policy=policy,
        rate_scale=rate_scale,
        duration=duration,
        prompt=prompt,
        token=token,
        start_state=start_state,
        decision_interval=decision_interval,
        seed=seed,
        env_kwargs=env_kwargs,
        progress=progress,
        console=console,
        compat=compat,
    )
    r = run.result
    t = Table(title=f"{trace} x{rate_scale:g}, policy {policy}")
    t.add_column("metric")
    t.add_column("value", justify="right")
    rows = [
        ("requests (completed)", f"{r['requests']} / {r['total_requests']}"),
        ("dropped", str(r["dropped"])),
        ("SLO attainment (P90 limits)", f"{r['slo_attainment']:.4f}"),
        ("Splitwise SLO checks met", "yes" if r["slo_met"] else "no"),
    ]
    for m in ("ttft", "tbt", "e2e"):
        rows.append(
            (
                f"{m.upper()} P50 / P90 / P99 (s)",
                f"{r[f'{m}_p50']:.3f} / {r[f'{m}_p90']:.3f} / {r[f'{m}_p99']:.3f}",
            )
        )
    rows += [
        ("cost (US$)", f"{r['cost']:.2f}"),
        ("GPU-hours", f"{r['gpu_hours']:.2f}"),
        ("energy (kWh)", f"{r['energy_kwh']:.1f}"),
        ("scale-ups / scale-downs", f"{r['scale_up_actions']} / {r['scale_down_actions']}"),
        ("mean active instances", f"{r['mean_instances']:.2f}"),
        ("simulated time (s)", f"{r['duration']:.0f}"),
        ("wall time (s)", f"{r['wall_time_s']:.1f}"),
    ]
    for k, v in rows:
        t.add_row(k, v)
    console.print(t)
    if json_out is not None:
        console.print(f"wrote {run.write_json(json_out)}")
    if figure is not None:
        console.print(f"wrote {run.figure(figure)}")
    if requests_csv is not None:
        console.print(f"wrote {run.write_requests_csv(requests_csv)}")


# ---------------------------------------------------------------------------- demo
@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("runs/demo"),
    steps: Annotated[int, typer.Option(help="Training steps per seed.")] = 80_000,
    seeds: Annotated[int, typer.Option(help="Training seeds.")] = 3,
    episodes: Annotated[int, typer.Option(help="Held-out episodes per policy.")] = 10,
) -> None:
    """The main job: train MaskablePPO on real workflows, compare with every heuristic on
    held-out ones, write OUT/report.md and figures."""
    from rlsched.demo import run_demo

    run_demo(out, steps=steps, seeds=seeds, episodes=episodes, console=console)


# ---------------------------------------------------------------------------- serve
@app.command()
def serve(
    model: Annotated[
        str | None,
        typer.Option(
            help="A `rlsched train` model/run folder, a policy bundle, a registry folder, or a "
            "registry version (vN)."
        ),
    ] = None,
    state_dim: Annotated[
        int | None, typer.Option(help="Without --model: a fresh policy of this state size (2N+2).")
    ] = None,
    action_dim: Annotated[
        int | None, typer.Option(help="Without --model: ... and this action count (2N+2).")
    ] = None,
    host: Annotated[str, typer.Option(help="Address both servers listen on.")] = "127.0.0.1",
    http_port: Annotated[int, typer.Option(help="HTTP (REST, extender, metrics) port.")] = 5000,
    grpc_port: Annotated[int, typer.Option(help="gRPC port.")] = 50051,
    registry: Annotated[
        Path | None, typer.Option(help="Model registry folder (default runs/serve/registry).")
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(
            help="Experience store: a SQLite file (default REGISTRY/experiences.sqlite), or "
            "postgresql://USER@HOST[:PORT]/DB for replicas sharing store and registry (password "
            "from RLSCHED_STORE_PASSWORD or a libpq service/password file, never in the URL)."
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="RLSCHED_TOKEN",
            help="Bearer token the write endpoints require (the plugin sends none).",
        ),
    ] = None,
    learn: Annotated[
        bool, typer.Option(help="Run the online learner on the stored experiences.")
    ] = False,
    learn_interval: Annotated[float, typer.Option(help="Seconds between learner runs.")] = 30.0,
    min_experiences: Annotated[int, typer.Option(help="Experiences the learner waits for.")] = 256,
    gate: Annotated[
        str, typer.Option(help="Learner publish gate: kube (held-out evaluation) | none.")
    ] = "kube",
    seed: Annotated[int, typer.Option(help="Seed of a fresh policy.")] = 0,
    log_level: Annotated[str, typer.Option(help="uvicorn / service log level.")] = "warning",
    insecure: Annotated[
        bool, typer.Option(help="Allow a non-loopback --host without a token (warns).")
    ] = False,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            help="Host name write requests may carry (repeatable; * = any). Default: "
            "localhost, 127.0.0.1, ::1 and --host (any on 0.0.0.0 / :: with a token)."
        ),
    ] = None,
    max_connections: Annotated[
        int, typer.Option(help="Open HTTP connections (beyond: 503 and close).")
    ] = 2048,
    header_timeout: Annotated[
        float, typer.Option(help="Seconds to receive request headers (then 408).")
    ] = 10.0,
    body_timeout: Annotated[
        float, typer.Option(help="Seconds to receive a request body (then 408).")
    ] = 30.0,
    keep_alive: Annotated[
        float, typer.Option(help="Seconds an idle HTTP keep-alive connection stays open.")
    ] = 5.0,
    drain_grace: Annotated[
        float, typer.Option(help="Seconds in-flight calls get after SIGTERM/SIGINT.")
    ] = 10.0,
    grpc_max_rpcs: Annotated[
        int, typer.Option(help="Concurrent gRPC calls (beyond: RESOURCE_EXHAUSTED).")
    ] = 1024,
    keep_versions: Annotated[
        int,
        typer.Option(help="Registry retention: the last K versions (plus every activated one)."),
    ] = 20,
    store_retention: Annotated[
        float, typer.Option(help="Hours consumed experiences are kept in the store.")
    ] = 24.0,
    registry_poll: Annotated[
        float,
        typer.Option(
            help="PostgreSQL store: seconds between re-reads of the current version (the "
            "fallback when activation notifications are lost)."
        ),
    ] = 2.0,
) -> None:
    """Serve a policy to the k8sSim PPO plugin (REST + gRPC), as a kube-scheduler extender,
    with a model registry, durable experiences and an optional online learner."""
    import logging

    from rlsched.optional import require_extra

    require_extra("serve", what="`rlsched serve`")  # before the servers' own imports
    from rlsched.serve.connections import ServeLimits
    from rlsched.serve.server import (
        ServeConfig,
        build_service,
        check_exposure,
        default_allowed_hosts,
        run,
    )

    if gate not in ("kube", "none"):
        raise ConfigError(f"--gate {gate!r}: choose kube or none")
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(name)s %(message)s")
    import os

    if token is None and os.environ.get("RLSCHED_TOKEN") == "":
        token = ""  # click drops an empty environment variable; an empty token is an error
    warning = check_exposure(host, token, insecure)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    limits = ServeLimits(
        max_connections=max_connections, header_timeout=header_timeout,
        body_timeout=body_timeout, keep_alive=keep_alive, drain_grace=drain_grace,
        grpc_max_concurrent_rpcs=grpc_max_rpcs,
    )  # fmt: skip
    if keep_versions < 1 or not store_retention >= 0:
        raise ConfigError("--keep-versions must be >= 1 and --store-retention >= 0")
    if not registry_poll > 0:
        raise ConfigError("--registry-poll must be > 0 seconds")
    from rlsched.serve.pg import is_pg_url

    cfg = ServeConfig(
        model=model, state_dim=state_dim, action_dim=action_dim, registry=registry,
        store=store if store is None or is_pg_url(store) else Path(store), token=token,
        learn=learn, learn_interval=learn_interval, min_experiences=min_experiences, gate=gate,
        seed=seed, keep_versions=keep_versions, store_retention_s=store_retention * 3600.0,
        registry_poll=registry_poll,
    )  # fmt: skip
    service = build_service(cfg)
    run(
        service, host, http_port, grpc_port,
        echo=lambda m: print(m, flush=True), log_level=log_level, learn_interval=learn_interval,
        limits=limits, allowed_hosts=default_allowed_hosts(host, token, tuple(allowed_host or ())),
    )  # fmt: skip


StoreUrl = Annotated[
    str,
    typer.Option(
        "--store",
        help="postgresql://USER@HOST[:PORT]/DB of the replicas (password from "
        "RLSCHED_STORE_PASSWORD or a libpq service/password file).",
    ),
]


@app.command()
def learn(
    store: StoreUrl,
    gate: Annotated[
        str, typer.Option(help="Publish gate: kube (held-out evaluation) | none.")
    ] = "kube",
    interval: Annotated[float, typer.Option(help="Seconds between runs.")] = 30.0,
    failover_timeout: Annotated[
        float,
        typer.Option(help="A standby takes over within this many seconds of the active one's "
                     "death (its lock session's keepalives; the standby's retry period / 5)."),
    ] = 10.0,
    min_experiences: Annotated[int, typer.Option(help="Experiences a run waits for.")] = 256,
    keep_versions: Annotated[int, typer.Option(help="Registry retention (last K).")] = 20,
    metrics_host: Annotated[str, typer.Option(help="Address of /metrics.")] = "127.0.0.1",
    metrics_port: Annotated[int, typer.Option(help="Port of /metrics (0: any).")] = 9100,
    seed: Annotated[int, typer.Option(help="Seed of the PPO updates.")] = 0,
    log_level: Annotated[str, typer.Option(help="Log level.")] = "warning",
) -> None:
    """The online learner for replicas sharing a PostgreSQL store: exactly one active learner
    (an advisory lock), the others standbys that take over when it dies."""
    import logging

    from rlsched.serve.learner_process import LearnerProcess
    from rlsched.serve.pg import is_pg_url

    if not is_pg_url(store):
        raise ConfigError(
            "--store must be a postgresql:// URL (with a SQLite store, use rlsched serve --learn)"
        )
    if gate not in ("kube", "none"):
        raise ConfigError(f"--gate {gate!r}: choose kube or none")
    if not interval > 0 or not failover_timeout > 0 or min_experiences < 1:
        raise ConfigError("--interval and --failover-timeout must be > 0, --min-experiences >= 1")
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(name)s %(message)s")
    proc = LearnerProcess(
        store, gate=gate, interval=interval, failover=failover_timeout,
        min_experiences=min_experiences, keep_versions=keep_versions, seed=seed,
    )  # fmt: skip
    try:
        proc.run(echo=lambda m: print(m, flush=True), metrics_host=metrics_host,
                 metrics_port=metrics_port)  # fmt: skip
    except OSError as e:
        raise ConfigError(f"learner metrics cannot listen on {metrics_host}:{metrics_port}: "
                          f"{e.strerror or e}") from None  # fmt: skip


registry_app = typer.Typer(
    help="The model registry: a folder (--registry) or the database of the replicas (--store).",
    no_args_is_help=True,
)
app.add_typer(registry_app, name="registry")
RegistryDir = Annotated[
    Path | None, typer.Option(help="Registry folder (default runs/serve/registry).")
]
RegistryStore = Annotated[
    str | None, typer.Option("--store", help="postgresql:// URL: the replicas' registry.")
]


def _open_registry(registry: Path | None, store: str | None) -> Any:
    from rlsched.serve.pg import is_pg_url

    if store is not None:
        if registry is not None:
            raise ConfigError("give --registry DIR or --store URL, not both")
        if not is_pg_url(store):
            raise ConfigError("--store must be a postgresql:// URL")
        from rlsched.serve.pg import Database
        from rlsched.serve.pg_registry import PgRegistry

        return PgRegistry(Database(store, max_size=2, application="rlsched-registry"))
    from rlsched.serve.registry import ModelRegistry
    from rlsched.serve.server import DEFAULT_REGISTRY

    root = registry or DEFAULT_REGISTRY
    if not root.is_dir():
        raise ConfigError(f"no registry at {root}")
    return ModelRegistry(root)


def _registry_call(registry: Path | None, store: str | None, fn: Any) -> Any:
    from rlsched.serve.store import StoreUnavailable

    reg = _open_registry(registry, store)
    try:
        return fn(reg)
    except KeyError as e:
        raise ConfigError(str(e.args[0])) from None
    except StoreUnavailable as e:
        raise ConfigError(str(e)) from None
    finally:
        db = getattr(reg, "db", None)
        if db is not None:
            db.close()


@registry_app.command("list")
def registry_list(registry: RegistryDir = None, store: RegistryStore = None) -> None:
    """Versions, their parents and notes; * marks the current one."""
    rows = _registry_call(registry, store, lambda r: r.list())
    t = Table("", "version", "parent", "created", "note")
    for v in rows:
        t.add_row("*" if v["active"] else "", str(v["version"]), str(v.get("parent") or ""),
                  str(v.get("created") or ""), str(v.get("note") or ""))  # fmt: skip
    console.print(t)


@registry_app.command("activate")
def registry_activate(
    version: Annotated[int, typer.Argument(help="The version to serve.")],
    registry: RegistryDir = None,
    store: RegistryStore = None,
) -> None:
    """Make VERSION current (replicas on --store swap to it within a second)."""
    _registry_call(registry, store, lambda r: r.activate(version))
    typer.echo(f"current version: {version}")


@registry_app.command("rollback")
def registry_rollback(registry: RegistryDir = None, store: RegistryStore = None) -> None:
    """Re-activate the version that was current before this one."""
    try:
        v = _registry_call(registry, store, lambda r: r.rollback())
    except ValueError as e:
        raise ConfigError(str(e)) from None
    typer.echo(f"current version: {v}")


# ---------------------------------------------------------------------------- sweep / leaderboard
@app.command()
def sweep(
    config: Annotated[
        Path, typer.Argument(help="Sweep YAML (examples in configs/sweeps/; docs/experiments.md).")
    ],
    address: Annotated[
        str | None,
        typer.Option(help="Ray cluster to join: auto or ray://HOST:PORT (default: a local Ray)."),
    ] = None,
    max_concurrent: Annotated[
        int | None, typer.Option(help="Trials at a time (default: one per CPU).")
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Results folder (default: runs/sweeps/NAME).")
    ] = None,
) -> None:
    """Run a sweep (env x dataset x policy / algorithm x hyperparameters x seeds) on Ray Tune.
    Finished trials are skipped: the same command resumes an interrupted sweep."""
    from rlsched.sweep.runner import MissingDependencyError, require_ray

    try:
        require_ray()
    except MissingDependencyError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    from rlsched.sweep import load_sweep, run_sweep

    spec = load_sweep(config)
    results = out if out is not None else Path("runs/sweeps") / spec.name

    def say(msg: str) -> None:
        console.print(msg, markup=False, highlight=False)

    res = run_sweep(spec, results, address=address, max_concurrent=max_concurrent, echo=say)
    say(
        f"{len(res.ran)} ran, {len(res.skipped)} already finished, {len(res.failed)} failed "
        f"in {res.seconds:.1f}s"
    )
    for tid, err in res.failed.items():
        say(f"failed: {tid}: {err} (see {res.results_dir / 'trials' / tid / 'error.txt'})")
    if res.failed:
        raise typer.Exit(1)
    say(f"leaderboard: rlsched leaderboard {results}")


zoo_app = typer.Typer(help="Pretrained policies shipped with rlsched.", no_args_is_help=True)
app.add_typer(zoo_app, name="zoo")


@zoo_app.command("list")
def zoo_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Shipped policies (use as learned:zoo/NAME) with their held-out verdicts."""
    import json

    from rlsched.zoo import entries

    rows = entries()
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    t = Table(title="rlsched zoo")
    for col in ("name", "env", "preset", "size", "validation verdict", "test verdict"):
        t.add_column(col, overflow="fold")

    def verdict(res: dict[str, Any] | None) -> str:
        if not res or not res.get("paired"):
            return "-"
        p = res["paired"]
        lo, hi = p["ci95"]
        return f"{p['verdict']} vs {p['reference']} ({p['mean_diff']:+.3g} [{lo:+.3g}, {hi:+.3g}])"

    for r in rows:
        gate = r.get("gate")
        path = r["path"] + (f" (gated by {gate['anchor']}, margin {gate['margin']:g})"
                            if gate else "")  # fmt: skip
        t.add_row(
            path, r["env"], _preset_cell(r), f"{r['size_bytes'] / 1024:,.0f} KiB",
            verdict(r["validation"]), verdict(r["test"]),
        )
    console.print(t)


def _preset_cell(entry: dict[str, Any]) -> str:
    """The entry's scenario preset, with the preset's settings its card changes (the small-DAG
    WorkflowOffloading entry plays `congested` with one workflow per episode), and the split
    it is judged under where that is not the default (``rlsched results --split NAME``)."""
    from rlsched.scenarios import presets

    name = entry.get("preset")
    if not name:
        return "-"
    values = presets(entry["env"]).get(name, {})
    changed = [f"{k}={v}" for k, v in entry.get("env_kwargs", {}).items()
               if k in values and values[k] != v]  # fmt: skip
    if entry["split"] != "default":  # judged on a named split's test set
        changed.append(f"split {entry['split']}")
    return name + (f" ({', '.join(changed)})" if changed else "")


@zoo_app.command("compile")
def zoo_compile() -> None:
    """Compile the numba kernels the zoo's policies use into numba's on-disk cache (one
    episode of each policy of each zoo row); make's set-up runs it once, so that the demo's
    zoo stage loads them instead of compiling them."""
    from rlsched.demo import compile_kernels

    seconds = compile_kernels(console)
    if seconds is not None:
        console.print(f"zoo kernels compiled (or loaded from the cache) in {seconds:.0f}s")


@zoo_app.command("transfer")
def zoo_transfer(
    name: Annotated[str, typer.Argument(help="Zoo entry (rlsched zoo list).")],
    sizes: Annotated[
        str, typer.Option(help="Comma list of node counts besides the training size.")
    ] = "20,100",
    episodes: Annotated[int, typer.Option(help="Episodes per size (paired).")] = 10,
    write: Annotated[
        bool, typer.Option("--write", help="Store the result in the entry's card.json.")
    ] = False,
) -> None:
    """A zoo placement policy on cluster sizes it was not trained on, paired with the best
    heuristic at each size on its held-out test data; prints the Markdown table."""
    from rlsched.agents.export import write_card
    from rlsched.transfer import markdown, transfer
    from rlsched.zoo import card

    try:
        ns = [int(s) for s in sizes.split(",") if s.strip()]
    except ValueError:
        raise ValueError(f"--sizes {sizes!r}: a comma list of node counts, e.g. 20,100") from None
    res = transfer(name, ns, episodes=episodes)
    sys.stdout.write(markdown(name, res))
    if write:
        c = card(name)
        c["transfer"] = res
        write_card(name, c)


@app.command("gate")
def gate_cmd(
    model: Annotated[str, typer.Argument(help="learned:PATH (or PATH): a node-scoring model.")],
    anchor: Annotated[
        str, typer.Option(help="The heuristic it defers to (peft, heft, greedy_migration).")
    ],
    dataset: Annotated[
        str, typer.Option(help="Validation data (never the env's test set: refused).")
    ],
    margins: Annotated[str, typer.Option(help="Comma list of margins to try.")] = "0,0.5,1,2,4",
    episodes: Annotated[int, typer.Option(help="Episodes per margin.")] = 40,
    seed: Annotated[int, typer.Option(help="Seed of the first episode.")] = 10_000,
    env_arg: EnvArgs = None,
    write: Annotated[
        bool, typer.Option("--write", help="Store the kept gate in the model's meta.json.")
    ] = False,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the choice as JSON.")
    ] = None,
) -> None:
    """Choose a model's margin gate over a heuristic on validation data: every margin and every
    heuristic that does not search on the same episodes; kept: the best mean among the margins
    not significantly worse than the best heuristic (ties: the larger margin)."""
    import json

    from rlsched.gate import choose_margin, parse_margins, write_gate

    _check_episodes(episodes)
    path = model.split(":", 1)[1] if model.startswith("learned:") else model
    res = choose_margin(path, anchor, parse_margins(margins), dataset, episodes, seed,
                        parse_env_args(env_arg))  # fmt: skip
    t = Table(title=f"{path} gated by {anchor} on {dataset} ({episodes} episodes, seeds {seed}+)")
    for col in ("margin", f"mean {res['main_metric']}", f"Δ vs {res['reference']} [95% CI]",
                "verdict"):  # fmt: skip
        t.add_column(col)
    for r in res["margins"]:
        p = r["paired"]
        delta = f"{p['mean_diff']:+.4g} [{p['ci95'][0]:+.4g}, {p['ci95'][1]:+.4g}]" if p else "-"
        t.add_row(f"{r['margin']:g}", f"{r['mean']:.4g}", delta, p["verdict"] if p else "reference")
    console.print(t)
    kept = res["kept"]
    console.print("kept: none (every margin is significantly worse than the best heuristic)"
                  if kept is None else f"kept: margin {kept:g}")  # fmt: skip
    if json_out is not None:
        json_out.write_text(json.dumps(res, indent=2) + "\n")
    if write and kept is not None:
        console.print(f"wrote the gate to {write_gate(path, anchor, kept)}")


@app.command("results")
def results_cmd(
    out: Annotated[Path, typer.Option(help="Folder for results.md and results.json.")] = Path(
        "runs/results"
    ),
    budget: Annotated[
        str, typer.Option(help="quick (under 10 minutes on 2 cores) or full (docs/results.md).")
    ] = "quick",
    learned: Annotated[
        list[str] | None,
        typer.Option(
            help="ENV=PATH of a learned policy (repeatable; a * in PATH: several training seeds "
            "of one policy, aggregated); ENV:PRESET=PATH: in that preset's row only."
        ),
    ] = None,
    env: Annotated[
        list[str] | None, typer.Option(help="Only these envs (repeatable; default: all six).")
    ] = None,
    presets: Annotated[
        str | None,
        typer.Option(
            help="all (one row per env and scenario preset, docs/scenarios.md), default (one "
            "row per env: its default preset) or NAME,NAME (only these presets). Unset: "
            "default with --budget quick (under 10 minutes), all with --budget full."
        ),
    ] = None,
    split: Annotated[
        str,
        typer.Option(
            help="default (each env's test set) or a named split of rlsched.splits.VARIANTS "
            "(e.g. code-time: LLMAutoscaling on the code trace's second half): the envs that "
            "have it, on its test set; a model trained under it is judged only there."
        ),
    ] = "default",
) -> None:
    """Every heuristic, the clairvoyant oracle and the given learned policies on each env's
    held-out test data, with paired verdicts against the best heuristic and each setting's
    spreads (is it informative?): one table."""
    from rlsched.results import parse_learned, run_results

    if presets is None:
        presets = "default" if budget == "quick" else "all"
    which: str | list[str] | None = (
        None if presets == "default" else "all" if presets == "all" else presets.split(",")
    )
    run_results(
        out, budget, parse_learned(learned or []), env, console=console, presets=which,
        split=split,
    )


@app.command("leaderboard")
def leaderboard_cmd(
    results_dir: Annotated[Path, typer.Argument(help="A sweep's results folder.")],
    reference: Annotated[
        str | None,
        typer.Option(
            help="Policy the score is normalised by (default: the sweep config's `reference`)."
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Output folder (default: RESULTS_DIR/leaderboard).")
    ] = None,
    all_trials: Annotated[
        bool,
        typer.Option(
            "--all", help="Every finished trial in the folder, not only the latest sweep's."
        ),
    ] = False,
) -> None:
    """One table per env: mean and 95% CI per metric over seeds, and a score against a
    reference policy; writes CSV, Markdown, JSON and a self-contained HTML page."""
    from rlsched.report.leaderboard import sweep_rich_table
    from rlsched.sweep.leaderboard import write_sweep_leaderboard

    tables, paths = write_sweep_leaderboard(results_dir, out, reference, all_trials)
    for t in tables:
        console.print(sweep_rich_table(t))
    for p in paths.values():
        console.print(f"wrote {p}", markup=False, highlight=False)


def _terminal_help(*apps: typer.Typer) -> None:
    """Each command's help as a terminal shows it: its docstring without reST's double
    backquotes, and its line in a group's command list the first paragraph on one line
    (Typer's rich mode keeps a docstring's line breaks there)."""
    for group in apps:
        for cmd in group.registered_commands:
            doc = inspect.getdoc(cmd.callback) if cmd.help is None else cmd.help
            if not doc:
                continue
            doc = doc.replace("``", "")
            cmd.help = doc
            if cmd.short_help is None:
                cmd.short_help = " ".join(doc.split("\n\n")[0].split())


_terminal_help(app, datasets_app, envs_app, registry_app, zoo_app)


def main() -> None:
    """Entry point: library errors become one line on stderr and exit status 2."""
    try:
        app()
    except (RlschedError, FileNotFoundError) as e:
        # one unwrapped line (rich would wrap a long path), no traceback
        sys.stderr.write(f"error: {' '.join(str(e).split())}\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
