"""Every op of the op table, forward and backward, on each non-CPU device against the CPU.

The ops are written once against the backend's array module, so any device must
give the CPU's numbers, and every output and gradient must stay on the inputs'
device. In CI this runs on the stand-in device (tests/standin.py); on a machine
with a GPU, on CUDA too.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tinygrad_lab as tl
from tinygrad_lab.ops import movement

from .._devices import host, sync
from .op_table import OPS, TL, Lib, as_tuple

_EXACT = {"standin"}  # NumPy underneath: bit for bit; a GPU's kernels round differently


def _run(spec, case, arrays, weights, device):
    """Outputs and input gradients of the op on `device`, as host arrays (None where no gradient)."""
    xs = [tl.tensor(np.asarray(a), device=device, requires_grad=True) for a in arrays]
    on_device = Lib(tl, pad=movement.pad, tensor=lambda data, **kw: tl.tensor(data, device=device, **kw))
    outs = as_tuple(spec.call(on_device, xs, case.kwargs))  # masks and indices the op makes go to `device` too
    for o in outs:
        assert o.device == tl.device(device), f"an output of {spec!r} is on {o.device}, not {device}"
    loss = sum((o * tl.tensor(w, device=device)).sum() for o, w in zip(outs, weights) if w is not None)
    if isinstance(loss, tl.Tensor):
        loss.backward()
    for x in xs:
        assert x.grad is None or x.grad.device == x.device, f"a gradient of {spec!r} left {device}"
    return ([o.detach().cpu().numpy() for o in outs],
            [None if x.grad is None else x.grad.cpu().numpy() for x in xs])


@pytest.mark.parametrize("spec", OPS, ids=repr)
@settings(max_examples=4, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_op_on_device_matches_cpu(spec, data, other_device):
    case, arrays = data.draw(spec.examples(), label="case, inputs")
    probe = as_tuple(spec.call(TL, [tl.tensor(np.asarray(a)) for a in arrays], case.kwargs))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    weights = [rng.standard_normal(tuple(o.shape)) if o.is_floating_point() else None for o in probe]
    (outs, grads), (ref_outs, ref_grads) = (_run(spec, case, arrays, weights, d) for d in (other_device, "cpu"))
    tol = {} if other_device in _EXACT else {"rtol": 1e-6, "atol": 1e-9}
    for got, want in zip(outs + grads, ref_outs + ref_grads):
        assert (got is None) == (want is None)
        if got is not None:
            assert got.dtype == want.dtype
            if tol and want.dtype.kind == "f":
                np.testing.assert_allclose(got, want, **tol)
            else:
                np.testing.assert_array_equal(got, want)


# ============================================================================ issue 22: what a GPU does differently
# Each test runs on every device (the CPU, the CuPy-faithful stand-in, CUDA where there is one) against an
# independent truth. Each failed on the stand-in (or the CPU) before its fix (the commits say which).



@pytest.mark.parametrize("rows, cols", [(64, 64), (96, 80)])
def test_gradients_of_4096_elements_or_more(device, rows, cols):
    """A leaf's gradient from a built-in op may be kept without a copy from 4096 elements on."""
    rng = np.random.default_rng(0)
    x, w0 = rng.standard_normal((8, rows)), rng.standard_normal((rows, cols)) / 8
    w = tl.tensor(w0, device=device, requires_grad=True)
    (tl.tensor(x, device=device) @ w).tanh().sum().backward()
    np.testing.assert_allclose(host(w.grad), x.T @ (1 - np.tanh(x @ w0) ** 2), rtol=1e-10)
    table = tl.zeros(5000, 2, device=device, requires_grad=True)
    idx = rng.integers(0, 5000, 300)
    (table[tl.tensor(idx, device=device)] * 3.0).sum().backward()  # IndexAddInto: a fresh 10,000-element gradient
    expected = np.zeros((5000, 2))
    np.add.at(expected, idx, 3.0)
    np.testing.assert_array_equal(host(table.grad), expected)


def test_gather_backward_adds_up_repeated_indices(device):
    x = tl.tensor(np.arange(12.0).reshape(3, 4), device=device, requires_grad=True)
    idx = np.array([[0, 0, 3], [1, 2, 1], [3, 3, 3]])
    out = x.gather(1, tl.tensor(idx, device=device))
    np.testing.assert_array_equal(host(out), np.take_along_axis(np.arange(12.0).reshape(3, 4), idx, 1))
    (out * tl.tensor([[1.0, 2.0, 3.0]] * 3, device=device)).sum().backward()
    expected = np.zeros((3, 4))
    np.add.at(expected, (np.arange(3)[:, None], idx), [[1.0, 2.0, 3.0]] * 3)
    np.testing.assert_array_equal(host(x.grad), expected)


