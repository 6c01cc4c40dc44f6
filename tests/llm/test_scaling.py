"""Start states and the ScalingManager: delays, draining, removal, limits, log lines."""

from __future__ import annotations

import logging

import pytest

from rlsched.core.llm.cluster import InstanceConfig, InstanceState
from rlsched.core.llm.scaling import StartState
from rlsched.core.llm.simulator import LLMSimulator
from rlsched.errors import ConfigError

from .helpers import requests, start_state

LOGGER = "rlsched.core.llm.scaling"


def test_default_start_state_is_shipped():
    ss = StartState.default()
    assert ss.tags == ("prompt", "token")
    assert ss.get_parallelism("prompt") == 8 and ss.get_server_sku("prompt") == "dgx-h100"
    assert ss.get_instance_config("token") == InstanceConfig(
        max_batch_size=512, max_batch_tokens=2048, max_preemptions=4
    )
    assert StartState.from_dict(ss.to_dict()) == ss


def test_start_state_from_yaml_and_splitwise_layout(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(
        "prompt:\n  instance_type: Splitwise\n  max_batch_size: 64\n  max_batch_tokens: 4096\n"
        "  max_preemptions: 2\n  pipeline_parallelism: 1\n  tensor_parallelism: 4\n"
        "  num_instances: 3\n  instance_names: [dgx-h100]\n"
        "token:\n  num_instances: 2\n  tensor_parallelism: 8\n  instance_names: [dgx-a100]\n"
        "state_type: splitwise_3_2\napplication_id: 0\n"
    )
    ss = StartState.from_yaml(p)
    assert ss.pool("prompt").num_instances == 3 and ss.get_parallelism("prompt") == 4
    assert ss.get_instance_config("prompt").max_batch_tokens == 4096
    assert ss.get_server_sku("token") == "dgx-a100"


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"pools": {"prompt": {"num_instances": 1}}}, "needs a prompt and a token pool"),
        ({"pools": {"decode": {"num_instances": 1}}}, "unknown pool tag"),
        ({"pools": {"mixed": {"parallelism": 16}}}, "parallelism must be 1..8"),
        ({"pools": {"mixed": {"server_sku": "tpu"}}}, "unknown server SKU"),
        ({"pools": {"mixed": {}}, "model": "gpt5"}, "unknown model"),
        ({"pools": {"mixed": {}}, "colour": 1}, "unknown start state key"),
    ],
)
def test_start_state_errors(data, match):
    with pytest.raises(ConfigError, match=match):
        StartState.from_dict(data)
    with pytest.raises(ConfigError, match="no 'mixed' pool"):
        StartState.default().get_instance_config("mixed")


