"""Device semantics, as PyTorch's: naming devices, moving tensors and modules, the
mixed-device error, optimizer state placement, save/load with map_location, seeded
random numbers per device; and `tinygrad_lab.cuda` where CUDA is missing.

The moving tests run on `other_device`: the stand-in accelerator in CI
(tests/standin.py), and CUDA on a machine with a GPU.
"""
from __future__ import annotations

import re
import types

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn, optim
from tinygrad_lab.backends import cuda as cuda_backend


def host(t) -> np.ndarray:
    return t.detach().cpu().numpy()


# ---------------------------------------------------------------- naming devices

def test_device_strings_and_objects(other_device):
    d = tl.device(other_device)
    assert d.type == other_device and d.index is None and str(d) == other_device
    d0 = tl.device(f"{other_device}:0")
    assert d0 is tl.device(other_device, 0) and d0.index == 0
    assert repr(d0) == f"device(type='{other_device}', index=0)"
    assert d == d0 and d0 == f"{other_device}:0" and d0 != "cpu"
    t = tl.zeros(2, device=other_device)
    assert t.device is d0  # a tensor's device always has its index, as PyTorch reports 'cuda:0'
    assert tl.device("cpu").index is None and str(tl.device("cpu")) == "cpu"


def test_bad_device_names_say_what_is_wrong():
    with pytest.raises(RuntimeError, match=r"unknown device type 'gpu' in 'gpu:0'; known device types: .*cpu.*cuda"):
        tl.device("gpu:0")
    with pytest.raises(RuntimeError, match=r"the index after ':' must be a number"):
        tl.device("cpu:x")
    with pytest.raises(RuntimeError, match="the cpu device has no index 1"):
        tl.zeros(1, device="cpu:1")
    with pytest.raises(TypeError, match="device must be a string"):
        tl.device(3.5)


@pytest.mark.parametrize("factory", [
    lambda d: tl.tensor([1.0, 2.0], device=d), lambda d: tl.as_tensor([1, 2], device=d),
    lambda d: tl.zeros(2, 3, device=d), lambda d: tl.ones(2, device=d), lambda d: tl.full((2,), 7.0, device=d),
    lambda d: tl.empty(2, device=d), lambda d: tl.eye(3, device=d), lambda d: tl.arange(5, device=d),
    lambda d: tl.linspace(0, 1, 4, device=d), lambda d: tl.rand(3, device=d), lambda d: tl.randn(3, device=d),
    lambda d: tl.randint(0, 9, (3,), device=d), lambda d: tl.randperm(4, device=d),
    lambda d: tl.normal(0.0, 1.0, (3,), device=d),
    lambda d: tl.zeros_like(tl.ones(2), device=d), lambda d: tl.ones(2, device=d).new_zeros(3),
])
def test_every_factory_takes_device(factory, other_device):
    t = factory(other_device)
    assert t.device == tl.device(other_device) and t.device.type == other_device


# ---------------------------------------------------------------- moving tensors

def test_to_cpu_and_back_copies_values_and_carries_gradient(other_device):
    x = tl.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True)
    y = x.to(other_device)
    assert y.device.type == other_device and y.grad_fn is not None and not y.is_leaf
    assert y.to(other_device) is y and x.to("cpu") is x  # already there: no copy (as PyTorch)
    z = (y * y).sum()
    assert z.device == y.device
    z.backward()
    assert x.grad.device is tl.device("cpu")
    np.testing.assert_array_equal(x.grad.numpy(), 2 * x.detach().numpy())
    back = y.cpu()
    np.testing.assert_array_equal(back.detach().numpy(), x.detach().numpy())


def test_to_forms_dtype_non_blocking_and_copy(other_device):
    x = tl.arange(4)
    y = x.to(other_device, tl.float64, non_blocking=True)
    assert y.device.type == other_device and y.dtype is tl.float64
    z = x.to(device=other_device, dtype=tl.float32)
    assert z.dtype is tl.float32 and z.device == y.device
    w = tl.ones(3).to(z)  # to(other_tensor): its dtype and device
    assert w.device == z.device and w.dtype is z.dtype
    c = z.to(other_device, copy=True)
    assert c is not z and c.device == z.device
    np.testing.assert_array_equal(host(c), [0, 1, 2, 3])


