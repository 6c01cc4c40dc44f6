"""Online PPO on the experiences the scheduler plugin posts to ``/update``.

:meth:`OnlineLearner.run_once` (also run every ``interval`` seconds by :meth:`start`):

1. takes the oldest unconsumed experiences from the :class:`ExperienceStore` (at least
   ``min_experiences``, else the report is ``"skipped"`` and nothing is consumed);
2. refuses data it cannot learn from: a state width other than the active model's rejects the
   window (``"rejected"``); a single invalid experience (reward not finite or outside
   +-:data:`~rlsched.serve.service.REWARD_LIMIT`, action outside the model's, state not finite
   or beyond +-``STATE_LIMIT``) is dropped alone (marked consumed) and the step before it ends
   its trajectory, so no unrelated steps are spliced together and the good experiences of the
   window are still learned from;
3. builds the active bundle's torch module and computes GAE advantages over the experiences in
   insertion order, treating ``dones`` as episode boundaries. The state after the last
   experience is not known (the plugin sends ``(s, a, r, done)`` only), so the last step
   bootstraps with 0, as at an episode end: a small bias over the last ~1/(1 - gamma lam)
   steps of each update;
4. the plugin sends no behaviour log-probabilities and no action masks, so the "old" policy of
   the PPO ratio is the active model at the start of the update (its log-probs, computed once)
   and every log-prob and the entropy are over *all* actions (unmasked);
5. runs ``epochs`` passes of clipped PPO (advantages normalised per minibatch) + ``vf_coef``
   x value MSE - ``ent_coef`` x entropy with Adam and gradient clipping; every loss must be
   finite, else ``"rejected"``;
6. asks the gate ``gate(candidate, current)`` (default: none, i.e. finite losses suffice); if
   it passes, publishes the candidate into the registry (activated, parent = the version it
   trained from) *only if that version is still current* (compare-and-set: an operator's
   activate or rollback while it trained wins; the update is then ``"discarded"``, logged,
   and its experiences stay for the next run) and calls ``on_publish(version)``; else keeps
   the current version and reports why. With ``keep_versions`` the registry is then pruned
   (:meth:`ModelRegistry.prune`).

Experiences are marked consumed whenever they were looked at (published, rejected by the gate
or refused as data): learning from the same off-policy data again and again would not help,
and bad data must not block the queue. Only ``"skipped"`` leaves them for later.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from rlsched.envs.make import make_env
from rlsched.runtime import set_torch_threads
from rlsched.serve.bundle import PolicyBundle
from rlsched.serve.limits import REWARD_LIMIT, STATE_LIMIT
from rlsched.serve.registry import ModelRegistry, StaleVersion
from rlsched.serve.store import ExperienceStore
from rlsched.serve.store_api import ExperienceStoreAPI, RegistryAPI

log = logging.getLogger(__name__)

KUBE_ENV_ID = "rlsched/KubeScheduling-v0"


@dataclass
class GateResult:
    passed: bool
    reason: str
    candidate: float | None = None
    current: float | None = None


Gate = Callable[[PolicyBundle, PolicyBundle], GateResult]


@dataclass
class UpdateReport:
    status: str  # "published" | "rejected" | "skipped" | "discarded"
    reason: str
    version: int | None = None
    experiences: int = 0
    losses: dict[str, float] = field(default_factory=dict)
    gate: dict[str, Any] = field(default_factory=dict)
    from_version: int | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------------- gates
def evaluate_bundle(
    bundle: PolicyBundle,
    episodes: int = 5,
    seed: int = 12345,
    dataset: str | None = None,
    env_kwargs: dict[str, Any] | None = None,
) -> list[float]:
    """Episode rewards of ``bundle`` acting greedily (within ``env.action_masks()``) on
    KubeScheduling-v0 with ``num_nodes = (action_dim - 2) // 2`` (a ``2N`` state policy gets
    the observation without the pod's part), seeds ``seed, seed + 1, ...``."""
    n = (bundle.action_dim - 2) // 2
    if 2 * n + 2 != bundle.action_dim or bundle.state_dim not in (2 * n, 2 * n + 2):
        raise ValueError(
            f"bundle dims ({bundle.state_dim}, {bundle.action_dim}) are not KubeScheduling's "
            "(2N + 2 or 2N, 2N + 2)"
        )
    width = bundle.state_dim  # a 2N policy sees the node fractions only
    kwargs = dict(env_kwargs or {})
    kwargs.pop("nodes", None)
    kwargs["num_nodes"] = n
    env = make_env(KUBE_ENV_ID, dataset, **kwargs)
    try:
        base: Any = env.unwrapped  # KubeSchedulingEnv: action_masks()
        out = []
        for k in range(episodes):
            obs, _ = env.reset(seed=seed + k)
            total, done = 0.0, False
            while not done:
                a = int(bundle.act(obs[:width], base.action_masks()))
                obs, r, term, trunc, _ = env.step(a)
                total += float(r)
                done = term or trunc
            out.append(total)
        return out
    finally:
        env.close()


