"""tinygrad_lab.accelerator, tinygrad_lab.backends.cudnn and .mps: PyTorch's answers on a machine
without the hardware (compared with PyTorch when it has none either), and the CUDA answers when
the CUDA backend is usable (faked here; real on a GPU machine)."""
from __future__ import annotations

import pytest

import tinygrad_lab as tl

NONE = "Cannot access accelerator device when none is available."


@pytest.fixture
def no_cuda(monkeypatch):
    monkeypatch.setattr(tl.cuda, "is_available", lambda: False)


def test_accelerator_without_one_answers_as_torch(no_cuda, torch):
    if torch.accelerator.is_available():
        pytest.skip("PyTorch sees an accelerator here")
    acc = tl.accelerator
    assert acc.is_available() is False and acc.current_accelerator() is None
    assert acc.current_accelerator(check_available=True) is None and acc.device_count() == 0
    calls = [("current_device_index", ()), ("current_device_idx", ()), ("synchronize", ()), ("empty_cache", ()),
             ("memory_allocated", ()), ("max_memory_allocated", ()), ("set_device_index", (0,))]
    for name, args in calls:
        for lib in (tl, torch):
            with pytest.raises(RuntimeError, match=NONE):
                getattr(lib.accelerator, name)(*args)
    with acc.device_index(None):  # None leaves the device alone, with or without an accelerator
        pass


def test_accelerator_names_cuda_when_the_backend_is_usable(monkeypatch):
    calls = []
    monkeypatch.setattr(tl.cuda, "is_available", lambda: True)
    monkeypatch.setattr(tl.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(tl.cuda, "current_device", lambda: calls.append("current") or 0)
    monkeypatch.setattr(tl.cuda, "set_device", lambda d: calls.append(("set", d)))
    monkeypatch.setattr(tl.cuda, "synchronize", lambda d=None: calls.append(("sync", d)))
    acc = tl.accelerator
    assert acc.is_available() and acc.current_accelerator() == tl.device("cuda") and acc.device_count() == 2
    assert repr(acc.current_accelerator()) == "device(type='cuda')"
    with acc.device_index(1):
        acc.synchronize()
    assert calls == ["current", ("set", 1), ("sync", None), ("set", 0)]


@pytest.mark.skipif(not tl.cuda.is_available(), reason="needs a usable CUDA device")
def test_accelerator_on_a_real_gpu():
    assert tl.accelerator.current_accelerator().type == "cuda"
    x = tl.ones(1000, device=tl.accelerator.current_accelerator())
    (x * 2).sum()
    tl.accelerator.synchronize()
    assert tl.accelerator.memory_allocated() > 0


def test_cudnn_and_mps_answer_as_torch_without_them(torch):
    cudnn = tl.backends.cudnn
    assert cudnn.is_available() is False and cudnn.version() is None and not cudnn.is_acceptable(tl.zeros(1))
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (True, False, False, True)
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (
        torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic)
    assert tl.backends.mps.is_available() is False and tl.backends.mps.is_built() is False
    assert torch.backends.mps.is_available() is False  # (on this machine)


def test_cudnn_switches_can_be_set_and_flags_restores_them():
    cudnn = tl.backends.cudnn
    cudnn.benchmark = True
    try:
        with cudnn.flags(enabled=False, deterministic=True):
            assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (False, False, True)
        assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (True, True, False)
    finally:
        cudnn.benchmark = False


def test_the_tutorial_device_idiom_picks_the_cpu_here(no_cuda):
    device = ("cuda" if tl.cuda.is_available() else "mps" if tl.backends.mps.is_available() else "cpu")
    assert device == "cpu"
    assert (tl.accelerator.current_accelerator() or tl.device("cpu")) == tl.device("cpu")
