"""Typed training configuration, one docstring per field (CleanRL style), loadable from YAML."""

from __future__ import annotations

import dataclasses
import math
import re
import typing
from dataclasses import dataclass, field
from itertools import pairwise, product
from pathlib import Path
from typing import Any

import yaml

from rlsched.agents.models import ALGOS
from rlsched.envs.args import type_name
from rlsched.errors import ConfigError
from rlsched.policies.residual import gate_error, hold_error, range_error
from rlsched.splits import check_validation, find_split, overlap, shared_text
from rlsched.suggest import did_you_mean
from rlsched.vector import BATCHED_ENV_IDS


@dataclass
class TrainConfig:
    """Everything a training run depends on; saved as ``config.yaml`` in the run folder."""

    env_id: str = "rlsched/ServerlessPlacement-v0"
    """Registered env id."""
    dataset: str | None = "wfinstances:montage-58,epigenomics-41,1000genome-52"
    """Registry name of the training workload (None: the env's default dataset)."""
    train_datasets: list[str] = field(default_factory=list)
    """More training workloads beside ``dataset`` (generalisation: several clusters or
    traces at once): sub-env ``r`` trains on ``[dataset, *train_datasets][r % (1 + len)]``,
    so ``n_envs`` should be a multiple of their number. Imitation teachers play ``dataset``
    (each of these too with ``imitation_every_dataset``). An entry may hold integer ranges,
    ``{A..B}`` (inclusive): ``synthetic:placement?tasks=15&seed={101..1059}`` stands for 959
    entries, one per seed, in order (several ranges: every combination, the first slowest).
    None may share data with the validation or the test set. Not with ``vec_env: batched``."""
    eval_dataset: str | None = "wfcommons:epigenomics?tasks=60&seed=1&workflows=3"
    """Validation workload for periodic evaluation (the best model on it is kept); None = the
    training workload with other seeds. It must share no workflow, trace or generator seed
    with the env's test set (:mod:`rlsched.splits`), or the config is refused."""
    split: str = "default"
    """The env's train / validation / test split the datasets are checked against:
    ``default`` (:data:`rlsched.splits.SPLITS`) or a named one of
    :data:`rlsched.splits.VARIANTS` (``code-time``: LLMAutoscaling-v0 with the code trace split
    in time, so its first half may be trained on). A model trained under a named split is
    judged on that split's test set."""
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    """Extra env constructor arguments (e.g. ``num_nodes``, ``reward``, ``beta``)."""
    algo: str = "maskable_ppo"
    """``maskable_ppo`` (sb3-contrib), ``ppo`` or ``dqn`` (Stable-Baselines3), or
    ``masked_dqn`` (:mod:`rlsched.agents.masked_dqn`: dueling double DQN that never picks a
    masked action, with a piecewise-linear epsilon schedule), or ``departures``
    (:mod:`rlsched.train.departures`: the base heuristic ``imitation_policy`` with departures
    a whole-workflow network learns from the search teacher ``expert_teacher``;
    WorkflowOffloading-v0 with ``dag: true``; the PPO and DQN fields do not apply)."""
    total_steps: int = 50_000
    """Env steps to train for (over all parallel envs). 0 with ``imitation_policy`` (and no
    expert iterations): imitation alone, the fitted clone is the model."""
    seed: int = 0
    """Seeds python, numpy, torch, the envs (``seed + rank``) and evaluation (``seed + 10_000``)."""
    n_envs: int = 4
    """Envs stepped together in one process (DummyVecEnv); 4 is about 2x one env here."""
    vec_env: str = "dummy"
    """How the ``n_envs`` training envs are stepped: ``dummy`` (SB3's DummyVecEnv of single
    envs, every env id) or ``batched`` (one array-stepped vector env, :mod:`rlsched.vector`,
    for the env ids in ``rlsched.vector.BATCHED_ENV_IDS``; the same episodes under the same
    seeds, several times the env steps per second) or ``subproc`` (SB3's SubprocVecEnv: one
    process per env, for envs whose step is slow, such as LLMAutoscaling's request-level
    simulator; the same episodes as ``dummy``, on ``n_envs`` cores). Evaluation always uses
    single envs."""
    learning_rate: float = 3e-4
    """Adam step size."""
    n_steps: int = 256
    """PPO: steps per env between updates (rollout = ``n_steps * n_envs``)."""
    batch_size: int = 256
    """Minibatch size."""
    n_epochs: int = 10
    """PPO: passes over each rollout."""
    gamma: float = 0.95
    """Discount; placements mostly affect the next few minutes of the episode."""
    gae_lambda: float = 0.95
    """PPO: GAE lambda."""
    ent_coef: float = 0.01
    """PPO: entropy bonus, keeps exploring valid nodes early on."""
    clip_range: float = 0.2
    """PPO: policy ratio clip."""
    critic_warmup_steps: int = 0
    """PPO: for the first this many env steps only the value network learns (every other
    parameter frozen). A policy that starts as a good heuristic (a residual, given weights) is
    then not moved by advantages from a critic that has not fitted yet; 0: no warm-up."""
    target_kl: float | None = None
    """PPO: stop an update's epochs early once the approximate KL divergence from the
    rollout's policy passes 1.5x this (SB3's ``target_kl``); None: all ``n_epochs``. Bounds how
    far one noisy rollout can move a policy that starts at a good heuristic (a residual)."""
    policy_net: str = "auto"
    """``node``: one MLP shared by every node scores each node (``rlsched.agents.networks``;
    inputs symlog-scaled inside the network, works for any cluster size; needs a Dict
    observation with ``node_*`` keys); ``mlp``: SB3's MlpPolicy / MultiInputPolicy over the
    flattened observation; ``auto``: ``node`` where the observation allows it, else ``mlp``.
    ``dqn`` always uses ``mlp``; ``masked_dqn`` uses ``mlp`` (a dueling head over the
    flattened observation) unless ``node`` is asked for explicitly (then each node's
    advantage comes from one head shared by every node)."""
    node_hidden: int = 64
    """``node`` network: width of the per-node embedding."""
    net_arch: list[int] = field(default_factory=lambda: [128, 128])
    """Hidden layer sizes of the value network (``node``) or of both networks (``mlp``)."""
    node_value: str = "all"
    """``node`` network, PPO: what the value MLP reads. ``all``: every node's embedding plus
    the pooled and global ones (its input grows with the node count); ``pooled``: the mean and
    max over nodes and the global embedding only, a much cheaper update (docs/benchmarks.md)
    and a critic that runs on any cluster size too."""
    node_global_keys: list[str] | None = None
    """``node`` network: the non-``node_`` observation keys it reads (None: all). Leaving out
    the keys sized by the node count (PodRebalancing's per-node ``load``, ``capacity``, ...)
    lets the model act at any node count."""
    node_prior_key: str | None = None
    """``node`` network, PPO: a ``node_`` observation key of one value per node whose symlog,
    times a learned coefficient starting at ``node_prior_scale``, is added to every node's
    logit; the network's own score starts at zero. The untrained policy then picks the prior's
    best node, and training learns a residual: where to depart from the heuristic whose key it
    is (WorkflowOffloading's ``node_done_gap`` with ``finish_gap: true``: HEFT's key)."""
    node_prior_scale: float = -1.0
    """Starting coefficient of ``node_prior_key`` (negative: the lowest value scores highest);
    its size sets how sharply the untrained policy follows the prior, hence how much PPO
    explores away from it."""
    residual_policy: str | None = None
    """PPO with a Box action space: a heuristic of the env (e.g. LLMAutoscaling's ``hpa``)
    whose action the model's output corrects. The env plays ``clip(heuristic + residual_scale
    x output)`` (:mod:`rlsched.policies.residual`); the actor's last layer starts at zero, so
    the untrained model is the heuristic and training learns where to depart from it. Saved
    with the model: ``learned:PATH`` acts over the same heuristic everywhere."""
    residual_scale: float = 1.0
    """How far the model's output (in ``[-1, 1]``) may move the heuristic's action, in action
    units (LLMAutoscaling: 1 is ``action_scale_step`` instances per pool)."""
    residual_range: list[Any] = field(default_factory=lambda: [-1.0, 1.0])
    """The part of the model's output ``[-1, 1]`` the correction may use (before
    ``residual_scale``); it must hold 0, the heuristic itself. ``[-1, 0]``: the model can only
    lower the heuristic's action (LLMAutoscaling: hold fewer instances than HPA would, so never
    pay for more than HPA's pools). Each bound may be one value per action dimension:
    ``[[-1, -1], [1, 0]]`` lets LLMAutoscaling's prompt pool move both ways and its token
    pool only down."""
    residual_play_range: list[Any] | None = None
    """The range the saved model plays (``meta.json`` ``residual.range``) when it is not
    ``residual_range``: an operator's narrower bound applied after training, e.g. a model trained
    two-sided that in use may only hold LLMAutoscaling's token pool below HPA's
    (``[[-1, -1], [1, 0]]``). Training and its periodic evaluations play ``residual_range``."""
    residual_play_hold: int = 1
    """What a saved residual model plays (``meta.json``; training plays 1): each action
    dimension's correction counts only once the model has asked for one of the same sign this
    many decisions in a row, and until then that dimension plays the heuristic's action (a
    stabilisation window, as HPA's own). 1: every correction at once."""
    residual_play_gate: dict[str, Any] | None = None
    """What a saved residual model plays (``meta.json``; training plays none): a correction
    that lowers the heuristic's action counts only while the observation's feature ``feature``
    is at least ``lower_at_least`` and below ``lower_below``, one that raises it only while that
    feature is at least ``raise_at_least`` and below ``raise_below`` (any may be left out;
    ``feature`` may be a list, one per action dimension). LLMAutoscaling, ``{"feature":
    "slo_attainment", "lower_at_least": 0.99}``: hold fewer instances than HPA only while the
    last interval met its SLOs. None: no gate."""
    log_std_init: float | None = None
    """PPO with a Box (continuous) action space: initial log standard deviation of the Gaussian
    policy; None keeps SB3's 0 (std 1, which with actions clipped to [-1, 1] explores mostly at
    the bounds)."""
    normalize_obs: bool = True
    """``mlp`` only: running mean/std normalisation of observations (VecNormalize), saved with
    the model as ``vecnormalize.pkl``. The ``node`` network scales its inputs itself."""
    buffer_size: int = 50_000
    """DQN, masked DQN: replay buffer size."""
    learning_starts: int = 1_000
    """DQN, masked DQN: steps before learning starts (masked DQN acts uniformly at random
    among the valid actions until then)."""
    exploration_fraction: float = 0.3
    """DQN: fraction of training over which epsilon decays (masked DQN: see
    ``epsilon_points``)."""
    target_update_interval: int = 1_000
    """Masked DQN: env steps (over all envs) between copies of the online network into the
    target network."""
    train_freq: int = 4
    """Masked DQN: env steps per env between gradient updates."""
    gradient_steps: int = 1
    """Masked DQN: gradient steps per update."""
    epsilon_points: list[float] = field(default_factory=lambda: [0.0, 0.25, 0.9, 1.0])
    """Masked DQN: breakpoints of the piecewise-linear epsilon schedule, as fractions of
    ``total_steps`` (non-decreasing, in [0, 1]). The defaults and ``epsilon_values`` are
    VMAgent's ``linear_decay(x, [0, .25 MAX, .9 MAX, MAX], [.9, .5, .2, .2])``."""
    epsilon_values: list[float] = field(default_factory=lambda: [0.9, 0.5, 0.2, 0.2])
    """Masked DQN: epsilon (probability of a uniformly random valid action) at each of
    ``epsilon_points``; linear in between."""
    imitation_policy: str | None = None
    """Warm start (PPO / MaskablePPO): behaviour-clone this policy (any name ``rlsched
    policies`` lists, e.g. ``heft``) into the actor, and its returns into the critic, before RL
    (:mod:`rlsched.train.imitation`). None: start from scratch."""
    imitation_episodes: int = 100
    """Teacher episodes to collect for the warm start. Their labels are kept in
    ``RUN/teacher/warm_start.npz``; a warm start that finds that file (a rerun, or a new run
    folder given an earlier run's ``teacher/``) fits it instead of collecting, and refuses it
    where this config would have collected other labels (the trainer's ``LABEL_FIELDS``)."""
    imitation_epochs: int = 30
    """Passes over the teacher's decisions."""
    imitation_dagger_rounds: int = 0
    """DAgger rounds after the first fit: run the clone for ``imitation_episodes`` episodes,
    label every state it reaches with the teacher, refit on all data so far."""
    imitation_changed_weight: float = 1.0
    """DAgger and expert iteration: in each refit, the weight of the labels where the teacher
    changed the learner's decision, against 1 for the others (1: all alike). A teacher's gain
    lies in the few decisions it changes, and an unweighted fit reproduces those least."""
    imitation_every_dataset: bool = False
    """The teacher's episodes (warm start, DAgger and expert rounds) cycle over the workloads
    ``[dataset, *train_datasets]`` (episode ``k`` on the ``k``-th) instead of playing on
    ``dataset`` alone, so that its labels cover every training cluster or trace."""
    imitation_target: str = "actions"
    """What the warm start, DAgger and expert rounds fit: ``actions`` (the teacher's choices,
    cross-entropy) or ``values`` (the teacher's value of each candidate action, e.g.
    ``clairvoyant:learned:MODEL``'s rollouts of each over the model: that model's Q-values,
    whose argmax is a policy-iteration step; :func:`rlsched.train.imitation.pretrain`)."""
    imitation_values_prior: float = 0.0
    """With ``imitation_target: values``: the weight of the model's own (centred) logits in
    the targets, beside the values scaled to their spread: 1 shifts its preferences by the
    values (a soft improvement step that keeps them where the values tie); 0 fits the values
    alone."""
    imitation_values_loss: str = "mse"
    """With ``imitation_target: values``: ``mse`` regresses each valued logit on its target;
    ``kl`` fits the policy's softmax to the targets' softmax (the improved policy), so that
    actions valued far below the rest, which neither policy takes, weigh next to nothing."""
    imitation_lr: float = 1e-3
    """Adam step size of the warm start."""
    imitation_workers: int = 1
    """Processes that play the teacher's episodes (warm start, DAgger and expert rounds) in
    parallel: a search teacher such as ``mdp_rollout`` takes a minute or more per episode.
    The labels are the same whatever the number (each episode depends on its seed alone)."""
    expert_iterations: int = 0
    """Expert iteration (Anthony et al., 2017): after the first PPO phase, this many rounds
    of (a) the search teacher ``rollout`` over the best model so far (``rollout:learned:RUN/
    model``: rollouts over sampled futures with the student as their base,
    :mod:`rlsched.policies.rollout`) labelling every state the model reaches in
    ``imitation_episodes`` episodes (DAgger), (b) a refit on all labels so far and (c) PPO
    from the refitted weights. ``total_steps`` is split evenly over the ``expert_iterations
    + 1`` PPO phases. Needs an actor-critic algo."""
    expert_teacher: dict[str, Any] = field(default_factory=dict)
    """Options of the expert rounds' search teacher (``horizon``, ``futures``, ``top_k``,
    ``significance``, ``min_gain``; :class:`rlsched.policies.rollout.RolloutPolicy`) over the
    env's own ``rollout_options``."""
    departure_min_gain: float = 0.05
    """``algo: departures``: a server is the teacher's departure where its value beats the base's
    server by at least this share of the base's value."""
    departure_quantiles: list[float] = field(
        default_factory=lambda: [0.9, 0.95, 0.97, 0.98, 0.99, 0.995]
    )
    """``algo: departures``: the candidate thresholds, as quantiles of the network's top score
    over the training decisions; each (and never departing) plays the validation episodes,
    the best is kept."""
    departure_hidden: int = 64
    """``algo: departures``: the width of the task embeddings."""
    departure_rounds: int = 3
    """``algo: departures``: rounds of messages along the workflow's links."""
    departure_patience: int = 5
    """``algo: departures``: epochs without a lower loss on the kept-aside workflows before the
    fit stops (``imitation_epochs`` at most)."""
    departure_relative_data: bool = False
    """``algo: departures``: the network reads data sizes (each task's data out, the links, the
    current task's data in and out) relative to the workflow's mean data out, not in bytes,
    whose scale differs from one workload to another by orders of magnitude."""
    departure_target: str = "departure"
    """``algo: departures``: what the network fits per candidate server: ``departure`` (1 on the
    teacher's departure, binary cross-entropy) or ``gain`` (the teacher's value of the server
    less the base's, over the base's, clipped to ``departure_gain_clip``; Huber loss), so that a
    server whose departure loses much scores lower than one that loses little, where the
    departure label calls both 0."""
    departure_gain_clip: float = 0.25
    """``departure_target: gain``: relative gains beyond this either way count as this."""
    departure_gain_floor: float | None = None
    """``departure_target: gain``: relative losses beyond this count as minus this (None:
    ``departure_gain_clip``). The policy departs only where a gain clears its threshold, so how
    much a bad server loses matters less than the gains near zero and above it."""
    departure_gate: bool = False
    """``algo: departures``: the teacher's own choice decides where a gain counts. Where it kept
    the base's server (its ``significance`` or ``min_gain`` gate, ``expert_teacher``: a higher
    mean over a few sampled futures that is not clear of their noise), each server's gain
    counts as at most 0 and no departure is labelled; where it left the base's server, the
    gains count as valued. A teacher without a gate keeps the base only where no server's
    mean is higher, so there it changes nothing."""
    departure_familiar: bool = False
    """``algo: departures``: the model carries a familiarity guard
    (:mod:`rlsched.policies.familiarity`): the shape profile of every workflow of the config's
    ``dataset`` and ``train_datasets`` (and those of ``departure_label_runs``' configs), and a
    radius, the largest distance from one of them to its nearest in another dataset. The
    policy departs only on workflows within that radius of one it was trained on; elsewhere it
    keeps its base's server (``learned:PATH?familiar=off`` plays it without)."""
    departure_vet_datasets: list[str] = field(default_factory=list)
    """``departure_familiar``: workloads of new workflows the guarded model plays beside its
    base once its threshold is chosen (``departure_vet_episodes`` each from seed
    ``departure_vet_seed``). Each training workflow takes the outcomes of the workloads whose
    workflows lie nearest to it, and stays open to departures only where they paid on
    average (:func:`rlsched.policies.familiarity.vet`). Empty: every workflow within the
    radius is open. Never the test data."""
    departure_vet_episodes: int = 10
    """Episodes of each ``departure_vet_datasets`` workload."""
    departure_vet_seed: int | None = None
    """First seed of the vetting episodes (None: ``seed + 30,000``)."""
    departure_vet_env_kwargs: dict[str, Any] = field(default_factory=dict)
    """Env arguments the vetting episodes change (e.g. ``dag_max_tasks`` for larger
    workflows than the training ones)."""
    departure_plan: bool = False
    """``algo: departures``: the network also reads PEFT's schedule of the rest of the
    workflow from each decision (the env's ``dag_plan=True``: each task's server and finish
    there; per server, its latest finish and task count)."""
    departure_behaviour: str | None = None
    """``algo: departures``: a departure model (a model or run folder, or ``zoo/NAME``) that
    acts in the label episodes while the teacher labels the states it reaches (DAgger: the
    states a student's own departures lead to); None: the base acts."""
    departure_teacher_base: str | None = None
    """``algo: departures``: the search teacher's base, the policy its rollouts continue with
    after each candidate server (a policy spec, such as ``learned:zoo/NAME`` for a departure
    model: approximate policy iteration, each server valued under the student's own play);
    None: the base (``imitation_policy``). Labels stay gains over the base's server."""
    departure_label_runs: list[str] = field(default_factory=list)
    """``algo: departures``: earlier runs (run folders, or their ``teacher/`` folders) whose
    teacher labels join this run's in the fit (aggregated rounds of DAgger)."""
    departure_members: list[str] = field(default_factory=list)
    """``algo: departures``: departure models (model or run folders, or ``zoo/NAME``) joined
    into one, an ensemble: a server's score is the mean over them of their score less their
    own threshold. Nothing is collected or fitted; the threshold of the mean is chosen among
    ``departure_thresholds`` (and never departing) on the validation episodes. One model
    alone is its network with its score taken less its own threshold (a recipe's member on
    its own, its threshold chosen again)."""
    departure_thresholds: list[float] = field(default_factory=list)
    """``algo: departures``: candidate thresholds given as numbers (each, and never departing,
    plays the validation episodes); empty: the quantiles ``departure_quantiles``."""
    init_model: str | None = None
    """Start from this model's weights (a model or run folder, or ``zoo/NAME``) instead of a
    fresh network: fine-tuning a distilled or shipped model. Its algorithm, network and spaces
    must be this config's. ``algo: departures``: the fit starts from its network (with
    ``imitation_epochs: 0`` the network is kept as it is and only the threshold is chosen)."""
    checkpoint_freq: int = 50_000
    """Write ``RUN/checkpoint`` (the model, its optimizer and where the run stands) every this
    many env steps and at the end of each phase; ``rlsched train --resume RUN`` continues from
    it. 0: no checkpoints."""
    eval_freq: int = 5_000
    """Evaluate every this many env steps (over all envs); 0 disables evaluation."""
    eval_episodes: int = 5
    """Episodes per evaluation."""
    eval_same_episodes: bool = False
    """Every evaluation plays the same ``eval_episodes`` validation episodes (the eval env
    reseeded each time), so the kept model is chosen by paired comparisons rather than by
    which evaluation met easier episodes. False: each evaluation continues the eval env's
    stream (new episodes every time; the shipped zoo configs were trained so)."""
    torch_threads: int = 1
    """Torch intra-op threads; 1 is fastest for small networks on 2-core machines."""
    tensorboard: bool = True
    """Write TensorBoard logs to ``RUN/tb``."""

    @classmethod
    def from_yaml(cls, path: str | Path) -> TrainConfig:
        p = Path(path)
        try:
            text = p.read_text()
            data = yaml.safe_load(text) or {}
            lines = _key_lines(text)
        except (OSError, yaml.YAMLError) as e:
            raise ConfigError(f"{p}: cannot read config: {' '.join(str(e).split())}") from e
        if not isinstance(data, dict):
            raise ConfigError(f"{p}: a config must be a mapping of field: value")
        return cls.from_dict(data, source=str(p), lines=lines)

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], source: str = "config", lines: dict[str, int] | None = None
    ) -> TrainConfig:
        """A config from ``data``, each value checked against its field's type (the YAML
        line, when ``lines`` has it, is named in the error)."""
        from pydantic import TypeAdapter, ValidationError

        names = [f.name for f in dataclasses.fields(cls)]
        lines = lines or {}
        if isinstance(data.get("train_datasets"), list):
            where = f"{source}:{lines['train_datasets']}" if "train_datasets" in lines else source
            data = {**data, "train_datasets": expand_ranges(data["train_datasets"], where)}
        for key in data:
            if key not in names:
                where = f"{source}:{lines[key]}" if key in lines else source
                raise ConfigError(f"{where}: unknown field {key!r}{did_you_mean(str(key), names)}")
        # pydantic's lax mode: "3e-4" (YAML 1.1 reads it as a string) is a float, "fast" is not
        hints = typing.get_type_hints(cls)
        checked: dict[str, Any] = {}
        for key, value in data.items():
            try:
                checked[key] = TypeAdapter(hints[key]).validate_python(value)
            except ValidationError:
                where = f"{source}:{lines[key]}" if key in lines else source
                kind = type_name(hints[key])
                raise ConfigError(f"{where}: {key}: {value!r} is not {kind}") from None
        cfg = cls(**checked)
        cfg.validate(source)
        return cfg

    def validate(self, source: str = "config") -> None:
        if self.algo not in (*ALGOS, "departures"):
            raise ConfigError(
                f"{source}: algo {self.algo!r} is not one of {', '.join(ALGOS)}, departures"
            )
        if self.algo == "departures":
            self._validate_departures(source)
        for name in ("n_envs", "n_steps", "batch_size", "eval_episodes"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{source}: {name} must be >= 1")
        if self.total_steps < 0:
            raise ConfigError(f"{source}: total_steps must be >= 0")
        if self.total_steps == 0 and (not self.imitation_policy or self.expert_iterations):
            raise ConfigError(
                f"{source}: total_steps 0 (imitation alone) needs imitation_policy and no "
                "expert_iterations"
            )
        if self.imitation_policy is not None and self.algo in ("dqn", "masked_dqn"):
            raise ConfigError(
                f"{source}: imitation_policy needs an actor-critic algo, not {self.algo}"
            )
        for name in ("target_update_interval", "train_freq", "gradient_steps"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{source}: {name} must be >= 1")
        pts, vals = list(self.epsilon_points), list(self.epsilon_values)
        if not pts or len(pts) != len(vals):
            raise ConfigError(
                f"{source}: epsilon_points and epsilon_values need the same length (>= 1)"
            )
        if any(not 0 <= p <= 1 for p in pts) or any(b < a for a, b in pairwise(pts)):
            raise ConfigError(f"{source}: epsilon_points must be non-decreasing, in [0, 1]")
        if any(not 0 <= v <= 1 for v in vals):
            raise ConfigError(f"{source}: epsilon_values must be in [0, 1]")
        if self.imitation_dagger_rounds < 0:
            raise ConfigError(f"{source}: imitation_dagger_rounds must be >= 0")
        if self.expert_iterations < 0 or self.checkpoint_freq < 0:
            raise ConfigError(f"{source}: expert_iterations and checkpoint_freq must be >= 0")
        if self.expert_iterations and self.algo not in ("ppo", "maskable_ppo"):
            raise ConfigError(
                f"{source}: expert_iterations needs an actor-critic algo, not {self.algo}"
            )
        if self.imitation_workers < 1:
            raise ConfigError(f"{source}: imitation_workers must be >= 1")
        if self.imitation_target not in ("actions", "values"):
            raise ConfigError(f"{source}: imitation_target must be 'actions' or 'values'")
        if self.imitation_values_loss not in ("mse", "kl"):
            raise ConfigError(f"{source}: imitation_values_loss must be 'mse' or 'kl'")
        if not self.imitation_changed_weight > 0:
            raise ConfigError(f"{source}: imitation_changed_weight must be > 0")
        if self.imitation_episodes < 1 or self.imitation_epochs < 0:
            raise ConfigError(f"{source}: imitation_episodes must be >= 1, epochs >= 0")
        if self.vec_env not in ("dummy", "batched", "subproc"):
            raise ConfigError(f"{source}: vec_env must be 'dummy', 'batched' or 'subproc'")
        if self.node_value not in ("all", "pooled"):
            raise ConfigError(f"{source}: node_value must be 'all' or 'pooled'")
        if self.vec_env == "batched" and self.env_id not in BATCHED_ENV_IDS:
            raise ConfigError(
                f"{source}: vec_env 'batched' is not available for {self.env_id}; "
                f"batched envs: {', '.join(BATCHED_ENV_IDS)}"
            )
        if self.policy_net not in ("auto", "node", "mlp"):
            raise ConfigError(f"{source}: policy_net must be 'auto', 'node' or 'mlp'")
        if not 0 <= self.gae_lambda <= 1:
            raise ConfigError(f"{source}: gae_lambda must be in [0, 1]")
        for name in ("learning_rate", "imitation_lr", "clip_range"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{source}: {name} must be > 0, got {getattr(self, name)!r}")
        if self.critic_warmup_steps < 0:
            raise ConfigError(f"{source}: critic_warmup_steps must be >= 0")
        if self.critic_warmup_steps and self.algo not in ("ppo", "maskable_ppo"):
            raise ConfigError(f"{source}: critic_warmup_steps applies to ppo and maskable_ppo only")
        if self.target_kl is not None:
            if self.algo not in ("ppo", "maskable_ppo"):
                raise ConfigError(f"{source}: target_kl applies to ppo and maskable_ppo only")
            if not self.target_kl > 0:
                raise ConfigError(f"{source}: target_kl must be > 0, got {self.target_kl!r}")
        if self.ent_coef < 0 or self.eval_freq < 0:
            raise ConfigError(f"{source}: ent_coef and eval_freq must be >= 0")
        if not 0 < self.gamma <= 1:
            raise ConfigError(f"{source}: gamma must be in (0, 1]")

        if self.residual_policy is not None:
            if self.algo != "ppo":
                raise ConfigError(
                    f"{source}: residual_policy corrects a continuous action: algo ppo, "
                    f"not {self.algo}"
                )
            if self.imitation_policy is not None or self.expert_iterations:
                raise ConfigError(
                    f"{source}: residual_policy starts at its heuristic already: no "
                    "imitation_policy or expert_iterations"
                )
            if self.vec_env == "batched":
                raise ConfigError(f"{source}: residual_policy needs vec_env dummy or subproc")
            if not self.residual_scale > 0:
                raise ConfigError(f"{source}: residual_scale must be > 0")
            for key in ("residual_range", "residual_play_range"):
                value = getattr(self, key)
                why = None if value is None else range_error(value)
                if why is not None:
                    raise ConfigError(f"{source}: {key} {why}")
            why = hold_error(self.residual_play_hold)
            if why is not None:
                raise ConfigError(f"{source}: residual_play_hold {why}")
            why = gate_error(self.residual_play_gate)
            if why is not None:
                raise ConfigError(f"{source}: residual_play_gate {why}")
        elif (
            self.residual_play_range is not None
            or self.residual_play_hold != 1
            or self.residual_play_gate is not None
        ):
            raise ConfigError(
                f"{source}: residual_play_range, residual_play_hold and residual_play_gate "
                "need residual_policy"
            )

        # an unknown split name is refused there too
        check_validation(self.env_id, self.eval_dataset or self.dataset, source, self.split)
        if self.train_datasets and self.vec_env == "batched":
            raise ConfigError(f"{source}: train_datasets needs vec_env dummy or subproc")
        for extra in self.train_datasets:
            if not isinstance(extra, str) or not extra:
                raise ConfigError(f"{source}: train_datasets holds dataset names, not {extra!r}")
            shared = overlap(extra, self.eval_dataset) if self.eval_dataset else set()
            shared |= self._shared_with_test(extra)
            if shared:
                raise ConfigError(
                    f"{source}: train_datasets entry {extra!r} shares {shared_text(shared)} "
                    "with the validation or the test set (rlsched.splits)"
                )

    def _shared_with_test(self, dataset: str) -> set[tuple[str, ...]]:
        """What ``dataset`` shares with this env's test set (:mod:`rlsched.splits`)."""
        split = find_split(self.env_id, self.split)
        return overlap(dataset, split.test) if split else set()

    def _validate_departures(self, source: str) -> None:
        if not self.imitation_policy:
            raise ConfigError(f"{source}: algo departures needs imitation_policy (the base)")
        if self.train_datasets and not self.imitation_every_dataset:
            # a departure model trains on its teacher's labels alone: without the flag they
            # would all come from `dataset`, and the list would be silently ignored
            raise ConfigError(
                f"{source}: algo departures labels only the teacher's episodes, which play "
                f"`dataset` alone unless imitation_every_dataset: true; set it to label "
                f"train_datasets' {len(self.train_datasets)} workloads too, or drop them"
            )
        if not self.env_kwargs.get("dag"):
            raise ConfigError(
                f"{source}: algo departures reads the whole workflow: env_kwargs needs dag: true"
            )
        if not self.departure_min_gain >= 0:
            raise ConfigError(f"{source}: departure_min_gain must be >= 0")
        qs = list(self.departure_quantiles)
        if not qs or any(not 0 <= q <= 1 for q in qs):
            raise ConfigError(f"{source}: departure_quantiles must be in [0, 1], at least one")
        if self.departure_target not in ("departure", "gain"):
            raise ConfigError(f"{source}: departure_target must be 'departure' or 'gain'")
        if not self.departure_gain_clip > 0:
            raise ConfigError(f"{source}: departure_gain_clip must be > 0")
        if self.departure_gain_floor is not None and not self.departure_gain_floor > 0:
            raise ConfigError(f"{source}: departure_gain_floor must be > 0 (or null)")
        for name in ("departure_hidden", "departure_rounds", "departure_patience"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{source}: {name} must be >= 1")
        for run in self.departure_label_runs:
            if not isinstance(run, str) or not run:
                raise ConfigError(f"{source}: departure_label_runs holds run folders, not {run!r}")
        if self.departure_vet_datasets and not self.departure_familiar:
            raise ConfigError(f"{source}: departure_vet_datasets vets departure_familiar's guard")
        if self.departure_vet_episodes < 1:
            raise ConfigError(f"{source}: departure_vet_episodes must be >= 1")
        for vet in self.departure_vet_datasets:
            shared = self._shared_with_test(vet)
            if shared:
                raise ConfigError(
                    f"{source}: departure_vet_datasets entry {vet!r} shares "
                    f"{shared_text(shared)} with the test set (rlsched.splits)"
                )
        if self.departure_members:
            if not self.departure_thresholds:
                raise ConfigError(
                    f"{source}: departure_members needs departure_thresholds (the candidates "
                    "for the mean score; nothing is fitted to take quantiles of)"
                )
            if (self.init_model or self.departure_label_runs or self.departure_behaviour
                    or self.departure_teacher_base or self.departure_familiar):
                raise ConfigError(
                    f"{source}: departure_members joins fitted models; init_model, "
                    "departure_label_runs, departure_behaviour, departure_teacher_base and "
                    "departure_familiar belong to a fit"
                )
        if any(not math.isfinite(float(t)) for t in self.departure_thresholds):
            raise ConfigError(
                f"{source}: departure_thresholds are finite numbers (never departing is "
                "always a candidate)"
            )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(yaml.safe_dump(self.to_dict(), sort_keys=False))


#: an integer range inside a dataset name: ``{A..B}``
RANGE = re.compile(r"\{(-?\d+)\.\.(-?\d+)\}")


def expand_ranges(names: list[Any], source: str = "config") -> list[Any]:
    """``names`` with each ``{A..B}`` (integers, inclusive, ``A <= B``) spelled out, entry by
    entry and in order; an entry with several ranges gives every combination, the first range
    slowest. Entries without one (or not strings) pass unchanged."""
    out: list[Any] = []
    for name in names:
        if not isinstance(name, str) or not RANGE.search(name):
            out.append(name)
            continue
        parts = RANGE.split(name)  # text, A, B, text, A, B, ..., text
        spans = []
        for a, b in zip(parts[1::3], parts[2::3], strict=True):
            if int(a) > int(b):
                raise ConfigError(
                    f"{source}: train_datasets entry {name!r}: the range {{{a}..{b}}} is empty "
                    "(it counts up: {A..B} with A <= B)"
                )
            spans.append(range(int(a), int(b) + 1))
        texts = parts[0::3]
        for values in product(*spans):
            out.append("".join(t + str(v) for t, v in zip(texts, values, strict=False)) + texts[-1])
    return out


def _key_lines(text: str) -> dict[str, int]:
    """Top-level key -> 1-based line in the YAML ``text``."""
    node = yaml.compose(text)
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {k.value: k.start_mark.line + 1 for k, _ in node.value if isinstance(k, yaml.ScalarNode)}
