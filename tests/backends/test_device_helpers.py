"""The backend helpers that make a GPU give the CPU's answers (issue 22): deferred checks, index
bounds, repeated-index assignment, float remainder. Each runs on every device against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.backends.cuda import MAX_PENDING_CHECKS

from .. import fake_cupy
from .._devices import sync


def _backend(device):
    dev = tl.device(device).check()
    return dev.backend, dev.index or 0


def _on(device, arr):
    backend, index = _backend(device)
    return backend.asarray(np.asarray(arr), index=index)


def test_raise_if_raises_at_once_on_the_cpu_and_at_the_next_sync_on_a_device(device):
    backend, index = _backend(device)
    x = _on(device, [1.0, -2.0])
    bad = (x < 0).any()
    if device == "cpu":
        with pytest.raises(ValueError, match="negative"):
            backend.raise_if(bad, lambda: ValueError("negative"), index)
        return
    fake_cupy.counters.reset()
    backend.raise_if(bad, lambda: ValueError("negative"), index)  # no sync: the device is not stalled
    assert fake_cupy.counters.syncs == 0 or device == "cuda"
    with pytest.raises(ValueError, match=r"negative \(found at the next sync of .*the op that failed ran earlier\)"):
        backend.to_host(x)
    backend.to_host(x)  # reported once
    backend.raise_if((x > 5).any(), lambda: ValueError("big"), index)
    sync(device)  # nothing failed: nothing raised


def test_a_device_that_never_syncs_reads_its_checks_now_and_then():
    backend, index = _backend("standin")
    x = _on("standin", [1.0])
    sync("standin")
    fake_cupy.counters.reset()
    for _ in range(MAX_PENDING_CHECKS - 1):
        backend.raise_if(x < 0, lambda: ValueError("negative"), index)
    assert fake_cupy.counters.syncs == 0
    backend.raise_if(x < 0, lambda: ValueError("negative"), index)
    assert fake_cupy.counters.syncs == 1


@pytest.mark.parametrize("idx, message", [([0, 4, -5], None), ([0, 5], "index 5 is out of bounds for dimension 1 "
                                                                     "with size 5"),
                                          ([-6, 1], "index -6 is out of bounds for dimension 1 with size 5")])
def test_check_indices(device, idx, message):
    backend, index = _backend(device)
    if device == "cpu":
        pytest.skip("NumPy checks its own indexing: the CPU backend leaves it to NumPy")
    if message is None:
        backend.check_indices(_on(device, idx), 5, 1, index)
        sync(device)
        return
    with pytest.raises(IndexError, match=message):
        backend.check_indices(_on(device, idx), 5, 1, index)
        sync(device)


@pytest.mark.parametrize("key, values", [
    (lambda on: (on([1, 1, 3, 1]),), [1.0, 2.0, 5.0, 3.0]),
    (lambda on: (on([[0, 0], [2, 0]]), slice(None)), [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]),
    (lambda on: (on([0, 0]), on([1, 1])), [7.0, 8.0]),
    (lambda on: (on([0, 0]),), 9.0)])
def test_index_put_keeps_the_last_of_repeated_positions(device, key, values):
    backend, _ = _backend(device)
    shape = (4,) if len(key(np.asarray)) == 1 and np.ndim(values) <= 1 else (4, 2)
    expected = np.zeros(shape)
    expected[key(np.asarray)] = values  # NumPy: the last value wins
    target = _on(device, np.zeros(shape))
    v = values if np.ndim(values) == 0 else _on(device, values)
    backend.index_put(target, key(lambda a: _on(device, a)), v)
    np.testing.assert_array_equal(backend.to_host(target), expected)


def test_remainder_has_the_sign_of_the_divisor_from_fmod(device):
    backend, _ = _backend(device)
    a, b = np.array([1.0, 5.0, -5.0, -7.5, 7.5, 0.0]), np.array([0.1, np.inf, np.inf, 2.0, -2.0, -3.0])
    np.testing.assert_array_equal(backend.to_host(backend.remainder(_on(device, a), _on(device, b))),
                                  np.remainder(a, b))  # NumPy's is fmod-based, as PyTorch's
    np.testing.assert_array_equal(backend.to_host(backend.remainder(_on(device, a), 0.1)), np.remainder(a, 0.1))
    ints = np.array([7, -7, 0])
    np.testing.assert_array_equal(backend.to_host(backend.remainder(_on(device, ints), 3)), [1, 2, 0])


def test_a_stopwatch_times_the_devices_work_not_the_launch(device, monkeypatch):
    """The stand-in queues simulated work (0.05 s per launch): a wall clock around the launch sees none of it."""
    import time
    backend, index = _backend(device)
    x = _on(device, np.ones(1000))
    sync(device)
    monkeypatch.setattr(fake_cupy, "SECONDS_PER_LAUNCH", 0.05)
    t0 = time.perf_counter()
    watch = backend.stopwatch(index)
    y = x * 2.0
    watch.stop()
    launched = time.perf_counter() - t0
    if device == "standin":
        assert launched < 0.05 <= watch.seconds < 0.5
    assert watch.seconds >= 0 and backend.to_host(y)[0] == 2.0
