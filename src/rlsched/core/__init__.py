"""The scheduling domain in numpy: workloads, clusters, events. No Gymnasium, torch or web import."""

from rlsched.core.cluster import Billing, Cluster, NodeType, NodeView
from rlsched.core.timeline import Timeline
from rlsched.core.workload import INSTANCE_FIELDS, FunctionInstances, Task, Workflow

__all__ = ["Billing", "Cluster", "NodeType", "NodeView", "Timeline", "INSTANCE_FIELDS", "FunctionInstances", "Task", "Workflow"]
