"""kube-scheduler extender (``k8s.io/kube-scheduler/extender/v1``) on top of the policy.

The scheduler POSTs ``ExtenderArgs`` JSON (Go field names, capitalised: ``Pod`` a v1.Pod,
``Nodes`` a v1.NodeList, ``NodeNames`` when ``nodeCacheCapable``) to ``filter`` and
``prioritize``; we answer ``ExtenderFilterResult`` and ``HostPriorityList`` (scores 0..10,
upstream ``MaxExtenderPriority``).

* A pod's request is ``max(sum(containers), max(initContainers)) + overhead`` of
  ``spec.*.resources.requests`` (``limits`` where a request is missing, as the API server
  defaults it), cpu in millicores and memory in bytes.
* A node offers ``status.allocatable`` minus what is used on it. The scheduler does not send
  usage; a node may carry it in the annotations ``rlsched.io/used-cpu`` and
  ``rlsched.io/used-memory`` (Kubernetes quantities, e.g. ``"1500m"``, ``"6Gi"``); without them
  its usage is taken as zero.
* ``filter`` keeps the nodes the pod fits on and lists the others in ``FailedNodes`` with the
  reason (``Insufficient cpu`` / ``Insufficient memory``, as NodeResourcesFit says).
* ``prioritize`` scores the candidates with one forward pass (:meth:`SchedulerService.score`)
  and maps each node's bind probability ``p`` to ``round(10 * p / max p)`` (the policy's
  favourite gets 10, nodes the pod does not fit on get 0).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, StringConstraints

from rlsched.serve.service import MAX_NODES, InvalidInput, NodeCapacity, PodDemand, SchedulerService

MAX_EXTENDER_PRIORITY = 10
MAX_CONTAINERS = 256  # per pod (containers and initContainers each); beyond: 400
USED_CPU_ANNOTATION = "rlsched.io/used-cpu"
USED_MEMORY_ANNOTATION = "rlsched.io/used-memory"

# ---------------------------------------------------------------------------- quantities
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
    "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"),
    "P": Decimal("1e15"), "E": Decimal("1e18"),
}  # fmt: skip
_QUANTITY = re.compile(
    r"^(?P<num>[+-]?(?:\d+\.?\d*|\.\d+))"
    r"(?:(?P<bin>Ki|Mi|Gi|Ti|Pi|Ei)|(?P<exp>[eE][+-]?\d+)|(?P<dec>[numkMGTPE]?))$"
)


def parse_quantity(q: Any) -> float:
    """A Kubernetes ``resource.Quantity`` (``"500m"``, ``"2"``, ``"1.5Gi"``, ``"1e9"``,
    ``"128974848"``, ``"129M"``) as a float in base units; ``ValueError`` if malformed."""
    if isinstance(q, bool):
        raise ValueError(f"quantity {q!r} is not a number")
    if isinstance(q, (int, float)):
        if not math.isfinite(q):
            raise ValueError(f"quantity {q!r} is not finite")
        return float(q)
    if not isinstance(q, str):
        raise ValueError(f"quantity {q!r} is not a string or number")
    m = _QUANTITY.match(q.strip())
    if not m:
        raise ValueError(f"{q!r} is not a Kubernetes quantity")
    try:
        num = Decimal(m.group("num"))
        if m.group("bin"):
            val = num * _BINARY[m.group("bin")]
        elif m.group("exp"):
            exp = int(m.group("exp")[1:])
            if abs(exp) > 100:
                raise ValueError(f"quantity {q!r} is out of range")
            val = num.scaleb(exp)
        else:
            val = num * _DECIMAL[m.group("dec") or ""]
    except (InvalidOperation, OverflowError):
        raise ValueError(f"{q!r} is not a Kubernetes quantity") from None
    return float(val)


def cpu_millicores(q: Any) -> float:
    return parse_quantity(q) * 1000.0


def memory_bytes(q: Any) -> float:
    return parse_quantity(q)


# ---------------------------------------------------------------------------- upstream JSON
# Only the fields used here are declared; everything else is kept (extra="allow") and
# returned untouched in ExtenderFilterResult.Nodes.
QUANTITY_PATTERN = (
    r"^\+?(\d{1,19}(\.\d{0,9})?|\.\d{1,9})(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d{1,2}|[numkMGTPE])?$"
)
# a non-negative quantity as Kubernetes serialises it (a string), or a plain number
Quantity = (
    Annotated[str, StringConstraints(pattern=QUANTITY_PATTERN)]
    | Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0)]
)


class _K8s(BaseModel):
    model_config = ConfigDict(extra="allow")


class ObjectMeta(_K8s):
    name: str | None = None
    namespace: str | None = None
    annotations: dict[str, str] | None = None


class ResourceRequirements(_K8s):
    requests: dict[str, Quantity] | None = None
    limits: dict[str, Quantity] | None = None


class Container(_K8s):
    name: str | None = None
    resources: ResourceRequirements | None = None


class PodSpec(_K8s):
    containers: Annotated[list[Container], Field(max_length=MAX_CONTAINERS)] | None = None
    initContainers: Annotated[list[Container], Field(max_length=MAX_CONTAINERS)] | None = None
    overhead: dict[str, Quantity] | None = None
    nodeName: str | None = None


class V1Pod(_K8s):
    """A v1.Pod (``metadata``, ``spec``; the rest is passed through)."""

    metadata: ObjectMeta | None = None
    spec: PodSpec | None = None


class NodeStatus(_K8s):
    allocatable: dict[str, Quantity] | None = None
    capacity: dict[str, Quantity] | None = None


class V1Node(_K8s):
    """A v1.Node (``metadata``, ``status.allocatable``; the rest is passed through)."""

    metadata: ObjectMeta | None = None
    status: NodeStatus | None = None


class V1NodeList(_K8s):
    """A v1.NodeList."""

    items: Annotated[list[V1Node], Field(max_length=MAX_NODES)] | None = None


class ExtenderArgs(BaseModel):
    """``extenderv1.ExtenderArgs``: Go encodes the fields capitalised (lower case accepted).

    ``Nodes`` is required: with ``nodeCacheCapable: true`` the scheduler sends only
    ``NodeNames``, which carry no allocatable resources; that answers 400 saying so.
    """

    model_config = ConfigDict(extra="allow")
    Pod: V1Pod = Field(validation_alias=AliasChoices("Pod", "pod"))
    Nodes: V1NodeList = Field(validation_alias=AliasChoices("Nodes", "nodes"))
    NodeNames: Annotated[list[str], Field(max_length=MAX_NODES)] | None = Field(
        default=None, validation_alias=AliasChoices("NodeNames", "nodenames", "nodeNames")
    )


NODE_CACHE_MESSAGE = (
    "ExtenderArgs.Nodes is missing: rlsched needs full Node objects, configure the extender "
    "with nodeCacheCapable: false (NodeNames alone carry no allocatable resources)"
)


class ExtenderFilterResult(BaseModel):
    """``extenderv1.ExtenderFilterResult``."""

    Nodes: V1NodeList | None = None
    NodeNames: list[str] | None = None
    FailedNodes: dict[str, str] = Field(default_factory=dict)
    FailedAndUnresolvableNodes: dict[str, str] = Field(default_factory=dict)
    Error: str = ""

    def to_json(self) -> dict[str, Any]:
        """Upstream JSON; nodes are returned as they came (no fields added)."""
        return {
            "Nodes": None if self.Nodes is None else self.Nodes.model_dump(exclude_unset=True),
            "NodeNames": self.NodeNames,
            "FailedNodes": self.FailedNodes,
            "FailedAndUnresolvableNodes": self.FailedAndUnresolvableNodes,
            "Error": self.Error,
        }


class HostPriority(BaseModel):
    """``extenderv1.HostPriority``; a ``HostPriorityList`` is a JSON list of these."""

    Host: str
    Score: int = Field(ge=0, le=MAX_EXTENDER_PRIORITY)


# ---------------------------------------------------------------------------- parsing
def _sum_resources(containers: list[Container] | None, what: str) -> tuple[float, float]:
    cpu = mem = 0.0
    for i, c in enumerate(containers or []):
        res = c.resources
        if res is None:
            continue
        req = dict(res.limits or {})
        req.update(res.requests or {})
        try:
            if "cpu" in req:
                cpu += cpu_millicores(req["cpu"])
            if "memory" in req:
                mem += memory_bytes(req["memory"])
        except ValueError as e:
            raise InvalidInput(f"Pod.spec.{what}[{i}].resources: {e}") from None
    return cpu, mem


def pod_demand(pod: V1Pod | None) -> PodDemand:
    """The pod's effective cpu (millicores) and memory (bytes) request."""
    if pod is None:
        raise InvalidInput("ExtenderArgs.Pod is missing")
    spec = pod.spec or PodSpec()
    cpu, mem = _sum_resources(spec.containers, "containers")
    for i, c in enumerate(spec.initContainers or []):
        ic, im = _sum_resources([c], f"initContainers[{i}]")
        cpu, mem = max(cpu, ic), max(mem, im)
    try:
        if spec.overhead:
            cpu += cpu_millicores(spec.overhead.get("cpu", 0))
            mem += memory_bytes(spec.overhead.get("memory", 0))
    except ValueError as e:
        raise InvalidInput(f"Pod.spec.overhead: {e}") from None
    if cpu < 0 or mem < 0:
        raise InvalidInput("Pod requests must not be negative")
    meta = pod.metadata or ObjectMeta()
    name = "/".join(x for x in (meta.namespace, meta.name) if x)
    return PodDemand(cpu, mem, name)


