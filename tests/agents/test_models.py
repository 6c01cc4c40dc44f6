"""Loading saved models: the full load (training resumes from it) and the acting load."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

from rlsched.agents.models import ActingOnly, load_model, read_meta
from rlsched.errors import PolicyError
from rlsched.zoo import resolve_model_dir

#: a node-scoring MaskablePPO model (orthogonal initialisation skipped) and a flat PPO one
ENTRIES = ("zoo/pod-rebalancing-anchored-ppo", "zoo/llm-autoscaling-slo-ppo")


@pytest.mark.parametrize("entry", ENTRIES)
def test_the_acting_load_has_the_saved_weights_and_optimizer_state_and_acts_alike(entry):
    d = resolve_model_dir(entry)
    algo = read_meta(d)["algo"]
    full = load_model(algo, d / "model.zip")
    acting = load_model(algo, d / "model.zip", acting=True)
    a, b = full.policy.state_dict(), acting.policy.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    opt = acting.policy.optimizer
    assert isinstance(opt, ActingOnly)
    saved = full.policy.optimizer.state_dict()
    assert opt.state_dict()["param_groups"][0]["lr"] == saved["param_groups"][0]["lr"]
    samples = [full.observation_space.sample() for _ in range(8)]
    obs = ({k: np.stack([o[k] for o in samples]) for k in samples[0]}
           if isinstance(samples[0], dict) else np.stack(samples))  # fmt: skip
    kw = {"action_masks": np.ones((8, full.action_space.n), bool)} if algo == "maskable_ppo" else {}
    assert np.array_equal(full.predict(obs, deterministic=True, **kw)[0],
                          acting.predict(obs, deterministic=True, **kw)[0])  # fmt: skip
    with pytest.raises(PolicyError, match="loaded to act"):
        opt.step()


def test_the_acting_load_builds_no_torch_optimizer():
    """torch's first optimizer in a process imports ``torch._dynamo`` (about a second): an
    acting load makes none (a fresh interpreter, where nothing imported it yet)."""
    code = (
        "import sys\n"
        "from rlsched.agents.models import load_model, read_meta\n"
        "from rlsched.zoo import resolve_model_dir\n"
        f"d = resolve_model_dir({ENTRIES[0]!r})\n"
        "load_model(read_meta(d)['algo'], d / 'model.zip', acting=True)\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)  # fmt: skip
    assert out.stdout.strip() == "False"
