"""Start states and the scaling manager of the LLM serving simulator.

:class:`StartState` says what the cluster looks like at time 0 and what a scale-up creates: per
pool tag (``prompt``, ``token``, optionally ``mixed``) the number of instances, the server SKU,
the tensor parallelism and the instance's batching limits; plus cluster-wide settings (model,
KV link). It is read from YAML (:meth:`StartState.from_yaml`); the shipped default is
``rlsched/core/llm/start_states/default.yaml``. splitwise-sim's start-state files (top-level
``prompt:`` / ``token:`` with ``num_instances``, ``instance_names``, ``tensor_parallelism``,
``max_batch_size``, ...) are read too.

:class:`ScalingManager` adds and removes whole servers, one instance each:

- ``scale_up_full(instance_cfg, parallelism, tag, server_sku=None)`` creates a server (billed
  from now) and an instance in ``SCALING_UP``; it becomes ``ACTIVE`` (routable) after
  ``scale_up_delay`` seconds. Blocked (returns ``None``) when ``max_total_instances`` instances
  exist (every state but ``REMOVED`` counts).
- ``scale_down_full(instance)`` puts an ``ACTIVE`` instance in ``DRAINING``: the router sends it
  nothing new, work already routed to it finishes; every ``drain_check_interval`` seconds a
  draining instance without work is ``REMOVED`` together with its server. Blocked (returns
  ``False``) when the pool would keep fewer than ``min_instances_per_pool`` active instances, or
  the instance is not active. An instance still ``SCALING_UP`` is cancelled at once (removed with
  its server; it never had work).

Blocked actions never raise; they log an ``[Action Blocked]`` line and count in
``blocked_actions``. Log lines go to the ``rlsched.core.llm.scaling`` logger at INFO.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from importlib.resources import files
from pathlib import Path
from typing import Any, Protocol

from rlsched.core.llm.cluster import (
    TAGS,
    Instance,
    InstanceConfig,
    InstanceState,
    Server,
    get_model,
    get_sku,
)
from rlsched.errors import ConfigError

log = logging.getLogger("rlsched.core.llm.scaling")

_ACTIVE, _SCALING_UP, _DRAINING = (
    InstanceState.ACTIVE, InstanceState.SCALING_UP, InstanceState.DRAINING)  # fmt: skip


@dataclass(frozen=True)
class PoolSpec:
    """One pool of the start state."""

    tag: str
    num_instances: int
    server_sku: str
    parallelism: int
    instance: InstanceConfig = field(default_factory=InstanceConfig)


@dataclass(frozen=True)
class StartState:
    """The initial cluster and the template of every scale-up (see the module docstring)."""

    pools: Mapping[str, PoolSpec]
    model: str = "llama2-70b"
    kv_heads_ratio: float = 1.0
    """KV heads / attention heads (1: the multi-head formula; 0.125: llama2-70b's GQA)."""
    kv_link_bandwidth_gib_s: float = 200.0
    """Prompt -> token instance KV transfer bandwidth per transfer, GiB/s (splitwise-sim's
    mixed-pool default); transfers do not share it."""
    kv_link_latency_s: float = 0.0
    swap_bandwidth_gib_s: float = 64.0
    """Host <-> GPU bandwidth of an instance for swapping a preempted request's KV (an
    assumption: about 8 GPUs x PCIe 4.0 at a third of their peak)."""
    prompt_max_pending_tokens: int = 8192
    """The router skips a prompt instance whose queue is non-empty and would exceed this many
    pending prompt tokens, when a mixed instance can take the prefill (splitwise-sim's
    ``prompt_max_pending_batch_tokens``)."""
    name: str = ""

    def __post_init__(self) -> None:
        if not self.pools:
            raise ConfigError("start state: no pools")
        for tag, pool in self.pools.items():
            if tag not in TAGS:
                raise ConfigError(f"start state: unknown pool tag {tag!r}; use {', '.join(TAGS)}")
            if pool.tag != tag:
                raise ConfigError(f"start state: pool {tag!r} has tag {pool.tag!r}")
            sku = get_sku(pool.server_sku)
            if not isinstance(pool.num_instances, int) or pool.num_instances < 0:
                raise ConfigError(f"start state: {tag}.num_instances must be an integer >= 0")
            if not isinstance(pool.parallelism, int) or not 1 <= pool.parallelism <= sku.gpus:
                raise ConfigError(
                    f"start state: {tag}.parallelism must be 1..{sku.gpus} (GPUs of "
                    f"{sku.name}), got {pool.parallelism!r}"
                )
        get_model(self.model, self.kv_heads_ratio)
        for k in ("kv_link_bandwidth_gib_s", "swap_bandwidth_gib_s"):
            if not getattr(self, k) > 0:
                raise ConfigError(f"start state: {k} must be > 0")
        if self.kv_link_latency_s < 0:
            raise ConfigError("start state: kv_link_latency_s must be >= 0")
        has_prefill = any(t in self.pools for t in ("prompt", "mixed"))
        has_decode = any(t in self.pools for t in ("token", "mixed"))
        if not (has_prefill and has_decode):
            raise ConfigError(
                "start state: needs a prompt and a token pool, or a mixed pool "
                f"(has {', '.join(self.pools)})"
            )

    # ------------------------------------------------------------------ reading
    @staticmethod
    def from_yaml(path: str | Path) -> StartState:
        import yaml

        p = Path(path).expanduser()
        try:
            data = yaml.safe_load(p.read_text())
        except OSError as e:
            raise ConfigError(f"{p}: cannot read start state: {e}") from None
        except yaml.YAMLError as e:
            raise ConfigError(f"{p}: invalid YAML: {e}") from None
        try:
            return StartState.from_dict(data or {}, name=p.stem)
        except ConfigError as e:
            raise ConfigError(f"{p}: {e}") from None

    @staticmethod
    def from_dict(d: Mapping[str, Any], name: str = "") -> StartState:
        if not isinstance(d, Mapping):
            raise ConfigError("start state must be a mapping")
        d = dict(d)
        if "pools" not in d and any(t in d for t in TAGS):  # splitwise-sim's layout
            d = _from_splitwise(d)
        pools_raw = d.pop("pools", None)
        if not isinstance(pools_raw, Mapping) or not pools_raw:
            raise ConfigError("start state needs 'pools' (tag -> pool settings)")
        pools = {}
        for tag, raw in pools_raw.items():
            if not isinstance(raw, Mapping):
                raise ConfigError(f"pool {tag!r} must be a mapping")
            raw = dict(raw)
            unknown = set(raw) - {"num_instances", "server_sku", "parallelism", "instance"}
            if unknown:
                raise ConfigError(f"pool {tag!r}: unknown key(s) {sorted(unknown)}")
            try:
                pools[tag] = PoolSpec(
                    tag=tag,
                    num_instances=raw.get("num_instances", 0),
                    server_sku=get_sku(raw.get("server_sku", "dgx-a100")).name,
                    parallelism=raw.get("parallelism", 8),
                    instance=InstanceConfig.from_dict(raw.get("instance")),
                )
            except ConfigError as e:
                raise ConfigError(f"pool {tag!r}: {e}") from None
        known = {f for f in StartState.__dataclass_fields__ if f != "pools"}
        unknown = set(d) - known
        if unknown:
            raise ConfigError(
                f"unknown start state key(s) {sorted(unknown)}; known: {sorted(known)}"
            )
        d.setdefault("name", name)
        try:
            return StartState(pools=pools, **d)
        except TypeError as e:
            raise ConfigError(f"start state: {e}") from None

    @staticmethod
    def default() -> StartState:
        """The shipped ``start_states/default.yaml``."""
        return StartState.from_yaml(
            Path(str(files("rlsched.core.llm").joinpath("start_states", "default.yaml")))
        )

    @staticmethod
    def coerce(value: StartState | str | Path | Mapping[str, Any] | None) -> StartState:
        """A start state from itself, a YAML path, a dict, or ``None`` (the default)."""
        if value is None:
            return StartState.default()
        if isinstance(value, StartState):
            return value
        if isinstance(value, Mapping):
            return StartState.from_dict(value)
        return StartState.from_yaml(value)

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "pools"}
        out["pools"] = {
            t: {
                "num_instances": p.num_instances,
                "server_sku": p.server_sku,
                "parallelism": p.parallelism,
                "instance": asdict(p.instance),
            }
            for t, p in self.pools.items()
        }
        return out

    # ------------------------------------------------------------------ queries
    @property
    def tags(self) -> tuple[str, ...]:
        return tuple(self.pools)

    def pool(self, tag: str) -> PoolSpec:
        try:
            return self.pools[tag]
        except KeyError:
            raise ConfigError(
                f"no {tag!r} pool in the start state (pools: {', '.join(self.pools)})"
            ) from None

    def get_instance_config(self, tag: str) -> InstanceConfig:
        return self.pool(tag).instance

    def get_parallelism(self, tag: str) -> int:
        return self.pool(tag).parallelism

    def get_server_sku(self, tag: str) -> str:
        return self.pool(tag).server_sku

    def with_pool(self, tag: str, **changes: Any) -> StartState:
        """A copy with one pool changed (``num_instances=3``, ``instance=InstanceConfig(...)``),
        or added when missing (defaults: 0 instances, dgx-a100, TP 8)."""
        pools = dict(self.pools)
        base = pools.get(tag, PoolSpec(tag, 0, "dgx-a100", 8))
        pools[tag] = replace(base, **changes)
        return replace(self, pools=pools)


