"""Running workloads: cross-checks that fail loudly, records, ratios, targets, skips, device sync."""
from __future__ import annotations

import dataclasses
import operator
from functools import partial

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import bench
from tinygrad_lab.bench import runtimes
from tinygrad_lab.bench.runner import Case, compare, plan, prepare
from tinygrad_lab.bench.workloads import WORKLOADS, Target, put_all

from ._helpers import fast_timer
from ..standin import StandInBackend

MATMUL = WORKLOADS["matmul"]


def wrong_matmul(rt, host, variant):
    """A deliberately wrong implementation: a + b instead of a @ b."""
    return partial(operator.add, *put_all(rt, host, "ab"))


class SpyTimer(bench.Timer):
    """A fast timer that notes whether anything was timed."""

    def __init__(self):
        super().__init__(min_sample_s=0.0, repeats=2, warmup=1)
        self.samples = 0

    def sample(self, impl, loops):
        self.samples += 1
        return super().sample(impl, loops)


def test_a_wrong_implementation_fails_the_run_before_anything_is_timed():
    wrong = dataclasses.replace(MATMUL, name="wrong", autograd=wrong_matmul)
    timer = SpyTimer()
    with pytest.raises(bench.CrossCheckError, match=r"(?s)wrong \[8x8 float32\].*tinygrad_lab/cpu: relative error"):
        bench.run([wrong], sizes=[8], devices=["cpu"], threads=[1], timer=timer)
    assert timer.samples == 0


def test_a_result_of_the_wrong_dtype_fails_the_cross_check():
    def upcast(rt, host, variant):
        step = MATMUL.autograd(rt, host, variant)
        return lambda: step().double()

    with pytest.raises(bench.CrossCheckError, match="result dtype is float64, NumPy's is float32"):
        prepare(Case(dataclasses.replace(MATMUL, autograd=upcast), 4, "float32", ""), ["cpu"])


def test_a_copy_where_the_conversion_must_be_a_view_fails_the_cross_check():
    interop = WORKLOADS["interop"]

    def copying(rt, host, variant):
        return partial(rt.upload, host["a"].copy())

    with pytest.raises(bench.CrossCheckError, match="from_numpy copied the data"):
        prepare(Case(dataclasses.replace(interop, autograd=copying), 8, "float32", "from_numpy"), ["cpu"])


def test_an_implementation_that_raises_is_reported_and_the_others_are_still_timed():
    def broken(rt, host, variant):
        raise RuntimeError("no such op")

    records = bench.run([dataclasses.replace(MATMUL, autograd=broken)], sizes=[4], devices=["cpu"], threads=[1],
                        timer=fast_timer())
    by_impl = {r["impl"]: r for r in records}
    assert by_impl["numpy"]["status"] == "ok" and by_impl["numpy"]["median_s"] > 0
    assert by_impl["tinygrad_lab"]["status"] == "error"
    assert by_impl["tinygrad_lab"]["reason"] == "RuntimeError: no such op"
    assert by_impl["tinygrad_lab"]["median_s"] is None


def test_compare():
    ref = np.array([1.0, 2.0], np.float32)
    assert compare(ref.copy(), ref, 1e-4) is None
    assert "2 values, NumPy's has 3" in compare(ref, np.ones(3, np.float32), 1e-4)
    assert "NaN" in compare(np.array([np.nan, 1.0], np.float32), ref, 1e-4)
    assert "relative error" in compare(ref * 1.01, ref, 1e-4)


def test_records_carry_ratios_to_the_floor_and_the_speedup_over_numpy():
    records = bench.run(["matmul"], sizes=[8], devices=["cpu"], threads=[1], timer=fast_timer())
    ok = {r["impl"]: r for r in records if r["status"] == "ok"}
    assert ok["numpy"]["ratio_to_floor"] == 1.0 and ok["numpy"]["speedup_vs_numpy"] == 1.0
    tg = ok["tinygrad_lab"]
    assert tg["floor"] == "numpy"
    assert tg["ratio_to_floor"] == pytest.approx(tg["median_s"] / ok["numpy"]["median_s"])
    assert tg["speedup_vs_numpy"] == pytest.approx(ok["numpy"]["median_s"] / tg["median_s"])
    assert tg["min_s"] <= tg["median_s"] <= tg["max_s"] and tg["repeats"] == 2 and tg["inner_loops"] >= 1
    assert tg["blas_threads"] in (1, None) and tg["threads"] == 1


def test_every_thread_count_gives_its_own_records_and_is_pinned():
    records = bench.run(["matmul"], sizes=[8], devices=["cpu"], threads=[1, 2], timer=fast_timer())
    numpy_rows = [r for r in records if r["impl"] == "numpy"]
    assert [r["threads"] for r in numpy_rows] == [1, 2]
    if all(r["blas_threads"] is not None for r in numpy_rows):
        assert [r["blas_threads"] for r in numpy_rows] == [1, 2]