def _nll_reference(x, t, weight, ignore_index):
    """Mean cross-entropy of x (N, C, ...) and its gradient, by hand (NumPy)."""
    logp = x - np.log(np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)) - x.max(1, keepdims=True)
    valid = t != ignore_index
    ts = np.where(valid, t, 0)
    w = weight[ts] * valid
    picked = np.take_along_axis(logp, ts[:, None], 1)[:, 0]
    loss = -(picked * w).sum() / w.sum()
    onehot = np.zeros_like(x)
    np.put_along_axis(onehot, ts[:, None], 1.0, 1)
    grad = (np.exp(logp) - onehot) * w[:, None] / w.sum()
    return loss, grad


@pytest.mark.parametrize("spatial", [(5,), (3, 4)])
def test_cross_entropy_on_n_c_d_inputs(device, spatial):
    rng = np.random.default_rng(1)
    x0, t0 = rng.standard_normal((2, 4, *spatial)), rng.integers(0, 4, (2, *spatial))
    t0.flat[0] = -100  # ignored
    weight = np.array([1.0, 2.0, 0.5, 1.5])
    x = tl.tensor(x0, device=device, requires_grad=True)
    loss = tl.nn.functional.cross_entropy(x, tl.tensor(t0, device=device), weight=tl.tensor(weight, device=device))
    loss.backward()
    ref_loss, ref_grad = _nll_reference(x0, t0, weight, -100)
    np.testing.assert_allclose(loss.item(), ref_loss, rtol=1e-12)
    np.testing.assert_allclose(host(x.grad), ref_grad, rtol=1e-10, atol=1e-15)


_OOB = r"index {i} is out of bounds for (dimension|axis) {d} with size {n}"


@pytest.mark.parametrize("key, i, d, n", [
    (lambda k: k([0, 5]), 5, 0, 5), (lambda k: k([-6]), -6, 0, 5),
    (lambda k: (slice(None), k([1, 4])), 4, 1, 4), (lambda k: (k([1]), k([0, 9])), 9, 1, 4)])
def test_out_of_bounds_indices_raise_instead_of_wrapping(device, key, i, d, n):
    """PyTorch's CUDA backend checks indices too; CuPy wraps them around silently."""
    x = tl.tensor(np.arange(20.0).reshape(5, 4) if d or i == 9 else np.arange(5.0), device=device)
    if i == 9:
        x = x.reshape(4, 5)[:, :4]
        n = 4
    k = key(lambda v: tl.tensor(v, device=device))
    with pytest.raises(IndexError, match=_OOB.format(i=i, d=d, n=n)):
        y = x[k]
        sync(device)
        host(y)


def test_out_of_bounds_index_assignment_raises(device):
    x = tl.zeros(5, device=device)
    with pytest.raises(IndexError, match=_OOB.format(i=7, d=0, n=5)):
        x[tl.tensor([1, 7], device=device)] = 1.0
        sync(device)
    w = tl.zeros(5, device=device, requires_grad=True)
    with pytest.raises(IndexError, match=_OOB.format(i=5, d=0, n=5)):
        y = w * 1.0
        y[tl.tensor([5], device=device)] = tl.tensor([2.0], device=device)  # recorded: IndexPut, then its backward
        y.sum().backward()
        sync(device)


@pytest.mark.parametrize("op", ["embedding", "gather", "nll_loss", "bce_input", "bce_target"])
def test_the_checks_already_in_place_still_hold(device, op):
    """Raised at the op on the CPU; on a device by the next sync at the latest."""
    F = tl.nn.functional
    x = tl.randn(4, 3, device=device)
    bad = tl.tensor([0, 4], device=device)
    p = tl.full((2,), 0.5, device=device)
    run = {"embedding": lambda: F.embedding(bad, x), "gather": lambda: x.gather(0, bad.reshape(2, 1)),
           "nll_loss": lambda: F.nll_loss(x[:2], tl.tensor([1, 3], device=device)),
           "bce_input": lambda: F.binary_cross_entropy(p * 3.0, p), "bce_target": lambda: F.binary_cross_entropy(p, -p)}
    with pytest.raises((IndexError, RuntimeError), match=r"out of (range|bounds)|should be between 0 and 1"):
        host(run[op]())
        sync(device)