def node_capacity(node: V1Node, index: int) -> tuple[NodeCapacity, str | None]:
    """The node's allocatable and annotated usage; the second item is a reason if the node
    cannot be used at all (malformed quantities)."""
    meta = node.metadata or ObjectMeta()
    name = meta.name if meta.name else f"<Nodes.items[{index}]>"
    alloc = (node.status.allocatable if node.status else None) or {}
    ann = meta.annotations or {}
    try:
        ca = cpu_millicores(alloc.get("cpu", 0))
        ma = memory_bytes(alloc.get("memory", 0))
        cu = cpu_millicores(ann.get(USED_CPU_ANNOTATION, 0))
        mu = memory_bytes(ann.get(USED_MEMORY_ANNOTATION, 0))
    except ValueError as e:
        return NodeCapacity(name, 0.0, 0.0), f"rlsched: unreadable resources on the node: {e}"
    if min(ca, ma, cu, mu) < 0:
        return NodeCapacity(name, 0.0, 0.0), "rlsched: negative resources on the node"
    return NodeCapacity(name, ca, ma, cu, mu), None


def _nodes_of(args: ExtenderArgs) -> list[V1Node]:
    if args.Nodes is None:
        raise InvalidInput(NODE_CACHE_MESSAGE)
    return list(args.Nodes.items or [])


