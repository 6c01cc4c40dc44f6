"""Imitation warm start: behaviour-clone a heuristic into an actor-critic before RL.

A policy gradient run that starts from a uniform policy spends most of its budget finding what
a good heuristic already knows (on WorkflowOffloading-v0 a random schedule is ~8x the optimum,
and PPO from scratch stays far from HEFT). So, as AlphaStar and many scheduling papers do, the
actor is first fitted to a teacher's decisions (cross-entropy over the valid actions) and the
critic to the teacher's discounted returns; RL then improves on the teacher, and the periodic
held-out evaluation keeps whichever model is best, the warm-started one included.

Behaviour cloning alone drifts: the clone's few mistakes lead it to states the teacher never
visited. DAgger (Ross et al., 2011) fixes that: :func:`collect` can run the *learner* while
recording the teacher's choice in every state it reaches, and the aggregated data is fitted
again (``dagger_rounds``).

The teacher is any policy name :func:`rlsched.policies.registry.make_policy` knows (e.g.
``heft``, ``greedy_eft``, ``mdp_rollout``, ``first_fit``, or the search teacher ``rollout``).
Expert iteration (``TrainConfig.expert_iterations``, :mod:`rlsched.train.trainer`) repeats
DAgger with ``rollout:learned:MODEL`` as the teacher: rollouts over the student itself.
"""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
import numpy as np
import torch
from tqdm.auto import tqdm

from rlsched.errors import ConfigError
from rlsched.policies.base import Policy
from rlsched.policies.registry import make_policy


@dataclass
class Demonstrations:
    """Teacher decisions: observations (Dict of stacked arrays or one array), masks, actions,
    discounted returns from each step, and the teacher's mean episode return."""

    obs: dict[str, np.ndarray] | np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    episodes: int
    mean_episode_return: float
    #: DAgger: the share of states where the behaviour policy did what the teacher labelled
    #: (None: the teacher acted; not carried through ``+``)
    agreement: float | None = None
    #: DAgger: per label, whether the teacher changed the behaviour policy's decision (None:
    #: the teacher acted, so it changed nothing); ``pretrain``'s ``changed_weight`` reads it
    changed: np.ndarray | None = None
    #: per label and action, the teacher's value of taking that action there (higher is
    #: better; NaN where it valued none: :meth:`Policy.action_values`), or None when the
    #: teacher gave no values; ``pretrain(target="values")`` fits them
    values: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.actions.shape[0])

    def save(self, path: str | Path) -> None:
        """Write every array to one ``.npz`` (a checkpoint of expert iteration's labels)."""
        obs = self.obs if isinstance(self.obs, dict) else {"": self.obs}
        arrays: dict[str, Any] = {f"obs/{k}": v for k, v in obs.items()}
        arrays.update(
            masks=self.masks,
            actions=self.actions,
            returns=self.returns,
            changed=self._changed(),
            **({} if self.values is None else {"values": self.values}),
            info=np.array([self.episodes, self.mean_episode_return], dtype=np.float64),
        )
        np.savez_compressed(path, **arrays)

    @classmethod
    def load(cls, path: str | Path) -> Demonstrations:
        with np.load(path) as z:
            obs = {k[4:]: z[k] for k in z.files if k.startswith("obs/")}
            info = z["info"]
            changed = z["changed"] if "changed" in z.files else None  # older checkpoints
            values = z["values"] if "values" in z.files else None
            return cls(
                obs[""] if set(obs) == {""} else obs,
                z["masks"], z["actions"], z["returns"], int(info[0]), float(info[1]),
                changed=changed, values=values,
            )  # fmt: skip

    def _changed(self) -> np.ndarray:
        return np.zeros(len(self), bool) if self.changed is None else self.changed

    def _values(self) -> np.ndarray:
        return np.full(self.masks.shape, np.nan, np.float32) if self.values is None else self.values

    def __add__(self, other: Demonstrations) -> Demonstrations:
        return Demonstrations.concat([self, other])

    @classmethod
    def concat(cls, parts: Sequence[Demonstrations]) -> Demonstrations:
        """The parts' labels in order, copied once (adding them one by one copies the growing
        total again for each part)."""
        if not parts:
            raise ValueError("no demonstrations to concatenate")
        first = parts[0]
        if isinstance(first.obs, dict):
            keys = list(first.obs)
            obs: Any = {k: np.concatenate([p.obs[k] for p in parts]) for k in keys}
        else:
            obs = np.concatenate([p.obs for p in parts])
        n = sum(p.episodes for p in parts)
        values = None
        if any(p.values is not None for p in parts):
            values = np.concatenate([p._values() for p in parts])
        mean = sum(p.mean_episode_return * p.episodes for p in parts) / max(n, 1)
        return cls(
            obs,
            np.concatenate([p.masks for p in parts]),
            np.concatenate([p.actions for p in parts]),
            np.concatenate([p.returns for p in parts]),
            n,
            float(mean),
            changed=np.concatenate([p._changed() for p in parts]),
            values=values,
        )


