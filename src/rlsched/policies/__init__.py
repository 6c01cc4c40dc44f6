"""Decision makers behind one interface: ``act(observation, mask) -> action``."""

from rlsched.policies.base import Policy
from rlsched.policies.heuristics import HEURISTICS
from rlsched.policies.registry import applicable_heuristics, expand_policies, make_policy

__all__ = ["HEURISTICS", "Policy", "applicable_heuristics", "expand_policies", "make_policy"]
