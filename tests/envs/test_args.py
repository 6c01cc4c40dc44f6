"""Env ids and constructor arguments checked before anything runs: clear one-line errors."""

import pytest

from rlsched.envs.args import check_env_id
from rlsched.errors import ConfigError


@pytest.mark.parametrize(
    ("given", "suggested"),
    [
        ("rlsched/ServerlessPlacment-v0", "rlsched/ServerlessPlacement-v0"),
        ("VMPlacment", "rlsched/VMPlacement-v0"),
        ("kubescheduling-v0", "rlsched/KubeScheduling-v0"),
        ("LLMAutoscaling", "rlsched/LLMAutoscaling-v0"),
    ],
)
def test_a_mistyped_env_id_suggests_the_close_one(given: str, suggested: str) -> None:
    with pytest.raises(ConfigError, match=f"did you mean '{suggested}'"):
        check_env_id(given)


@pytest.mark.parametrize("given", ["Bad-v0", "rlsched/Foo-v0", "CartPole-v1"])
def test_an_unrelated_id_suggests_none_but_lists_every_env(given: str) -> None:
    # every id shares "rlsched/" and "-v0": those alone must not make a suggestion
    with pytest.raises(ConfigError) as err:
        check_env_id(given)
    assert "did you mean" not in str(err.value)
    assert "rlsched/VMPlacement-v0" in str(err.value)


def test_a_registered_id_with_or_without_its_namespace_is_accepted() -> None:
    assert check_env_id("rlsched/PodRebalancing-v0") == "rlsched/PodRebalancing-v0"
    assert check_env_id("PodRebalancing-v0") == "rlsched/PodRebalancing-v0"