def _from_splitwise(d: dict[str, Any]) -> dict[str, Any]:
    """splitwise-sim start state (``prompt: {num_instances, instance_names, ...}``) -> ours."""
    out: dict[str, Any] = {"pools": {}}
    for tag in TAGS:
        raw = d.pop(tag, None)
        if raw is None:
            continue
        raw = dict(raw)
        names = raw.pop("instance_names", ["dgx-a100"])
        inst = {
            k: raw.pop(k)
            for k in ("max_batch_size", "max_batch_tokens", "max_preemptions")
            if k in raw
        }
        out["pools"][tag] = {
            "num_instances": raw.pop("num_instances", 0),
            "server_sku": names[0] if names else "dgx-a100",
            "parallelism": raw.pop("tensor_parallelism", 8),
            "instance": inst,
        }
    for k in ("state_type", "application_id", "split_type"):
        d.pop(k, None)
    out.update(d)
    return out


class ClusterControl(Protocol):
    """What the :class:`ScalingManager` reads and calls on the simulator (implemented by
    :class:`~rlsched.core.llm.simulator.LLMSimulator`): the clock, the start state, the
    instances and servers, and four changes to the cluster."""

    now: float
    start_state: StartState
    instances: list[Instance]
    all_servers: list[Server]

    def create_instance(
        self,
        tag: str,
        config: InstanceConfig,
        parallelism: int,
        server_sku: str,
        *,
        active: bool,
    ) -> Instance:
        """A new server with one instance of pool ``tag`` (ACTIVE when ``active``, else
        SCALING_UP until an activation is scheduled and due)."""
        ...

    def set_state(self, inst: Instance, state: InstanceState) -> None:
        """Move ``inst`` to ``state`` (routing, removal and bookkeeping follow)."""
        ...

    def schedule_activation(self, inst: Instance, t: float) -> None:
        """Make ``inst`` ACTIVE at time ``t`` (then :meth:`ScalingManager.on_activated`)."""
        ...

    def schedule_drain_check(self, t: float) -> None:
        """Call :meth:`ScalingManager.on_drain_check` at time ``t``."""
        ...