def _misfit_reason(pod: PodDemand, n: NodeCapacity) -> str | None:
    reasons = []
    if n.cpu_used_millicores + pod.cpu_millicores > n.cpu_allocatable_millicores:
        reasons.append("Insufficient cpu")
    if n.memory_used_bytes + pod.memory_bytes > n.memory_allocatable_bytes:
        reasons.append("Insufficient memory")
    return ", ".join(reasons) or None


# ---------------------------------------------------------------------------- verbs
def filter_nodes(args: ExtenderArgs) -> ExtenderFilterResult:
    """Keep the nodes ``Pod`` fits on (allocatable minus annotated usage)."""
    try:
        nodes = _nodes_of(args)
        pod = pod_demand(args.Pod)
    except InvalidInput as e:
        # an error the scheduler shows for the pod (an HTTP error would read the same)
        return ExtenderFilterResult(Error=e.message)
    kept: list[V1Node] = []
    failed: dict[str, str] = {}
    for i, node in enumerate(nodes):
        cap, bad = node_capacity(node, i)
        reason = bad or _misfit_reason(pod, cap)
        if reason:
            failed[cap.name] = reason
        else:
            kept.append(node)
    out = args.Nodes.model_copy(update={"items": kept}) if args.Nodes else V1NodeList(items=kept)
    return ExtenderFilterResult(Nodes=out, FailedNodes=failed)


def prioritize(service: SchedulerService, args: ExtenderArgs) -> list[HostPriority]:
    """Score 0..10 per candidate node from the policy's bind probabilities."""
    nodes = _nodes_of(args)
    pod = pod_demand(args.Pod)
    if not nodes:
        return []
    caps = []
    for i, node in enumerate(nodes):
        cap, bad = node_capacity(node, i)
        if bad:  # unusable: keep it in the list with no room, so it scores 0
            cap = NodeCapacity(cap.name, 0.0, 0.0, 1.0, 1.0)
        caps.append(cap)
    res = service.score(pod, caps)
    top = float(res.scores.max()) if len(res.scores) else 0.0
    out = []
    for cap, p, fits in zip(caps, res.scores.tolist(), res.fits.tolist(), strict=True):
        s = 0 if not fits or top <= 0 else round(MAX_EXTENDER_PRIORITY * p / top)
        out.append(HostPriority(Host=cap.name, Score=max(0, min(MAX_EXTENDER_PRIORITY, s))))
    return out
