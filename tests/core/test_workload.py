import numpy as np
import pytest

from rlsched.core.timeline import Timeline
from rlsched.core.workload import (
    FunctionInstances,
    Task,
    Workflow,
    derive_task_fields,
    type_table,
    workflow_instances,
)


def diamond() -> Workflow:
    return Workflow(
        "d",
        [
            Task("a", "split", 2.0),
            Task("b", "work", 5.0, parents=(0,)),
            Task("c", "work", 3.0, parents=(0,), instances=3),
            Task("d", "join", 1.0, parents=(1, 2)),
        ],
    )


def test_dag_order_earliest_start_and_critical_path() -> None:
    wf = diamond()
    order = list(wf.topological_order())
    assert order.index(0) < order.index(1) < order.index(3)
    np.testing.assert_allclose(wf.earliest_start(), [0, 2, 2, 7])
    assert wf.critical_path() == pytest.approx(8.0)
    assert [list(c) for c in wf.children] == [[1, 2], [3], [3], []]


def test_cycles_and_bad_parents_are_refused() -> None:
    with pytest.raises(ValueError, match="cycle"):
        Workflow("x", [Task("a", "t", 1.0, parents=(1,)), Task("b", "t", 1.0, parents=(0,))])
    with pytest.raises(ValueError, match="bad parent"):
        Workflow("x", [Task("a", "t", 1.0, parents=(5,))])


def test_instances_repeat_tasks_and_arrive_at_earliest_start() -> None:
    inst = workflow_instances(diamond(), submit_time=100.0)
    assert len(inst) == 6
    assert inst.type_names == ("work", "join", "split")  # by frequency, then name
    np.testing.assert_allclose(sorted(inst.arrival_time), [100, 102, 102, 102, 102, 107])
    assert list(inst.task).count(2) == 3


def test_derivation_rules() -> None:
    f = derive_task_fields(Task("t", "x", 10.0, cpu_usage=1.3, read_bytes=2e9, write_bytes=1e9))
    assert f["cpu_request"] == 1.5  # rounded up to a quarter core
    assert f["cpu_usage"] == 1.3
    assert f["mem_request"] == pytest.approx(3.0)  # data touched
    assert f["io_network"] == pytest.approx(200.0)  # MB/s
    assert f["io_disk"] == pytest.approx(100.0)
    g = derive_task_fields(Task("t", "x", 10.0, cores=4, memory_gb=0.01))
    assert g["cpu_request"] == 4 and g["cpu_usage"] == 4 and g["mem_request"] == 0.128


def test_concat_and_slicing() -> None:
    a = workflow_instances(diamond())
    both = FunctionInstances.concat([a, a.with_arrival_shift(50.0)])
    assert len(both) == 12 and both.arrival_time.max() == pytest.approx(57.0)
    assert len(both.sorted_by_arrival()[:5]) == 5
    assert type_table([diamond()])[0] == "work"


def test_timeline_breaks_ties_in_push_order() -> None:
    tl: Timeline[str] = Timeline()
    for name, t in [("b", 2.0), ("a", 1.0), ("c", 2.0), ("d", 2.0)]:
        tl.push(t, name)
    assert tl.peek_time() == 1.0
    assert [p for _, p in tl.pop_until(2.0)] == ["a", "b", "c", "d"]
    assert len(tl) == 0 and tl.peek_time() == float("inf")


def test_a_timelines_copy_has_its_own_heap_and_the_same_events() -> None:
    import copy

    tl: Timeline[str] = Timeline()
    for t, p in [(2.0, "b"), (1.0, "a"), (2.0, "c")]:
        tl.push(t, p)
    dup = copy.copy(tl)
    dup.push(0.5, "first")
    assert tl.pop_until(2.0) == [(1.0, "a"), (2.0, "b"), (2.0, "c")]  # untouched by the push
    assert dup.pop_until(2.0) == [(0.5, "first"), (1.0, "a"), (2.0, "b"), (2.0, "c")]
    assert len(tl) == len(dup) == 0
