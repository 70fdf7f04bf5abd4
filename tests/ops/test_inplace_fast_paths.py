"""The in-place ops an optimizer step is made of, on their no-grad fast paths (ops/inplace.py):
add_/sub_ with alpha through the backend's axpy (BLAS on the CPU), sqrt_/exp_/... as one ufunc
writing into the tensor (`unary_`), addcmul_/addcdiv_ as one new array added in (`addc_`).
Each must give what the out-of-place op gives, write into the tensor's own memory (views and
from_numpy arrays see it), bump the version, and refuse what the general path refuses."""
from __future__ import annotations

import ast
import subprocess
import sys

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.backends.base import Backend
from tinygrad_lab.backends.cpu import CPUBackend

UNARY = ["sqrt", "exp", "log", "log1p", "sin", "cos", "tan", "tanh", "abs", "neg", "floor", "ceil", "trunc",
         "sign", "square"]


def _rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- the backend's axpy

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "broadcast", "scalar", "same"])
def test_axpy_adds_alpha_times_x_into_y_like_numpy(dtype, layout):
    y = (_rand((6, 5), np.float64) * 10).astype(dtype)
    x = {"contiguous": (_rand((6, 5), np.float64, 1) * 10).astype(dtype),
         "strided": (_rand((6, 10), np.float64, 1) * 10).astype(dtype)[:, ::2],
         "broadcast": (_rand((5,), np.float64, 1) * 10).astype(dtype),
         "scalar": 3, "same": y}[layout]
    alpha = 2 if dtype == np.int64 else -0.75
    want = y + np.asarray(x * alpha).astype(dtype) if dtype != np.int64 else y + x * alpha
    expected = want.copy()
    CPUBackend().axpy(y, x, alpha)
    tol = {np.float16: 2e-3, np.float32: 1e-6, np.float64: 1e-14}.get(dtype, 0)
    np.testing.assert_allclose(y, expected, rtol=tol, atol=tol)


def test_axpy_of_overlapping_views_reads_x_before_writing_y():
    a = np.arange(8.0)
    CPUBackend().axpy(a[1:], a[:-1], 1.0)  # BLAS would read values it already wrote: the general path
    np.testing.assert_array_equal(a, [0, 1, 3, 5, 7, 9, 11, 13])


def test_axpy_into_read_only_memory_is_refused_not_silently_dropped():
    y = np.ones(4, np.float32)
    y.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        CPUBackend().axpy(y, np.ones(4, np.float32), 2.0)


def test_axpy_of_non_native_byte_order_is_right():
    y = np.ones(4, ">f4")
    CPUBackend().axpy(y, np.full(4, 2, ">f4"), 3.0)
    np.testing.assert_array_equal(y, [7, 7, 7, 7])


def test_the_base_backend_axpy_is_the_two_step_reference():
    y, x = _rand(7), _rand(7, seed=1)
    want = y + x * np.float32(0.5)
    Backend.axpy(CPUBackend(), y, x, 0.5)
    np.testing.assert_array_equal(y, want)


# ---------------------------------------------------------------- add_ / sub_ with alpha

@pytest.mark.parametrize("op", ["add", "sub"])
def test_add_and_sub_with_alpha_in_place_match_out_of_place(op):
    x, other = tl.tensor(_rand((4, 3))), tl.tensor(_rand((4, 3), seed=1))
    want = getattr(x, op)(other, alpha=0.25).numpy()
    before = x._version
    out = getattr(x, op + "_")(other, alpha=0.25)
    assert out is x and x._version == before + 1
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-6, atol=1e-7)


def test_add_with_alpha_writes_into_shared_numpy_memory():
    arr = np.zeros(5, np.float32)
    t = tl.from_numpy(arr)
    t.add_(tl.ones(5), alpha=-2.0)
    np.testing.assert_array_equal(arr, -2.0)


@pytest.mark.parametrize("call", [lambda a, b: a.add_(b, alpha=0.5), lambda a, b: a.add(b, alpha=0.5),
                                  lambda a, b: a.sub_(b, alpha=1.5), lambda a, b: a.sub(b, alpha=1.5)])
def test_a_float_alpha_with_integer_tensors_is_refused_as_pytorch_does(call):
    with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha must not be a floating"):
        call(tl.tensor([1, 2]), tl.tensor([3, 4]))
    np.testing.assert_array_equal(tl.tensor([1]).add_(tl.tensor([2]), alpha=3).numpy(), [7])  # an int alpha is fine


# ---------------------------------------------------------------- sqrt_, exp_, ... (unary_)

@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_unary_in_place_gives_the_out_of_place_values_bit_for_bit(name, dtype):
    vals = np.concatenate([_rand(50, np.float64) * 5, [0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, 2.5]]).astype(dtype)
    x = tl.tensor(vals)
    with np.errstate(all="ignore"):
        want = getattr(x, name)().numpy()
        before = x._version
        assert getattr(x, name + "_")() is x
    assert x._version == before + 1
    np.testing.assert_array_equal(x.numpy(), want)
    np.testing.assert_array_equal(np.signbit(x.numpy()), np.signbit(want))