def test_numpy_of_device_tensor_gives_pytorch_advice(other_device):
    t = tl.ones(2, device=other_device)
    with pytest.raises(TypeError, match=rf"can't convert {other_device}:0 device type tensor to numpy\. "
                                        r"Use Tensor\.cpu\(\)"):
        t.numpy()
    with pytest.raises(TypeError, match=r"Tensor\.cpu\(\)"):
        np.asarray(t)
    assert t.tolist() == [1.0, 1.0] and t.sum().item() == 2.0  # these copy to the host by design
    assert repr(t) == f"tensor([1., 1.], device='{other_device}:0')"


def test_mixing_devices_names_op_and_devices_and_suggests_to(other_device):
    a = tl.ones(3, device=other_device)
    b = tl.ones(3)
    for bad in (lambda: a + b, lambda: b * a, lambda: tl.matmul(b, a), lambda: tl.where(b > 0, a, b),
                lambda: tl.cat([a, b])):
        with pytest.raises(RuntimeError) as info:
            bad()
        msg = str(info.value)
        assert "Expected all tensors to be on the same device" in msg
        assert f"{other_device}:0" in msg and "cpu" in msg
        assert "(in op " in msg and ".to('" in msg
    with pytest.raises(RuntimeError, match=r"same device.*in op Add"):
        a + b
    with pytest.raises(RuntimeError, match=r"same device"):
        a.add_(b)


def test_indexing_with_host_indices_works_on_device(other_device):
    x = tl.arange(6.0, device=other_device).reshape(2, 3).requires_grad_()
    y = x[tl.tensor([1, 1, 0])]  # CPU indices are allowed, as in PyTorch
    y.sum().backward()
    np.testing.assert_array_equal(host(x.grad), [[1, 1, 1], [2, 2, 2]])
    assert x.grad.device == x.device


# ---------------------------------------------------------------- modules and optimizers

def test_module_to_moves_parameters_buffers_and_grads_in_place(other_device):
    tl.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
    params = list(net.parameters())
    before = [p.detach().numpy().copy() for p in params]
    net(tl.randn(5, 3)).sum().backward()
    assert net.to(other_device) is net
    assert list(net.parameters()) == params and all(a is b for a, b in zip(net.parameters(), params))
    for p, b in zip(params, before):
        assert p.device.type == other_device and p.grad.device == p.device and p.is_leaf and p.requires_grad
        np.testing.assert_array_equal(host(p), b)
    for name, buf in net.named_buffers():
        assert buf.device.type == other_device, name
    out = net(tl.randn(5, 3, device=other_device))
    assert out.device.type == other_device
    with pytest.raises(RuntimeError, match=r"same device.*\.to\("):
        net(tl.randn(5, 3))  # a CPU batch for a model on another device: the newcomer's error
    net.cpu()
    assert all(p.device is tl.device("cpu") for p in net.parameters())


def test_same_model_same_numbers_on_each_device(other_device):
    """One training step on the device equals the CPU's (the model is copied with state_dict)."""
    tl.manual_seed(1)
    cpu_net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    dev_net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)).to(other_device)
    dev_net.load_state_dict(cpu_net.state_dict())
    x, y = tl.randn(6, 4), tl.tensor([0, 2, 1, 1, 0, 2])
    results = []
    for net, d in ((cpu_net, "cpu"), (dev_net, other_device)):
        opt = optim.Adam(net.parameters(), lr=0.01)
        loss = nn.functional.cross_entropy(net(x.to(d)), y.to(d))
        loss.backward()
        opt.step()
        results.append([host(loss)] + [host(p) for p in net.parameters()])
    tol = {"rtol": 1e-5, "atol": 1e-6} if other_device == "cuda" else {"rtol": 0, "atol": 0}
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, **tol)


