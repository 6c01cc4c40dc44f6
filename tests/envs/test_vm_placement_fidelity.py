"""VMPlacement-v0(compat="vmagent") against VMAgent's SchedGym itself: its own first fit
(``env.step(-1)``), recorded per scenario, cluster size and start event in
tests/fixtures/fidelity/vmagent (provenance in the README there)."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from rlsched.core.vm import VMRequests
from rlsched.data.huawei_vm import read_huawei_vm
from rlsched.envs.vm_placement import VMPlacementEnv

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "fidelity" / "vmagent"
RECORDS = [
    json.loads(x) for x in (FIXTURES / "first_fit_peer_seed0.jsonl").read_text().splitlines() if x
]


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> VMRequests:
    csv = tmp_path_factory.mktemp("vmagent") / "trace_seed0.csv"
    csv.write_bytes(gzip.decompress((FIXTURES / "trace_seed0.csv.gz").read_bytes()))
    return read_huawei_vm(csv)


def first_fit_episode(env: VMPlacementEnv, start: int) -> tuple[int, str]:
    """Steps until done and the first 12 hex digits of SHA-1 of ``"a,"`` per step."""
    env.reset(options={"start": start})
    actions, done = [], False
    while not done:
        a = int(env.action_masks().argmax())  # server 2s, NUMA 0 first, as SchedGym's scan
        actions.append(a)
        _, _, term, trunc, _ = env.step(a)
        done = term or trunc
    digest = hashlib.sha1("".join(f"{a}," for a in actions).encode()).hexdigest()[:12]
    return len(actions), digest


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: f"{r['scenario']}-{r['servers']}")
def test_compat_vmagent_reproduces_schedgym_first_fit(trace: VMRequests, record: dict) -> None:
    env = VMPlacementEnv(record["servers"], record["scenario"], trace, compat="vmagent")
    for start, want in record["starts"].items():
        placed, digest = first_fit_episode(env, int(start))
        assert (placed, digest) == (want["placed"], want["actions_sha1_12"]), start


def test_default_rule_differs_from_the_peer(trace: VMRequests) -> None:
    """The default calls a VM double by cpu (VMAgent's docs), so it does not replay the
    peer's sequences: the comparison above can fail."""
    record = RECORDS[0]
    env = VMPlacementEnv(record["servers"], record["scenario"], trace)
    got = {s: first_fit_episode(env, int(s)) for s in record["starts"]}
    want = {s: (w["placed"], w["actions_sha1_12"]) for s, w in record["starts"].items()}
    assert got != want


def test_compat_vmagent_ends_one_request_early_at_the_end_of_the_trace() -> None:
    # three creations, the last one is the trace's last event: SchedGym never places it
    tr = VMRequests.from_rows([(0, 1, 1, 0, 0), (1, 1, 1, 1, 0), (2, 1, 1, 2, 0)])
    placed = {}
    for compat in (None, "vmagent"):
        env = VMPlacementEnv(1, "fading", tr, compat=compat)
        placed[compat], _ = first_fit_episode(env, 0)
    assert placed == {None: 3, "vmagent": 2}


def test_compat_is_checked() -> None:
    with pytest.raises(ValueError, match="compat"):
        VMPlacementEnv(compat="vmagnet")
    with pytest.raises(ValueError, match="double_by"):
        VMPlacementEnv(compat="vmagent", double_by="cpu_or_mem")