def refuse_other_labels(record: Path, made_by: dict[str, Any], labels: Path) -> None:
    """Refuse the stored ``labels`` where ``record`` (the JSON of the config fields that made
    them) differs from ``made_by`` (this config's): a teacher's labels cost far more than a fit,
    so runs reuse them, and reusing another config's would change a run without a word. The
    error names each field that differs (a missing record differs in all)."""
    theirs = json.loads(record.read_text()) if record.is_file() else {}
    mine = json.loads(json.dumps(made_by))  # as JSON reads it back: lists, not tuples
    differ = [k for k in mine if theirs.get(k) != mine[k]]
    if differ:
        raise ConfigError(
            f"{labels}: labels collected with other {', '.join(differ)} than this config's "
            f"({'; '.join(f'{k}: {theirs.get(k)!r}' for k in differ)}); move them away or "
            "match the config"
        )


def _unwrapped(env: gym.Env) -> Any:
    """The rlsched env under the wrappers (it has ``action_masks()``)."""
    return env.unwrapped


#: What every worker of a parallel :func:`collect` labels with: set in the parent just
#: before the pool forks, so the env factories, the teacher and the learner (closures, torch
#: models) reach the workers without being pickled.
_SPEC: tuple[Any, ...] | None = None
#: A worker's own env and teacher per env factory, each made on its first episode there.
_WORKER: dict[int, tuple[gym.Env, Policy]] = {}


@dataclass
class _Episode:
    """One labelled episode (what a worker sends back)."""

    obs: list[Any]
    masks: list[np.ndarray]
    actions: list[int]
    returns: list[float]
    episode_return: float
    changed: list[bool]
    #: the teacher's action values per state (None where it gave none)
    values: list[dict[int, float] | None]


def _play(
    env: gym.Env,
    pol: Policy,
    ep_seed: int,
    gamma: float,
    behaviour: Callable[[Any, np.ndarray], int] | None,
) -> _Episode:
    """One episode from ``reset(seed=ep_seed)``, every state labelled by ``pol``."""
    pol.reset(seed=ep_seed)
    obs, _ = env.reset(seed=ep_seed)
    out = _Episode([], [], [], [], 0.0, [], [])
    rewards: list[float] = []
    done = False
    while not done:
        mask = np.asarray(_unwrapped(env).action_masks(), dtype=np.bool_)
        a = int(pol.act(obs, mask))
        out.obs.append(obs)
        out.masks.append(mask)
        out.actions.append(a)
        out.values.append(pol.action_values())
        if behaviour is not None:
            a = int(behaviour(obs, mask))
            out.changed.append(a != out.actions[-1])
            pol.taken(a)  # a teacher that follows its own plan (the oracle) must drop it
        obs, r, term, trunc, _ = env.step(a)
        rewards.append(float(r))
        done = term or trunc
    g, back = 0.0, []
    for r in reversed(rewards):
        g = r + gamma * g
        back.append(g)
    out.returns = back[::-1]
    out.episode_return = float(sum(rewards))
    return out


def _make_teacher(
    teacher: str | Callable[[gym.Env, int], Policy], env: gym.Env, seed: int
) -> Policy:
    return make_policy(teacher, env, seed=seed) if isinstance(teacher, str) else teacher(env, seed)


def _worker_episode(job: tuple[int, int]) -> _Episode:
    """A pool worker's episode ``(env factory index, seed)``: its env and teacher there are
    made once, from :data:`_SPEC`."""
    assert _SPEC is not None
    makers, teacher, seed, gamma, behaviour = _SPEC
    which, ep_seed = job
    if which not in _WORKER:
        torch.set_num_threads(1)  # the workers share the cores: one thread each
        env = makers[which]()
        _WORKER[which] = (env, _make_teacher(teacher, env, seed))
    env, pol = _WORKER[which]
    return _play(env, pol, ep_seed, gamma, behaviour)


