"""rlsched.runtime: one compute thread for torch and numpy's BLAS on the acting path."""

import torch
from threadpoolctl import threadpool_info, threadpool_limits

from rlsched import runtime


def _blas_threads() -> set[int]:
    return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}


def test_set_torch_threads_limits_torch_and_blas(monkeypatch) -> None:
    monkeypatch.delenv("RLSCHED_TORCH_THREADS", raising=False)
    before_torch = torch.get_num_threads()
    with threadpool_limits(limits=2, user_api="blas"):  # restored on exit, as before the test
        monkeypatch.setattr(runtime, "_blas_threads", None)
        assert _blas_threads() == {2}
        assert runtime.set_torch_threads() == 1
        assert torch.get_num_threads() == 1
        assert _blas_threads() == {1}
        monkeypatch.setattr(runtime, "_blas_threads", None)
        assert runtime.set_torch_threads(2) == 2
        assert _blas_threads() == {2}
    torch.set_num_threads(before_torch)