def kube_gate(
    episodes: int = 5, seed: int = 12345, tolerance: float = 0.0, dataset: str | None = None
) -> Gate:
    """A gate that evaluates candidate and current greedily on the same seeded
    KubeScheduling-v0 episodes; passes iff ``mean(candidate) >= mean(current) - tolerance``.
    The env kwargs are the current bundle's ``meta["env_kwargs"]`` (if it came from an
    ``rlsched train`` model), with ``num_nodes`` from the state width; ``dataset`` None is the
    env's default workload. Use seeds (and ideally a dataset) the model was not trained on."""

    def gate(candidate: PolicyBundle, current: PolicyBundle) -> GateResult:
        kw = {k: v for k, v in (current.meta.get("env_kwargs") or {}).items() if k != "dataset"}
        c = float(np.mean(evaluate_bundle(candidate, episodes, seed, dataset, kw)))
        b = float(np.mean(evaluate_bundle(current, episodes, seed, dataset, kw)))
        ok = c >= b - tolerance
        why = (
            f"mean episode reward on {episodes} held-out {KUBE_ENV_ID} episodes: candidate "
            f"{c:.4f} {'>=' if ok else '<'} current {b:.4f} - tolerance {tolerance:g}"
        )
        return GateResult(ok, why, c, b)

    return gate


def always_pass(candidate: PolicyBundle, current: PolicyBundle) -> GateResult:
    return GateResult(True, "no gate: finite losses suffice")


# ---------------------------------------------------------------------------- PPO
def gae(
    rewards: np.ndarray, values: np.ndarray, dones: np.ndarray, gamma: float, lam: float
) -> tuple[np.ndarray, np.ndarray]:
    """GAE advantages and returns over one sequence; ``dones[t]`` ends the episode after step
    ``t``; the value after the last step is 0 (see the module docstring)."""
    n = len(rewards)
    adv = np.zeros(n, dtype=np.float64)
    last = 0.0
    next_value = 0.0
    for t in range(n - 1, -1, -1):
        nonterminal = 0.0 if dones[t] else 1.0
        delta = rewards[t] + gamma * next_value * nonterminal - values[t]
        last = delta + gamma * lam * nonterminal * last
        adv[t] = last
        next_value = values[t]
    return adv, adv + values