def test_repeated_indices_in_an_assignment_keep_the_last_value_everywhere(device):
    """As NumPy and PyTorch on the CPU: one answer on every device."""
    x = tl.zeros(4, device=device)
    x[tl.tensor([1, 1, 3, 1], device=device)] = tl.tensor([1.0, 2.0, 5.0, 3.0], device=device)
    np.testing.assert_array_equal(host(x), [0, 3, 0, 5])
    y = tl.zeros(2, 2, device=device, requires_grad=True) * 1.0
    y[tl.tensor([0, 0], device=device), tl.tensor([1, 1], device=device)] = tl.tensor([7.0, 8.0], device=device)
    np.testing.assert_array_equal(host(y), [[0, 8], [0, 0]])


@pytest.mark.parametrize("write", ["add_", "mul_", "copy_", "fill_", "setitem", "iadd", "index_put"])
def test_writes_into_an_expanded_tensor_are_refused(device, write):
    base = tl.zeros(3, device=device)
    e = base.expand(2, 3)
    ones = tl.ones(2, 3, device=device)
    do = {"add_": lambda: e.add_(1.0), "mul_": lambda: e.mul_(2.0), "copy_": lambda: e.copy_(ones),
          "fill_": lambda: e.fill_(1.0), "setitem": lambda: e.__setitem__(0, 1.0),
          "iadd": lambda: e.__iadd__(ones), "index_put": lambda: e.__setitem__(tl.tensor([1], device=device), 4.0)}
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory"):
        do[write]()
    np.testing.assert_array_equal(host(base), [0, 0, 0])


@pytest.mark.parametrize("dtype, data, scalar, expected", [
    ("float16", [1.0, 2.0], 1e5, [np.inf, np.inf]), ("float16", [1.0, 2.0], 256, [256, 512]),
    ("float32", [1.0, -1.0], 1e39, [np.inf, -np.inf])])
def test_python_scalars_keep_a_float_tensors_dtype(device, dtype, data, scalar, expected):
    """PyTorch's rule: a Python number never widens a tensor's float dtype (CuPy 13 promotes by the
    scalar's value: float16 * 256 is float32 there, float32 * 1e39 float64)."""
    out = tl.tensor(np.array(data, dtype=dtype), device=device) * scalar
    assert out.dtype is getattr(tl, dtype)
    np.testing.assert_array_equal(host(out), np.array(expected, dtype=dtype))


@pytest.mark.parametrize("scalar, expected", [(255, [0, 1]), (300, [45, 46]), (-1, [0, 1]), (-257, [0, 1])])
def test_python_ints_wrap_into_an_integer_tensors_dtype(device, scalar, expected):
    """PyTorch wraps a Python int into the tensor's integer dtype (uint8 + 300 == uint8 + 44)."""
    out = tl.tensor([1, 2], dtype=tl.uint8, device=device) + scalar
    assert out.dtype is tl.uint8
    np.testing.assert_array_equal(host(out), expected)


def test_float_remainder_has_the_sign_of_the_divisor_as_pytorch(device):
    a = tl.tensor(np.array([1.0, 5.0, -5.0, -7.5, 7.5]), device=device)
    b = tl.tensor(np.array([0.1, np.inf, np.inf, 2.0, -2.0]), device=device)
    expected = np.fmod([1.0, 5.0, -5.0, -7.5, 7.5], [0.1, np.inf, np.inf, 2.0, -2.0])
    expected = np.where((expected != 0) & ((expected < 0) != (np.array([0.1, 1, 1, 2, -2]) < 0)),
                        expected + [0.1, np.inf, np.inf, 2.0, -2.0], expected)
    np.testing.assert_array_equal(host(a % b), expected)  # [0.0999..., 5, inf, 0.5, -0.5]
    np.testing.assert_array_equal(host(a % 0.1)[:1], expected[:1])


@pytest.mark.parametrize("fn", [lambda x: (x * x).sum(), lambda x: x.softmax(-1).log().mean(),
                                lambda x: (x @ x.T).tanh().sum(), lambda x: tl.nn.functional.relu(x).max()])
def test_float16_forward_and_backward_match_the_cpu(device, fn):
    rng = np.random.default_rng(2)
    data = rng.standard_normal((4, 6)).astype(np.float16)
    outs = []
    for d in ("cpu", device):
        x = tl.tensor(data, device=d, requires_grad=True)
        y = fn(x)
        y.backward()
        assert y.dtype is tl.float16 and x.grad.dtype is tl.float16
        outs.append((host(y), host(x.grad)))
    tol = {"rtol": 0, "atol": 0} if device != "cuda" else {"rtol": 2e-3, "atol": 2e-3}
    for a, b in zip(*outs):
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), **tol)
