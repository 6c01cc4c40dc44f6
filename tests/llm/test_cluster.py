"""SKUs, models, the KV size formula, instance configs."""

from __future__ import annotations

import pytest

from rlsched.core.llm.cluster import GIB, SKUS, InstanceConfig, ModelSpec, get_model, get_sku
from rlsched.core.llm.simulator import LLMSimulator
from rlsched.errors import ConfigError

from .helpers import requests, start_state


def test_kv_size_formula():
    m = get_model("llama2-70b")
    # 2 (K and V) x tokens x hidden 8192 x 80 layers x 2 bytes (fp16)
    assert m.kv_bytes(1) == 2 * 8192 * 80 * 2 == 2_621_440
    assert m.kv_bytes(1000) == 1000 * 2 * 8192 * 80 * 2
    gqa = get_model("llama2-70b", kv_heads_ratio=0.125)
    assert gqa.kv_bytes(1000) == m.kv_bytes(1000) / 8
    b = ModelSpec("x", hidden=4, layers=3, dtype_bytes=2, weights_bytes=0)
    assert b.kv_bytes(5) == 2 * 5 * 4 * 3 * 2


def test_skus_and_aliases():
    assert get_sku("a100") is SKUS["dgx-a100"] and get_sku("H100").hardware == "h100-80gb"
    assert SKUS["dgx-h100"].cost_per_hour > SKUS["dgx-a100"].cost_per_hour
    with pytest.raises(ConfigError, match="unknown server SKU"):
        get_sku("tpu")


def test_capacity_is_gpu_memory_minus_weights():

    sim = LLMSimulator(requests((0.0, 10, 2)), start_state(1, 1, token_tp=2))
    m = get_model("llama2-70b")
    tok = next(i for i in sim.instances if i.tag == "token")
    assert tok.kv_capacity == int((2 * 80 * GIB - m.weights_bytes) // m.kv_bytes(1))
    assert tok.kv_capacity_bytes <= 2 * 80 * GIB - m.weights_bytes


def test_instance_config_validation():
    assert InstanceConfig.from_dict({"max_batch_size": 4}).max_batch_size == 4
    assert InstanceConfig.from_dict({"instance_type": "Splitwise"}) == InstanceConfig()
    with pytest.raises(ConfigError, match="unknown instance config"):
        InstanceConfig.from_dict({"max_batch": 4})
    with pytest.raises(ConfigError, match=">= 1"):
        InstanceConfig(max_batch_tokens=0)