def test_torch_records_its_own_thread_count(torch):
    before = torch.get_num_threads()
    records = bench.run(["matmul"], sizes=[8], devices=["cpu"], threads=[1], timer=fast_timer())
    assert next(r for r in records if r["impl"] == "torch")["torch_threads"] == 1
    assert torch.get_num_threads() == before  # restored afterwards


@pytest.mark.skipif(tl.cuda.is_available(), reason="this machine has CUDA")
def test_what_cannot_run_here_is_skipped_with_the_reason():
    records = bench.run(["matmul"], sizes=[4], devices=["cpu", "cuda"], threads=[1], timer=fast_timer())
    skipped = {(r["impl"], r["device"]): r["reason"] for r in records if r["status"] == "skipped"}
    assert {"cupy", "tinygrad_lab", "torch"} == {impl for impl, device in skipped if device == "cuda"}
    assert "CUDA" in skipped["tinygrad_lab", "cuda"]
    assert all(reason for reason in skipped.values())
    assert all(r["device"] == "cuda" for r in records if r["status"] == "skipped" and r["impl"] != "torch")


def test_the_device_is_synchronised_around_every_sample_of_an_accelerator(monkeypatch):
    calls = []
    monkeypatch.setattr(StandInBackend, "synchronize", lambda self, index=0: calls.append(index))
    monkeypatch.setattr(runtimes, "_CACHE", {})  # build the runtime again, with the patched sync
    records = bench.run(["lsq"], sizes=[8], dtypes=["float64"], devices=["standin"], threads=[1],
                        timer=bench.Timer(min_sample_s=0.0, repeats=3, warmup=1))
    timed = next(r for r in records if r["impl"] == "tinygrad_lab")
    assert timed["status"] == "ok" and timed["device"] == "standin"
    # 1 after the cross-check run, 1 after the run that counts the device's work, then 2 per sample:
    # warm-up, one calibration try, 3 repeats
    assert len(calls) == 2 + 2 * (1 + 1 + 3)
    assert timed["launches_per_step"] > 0 and timed["syncs_per_step"] == 0  # counted by the stand-in


def test_targets_are_judged_against_the_run_s_own_reference():
    records = bench.run(["lsq"], sizes=[64], dtypes=["float32"], devices=["cpu"], threads=[1], timer=fast_timer())
    tg = next(r for r in records if r["impl"] == "tinygrad_lab")
    assert tg["targets"] == [{"goal": "≤40.0 µs", "met": tg["median_s"] <= 40e-6}]
    assert all(r["targets"] == [] for r in records if r["impl"] != "tinygrad_lab")


def test_target_goals_and_verdicts():
    ratio = Target("tinygrad_lab", "cpu", 1.05, ref=("numpy", "cpu"), min_size=1024)
    assert ratio.goal() == "≤1.05× numpy"
    assert ratio.applies("tinygrad_lab", "cpu", 2048) and not ratio.applies("tinygrad_lab", "cpu", 64)
    assert not ratio.applies("torch", "cpu", 2048) and not ratio.applies("tinygrad_lab", "cuda", 2048)
    assert ratio.met(1.04, {("numpy", "cpu"): 1.0}) is True
    assert ratio.met(1.06, {("numpy", "cpu"): 1.0}) is False
    assert ratio.met(1.0, {}) is None  # the reference did not run
    faster = Target("tinygrad_lab", "cuda", 0.1, ref=("tinygrad_lab", "cpu"), min_size=4096, max_size=4096)
    assert faster.goal() == "≥10× faster than tinygrad_lab/cpu"
    assert faster.applies("tinygrad_lab", "cuda", 4096) and not faster.applies("tinygrad_lab", "cuda", 8192)
    assert Target("tinygrad_lab", "cpu", 2e-6).goal() == "≤2.00 µs"


def test_plan_uses_the_workloads_own_sizes_unless_told_otherwise():
    lsq, dispatch = WORKLOADS["lsq"], WORKLOADS["dispatch"]
    assert [(c.size, c.dtype) for c in plan([lsq], quick=True)] == [
        (64, "float32"), (64, "float64"), (1024, "float32"), (1024, "float64")]
    assert [c.size for c in plan([lsq], sizes=[7], dtypes=["float64"])] == [7]
    assert [c.variant for c in plan([dispatch])] == list(dispatch.variants)


def test_unknown_workloads_are_refused_by_name():
    with pytest.raises(ValueError, match="unknown workload 'nope'; known: lsq, matmul"):
        bench.run(["nope"])


def test_host_data_is_the_same_on_every_run():
    case = Case(MATMUL, 4, "float32", "")
    assert np.array_equal(case.host_data()["a"], case.host_data()["a"])
    assert case.host_data()["a"].dtype == np.float32 and Case(MATMUL, 4, "float64", "").host_data()["a"].dtype == np.float64
    assert not np.array_equal(case.host_data()["a"], Case(MATMUL, 5, "float32", "").host_data()["a"][:4, :4])
