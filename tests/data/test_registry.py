"""Dataset names, the registry, caching and file sniffing."""

from __future__ import annotations

import shutil

import pytest

from rlsched.data import Dataset, list_datasets, load_dataset, parse_name, register, resolve
from rlsched.data import registry as reg
from rlsched.errors import DatasetError

SCHEMES = {
    "wfinstances",
    "wfcommons",
    "azure-functions",
    "azure-functions-2021",
    "alibaba",
    "alibaba-v2018",
    "synthetic",
    "file",
}


def test_parse_name_splits_scheme_path_params() -> None:
    assert parse_name("synthetic:placement?workflows=5&seed=1") == (
        "synthetic",
        "placement",
        {"workflows": "5", "seed": "1"},
    )
    assert parse_name("WfInstances:montage-58") == ("wfinstances", "montage-58", {})
    assert parse_name("file:/tmp/a%3Fb.json?x=a%26b") == ("file", "/tmp/a?b.json", {"x": "a&b"})


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "montage-58",
        ":montage",
        "1abc:x",
        "wf instances:x",
        "wfinstances:",
        "synthetic:placement?",
        "synthetic:placement?workflows",
        "synthetic:placement?=3",
        "synthetic:placement?a=1&a=2",
        "synthetic:placement?1a=2",
    ],
)
def test_parse_name_rejects_bad_syntax(name: str) -> None:
    with pytest.raises(DatasetError) as e:
        parse_name(name)
    if name.strip():
        assert name.strip() in str(e.value)


def test_unknown_scheme_lists_known_schemes() -> None:
    with pytest.raises(DatasetError) as e:
        load_dataset("nosuch:thing")
    msg = str(e.value)
    assert "nosuch" in msg
    for s in SCHEMES:
        assert s in msg


def test_unknown_param_is_named() -> None:
    with pytest.raises(DatasetError) as e:
        load_dataset("synthetic:placement?workflowz=3")
    assert e.value.field == "workflowz"
    assert "workflowz" in str(e.value)


def test_bad_param_value_is_named() -> None:
    with pytest.raises(DatasetError, match="tasks"):
        load_dataset("synthetic:placement?tasks=many")
    with pytest.raises(DatasetError, match="workflows"):
        load_dataset("synthetic:placement?workflows=0")


def test_resolve_fills_defaults_and_sorts() -> None:
    a = resolve("synthetic:placement?seed=2&workflows=3")
    b = resolve("synthetic:placement?workflows=3&seed=2&tasks=20")
    assert a == b
    assert a.startswith("synthetic:placement?")
    assert "interarrival=60" in a
    assert resolve(a) == a  # canonical names are fixed points


def test_load_dataset_caches_by_canonical_name() -> None:
    a = load_dataset("synthetic:placement?workflows=3&seed=1")
    b = load_dataset("synthetic:placement?seed=1&workflows=3")
    c = load_dataset("synthetic:placement?seed=2&workflows=3")
    assert a is b
    assert a is not c
    assert a.name == resolve("synthetic:placement?seed=1&workflows=3")
    reg.clear_cache()
    assert load_dataset("synthetic:placement?workflows=3&seed=1") is not a


def test_list_datasets_covers_every_scheme() -> None:
    entries = list_datasets()
    assert {e["scheme"] for e in entries} >= SCHEMES
    for e in entries:
        assert e["description"] and e["examples"] and e["license"], e["scheme"]


def test_shipped_examples_resolve_and_load() -> None:
    for e in list_datasets():
        for name in e["examples"]:
            if "/" in name:  # examples pointing at a user's files
                continue
            ds = load_dataset(name)
            assert isinstance(ds, Dataset)
            assert ds.workflows or ds.trace is not None, name
            assert ds.license


def test_register_new_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reg, "_REGISTRY", dict(reg._REGISTRY))

    @register("toy", description="toy", examples=["toy:x"], license="none", params={"k": "1"})
    def _toy(path: str, params: dict[str, str]) -> Dataset:
        return Dataset(name="", workflows=[], description=f"{path} {params['k']}")

    ds = load_dataset("toy:abc")
    assert ds.name == "toy:abc?k=1"
    assert ds.description == "abc 1"
    assert ds.license == "none"
    assert any(e["scheme"] == "toy" for e in list_datasets())
    reg.clear_cache()


def test_bare_and_file_paths(tmp_path, shipped_file) -> None:
    src = shipped_file("workflows", "helloworld-forkjoin-10-chameleon.json")
    dst = tmp_path / "hello.json"
    shutil.copy(src, dst)
    bare = load_dataset(str(dst))
    assert bare.name == f"file:{dst}"
    assert len(bare.workflows) == 1 and len(bare.workflows[0]) == 10
    assert load_dataset(f"file:{dst}") is bare
    csv_copy = tmp_path / "inv.csv"
    shutil.copy(shipped_file("functions", "azure2021-200.csv"), csv_copy)
    assert len(load_dataset(str(csv_copy)).workflows) == 199


def test_file_scheme_errors(tmp_path) -> None:
    with pytest.raises(DatasetError, match="not found"):
        load_dataset(f"file:{tmp_path / 'missing.json'}")
    odd = tmp_path / "odd.csv"
    odd.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(DatasetError) as e:
        load_dataset(f"file:{odd}")
    assert "odd.csv:1" in str(e.value)
    txt = tmp_path / "x.txt"
    txt.write_text("hello")
    with pytest.raises(DatasetError, match=r"\.json"):
        load_dataset(f"file:{txt}")
