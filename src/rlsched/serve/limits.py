"""Bounds on what clients send, shared by the service (checks) and the learner (training)."""

STATE_LIMIT = 1e6  # |state value| bound: keeps the policy's float32 forward pass finite
REWARD_LIMIT = 1e6  # |reward| bound: returns and value losses stay finite in float32
