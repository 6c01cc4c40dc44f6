"""The fixed train / validation / test sets, and the refusal of model selection on test data."""

import pytest

from rlsched.errors import ConfigError
from rlsched.splits import SPLITS, VARIANTS, check_validation, overlap, split_of
from rlsched.train.config import TrainConfig


def test_every_env_has_disjoint_validation_and_test_sets() -> None:
    from rlsched.envs import ENV_IDS

    assert set(SPLITS) == set(ENV_IDS)
    for split in SPLITS.values():
        assert not overlap(split.validation, split.test), split.env_id
        assert not overlap(split.train, split.test), split.env_id
        check_validation(split.env_id, split.validation)  # no error


@pytest.mark.parametrize(
    ("a", "b", "shared"),
    [
        ("wfinstances:helloworld-10", "wfinstances:blast-43,helloworld-10", True),
        ("wfinstances:all", "wfinstances:blast-43", True),
        ("wfinstances:montage-58", "wfinstances:blast-43,helloworld-10", False),
        ("wfcommons:epigenomics?tasks=60&seed=1", "wfcommons:epigenomics?tasks=80&seed=1", True),
        ("wfcommons:epigenomics?seed=1", "wfcommons:epigenomics?seed=2", False),
        ("synthetic:vm", "synthetic:vm?seed=0", True),
        ("synthetic:pods?seed=1", "synthetic:pods?seed=2", False),
        ("alibaba:cloudsimpy-jobs", "alibaba:cloudsimpy-jobs?part=test", True),
        ("alibaba:cloudsimpy-jobs?part=validation", "alibaba:cloudsimpy-jobs?part=test", False),
        ("azure-llm:code", "azure-llm:code?rate_scale=2", True),
        # a time split: two windows of one trace share only where they meet
        ("azure-llm:code?end=1800", "azure-llm:code?start=1800", False),
        ("azure-llm:code?end=1800&rate_scale=2", "azure-llm:code?start=1800", False),
        ("azure-llm:code?end=1800", "azure-llm:code", True),
        ("azure-llm:code?start=1000&end=2000", "azure-llm:code?start=1800", True),
        ("azure-llm:conv?end=1800", "azure-llm:code?start=0", False),
    ],
)
def test_overlap(a: str, b: str, shared: bool) -> None:
    assert bool(overlap(a, b)) is shared


def test_selecting_on_a_test_workflow_is_refused() -> None:
    with pytest.raises(ConfigError, match="shares wfinstances:helloworld-10"):
        TrainConfig(eval_dataset="wfinstances:helloworld-10").validate()
    # no validation set: the training set is the validation set, and it is checked too
    with pytest.raises(ConfigError, match="part=validation"):
        TrainConfig(
            env_id="rlsched/KubeScheduling-v0", dataset="alibaba:cloudsimpy-jobs", eval_dataset=None
        ).validate()
    TrainConfig().validate()  # the defaults select on unseen generated workflows


def test_alibaba_parts_are_a_time_ordered_partition() -> None:
    from rlsched.data import load_dataset

    parts = [load_dataset(f"alibaba:cloudsimpy-jobs?part={p}").workflows
             for p in ("train", "validation", "test")]
    names = [{w.name for w in ws} for ws in parts]
    assert sum(map(len, names)) == len(load_dataset("alibaba:cloudsimpy-jobs").workflows)
    assert not (names[0] & names[1] or names[1] & names[2] or names[0] & names[2])
    assert max(w.submit_time for w in parts[0]) <= min(w.submit_time for w in parts[2])


def test_the_named_splits_are_disjoint_and_a_config_is_checked_against_its_own() -> None:
    for (env_id, name), split in VARIANTS.items():
        assert split_of(env_id, name) is split and split.env_id == env_id
        assert not overlap(split.train, split.test) and not overlap(split.validation, split.test)
    llm = dict(env_id="rlsched/LLMAutoscaling-v0", dataset="azure-llm:conv", eval_dataset=None,
               algo="ppo", policy_net="mlp")  # fmt: skip
    first_half = ["azure-llm:code?end=1800"]
    # under the default split the whole code trace is the test set: its first half is refused
    with pytest.raises(ConfigError, match=r"shares azure-llm:code:seconds 0-1800 with the .*test"):
        TrainConfig(**llm, train_datasets=first_half).validate()
    TrainConfig(**llm, train_datasets=first_half, split="code-time").validate()
    # under the time split, a window reaching into the second half is refused
    with pytest.raises(ConfigError, match="seconds 1800-1900"):
        TrainConfig(**llm, train_datasets=["azure-llm:code?end=1900"], split="code-time").validate()
    with pytest.raises(ConfigError, match=r"validation set .*seconds 1800-inf"):
        TrainConfig(**{**llm, "eval_dataset": "azure-llm:code"}, split="code-time").validate()
    with pytest.raises(ConfigError, match=r"no split named 'nope' \(known: default, code-time\)"):
        TrainConfig(**llm, split="nope").validate()
