"""Helpers for the LLM serving simulator tests: small start states and hand-made traces."""

from __future__ import annotations

from rlsched.core.llm.cluster import InstanceConfig
from rlsched.core.llm.scaling import StartState
from rlsched.core.llm.trace import LLMRequests


def start_state(
    prompt: int = 1,
    token: int = 1,
    mixed: int = 0,
    *,
    prompt_cfg: InstanceConfig | None = None,
    token_cfg: InstanceConfig | None = None,
    token_tp: int = 8,
    **cluster,
) -> StartState:
    pools = {}
    if prompt or not mixed:
        pools["prompt"] = {
            "num_instances": prompt,
            "server_sku": "dgx-h100",
            "parallelism": 8,
            "instance": vars(prompt_cfg or InstanceConfig()),
        }
    if token or not mixed:
        pools["token"] = {
            "num_instances": token,
            "server_sku": "dgx-a100",
            "parallelism": token_tp,
            "instance": vars(token_cfg or InstanceConfig()),
        }
    if mixed:
        pools["mixed"] = {"num_instances": mixed, "server_sku": "dgx-a100", "parallelism": 8}
    return StartState.from_dict({"pools": pools, **cluster})


def requests(*rows: tuple[float, int, int]) -> LLMRequests:
    """``(arrival, prompt_tokens, output_tokens)`` rows."""
    a, p, o = zip(*rows, strict=True)
    return LLMRequests.from_arrays(a, p, o)