@pytest.mark.parametrize("make_opt", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
                                      lambda ps: optim.Adam(ps, lr=0.1, amsgrad=True),
                                      lambda ps: optim.RMSprop(ps, lr=0.1, momentum=0.5, centered=True),
                                      lambda ps: optim.Adagrad(ps, lr=0.1)])
def test_optimizer_state_lives_on_the_parameters_device(make_opt, other_device, tmp_path):
    p = tl.tensor([1.0, -2.0, 3.0], device=other_device, requires_grad=True)
    opt = make_opt([p])
    (p * p).sum().backward()
    opt.step()
    tensors = {k: v for k, v in opt.state[p].items() if isinstance(v, tl.Tensor) and v.shape == p.shape}
    assert tensors, "the optimizer kept no per-parameter state"
    for name, v in tensors.items():
        assert v.device == p.device, f"state {name!r} is on {v.device}, the parameter on {p.device}"
    # loading a CPU checkpoint of the state puts it on the parameter's device, as PyTorch does
    tl.save(opt.state_dict(), tmp_path / "opt.tl")
    fresh = make_opt([p])
    fresh.load_state_dict(tl.load(tmp_path / "opt.tl", map_location="cpu"))
    for name, v in fresh.state[p].items():
        if isinstance(v, tl.Tensor) and v.shape == p.shape:
            assert v.device == p.device, name
            np.testing.assert_array_equal(host(v), host(tensors[name]))


# ---------------------------------------------------------------- save / load

def test_save_on_device_load_where_asked(other_device, tmp_path):
    net = nn.Linear(2, 2).to(other_device)
    path = tmp_path / "net.tl"
    tl.save(net.state_dict(), path)
    same = tl.load(path)
    assert all(v.device == net.weight.device for v in same.values())
    on_cpu = tl.load(path, map_location="cpu")
    assert all(v.device is tl.device("cpu") for v in on_cpu.values())
    np.testing.assert_array_equal(on_cpu["weight"].numpy(), host(net.weight))
    back = tl.load(tmp_path / "net.tl", map_location={f"{other_device}:0": "cpu"})
    assert back["bias"].device is tl.device("cpu")
    cpu_net = nn.Linear(2, 2)
    cpu_net.load_state_dict(tl.load(path, map_location=lambda t, loc: t))  # a function: stays on the CPU
    np.testing.assert_array_equal(cpu_net.weight.detach().numpy(), host(net.weight))


# ---------------------------------------------------------------- random numbers

def test_random_numbers_on_a_device_are_seeded(other_device):
    tl.manual_seed(7)
    a = host(tl.randn(5, device=other_device))
    tl.manual_seed(7)
    b = host(tl.randn(5, device=other_device))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, host(tl.randn(5, device=other_device)))


def test_seeding_one_device_type_leaves_the_others_alone():
    from tinygrad_lab import random
    tl.manual_seed(3)
    cpu_draws = [tl.rand(4).numpy() for _ in range(2)]
    tl.manual_seed(3)
    standin_first = host(tl.rand(4, device="standin"))
    np.testing.assert_array_equal(standin_first, cpu_draws[0])  # one seed: each device starts its own stream

    tl.manual_seed(3)
    tl.rand(4)
    random.manual_seed_device_type("standin", 99)  # what tl.cuda.manual_seed does for 'cuda'
    np.testing.assert_array_equal(tl.rand(4).numpy(), cpu_draws[1])  # the CPU stream went on undisturbed
    x = host(tl.rand(4, device="standin"))
    assert not np.array_equal(x, standin_first)
    random.manual_seed_device_type("standin", 99)
    np.testing.assert_array_equal(host(tl.rand(4, device="standin")), x)

    tl.manual_seed(3)  # the global seed resets the per-type seeds too
    np.testing.assert_array_equal(host(tl.rand(4, device="standin")), standin_first)


# ---------------------------------------------------------------- tinygrad_lab.cuda without a GPU