class ScalingManager:
    """Adds and removes servers with one instance each (see the module docstring)."""

    def __init__(
        self,
        sim: ClusterControl,
        scale_up_delay: float = 10.0,
        drain_check_interval: float = 1.0,
        min_instances_per_pool: int = 1,
        max_total_instances: int = 100,
    ) -> None:
        if scale_up_delay < 0 or drain_check_interval <= 0:
            raise ConfigError("scale_up_delay must be >= 0 and drain_check_interval > 0")
        if min_instances_per_pool < 0 or max_total_instances < 1:
            raise ConfigError("min_instances_per_pool must be >= 0, max_total_instances >= 1")
        self.sim = sim
        self.scale_up_delay = float(scale_up_delay)
        self.drain_check_interval = float(drain_check_interval)
        self.min_instances_per_pool = int(min_instances_per_pool)
        self.max_total_instances = int(max_total_instances)
        self.scale_up_actions = 0
        self.scale_down_actions = 0
        self.blocked_actions = 0
        self._drain_check_pending = False

    # ------------------------------------------------------------------ views
    @property
    def start_state(self) -> StartState:
        return self.sim.start_state

    @property
    def instances(self) -> list[Instance]:
        """Every instance not removed, in creation order."""
        return self.sim.instances

    @property
    def servers(self) -> list[Server]:
        """Every server not removed."""
        return [s for s in self.sim.all_servers if s.removed is None]

    def get_active_instances(
        self, instances: Iterable[Instance] | None = None, tag: str | None = None
    ) -> list[Instance]:
        """The ``ACTIVE`` ones of ``instances`` (default: all), optionally of one pool."""
        pool = self.sim.instances if instances is None else instances
        return [
            i for i in pool if i.state is InstanceState.ACTIVE and (tag is None or i.tag == tag)
        ]

    def get_instances(
        self, tag: str | None = None, state: InstanceState | None = None
    ) -> list[Instance]:
        return [
            i
            for i in self.sim.instances
            if (tag is None or i.tag == tag) and (state is None or i.state is state)
        ]

    def get_status_summary(self) -> dict[str, int]:
        counts = dict.fromkeys(InstanceState, 0)
        for i in self.sim.instances:
            counts[i.state] += 1
        return {
            "active_instances": counts[InstanceState.ACTIVE],
            "scaling_up_instances": counts[InstanceState.SCALING_UP],
            "draining_instances": counts[InstanceState.DRAINING],
            "total_servers": len(self.servers),
            "total_instances": len(self.sim.instances),
        }

    def pool_sizes(self, tag: str) -> dict[str, int]:
        """``{active, scaling_up, draining}`` of one pool."""
        active = up = draining = 0  # identity tests: an enum's value and hash are Python calls
        for i in self.sim.instances:
            if i.tag == tag:
                st = i.state
                if st is _ACTIVE:
                    active += 1
                elif st is _SCALING_UP:
                    up += 1
                elif st is _DRAINING:
                    draining += 1
                else:  # a removed instance has left sim.instances
                    raise AssertionError(f"{i!r} in the cluster")
        return {"active": active, "scaling_up": up, "draining": draining}

    def least_loaded(self, tag: str) -> Instance | None:
        """The active instance of ``tag`` a scale-down should pick: fewest pending prompt tokens
        for ``prompt``, least committed KV for ``token`` and ``mixed`` (ties: lowest id)."""
        act = self.get_active_instances(tag=tag)
        if not act:
            return None
        if tag == "prompt":
            return min(act, key=lambda i: (i.sched_pending_tokens, i.sched_memory_tokens, i.id))
        return min(act, key=lambda i: (i.sched_memory_tokens, i.sched_pending_tokens, i.id))

    # ------------------------------------------------------------------ actions
    def _blocked(self, msg: str) -> None:
        self.blocked_actions += 1
        log.info("[Action Blocked] %s", msg)

    def scale_up_full(
        self,
        instance_cfg: InstanceConfig,
        parallelism: int,
        tag: str,
        server_sku: str | None = None,
    ) -> tuple[Server, Instance] | None:
        """Create a server and one instance on it, ``ACTIVE`` after ``scale_up_delay``.

        ``server_sku`` defaults to the start state's SKU of ``tag``. Returns ``(server,
        instance)``, or ``None`` when blocked by ``max_total_instances``. Invalid arguments (an
        unknown tag or SKU, a parallelism the server or the perf model lacks) raise
        :class:`~rlsched.errors.ConfigError`.
        """
        if tag not in TAGS:
            raise ConfigError(f"unknown pool tag {tag!r}; use {', '.join(TAGS)}")
        if len(self.sim.instances) >= self.max_total_instances:
            self._blocked(f"Max cluster size reached ({self.max_total_instances})")
            return None
        sku = server_sku if server_sku is not None else self._default_sku(tag)
        inst = self.sim.create_instance(tag, instance_cfg, parallelism, sku, active=False)
        self.scale_up_actions += 1
        log.info("[ScalingManager] Full scale-up: server %d + instance %d", inst.server.id, inst.id)
        self.sim.schedule_activation(inst, self.sim.now + self.scale_up_delay)
        return inst.server, inst

    def scale_up(self, tag: str, server_sku: str | None = None) -> tuple[Server, Instance] | None:
        """``scale_up_full`` with the start state's instance config and parallelism of ``tag``."""
        ss = self.start_state
        return self.scale_up_full(
            ss.get_instance_config(tag), ss.get_parallelism(tag), tag, server_sku
        )

    def scale_down_full(self, instance: Instance) -> bool:
        """Drain ``instance`` (then remove it and its server); ``False`` when blocked."""
        st = instance.state
        if st is InstanceState.SCALING_UP:
            self.scale_down_actions += 1
            log.info(
                "[ScalingManager] Instance %d cancelled while scaling up at %.2f",
                instance.id,
                self.sim.now,
            )
            self._remove(instance)
            return True
        if st is not InstanceState.ACTIVE:
            self._blocked(f"Instance {instance.id} is {st.value}, not active")
            return False
        active = sum(1 for i in self.sim.instances if i.tag == instance.tag and i.state is st)
        if active - 1 < self.min_instances_per_pool:
            self._blocked(f"Cannot remove {instance.tag}, min limit reached")
            return False
        self.scale_down_actions += 1
        self.sim.set_state(instance, InstanceState.DRAINING)
        log.info("[ScalingManager] Instance %d draining started at %.2f", instance.id, self.sim.now)
        if not self._drain_check_pending:
            self._drain_check_pending = True
            self.sim.schedule_drain_check(self.sim.now + self.drain_check_interval)
        return True

    def scale_down(self, tag: str) -> bool:
        """Drain the least loaded active instance of ``tag`` (:meth:`least_loaded`)."""
        target = self.least_loaded(tag)
        if target is None:
            self._blocked(f"No active {tag} instance to remove")
            return False
        return self.scale_down_full(target)

    # ------------------------------------------------------------------ internals
    def _default_sku(self, tag: str) -> str:
        pools = self.start_state.pools
        if tag in pools:
            return pools[tag].server_sku
        return next(iter(pools.values())).server_sku

    def on_activated(self, inst: Instance) -> None:
        log.info("[ScalingManager] Instance %d scaled up at %.2f", inst.id, self.sim.now)

    def on_drain_check(self) -> None:
        """Remove draining instances without work; re-arm while some remain draining."""
        self._drain_check_pending = False
        draining = [i for i in self.sim.instances if i.state is InstanceState.DRAINING]
        for inst in draining:
            if inst.idle_and_empty:
                log.info("[ScalingManager] Instance %d removed at %.2f", inst.id, self.sim.now)
                self._remove(inst)
        if any(i.state is InstanceState.DRAINING for i in self.sim.instances):
            self._drain_check_pending = True
            self.sim.schedule_drain_check(self.sim.now + self.drain_check_interval)

    def _remove(self, inst: Instance) -> None:
        self.sim.set_state(inst, InstanceState.REMOVED)
        log.info(
            "[ScalingManager] Auto scale-down server %d after instance removal", inst.server.id
        )