def _parallel(spec: tuple[Any, ...], jobs: list[tuple[int, int]], workers: int) -> Any:
    """``_worker_episode`` over ``jobs`` in ``workers`` forked processes, in order."""
    global _SPEC
    _SPEC = spec
    try:
        pool = multiprocessing.get_context("fork").Pool(workers)
        try:
            yield from pool.imap(_worker_episode, jobs)
        finally:
            pool.terminate()
    finally:
        _SPEC = None


def collect(
    make_env: Callable[[], gym.Env] | Sequence[Callable[[], gym.Env]],
    teacher: str | Callable[[gym.Env, int], Policy],
    episodes: int,
    gamma: float,
    seed: int = 0,
    progress: bool = True,
    behaviour: Callable[[Any, np.ndarray], int] | None = None,
    workers: int = 1,
) -> Demonstrations:
    """Run ``teacher`` for ``episodes`` episodes (seeds ``seed``, ``seed + 1``, ...) and record
    its decisions. With ``behaviour(obs, mask) -> action`` (DAgger), that policy acts and the
    teacher only labels the states it reaches; returns are then the behaviour's. ``teacher``
    is a policy name or ``factory(env, seed) -> Policy``.

    ``workers > 1`` plays the episodes in that many forked processes (a search teacher such as
    ``mdp_rollout`` takes a minute or more per episode). Each episode depends on its seed alone
    (``reset(seed=...)`` of the env and the teacher), so the labels are the same, in the same
    order, whatever the number of workers.

    ``make_env`` may be a sequence of env factories (e.g. one per training workload): episode
    ``k`` then plays in the ``k``-th env, cyclically, with a teacher made for that env."""
    makers = list(make_env) if isinstance(make_env, Sequence) else [make_env]
    jobs = [(ep % len(makers), seed + ep) for ep in range(episodes)]
    name = teacher if isinstance(teacher, str) else getattr(teacher, "__name__", "teacher")
    made: dict[int, tuple[gym.Env, Policy]] = {}
    if workers > 1 and episodes > 1 and "fork" in multiprocessing.get_all_start_methods():
        played: Any = _parallel(
            (makers, teacher, seed, gamma, behaviour), jobs, min(workers, episodes)
        )
    else:

        def serial(which: int, ep_seed: int) -> _Episode:
            if which not in made:
                env = makers[which]()
                made[which] = (env, _make_teacher(teacher, env, seed))
            return _play(*made[which], ep_seed, gamma, behaviour)

        played = (serial(w, s) for w, s in jobs)
    desc = f"imitation: {name}" + (" labels the learner" if behaviour else "")
    eps = list(tqdm(played, total=episodes, desc=desc, disable=not progress))
    for env, _ in made.values():
        env.close()
    obs_l = [o for e in eps for o in e.obs]
    flags = None if behaviour is None else np.asarray(
        [c for e in eps for c in e.changed], dtype=bool)  # fmt: skip
    masks = np.stack([m for e in eps for m in e.masks])
    values = None
    labelled = [v for e in eps for v in e.values]
    if any(v for v in labelled):
        values = np.full(masks.shape, np.nan, np.float32)
        for i, v in enumerate(labelled):
            for a, q in (v or {}).items():
                values[i, a] = q
    if isinstance(obs_l[0], dict):
        stacked: Any = {k: np.stack([o[k] for o in obs_l]) for k in obs_l[0]}
    else:
        stacked = np.stack(obs_l)
    return Demonstrations(
        stacked,
        masks,
        np.asarray([a for e in eps for a in e.actions], dtype=np.int64),
        np.asarray([g for e in eps for g in e.returns], dtype=np.float32),
        episodes,
        float(np.mean([e.episode_return for e in eps])),
        None if flags is None else float(np.mean(~flags)),  # the share it agreed with
        flags,
        values,
    )


