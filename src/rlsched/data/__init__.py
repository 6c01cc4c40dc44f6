"""Datasets: named, cached loaders that turn traces into workflows.

``load_dataset("wfinstances:montage-58")`` returns a :class:`Dataset`; ``list_datasets()`` says
which schemes exist. Importing this package registers every loader.
"""

# Importing the loaders registers their schemes.
from rlsched.data import (  # noqa: F401
    alibaba,
    azure_functions,
    azure_llm,
    huawei_vm,
    local,
    pod_requests,
    synthetic,
    wfcommons_gen,
    wfformat,
)
from rlsched.data.dataset import Dataset
from rlsched.data.registry import (
    clear_cache,
    list_datasets,
    load_dataset,
    parse_name,
    register,
    resolve,
)

__all__ = [
    "Dataset",
    "clear_cache",
    "list_datasets",
    "load_dataset",
    "parse_name",
    "register",
    "resolve",
]