def test_unary_in_place_on_a_view_changes_the_base():
    base = tl.tensor(np.arange(8, dtype=np.float32))
    base[::2].sqrt_()
    np.testing.assert_allclose(base.numpy(), [0, 1, np.sqrt(2), 3, 2, 5, np.sqrt(6), 7], rtol=1e-6)


def test_unary_in_place_keeps_the_general_path_errors():
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        tl.tensor([4, 9]).sqrt_()  # an int tensor cannot hold the float root, as in PyTorch
    arr = np.ones(3, np.float32)
    arr.setflags(write=False)
    with pytest.raises(RuntimeError, match="read-only"):
        tl.from_numpy(arr).exp_()
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        tl.ones(1).expand(3).sqrt_()


def test_unary_in_place_while_recording_still_differentiates():
    x = tl.tensor([1.0, 4.0, 9.0], requires_grad=True)
    y = x * 1.0
    y.sqrt_()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 0.5 / np.sqrt([1.0, 4.0, 9.0]), rtol=1e-6)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.sqrt_()


# ---------------------------------------------------------------- addcmul_ / addcdiv_ (addc_)

@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("shapes", [((4, 3), (4, 3), (4, 3)), ((4, 3), (3,), (4, 1)), ((4, 3), (4, 3), ())])
@pytest.mark.parametrize("value", [1, -0.3])
def test_addcmul_and_addcdiv_in_place_match_out_of_place(name, shapes, value):
    x, t1, t2 = (tl.tensor(_rand(s, seed=i) + (3 if i == 2 else 0)) for i, s in enumerate(shapes))
    want = getattr(x, name)(t1, t2, value=value).numpy()
    before = x._version
    assert getattr(x, name + "_")(t1, t2, value=value) is x
    assert x._version == before + 1
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-6, atol=1e-6)


def test_addc_in_place_refuses_what_pytorch_refuses():
    with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
        tl.zeros(2).addcdiv_(tl.tensor([1, 2]), tl.tensor([3, 4]))
    with pytest.raises(RuntimeError, match="output with shape \\[2\\] doesn't match the broadcast shape \\[3, 2\\]"):
        tl.zeros(2).addcmul_(tl.ones(3, 2), tl.ones(2))


def test_addc_in_place_while_recording_differentiates():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    t1 = tl.tensor([3.0, 4.0], requires_grad=True)
    y = x * 1.0
    y.addcmul_(t1, t1, value=0.5)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 1])
    np.testing.assert_allclose(t1.grad.numpy(), [3, 4])


def test_an_optimizer_step_equals_pytorch():
    torch = pytest.importorskip("torch")
    for name in ("Adadelta", "Adam", "RMSprop", "Adagrad", "NAdam", "RAdam"):
        ours, theirs = tl.tensor(_rand((5, 4)), requires_grad=True), torch.tensor(_rand((5, 4)), requires_grad=True)
        kwargs = {"lr": 0.1} if name != "RMSprop" else {"lr": 0.01, "centered": True, "momentum": 0.9}
        opt_ours, opt_theirs = getattr(tl.optim, name)([ours], **kwargs), getattr(torch.optim, name)([theirs], **kwargs)
        for step in range(3):
            g = _rand((5, 4), seed=10 + step)
            ours.grad, theirs.grad = tl.tensor(g), torch.tensor(g)
            opt_ours.step()
            opt_theirs.step()
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=2e-5, atol=2e-6, err_msg=name)


def test_scipys_blas_takes_numpys_thread_limit_when_it_loads():
    """A limit on NumPy's BLAS set before axpy first loads SciPy's (a second OpenBLAS) holds for it too
    (a fresh process: this one may have loaded it already)."""
    pytest.importorskip("threadpoolctl")
    script = ("import threadpoolctl, tinygrad_lab as tl\n"
              "with threadpoolctl.threadpool_limits(1):\n"
              "    tl.ones(3).add_(tl.ones(3), alpha=2.0)\n"
              "    print(sorted((i['filepath'].rsplit('/', 2)[-2], i['num_threads'])\n"
              "                 for i in threadpoolctl.threadpool_info() if i['user_api'] == 'blas'))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    libs = dict(ast.literal_eval(out))
    if "scipy.libs" not in libs or "numpy.libs" not in libs:
        pytest.skip(f"NumPy and SciPy share one BLAS here: {libs}")
    assert libs["scipy.libs"] == 1


@pytest.mark.parametrize("call", [lambda t: t.fill_(1), lambda t: t.add_(1), lambda t: t.add_(t, alpha=2),
                                  lambda t: t.sqrt_(), lambda t: t.mul_(2), lambda t: t.zero_()])
@pytest.mark.parametrize("shape", [(0,), (0, 2), (3, 0)])
def test_in_place_ops_on_an_empty_tensor_change_nothing_and_raise_nothing(call, shape):
    t = tl.zeros(*shape)  # NumPy gives an empty array zero strides: no element shares memory with another
    version = t._version
    assert call(t) is t and tuple(t.shape) == shape and t._version == version + 1