def test_scale_up_becomes_active_exactly_after_the_delay(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    sim = LLMSimulator(requests((0.0, 10, 2)), start_state(1, 1), scale_up_delay=7.5)
    sm = sim.scaling_manager
    sim.run_until(3.0)
    server, inst = sm.scale_up("token")
    assert inst.state is InstanceState.SCALING_UP and server.created == 3.0
    assert f"[ScalingManager] Full scale-up: server {server.id} + instance {inst.id}" in caplog.text
    assert sm.get_active_instances(tag="token") == [sim.instances[1]]
    sim.run_until(10.5 - 1e-9)
    assert inst.state is InstanceState.SCALING_UP
    sim.run_until(10.5)
    assert inst.state is InstanceState.ACTIVE and inst.activated == 10.5
    assert f"[ScalingManager] Instance {inst.id} scaled up at 10.50" in caplog.text
    assert sm.get_status_summary() == {
        "active_instances": 3,
        "scaling_up_instances": 0,
        "draining_instances": 0,
        "total_servers": 3,
        "total_instances": 3,
    }


def test_scale_up_full_with_explicit_config_and_sku():
    sim = LLMSimulator(requests((0.0, 10, 2)), start_state(1, 1))
    server, inst = sim.scaling_manager.scale_up_full(
        InstanceConfig(max_batch_size=8), 4, "mixed", server_sku="dgx-h100"
    )
    assert inst.tag == "mixed" and inst.parallelism == 4 and inst.config.max_batch_size == 8
    assert server.sku.name == "dgx-h100" and server.instance is inst
    with pytest.raises(ConfigError):
        sim.scaling_manager.scale_up_full(InstanceConfig(), 3, "token")  # no TP3 data
    with pytest.raises(ConfigError):
        sim.scaling_manager.scale_up_full(InstanceConfig(), 8, "decode")


def test_draining_gets_no_new_work_and_is_removed_with_its_server(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    rows = [(0.1 * i, 300, 200) for i in range(40)]
    sim = LLMSimulator(requests(*rows), start_state(1, 2), drain_check_interval=0.5)
    sm = sim.scaling_manager
    sim.run_until(1.05)  # 11 requests routed
    busy = max(sm.get_active_instances(tag="token"), key=lambda i: i.sched_memory_tokens)
    assert busy.sched_memory_tokens > 0
    assert sm.scale_down_full(busy)
    t_drain = sim.now
    assert busy.state is InstanceState.DRAINING
    assert f"[ScalingManager] Instance {busy.id} draining started at 1.05" in caplog.text
    assert sm.get_status_summary()["draining_instances"] == 1
    sim.run()
    table = sim.request_table()
    late = table["arrival"] > t_drain
    assert not (table["token_instance"][late] == busy.id).any()
    assert (table["token_instance"][~late] == busy.id).any()
    assert busy.state is InstanceState.REMOVED and busy.server.removed == busy.removed
    # removed on a drain check after its last request finished
    last = table["finish"][table["token_instance"] == busy.id].max()
    assert last <= busy.removed <= last + 0.5 + 1e-9
    assert ((busy.removed - t_drain) / 0.5) == pytest.approx(round((busy.removed - t_drain) / 0.5))
    assert busy not in sim.instances and busy.server not in sm.servers
    assert f"[ScalingManager] Auto scale-down server {busy.server.id} after instance removal" in (
        caplog.text
    )
    assert sim.results()["requests"] == 40


def test_limits_are_enforced_with_log_lines(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    sim = LLMSimulator(
        requests((0.0, 10, 2)), start_state(2, 1), max_total_instances=4, min_instances_per_pool=1
    )
    sm = sim.scaling_manager
    assert sm.scale_up("token") is not None
    assert sm.scale_up("token") is None
    assert "[Action Blocked] Max cluster size reached (4)" in caplog.text
    prompts = sm.get_active_instances(tag="prompt")
    assert sm.scale_down_full(prompts[0]) is True
    assert sm.scale_down_full(prompts[1]) is False
    assert "[Action Blocked] Cannot remove prompt, min limit reached" in caplog.text
    assert sm.scale_down_full(prompts[0]) is False  # already draining
    assert sm.scale_down("token") is False  # the only active token instance
    assert sm.blocked_actions == 4 and sm.scale_up_actions == 1 and sm.scale_down_actions == 1
    assert sm.get_status_summary() == {
        "active_instances": 2,
        "scaling_up_instances": 1,
        "draining_instances": 1,
        "total_servers": 4,
        "total_instances": 4,
    }
    with pytest.raises(ConfigError, match="more than max_total_instances"):
        LLMSimulator(requests((0.0, 10, 2)), start_state(3, 2), max_total_instances=4)


def test_cancelling_a_scale_up_removes_it_at_once():
    sim = LLMSimulator(requests((0.0, 10, 2)), start_state(1, 1))
    sm = sim.scaling_manager
    server, inst = sm.scale_up("prompt")
    assert sm.scale_down_full(inst) is True
    assert inst.state is InstanceState.REMOVED and server.removed == 0.0
    sim.run()
    assert inst.state is InstanceState.REMOVED and inst.activated is None


def test_least_loaded_picks_the_scale_down_target():
    sim = LLMSimulator(requests((0.0, 10, 2)), start_state(2, 2))
    sm = sim.scaling_manager
    p0, p1 = sm.get_active_instances(tag="prompt")
    t0, t1 = sm.get_active_instances(tag="token")
    p0.sched_pending_tokens, p1.sched_pending_tokens = 500, 100
    t0.sched_memory_tokens, t1.sched_memory_tokens = 10, 900
    assert sm.least_loaded("prompt") is p1 and sm.least_loaded("token") is t0
    assert sm.get_active_instances([p0, t1, p1]) == [p0, t1, p1]
    assert sm.get_active_instances([p0, t1, p1], tag="token") == [t1]