def pretrain(
    policy: Any,
    demos: Demonstrations,
    epochs: int,
    batch_size: int = 256,
    lr: float = 1e-3,
    value_coef: float = 0.5,
    seed: int = 0,
    progress: bool = True,
    changed_weight: float = 1.0,
    target: Literal["actions", "values"] = "actions",
    values_prior: float = 0.0,
    values_loss: Literal["mse", "kl"] = "mse",
) -> dict[str, float]:
    """Fit an SB3 actor-critic ``policy`` to ``demos``: masked cross-entropy on the actions
    (the labels where the teacher changed the behaviour policy's decision, ``demos.changed``,
    weighted ``changed_weight`` times the others) plus ``value_coef`` x MSE of the value on the
    returns. Returns the last epoch's action accuracy, its accuracy on the changed labels (if
    any), losses and the number of samples.

    ``target="values"`` fits the logits to the teacher's action values instead
    (``demos.values``, e.g. the oracle's rollout of each candidate over a base policy: that
    policy's Q-values): in every state with two or more valued actions, the logits of those
    actions, less their mean, regress on the values less theirs, scaled by one factor for all
    states (``values_scale``: the spread of the policy's own centred logits there over that of
    the centred values, so that the fit reorders the actions instead of first rescaling every
    logit, which a warm-started network's sharp logits would need). Unlike a
    label, a value says how much a choice matters: states where every candidate is about as
    good weigh little, and a teacher's choice among near-equal noisy estimates is not
    imitated as if it were sure. ``values_prior`` adds that many times the policy's own
    centred logits at the start of this fit to the targets: a soft policy-improvement step
    (the policy's preferences shifted by the scaled values), which keeps what the policy
    prefers where the values do not tell the actions apart (0: the values alone).
    ``best_accuracy`` is then the share of those states where the highest logit is a
    highest-valued action (ties count).

    ``values_loss`` says how the logits meet those targets: ``"mse"`` regresses every valued
    logit on its target, so an action valued far below the rest (a server whose rollout ends
    much later) weighs most although it is never chosen; ``"kl"`` fits the policy's softmax
    over the valued actions to the softmax of the targets (the improved policy
    ``pi_new ~ pi_old^prior * exp(scale * Q)``, as MPO's and AWR's improvement steps), where
    actions that neither policy would take weigh next to nothing."""
    if target not in ("actions", "values"):
        raise ValueError(f"target must be 'actions' or 'values', not {target!r}")
    if values_loss not in ("mse", "kl"):
        raise ValueError(f"values_loss must be 'mse' or 'kl', not {values_loss!r}")
    if target == "values" and demos.values is None:
        raise ValueError("target='values' needs demonstrations with the teacher's values")
    gen = torch.Generator().manual_seed(seed)
    dev = getattr(policy, "device", torch.device("cpu"))  # the policy's (an SB3 policy's)
    obs: Any
    if isinstance(demos.obs, dict):
        obs = {k: torch.as_tensor(v, device=dev) for k, v in demos.obs.items()}
    else:
        obs = torch.as_tensor(demos.obs, device=dev)
    invalid = torch.as_tensor(~demos.masks, device=dev)
    acts = torch.as_tensor(demos.actions, device=dev)
    rets = torch.as_tensor(demos.returns, device=dev)
    changed = torch.as_tensor(demos._changed(), device=dev)
    weights = 1.0 + (float(changed_weight) - 1.0) * changed.float()
    scale = 1.0
    if target == "values":
        centred, valued, scale = _centred_values(demos)
        own, spread = _own_logits(policy, obs, valued, batch_size)
        scale *= spread
        q_best = torch.as_tensor(np.where(valued, centred, -np.inf), device=dev)
        q_t = torch.as_tensor(centred * scale, device=dev) + float(values_prior) * own.to(dev)
        valued_t = torch.as_tensor(valued, device=dev)
        n_valued = int(valued.any(1).sum())
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    n = len(demos)
    stats: dict[str, float] = {}
    policy.set_training_mode(True)
    for _ in tqdm(range(epochs), desc="imitation: fit", disable=not progress):
        perm = torch.randperm(n, generator=gen).to(dev)  # the same order on any device
        tot_pi = tot_v = hits = hits_changed = hits_best = 0.0
        for i in range(0, n, batch_size):
            idx = perm[i : i + batch_size]
            ob = {k: v[idx] for k, v in obs.items()} if isinstance(obs, dict) else obs[idx]
            latent_pi, latent_vf = _latents(policy, ob)
            raw = policy.action_net(latent_pi)
            logits = raw.masked_fill(invalid[idx], -1e8)
            values = policy.value_net(latent_vf).squeeze(-1)
            if target == "values" and values_loss == "kl":
                on_b = valued_t[idx]
                # unvalued entries (whole rows of them too) come out NaN here; the masked_fill
                # zeroes them and their gradient (a test fits such states)
                log_p = torch.log_softmax(q_t[idx].masked_fill(~on_b, -torch.inf), 1)
                log_q = torch.log_softmax(raw.masked_fill(~on_b, -torch.inf), 1)
                kl = (log_p.exp() * (log_p - log_q)).masked_fill(~on_b, 0.0).sum(1)
                many = (on_b.sum(1) >= 2).float()  # one valued action says nothing
                loss_pi = (kl * many).sum() / many.sum().clamp(min=1.0)
            elif target == "values":
                on = valued_t[idx].float()
                err = (_centred(raw, on) - q_t[idx]) ** 2 * on
                loss_pi = err.sum() / on.sum().clamp(min=1.0)
            else:
                ce = torch.nn.functional.cross_entropy(logits, acts[idx], reduction="none")
                w = weights[idx]
                loss_pi = (ce * w).sum() / w.sum()
            if target == "values":
                top = raw.masked_fill(~valued_t[idx], -torch.inf).argmax(1, keepdim=True)
                qb = q_best[idx]
                on_best = qb.gather(1, top).squeeze(1) >= qb.max(1).values
                hits_best += float((on_best & valued_t[idx].any(1)).sum())
            loss_v = torch.nn.functional.mse_loss(values, rets[idx])
            opt.zero_grad()
            (loss_pi + value_coef * loss_v).backward()
            opt.step()
            k = len(idx)
            tot_pi += loss_pi.item() * k
            tot_v += loss_v.item() * k
            hit = logits.argmax(1) == acts[idx]
            hits += float(hit.sum())
            hits_changed += float((hit & changed[idx]).sum())
        n_changed = int(changed.sum())
        stats = {"accuracy": hits / n, "action_loss": tot_pi / n, "value_loss": tot_v / n}
        if n_changed:  # DAgger labels where the teacher overruled the learner
            stats["changed_accuracy"] = hits_changed / n_changed
        if target == "values":
            stats.update(best_accuracy=hits_best / max(n_valued, 1), valued_states=float(
                n_valued), values_scale=scale, values_prior=float(values_prior))  # fmt: skip
    policy.set_training_mode(False)
    return {**stats, "samples": float(n), "teacher_mean_return": demos.mean_episode_return}


