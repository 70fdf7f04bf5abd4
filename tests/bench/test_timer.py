"""The timer's statistics, calibration, interleaving and device synchronisation, on a fake clock."""
from __future__ import annotations

import contextlib

import pytest

from tinygrad_lab.bench.timer import Timed, Timer, Timing, fmt_time

from ._helpers import FakeClock, FakeGPU


def test_a_sample_syncs_before_starting_and_after_the_last_call_before_reading_the_clock():
    clock = FakeClock()
    impl = Timed("gpu", clock.step(1e-3), sync=lambda: clock.log.append("sync"))
    Timer(clock=clock).sample(impl, 3)
    assert clock.log == ["sync", "clock", "step", "step", "step", "sync", "clock"]


def test_without_a_sync_nothing_is_synchronised():
    clock = FakeClock()
    Timer(clock=clock).sample(Timed("cpu", clock.step(1e-3)), 2)
    assert clock.log == ["clock", "step", "step", "clock"]


def test_asynchronous_work_is_timed_only_because_of_the_sync():
    clock = FakeClock()
    gpu = FakeGPU(clock, kernel_s=2e-3)
    timer = Timer(clock=clock)
    assert timer.sample(Timed("synced", gpu.launch, sync=gpu.synchronize), 5) == pytest.approx(10e-3)
    gpu.synchronize()
    assert timer.sample(Timed("unsynced", gpu.launch), 5) == 0.0  # what a careless GPU timer reports


def test_work_queued_before_a_sample_is_not_counted_in_it():
    clock = FakeClock()
    gpu = FakeGPU(clock, kernel_s=1e-3)
    for _ in range(7):
        gpu.launch()  # left over from an earlier step
    assert Timer(clock=clock).sample(Timed("gpu", gpu.launch, sync=gpu.synchronize), 2) == pytest.approx(2e-3)


def test_every_timed_gpu_sample_of_measure_ends_with_a_sync_before_the_clock_is_read():
    clock = FakeClock()
    gpu = FakeGPU(clock, kernel_s=1e-3)
    timings = Timer(min_sample_s=5e-3, repeats=3, clock=clock).measure([Timed("gpu", gpu.launch, sync=gpu.synchronize)])
    log = clock.log
    reads = [i for i, entry in enumerate(log) if entry == "clock"]
    for start, stop in zip(reads[::2], reads[1::2]):
        assert log[start - 1] == "sync" and log[stop - 1] == "sync"
        assert set(log[start + 1:stop - 1]) == {"launch"}
    assert timings["gpu"].median_s == pytest.approx(1e-3)


def test_calibration_reaches_the_minimum_sample_duration():
    clock = FakeClock()
    timer = Timer(min_sample_s=20e-3, clock=clock)
    loops = timer.calibrate(Timed("a", clock.step(1e-3)))
    assert loops == 24  # one call took 1 ms: aim 20% past 20 ms
    assert timer.sample(Timed("a", clock.step(1e-3)), loops) >= 20e-3


def test_calibration_grows_at_most_a_hundredfold_per_try():
    clock = FakeClock()
    impl = Timed("a", clock.step(2.0**-20))  # binary fractions: the fake clock adds up exactly
    assert Timer(min_sample_s=2.0**-10, clock=clock).calibrate(impl) == 1229  # 1024 calls needed, 20% margin
    assert clock.log.count("step") == 1 + 100 + 1229  # tries of 1, 100 (capped), then 1229 loops


def test_calibration_stops_at_max_loops_when_a_step_costs_nothing():
    clock = FakeClock()
    assert Timer(min_sample_s=1.0, clock=clock, max_loops=1000).calibrate(Timed("free", clock.step(0.0))) == 1000


def test_warm_up_runs_the_step_untimed():
    clock = FakeClock()
    Timer(warmup=3, clock=clock).warm_up(Timed("a", clock.step(1.0)))
    assert clock.log.count("step") == 3


def test_median_min_and_max_are_per_iteration_over_the_samples():
    clock = FakeClock()
    costs = iter([3e-3, 1e-3, 2e-3, 5e-3, 4e-3])

    def step():
        clock.now += next(costs)  # one call per sample

    timings = Timer(repeats=5, clock=clock).interleave([Timed("a", step)], {"a": 1})
    t = timings["a"]
    assert (t.median_s, t.min_s, t.max_s) == pytest.approx((3e-3, 1e-3, 5e-3))
    assert t.samples == pytest.approx((3e-3, 1e-3, 2e-3, 5e-3, 4e-3)) and t.inner_loops == 1


def test_samples_are_divided_by_the_inner_loop_count():
    clock = FakeClock()
    t = Timer(repeats=2, clock=clock).interleave([Timed("a", clock.step(1e-3))], {"a": 8})["a"]
    assert t.samples == pytest.approx((1e-3, 1e-3)) and t.inner_loops == 8


def test_timing_statistics():
    t = Timing((4.0, 1.0, 3.0, 2.0), inner_loops=10)
    assert (t.median_s, t.min_s, t.max_s) == (2.5, 1.0, 4.0)


def test_implementations_are_interleaved_with_the_first_one_rotating():
    clock = FakeClock()
    impls = [Timed(k, clock.step(1e-3, name=k)) for k in "abc"]
    Timer(repeats=4, clock=clock).interleave(impls, {"a": 1, "b": 1, "c": 1})
    assert [e for e in clock.log if e != "clock"] == list("abc" "bca" "cab" "abc")


def test_each_implementation_keeps_its_own_loop_count():
    clock = FakeClock()
    impls = [Timed("slow", clock.step(10e-3, "slow")), Timed("fast", clock.step(1e-3, "fast"))]
    timings = Timer(min_sample_s=20e-3, repeats=2, warmup=0, clock=clock).measure(impls)
    assert timings["slow"].inner_loops < timings["fast"].inner_loops
    assert timings["slow"].median_s == pytest.approx(10e-3) and timings["fast"].median_s == pytest.approx(1e-3)


def test_the_around_context_wraps_every_sample():
    clock = FakeClock()

    @contextlib.contextmanager
    def around():
        clock.log.append("enter")
        yield
        clock.log.append("exit")

    Timer(repeats=2, clock=clock).interleave([Timed("a", clock.step(1e-3), around=around)], {"a": 1})
    assert clock.log == ["enter", "clock", "step", "clock", "exit"] * 2


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="repeats"):
        Timer(repeats=0)


@pytest.mark.parametrize("seconds, text", [
    (0.0, "0.00 ns"), (812e-9, "812 ns"), (999.4e-9, "999 ns"), (999.6e-9, "1.00 µs"), (1.25e-6, "1.25 µs"),
    (40e-6, "40.0 µs"), (0.2e-3, "200 µs"), (40.1e-3, "40.1 ms"), (0.99999, "1.00 s"), (2.0, "2.00 s"),
    (1234.0, "1234 s"),
])
def test_times_are_printed_in_an_adaptive_unit(seconds, text):
    assert fmt_time(seconds) == text
