"""The simulated GPU of the lessons: launches really are queued (they return while the stream is
blocked), reading values waits for them, errors surface at synchronize, results equal the CPU's,
and the memory figures follow PyTorch's caching allocator."""
from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.backends import simgpu


@pytest.fixture
def blocked_stream():
    """The stream held at a gate (a kernel that waits); released, and drained, at the end."""
    gate = threading.Event()
    simgpu.synchronize()
    simgpu._stream.launch(gate.wait)
    yield gate
    gate.set()
    simgpu.synchronize()


def _in_thread(fn) -> threading.Thread:
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    return t


def test_launches_return_while_the_stream_is_busy_and_reads_wait(blocked_stream):
    a = tl.ones(3, 3, device="simgpu")
    out = {}
    launcher = _in_thread(lambda: out.setdefault("c", (a @ a + 1).relu()))
    launcher.join(10)
    assert not launcher.is_alive(), "a launch waited for the stream"
    reader = _in_thread(lambda: out.setdefault("values", out["c"].tolist()))
    reader.join(0.3)
    assert reader.is_alive(), "reading values did not wait for the queued work"
    blocked_stream.set()
    reader.join(10)
    assert out["values"] == [[4.0] * 3] * 3


def test_a_kernels_error_surfaces_at_the_next_synchronize():
    simgpu._stream.launch(lambda: 1 / 0)
    with pytest.raises(RuntimeError, match="simgpu: a queued kernel failed .*ZeroDivisionError.*next synchron"):
        simgpu.synchronize()
    simgpu.synchronize()  # reported once


def test_training_step_matches_the_cpu():
    tl.manual_seed(0)
    cpu = tl.nn.Sequential(tl.nn.Linear(4, 8), tl.nn.Tanh(), tl.nn.Linear(8, 3))
    gpu = tl.nn.Sequential(tl.nn.Linear(4, 8), tl.nn.Tanh(), tl.nn.Linear(8, 3)).to("simgpu")
    gpu.load_state_dict(cpu.state_dict())
    x, y = tl.randn(16, 4), tl.randint(0, 3, (16,))
    for model, xs, ys in ((cpu, x, y), (gpu, x.to("simgpu"), y.to("simgpu"))):
        opt = tl.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            tl.nn.functional.cross_entropy(model(xs), ys).backward()
            opt.step()
    for p, q in zip(cpu.parameters(), gpu.parameters()):
        np.testing.assert_allclose(q.detach().cpu().numpy(), p.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("a, b", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((5, 2, 3), (3, 4)),
                                  ((1, 2, 3), (4, 3, 2))])
def test_matmul_output_shapes_are_numpys(a, b):
    got = tl.ones(*a, device="simgpu") @ tl.ones(*b, device="simgpu")
    assert tuple(got.shape) == np.matmul(np.ones(a), np.ones(b)).shape
    with pytest.raises((ValueError, RuntimeError)):
        tl.ones(2, 3, device="simgpu") @ tl.ones(2, 3, device="simgpu")


def test_memory_figures_follow_pytorchs_caching_allocator():
    simgpu.synchronize()
    gc.collect()
    simgpu.empty_cache()
    base, reserved0 = simgpu.memory_allocated(), simgpu.memory_reserved()
    simgpu.reset_peak_memory_stats()
    x = tl.empty(1000, device="simgpu")  # 4000 bytes: one 4096-byte block
    assert simgpu.memory_allocated() == base + 4096 and simgpu.max_memory_allocated() == base + 4096
    assert simgpu.memory_reserved() == reserved0 + 4096
    del x
    gc.collect()
    assert simgpu.memory_allocated() == base and simgpu.memory_reserved() == reserved0 + 4096  # cached
    y = tl.empty(1000, device="simgpu")  # the cached block is reused
    assert simgpu.memory_reserved() == reserved0 + 4096
    del y
    gc.collect()
    simgpu.empty_cache()
    assert simgpu.memory_reserved() == reserved0 and simgpu.max_memory_allocated() == base + 4096