def _latents(policy: Any, ob: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """The actor's and the critic's latent features of an SB3 actor-critic on ``ob``."""
    features = policy.extract_features(ob)
    if isinstance(features, tuple):  # separate actor / critic extractors
        return (policy.mlp_extractor.forward_actor(features[0]),
                policy.mlp_extractor.forward_critic(features[1]))  # fmt: skip
    latent_pi, latent_vf = policy.mlp_extractor(features)
    return latent_pi, latent_vf


def _centred(x: torch.Tensor, on: torch.Tensor) -> torch.Tensor:
    """``x`` less each row's mean over the entries where ``on`` (a 0/1 mask) is 1."""
    return x - ((x * on).sum(1) / on.sum(1).clamp(min=1.0)).unsqueeze(1)


@torch.no_grad()
def _own_logits(
    policy: Any, obs: Any, valued: np.ndarray, batch_size: int
) -> tuple[torch.Tensor, float]:
    """``policy``'s logits less each state's mean over its valued actions (0 elsewhere), and
    their standard deviation over the valued actions of every state (1 when there are none
    or all agree)."""
    on_all = torch.as_tensor(valued)
    if not valued.any():
        return torch.zeros(valued.shape), 1.0
    policy.set_training_mode(False)
    parts = []
    for i in range(0, len(valued), batch_size):
        sl = slice(i, i + batch_size)
        ob = {k: v[sl] for k, v in obs.items()} if isinstance(obs, dict) else obs[sl]
        raw = policy.action_net(_latents(policy, ob)[0]).cpu()
        on = on_all[sl].float()
        parts.append(_centred(raw, on) * on)
    own = torch.cat(parts)
    spread = float(own[on_all].std())
    return own, spread if spread > 0 else 1.0


def _centred_values(demos: Demonstrations) -> tuple[np.ndarray, np.ndarray, float]:
    """The teacher's values less each state's mean over its valued actions (0 elsewhere),
    which actions are valued (states with fewer than two count as none: nothing to compare),
    and the factor that gives the centred values unit standard deviation."""
    q = demos._values().astype(np.float64)
    valued = np.isfinite(q) & demos.masks
    valued &= (valued.sum(1) >= 2)[:, None]
    q = np.where(valued, q, 0.0)
    mean = q.sum(1) / np.maximum(valued.sum(1), 1)
    centred = np.where(valued, q - mean[:, None], 0.0)
    spread = float(centred[valued].std()) if valued.any() else 0.0
    return centred.astype(np.float32), valued, 1.0 / spread if spread > 0 else 1.0