def _fake_cupy(count=1, count_error=None, kernel_error=None, wrong=False):
    def get_count():
        if count_error:
            raise count_error
        return count

    class Arr:
        def __init__(self, v):
            self.v = v

        def __add__(self, k):
            return Arr([x + k for x in self.v])

        def sum(self):
            return sum(self.v) + (1 if wrong else 0)

    def arange(n):
        if kernel_error:
            raise kernel_error
        return Arr(list(range(n)))

    return types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=get_count)),
                                 arange=arange)


def _importer(module=None, error=None):
    def importer(name):
        assert name == "cupy"
        if error:
            raise error
        return module
    return importer


@pytest.mark.parametrize("importer, reason", [
    (_importer(error=ImportError("No module named 'cupy'")), r"CuPy is not installed.*tinygrad-lab\[cuda\].*cupy-cuda13x"),
    (_importer(error=OSError("libcudart.so.12: cannot open shared object file")), r"CuPy is not installed.*libcudart"),
    (_importer(_fake_cupy(count_error=RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected"))),
     r"cannot reach an NVIDIA driver or GPU.*no CUDA-capable device"),
    (_importer(_fake_cupy(count=0)), r"no NVIDIA GPU was found"),
    (_importer(_fake_cupy(kernel_error=RuntimeError("nvrtc: error: failed to open libnvrtc-builtins.so"))),
     r"CuPy failed to initialise CUDA.*libnvrtc"),
    (_importer(_fake_cupy(wrong=True)), r"wrong result"),
])
def test_cuda_probe_never_raises_and_says_why(importer, reason):
    cupy, count, why = cuda_backend.probe(importer)
    assert cupy is None and count == 0
    assert why is not None and re.search(reason, why), why
    backend = cuda_backend.CUDABackend(importer)
    assert backend.status() == (False, why)
    with pytest.raises(RuntimeError, match=r"CUDA is not available: .*device='cpu'.*is_available\(\)"):
        backend.check(0)


def test_cuda_probe_accepts_a_working_cupy():
    fake = _fake_cupy(count=2)
    assert cuda_backend.probe(_importer(fake)) == (fake, 2, None)


@pytest.mark.skipif(tl.cuda.is_available(), reason="checks the behaviour without CUDA")
def test_cuda_module_without_a_gpu():
    assert tl.cuda.is_available() is False
    assert isinstance(tl.cuda.unavailable_reason(), str) and tl.cuda.unavailable_reason()
    assert tl.cuda.device_count() == 0
    assert repr(tl.device("cuda:0")) == "device(type='cuda', index=0)"  # naming a device never fails
    tl.cuda.manual_seed(1)  # ignored, as in PyTorch
    tl.cuda.manual_seed_all(1)
    tl.cuda.empty_cache()
    # the memory figures are 0, as PyTorch reports them without a GPU
    assert tl.cuda.memory_allocated() == tl.cuda.max_memory_allocated() == tl.cuda.memory_reserved() == 0
    with tl.cuda.device(None):
        pass
    for needs_gpu in (tl.cuda.synchronize, tl.cuda.get_device_name, tl.cuda.current_device,
                      lambda: tl.cuda.device(0)):
        with pytest.raises(RuntimeError, match="CUDA is not available: "):
            needs_gpu()
    for make in (lambda: tl.zeros(2, device="cuda"), lambda: tl.ones(2).cuda(), lambda: tl.ones(2).to("cuda:0"),
                 lambda: nn.Linear(2, 2).cuda()):
        with pytest.raises(RuntimeError, match="CUDA is not available: "):
            make()
    assert not tl.ones(1).is_cuda


@pytest.mark.skipif(not tl.cuda.is_available(), reason=f"CUDA unavailable: {tl.cuda.unavailable_reason()}")
def test_cuda_module_with_a_gpu():
    assert tl.cuda.device_count() >= 1 and tl.cuda.get_device_name()
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        tl.zeros(1, device=f"cuda:{tl.cuda.device_count()}")
    tl.cuda.empty_cache()
    tl.cuda.reset_peak_memory_stats()
    base = tl.cuda.memory_allocated()
    x = tl.zeros(1024, 1024, device="cuda")  # 4 MiB
    assert tl.cuda.memory_allocated() >= base + 4 * 2**20
    assert tl.cuda.memory_reserved() >= tl.cuda.memory_allocated()
    peak = tl.cuda.max_memory_allocated()
    del x
    tl.cuda.synchronize()
    assert tl.cuda.memory_allocated() < peak and tl.cuda.max_memory_allocated() == peak
    reserved = tl.cuda.memory_reserved()
    tl.cuda.empty_cache()  # the freed 4 MiB block goes back to the driver; nothing live changes
    assert tl.cuda.memory_reserved() <= reserved - 4 * 2**20 and tl.cuda.memory_allocated() < peak
    with tl.cuda.device(tl.cuda.device_count() - 1):
        assert tl.cuda.current_device() == tl.cuda.device_count() - 1
    assert tl.cuda.current_device() == 0
    tl.cuda.manual_seed(5)
    a = host(tl.rand(3, device="cuda"))
    tl.cuda.manual_seed(5)
    np.testing.assert_array_equal(a, host(tl.rand(3, device="cuda")))
    assert tl.ones(1, device="cuda").is_cuda
    import cupy
    assert isinstance(tl.ones(2, device="cuda")._data, cupy.ndarray)


# ---------------------------------------------------------------- the stand-in runs CuPy's code path

def test_standin_takes_the_helpers_the_cuda_backend_inherits():
    """CI has no GPU, so the base Backend's helpers (the code CuPy runs) are tested through the
    stand-in: it must use each one CUDABackend inherits, not a CPU fast path. A new CPU fast
    path fails here until the stand-in takes the base version too."""
    from tinygrad_lab.backends.base import Backend
    from tinygrad_lab.backends.cpu import CPUBackend
    from tinygrad_lab.backends.cuda import CUDABackend

    from .standin import StandInBackend

    inherited = [name for name, value in vars(Backend).items()
                 if callable(value) and not name.startswith("__") and name not in vars(CUDABackend)]
    assert "sum" in inherited and "amax" in inherited  # the list is not empty by accident
    for name in inherited:
        if name in vars(CPUBackend):  # the CPU backend has its own: the stand-in must not take it
            assert getattr(StandInBackend, name) is getattr(Backend, name), name


# ---------------------------------------------------------------- device memory (the CUDA backend's, on the stand-in)

def test_peak_memory_is_noted_only_once_asked_for():
    """CuPy's pool keeps no peak: noting one runs Python on every allocation, so it starts only when asked."""
    from . import fake_cupy
    backend = tl.device("standin").backend
    tl.ones(1, device="standin")  # CUDA found usable
    backend.track_peak_memory(False)
    fake_cupy.counters.reset()
    x = tl.ones(256, device="standin") * 2.0
    assert fake_cupy.counters.allocator_calls == 0
    backend.reset_peak_memory_stats(0)
    base = backend.memory_allocated(0)
    y = tl.zeros(1024, 1024, device="standin")  # 4 MiB
    del y
    assert fake_cupy.counters.allocator_calls >= 1
    assert backend.memory_allocated(0) == base and backend.max_memory_allocated(0) >= base + 4 * 2**20
    backend.track_peak_memory(False)
    assert x.sum().item() == 512.0


def test_an_op_event_on_a_device_times_the_work_not_the_launch(monkeypatch):
    """The stand-in queues 0.05 s of simulated work per launch, which a wall clock around the launch misses."""
    from . import fake_cupy
    from tinygrad_lab.autograd import events
    x = tl.ones(1000, device="standin")
    monkeypatch.setattr(fake_cupy, "SECONDS_PER_LAUNCH", 0.05)
    seen = []
    with events.subscribe(seen.append):
        x * 2.0
    (event,) = seen
    assert 0.05 <= event.seconds < 0.5