class OnlineLearner:
    def __init__(
        self,
        registry: ModelRegistry | RegistryAPI,
        store: ExperienceStore | ExperienceStoreAPI,
        gate: Gate | None = None,
        *,
        min_experiences: int = 256,
        epochs: int = 4,
        minibatch: int = 256,
        lr: float = 3e-4,
        gamma: float = 0.99,
        lam: float = 0.95,
        clip: float = 0.2,
        vf_coef: float = 0.5,
        ent_coef: float = 0.01,
        max_grad_norm: float = 0.5,
        on_publish: Callable[[int], None] | None = None,
        seed: int = 0,
        max_experiences: int = 100_000,
        keep_versions: int | None = None,
        name: str | None = None,
    ) -> None:
        if min_experiences < 1 or epochs < 1 or minibatch < 1:
            raise ValueError("min_experiences, epochs and minibatch must be >= 1")
        self.registry = registry
        self.store = store
        self.gate = gate
        self.min_experiences = int(min_experiences)
        self.max_experiences = max(int(max_experiences), self.min_experiences)
        self.epochs = int(epochs)
        self.minibatch = int(minibatch)
        self.lr = float(lr)
        self.gamma = float(gamma)
        self.lam = float(lam)
        self.clip = float(clip)
        self.vf_coef = float(vf_coef)
        self.ent_coef = float(ent_coef)
        self.max_grad_norm = float(max_grad_norm)
        self.on_publish = on_publish
        self.seed = int(seed)
        self.keep_versions = keep_versions  # registry retention after each publish (None: off)
        self.name = name  # recorded with each outcome on PostgreSQL (default: the host name)
        self._run_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._interval: float | None = None
        self._updates = 0
        self.last_report: UpdateReport | None = None
        self.last_error: str | None = None
        self.counts = {"published": 0, "rejected": 0, "skipped": 0, "discarded": 0, "errors": 0}

    # ------------------------------------------------------------------ one update
    def run_once(self) -> UpdateReport:
        """One learning step (see the module docstring); never runs twice at once."""
        with self._run_lock:
            t0 = time.perf_counter()
            report = self._run()
            report.seconds = round(time.perf_counter() - t0, 4)
            with self._state_lock:
                self.last_report = report
                self.counts[report.status] = self.counts.get(report.status, 0) + 1
            log.info("online learner: %s (%s)", report.status, report.reason)
            return report

    def _run(self) -> UpdateReport:
        pending = self.store.count(consumed=False)
        if pending < self.min_experiences:
            return UpdateReport(
                "skipped", f"{pending} unconsumed experiences < min_experiences "
                f"{self.min_experiences}", experiences=pending,
            )  # fmt: skip
        # one run = one consumption: on PostgreSQL one transaction that claims the batches
        # (FOR UPDATE SKIP LOCKED), and commits their consumed flags with the outcome and the
        # publish (so a learner killed mid-run leaves nothing consumed); on SQLite the store
        within = getattr(self.registry, "within", None)
        with self.store.consumption(self.name) as store:
            registry = within(store) if within is not None else self.registry
            report = self._run_claimed(store, registry)
            record = getattr(store, "record_outcome", None)
            if record is not None:
                record(report.status, report.reason, report.from_version, report.version)
        if report.status != "published":
            return report
        version = report.version
        assert version is not None
        if self.keep_versions is not None:
            try:
                removed = self.registry.prune(self.keep_versions)
                if removed:
                    log.info("registry retention: removed versions %s", removed)
            except OSError:
                log.exception("registry retention failed")
        if self.on_publish is not None:
            try:
                self.on_publish(version)
            except Exception as e:
                report.reason += f"; on_publish failed: {type(e).__name__}: {e}"
                log.exception("on_publish(%s) failed", version)
        return report

    def _run_claimed(self, store: Any, registry: Any) -> UpdateReport:
        cur_version = registry.current_version()
        if cur_version is None:
            return UpdateReport("skipped", "the registry has no active version", experiences=0)
        current = registry.load(cur_version)
        ids, states, actions, rewards, dones, _ = store.unconsumed(self.max_experiences)
        n = len(ids)
        if n < self.min_experiences:  # consumed by someone else meanwhile
            return UpdateReport("skipped", f"only {n} unconsumed experiences", experiences=n)

        def refuse(reason: str) -> UpdateReport:
            store.mark_consumed(ids)
            return UpdateReport("rejected", reason, None, n, from_version=cur_version)

        if states.shape[1] != current.state_dim:
            return refuse(
                f"experiences have {states.shape[1]} state features, the active model "
                f"v{cur_version} expects {current.state_dim}"
            )
        # one bad experience must not cost the good ones: drop it alone, and end the
        # trajectory of the step before it (no splicing of unrelated steps into one)
        bad = (
            (actions < 0)
            | (actions >= current.action_dim)
            | ~np.isfinite(rewards)
            | (np.abs(np.nan_to_num(rewards, nan=np.inf)) > REWARD_LIMIT)
            | ~np.isfinite(states).all(axis=1)
            | (np.abs(np.nan_to_num(states, nan=np.inf)) > STATE_LIMIT).any(axis=1)
        )
        dropped = int(bad.sum())
        if dropped:
            if dropped == n:
                return refuse(
                    f"all {n} experiences are invalid (reward outside +-{REWARD_LIMIT:g} or "
                    "not finite, action outside the model's, or state out of range)"
                )
            before = np.flatnonzero(bad) - 1
            dones = dones.copy()
            dones[before[before >= 0]] = True
            store.mark_consumed(ids[bad])
            log.warning(
                "online learner: dropped %d invalid experiences of %d (reward outside "
                "+-%g or not finite, action or state out of range)", dropped, n, REWARD_LIMIT,
            )  # fmt: skip
            keep = ~bad
            ids, states, actions = ids[keep], states[keep], actions[keep]
            rewards, dones = rewards[keep], dones[keep]
            n = len(ids)
        note = f"; dropped {dropped} invalid experiences" if dropped else ""

        candidate, losses = self._ppo(current, states, actions, rewards, dones, cur_version)
        if candidate is None:
            store.mark_consumed(ids)
            return UpdateReport(
                "rejected", losses.pop("_reason", "non-finite loss"), None, n, losses,
                from_version=cur_version,
            )  # fmt: skip

        gate = self.gate or always_pass
        try:
            g = gate(candidate, current)
        except Exception as e:  # a broken gate must not publish
            g = GateResult(False, f"gate failed: {type(e).__name__}: {e}")
        gate_info = asdict(g)
        if not g.passed:
            store.mark_consumed(ids)
            return UpdateReport(
                "rejected", f"gate: {g.reason}; keeping v{cur_version}", None, n, losses,
                gate_info, from_version=cur_version,
            )  # fmt: skip
        try:  # compare-and-set: an operator's activate / rollback meanwhile wins
            version = registry.publish(
                candidate,
                metrics={"losses": losses, "gate": gate_info, "experiences": n},
                note=f"online PPO update of v{cur_version} on {n} experiences",
                activate=True,
                parent=cur_version,
                expect_current=cur_version,
            )
        except StaleVersion as e:
            log.warning(
                "online learner: discarded its update of v%s: the current version is now %s "
                "(changed while it trained); the experiences stay for the next run",
                cur_version, e.current,
            )  # fmt: skip
            return UpdateReport(
                "discarded", f"v{cur_version} is no longer current (now v{e.current}): update "
                "discarded, experiences kept", None, n, losses, gate_info,
                from_version=cur_version,
            )  # fmt: skip
        store.mark_consumed(ids)
        return UpdateReport(
            "published", f"v{version} from v{cur_version}: gate passed ({g.reason}){note}",
            version, n, losses, gate_info, from_version=cur_version,
        )  # fmt: skip

    def _ppo(
        self,
        current: PolicyBundle,
        states: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        dones: np.ndarray,
        cur_version: int,
    ) -> tuple[PolicyBundle | None, dict[str, Any]]:
        import torch


        set_torch_threads()
        torch.manual_seed(self.seed + self._updates)
        self._updates += 1
        module = current.to_torch()
        x = torch.from_numpy(np.ascontiguousarray(states, dtype=np.float32))
        act = torch.from_numpy(actions.astype(np.int64))
        with torch.no_grad():
            logits, values = module(x)
            old_logp = torch.distributions.Categorical(logits=logits).log_prob(act)
        v_np = values.numpy().astype(np.float64)
        adv_np, ret_np = gae(rewards, v_np, dones, self.gamma, self.lam)
        with np.errstate(over="ignore"):
            adv32, ret32 = adv_np.astype(np.float32), ret_np.astype(np.float32)
        if not (np.isfinite(adv32).all() and np.isfinite(ret32).all()):
            return None, {"_reason": f"non-finite advantages or returns (float32); keeping "
                          f"v{cur_version}"}  # fmt: skip
        adv = torch.from_numpy(adv32)
        ret = torch.from_numpy(ret32)
        opt = torch.optim.Adam(module.parameters(), lr=self.lr, eps=1e-5)
        n = len(actions)
        mb = min(self.minibatch, n)
        gen = torch.Generator().manual_seed(self.seed + self._updates)
        sums = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0}
        clipped = 0.0
        steps = 0
        for _ in range(self.epochs):
            perm = torch.randperm(n, generator=gen)
            for start in range(0, n, mb):
                idx = perm[start : start + mb]
                logits, value = module(x[idx])
                dist = torch.distributions.Categorical(logits=logits)
                logp = dist.log_prob(act[idx])
                a = adv[idx]
                if len(idx) > 1:
                    a = (a - a.mean()) / (a.std() + 1e-8)
                ratio = torch.exp(logp - old_logp[idx])
                pl = -torch.min(ratio * a, torch.clamp(ratio, 1 - self.clip, 1 + self.clip) * a)
                policy_loss = pl.mean()
                value_loss = torch.nn.functional.mse_loss(value, ret[idx])
                entropy = dist.entropy().mean()
                loss = policy_loss + self.vf_coef * value_loss - self.ent_coef * entropy
                vals = torch.stack([policy_loss, value_loss, entropy, loss]).detach().tolist()
                if not all(math.isfinite(v) for v in vals):
                    names = ("policy_loss", "value_loss", "entropy", "loss")
                    bad = [k for k, v in zip(names, vals, strict=True) if not math.isfinite(v)]
                    return None, {
                        "_reason": f"non-finite {', '.join(bad)} in epoch update {steps + 1}; "
                        f"keeping v{cur_version}",
                        **{k: float(v) for k, v in zip(names, vals, strict=True)},
                    }
                opt.zero_grad()
                loss.backward()
                gn = torch.nn.utils.clip_grad_norm_(module.parameters(), self.max_grad_norm)
                if not math.isfinite(float(gn)):
                    return None, {"_reason": f"non-finite gradient norm; keeping v{cur_version}"}
                opt.step()
                with torch.no_grad():
                    lr_ = logp - old_logp[idx]
                    sums["approx_kl"] += float(((torch.exp(lr_) - 1) - lr_).mean())
                    clipped += float(((ratio - 1).abs() > self.clip).float().mean())
                sums["policy_loss"] += vals[0]
                sums["value_loss"] += vals[1]
                sums["entropy"] += vals[2]
                steps += 1
        losses = {k: v / steps for k, v in sums.items()}
        losses["clip_fraction"] = clipped / steps
        losses["updates"] = float(steps)
        losses["mean_reward"] = float(np.mean(rewards))
        candidate = PolicyBundle.from_torch(
            module, like=current, parent_version=cur_version, source="online-ppo"
        )
        candidate.meta.pop("registry_version", None)
        weights_ok = all(
            np.isfinite(w).all() and np.isfinite(b).all()
            for w, b in candidate.actor_layers + candidate.critic_layers
        )
        if not weights_ok:
            return None, {**losses, "_reason": "non-finite weights after the update"}
        return candidate, losses

    # ------------------------------------------------------------------ background thread
    def start(self, interval: float = 5.0) -> None:
        """Run :meth:`run_once` every ``interval`` seconds in a daemon thread (or sooner after
        :meth:`nudge`); exceptions are logged and kept in :meth:`status`, never raised."""
        if not interval > 0:
            raise ValueError(f"interval must be > 0 seconds, got {interval}")
        if self._thread is not None and self._thread.is_alive():
            return
        self._interval = float(interval)
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._loop, name="rlsched-online-learner", daemon=True
        )
        self._thread.start()

    def _loop(self) -> None:
        assert self._interval is not None
        while not self._stop.is_set():
            try:
                self.run_once()
            except Exception as e:
                with self._state_lock:
                    self.counts["errors"] += 1
                    self.last_error = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
                log.exception("online learner update failed")
            self._wake.wait(self._interval)
            self._wake.clear()

    def nudge(self) -> None:
        """Wake the background thread now if enough experiences are waiting (cheap)."""
        if self._thread is not None and self.store.count(consumed=False) >= self.min_experiences:
            self._wake.set()

    def stop(self, timeout: float | None = 30.0) -> None:
        self._stop.set()
        self._wake.set()
        t = self._thread
        if t is not None:
            t.join(timeout)
        self._thread = None

    def status(self) -> dict[str, Any]:
        with self._state_lock:
            return {
                "running": self._thread is not None and self._thread.is_alive(),
                "interval": self._interval,
                "min_experiences": self.min_experiences,
                "last_report": None if self.last_report is None else self.last_report.to_dict(),
                "last_error": self.last_error,
                "published": self.counts["published"],
                "rejected": self.counts["rejected"],
                "skipped": self.counts["skipped"],
                "errors": self.counts["errors"],
            }
