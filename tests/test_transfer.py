"""A zoo placement policy on cluster sizes it was not trained on (``rlsched.transfer``)."""

import pytest

from rlsched.evaluate import make_env
from rlsched.policies.registry import make_policy
from rlsched.transfer import env_kwargs_at, markdown, trained_size, transfer
from rlsched.zoo import card
from tests.conftest import small_dag_entry

NAME = "serverless-edge-maskable-ppo"


def test_the_network_acts_on_node_counts_it_was_not_trained_on() -> None:
    c = card(NAME)
    assert trained_size(NAME) == 10
    for n in (3, 20, 100):
        env = make_env(c["env"], c["test"]["dataset"], num_nodes=n)
        pol = make_policy(f"learned:zoo/{NAME}", env, seed=0)
        obs, _ = env.reset(seed=0)
        for _ in range(20):
            mask = env.unwrapped.action_masks()
            a = int(pol.act(obs, mask))
            assert 0 <= a < n and mask[a]  # a valid node of this cluster, not of the trained one
            obs, _, term, trunc, _ = env.step(a)
            if term or trunc:
                break


def test_transfer_pairs_the_policy_with_the_best_heuristic_at_each_size() -> None:
    res = transfer(NAME, [20, 10], episodes=2)
    assert [r["size"] for r in res["rows"]] == [10, 20]  # training size first, no repeats
    assert [r["trained"] for r in res["rows"]] == [True, False]
    for r in res["rows"]:
        p = r["paired"]
        assert p["reference"] == r["reference"] and p["n"] == 2
        assert p["mean_diff"] == pytest.approx(r["learned_mean"] - r["reference_mean"])
    assert "| 20 | " in markdown(NAME, res)


def test_the_trained_row_plays_the_cards_own_cluster() -> None:
    """An entry whose card leaves the size to the env's draw (the small-DAG WorkflowOffloading
    entry: 3-5 servers drawn) is judged at that size on the card's cluster, not on another one
    built with the size named (which skips the draw); other sizes are named."""
    c = card(small_dag_entry())
    assert "num_nodes" not in c["env_kwargs"]
    n = trained_size(small_dag_entry())

    def servers(kw: dict) -> tuple:
        return make_env(c["env"], c["test"]["dataset"], **kw).unwrapped.servers

    card_kw = {**c["env_kwargs"], "scenario": c["preset"]}
    assert servers(env_kwargs_at(c, n, n)) == servers(card_kw)
    assert servers({**card_kw, "num_nodes": n}) != servers(card_kw)
    assert len(servers(env_kwargs_at(c, 10, n))) == 11  # ten edge servers and the cloud


def test_transfer_refuses_what_it_cannot_measure() -> None:
    with pytest.raises(ValueError, match="at least 2 episodes"):
        transfer(NAME, [20], episodes=1)
    with pytest.raises(ValueError, match="at least 2"):
        transfer(NAME, [1], episodes=2)


def test_the_shipped_card_records_its_transfer() -> None:
    t = card(NAME).get("transfer")
    assert t is not None, "run: rlsched zoo transfer serverless-edge-maskable-ppo --write"
    assert {r["size"] for r in t["rows"]} >= {10, 20, 100}
    for r in t["rows"]:
        lo, hi = r["paired"]["ci95"]
        assert lo <= r["paired"]["mean_diff"] <= hi
