"""``file:PATH`` (or a bare path): a user's trace file, its format recognised from its content.

``.json`` is read as WfFormat 1.5. A ``.csv`` is recognised by its header: Azure Functions 2019
invocations (durations and memory files are found beside it by name), Azure Functions 2021,
the CloudSimPy jobs file, or a headerless Alibaba v2018 ``batch_task.csv``.
"""

from __future__ import annotations

import csv
from pathlib import Path

from rlsched.data import alibaba, azure_functions, huawei_vm, wfformat
from rlsched.data._util import abs_path, existing_file
from rlsched.data.dataset import Dataset
from rlsched.data.registry import register
from rlsched.errors import DatasetError

V2018_STATUS = {"Terminated", "Failed", "Running", "Waiting", "Cancelled", "Interrupted", "Ready"}


def sniff_csv(path: Path) -> str:
    """``azure2019``, ``azure2021``, ``cloudsimpy`` or ``v2018`` from the first line."""
    with path.open(newline="", encoding="utf-8-sig") as fh:
        try:
            first = [c.strip() for c in next(csv.reader(fh))]
        except (StopIteration, csv.Error):
            raise DatasetError("empty or unreadable CSV", source=path, line=1) from None
    cols = set(first)
    if {"HashOwner", "HashApp", "HashFunction", "Trigger"} <= cols:
        return "azure2019"
    if "HashOwner" in cols:
        raise DatasetError(
            "an Azure Functions 2019 durations or memory file: load the "
            "invocations file (the others are found beside it)",
            source=path,
            line=1,
        )
    if {"app", "func", "end_timestamp", "duration"} <= cols:
        return "azure2021"
    if {"vmid", "cpu", "memory", "time", "type"} <= cols:
        return "huawei-vm"
    if set(alibaba.CLOUDSIMPY_COLUMNS) <= cols:
        return "cloudsimpy"
    if len(first) == 9 and first[4] in V2018_STATUS:
        return "v2018"
    raise DatasetError(
        "unrecognised CSV header: expected Azure Functions 2019 invocations, "
        "Azure Functions 2021 (app,func,end_timestamp,duration), a VM trace "
        "(vmid,cpu,memory,time,type), CloudSimPy jobs "
        "or Alibaba v2018 batch_task rows",
        source=path,
        line=1,
    )


def load_file(path: str, params: dict[str, str]) -> Dataset:
    p = existing_file(path)
    name = f"file:{path}"
    suffix = p.suffix.lower()
    if suffix == ".json":
        return wfformat.load_wfformat_path(str(p))
    if suffix != ".csv":
        raise DatasetError("expected a .json (WfFormat) or .csv trace file", source=p)
    kind = sniff_csv(p)
    if kind == "azure2019":
        return azure_functions.load_azure2019_file(p)
    if kind == "azure2021":
        return azure_functions.load_azure2021_file(p)
    if kind == "huawei-vm":
        return huawei_vm.load_huawei_vm(str(p), params)
    if kind == "cloudsimpy":
        return alibaba.load_cloudsimpy_path(p, name, params, "")
    return alibaba.load_v2018_path(p, name, params)


register(
    "file",
    load_file,
    "A local trace file: WfFormat .json, or a .csv recognised by its header (Azure "
    "Functions 2019 invocations / 2021, Huawei VM requests, CloudSimPy jobs, Alibaba v2018 "
    "batch_task); a bare "
    "existing .json/.csv path works too",
    ["file:./montage.json", "file:/data/batch_task.csv", "./AzureFunctionsInvocation.csv"],
    "the file's own",
    canonical_path=abs_path,
)
