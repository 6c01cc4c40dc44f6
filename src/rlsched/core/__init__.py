"""The scheduling domain in numpy: workloads, clusters, events (no Gymnasium or torch)."""

from rlsched.core.cluster import Billing, Cluster, NodeType, NodeView
from rlsched.core.timeline import Timeline
from rlsched.core.workload import INSTANCE_FIELDS, FunctionInstances, Task, Workflow

__all__ = [
    "INSTANCE_FIELDS",
    "Billing",
    "Cluster",
    "FunctionInstances",
    "NodeType",
    "NodeView",
    "Task",
    "Timeline",
    "Workflow",
]
