"""The names real PyTorch programs call that op_db does not test value by value: the random `*_like`
factories, set_default_device, out=, Tensor.type, is_xpu and friends, format specs on 0-d tensors,
the in-place methods of the ops branch and PyTorch's alias names. PyTorch is the oracle (skipped
without it); random factories are checked for shape, dtype, range and seeded reproducibility."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_lab as tl

from ._helpers import assert_like_torch, dtype_name

torch = pytest.importorskip("torch")

# ================================================================ random *_like factories


@pytest.mark.parametrize("name", ["rand_like", "randn_like"])
@pytest.mark.parametrize("dtype", [None, "float64"])
def test_random_like_takes_shape_dtype_and_device_as_torch(name, dtype):
    x, tx = tl.zeros(3, 4, dtype=tl.float16), torch.zeros(3, 4, dtype=torch.float16)
    kw = {} if dtype is None else {"dtype": getattr(tl, dtype)}
    tkw = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    got, want = getattr(tl, name)(x, **kw), getattr(torch, name)(tx, **tkw)
    assert tuple(got.shape) == tuple(want.shape) and dtype_name(got.dtype) == dtype_name(want.dtype)
    assert got.device == x.device
    tl.manual_seed(3)
    first = getattr(tl, name)(x, **kw).numpy()
    tl.manual_seed(3)
    np.testing.assert_array_equal(getattr(tl, name)(x, **kw).numpy(), first)


def test_rand_like_is_in_unit_interval_and_randint_like_in_its_range():
    x = tl.zeros(1000)
    u = tl.rand_like(x).numpy()
    assert u.min() >= 0 and u.max() < 1 and 0.4 < u.mean() < 0.6
    for args, lo, hi in (((5,), 0, 5), ((-3, 4), -3, 4)):
        got, want = tl.randint_like(x, *args), torch.randint_like(torch.zeros(1000), *args)
        assert dtype_name(got.dtype) == dtype_name(want.dtype) == "float32"
        values = got.numpy()
        assert values.min() >= lo and values.max() < hi and set(values) == set(range(lo, hi))


def test_set_default_device_moves_the_factories_and_none_restores_the_cpu():
    try:
        tl.set_default_device("cpu")
        assert tl.get_default_device() == tl.device("cpu")
        assert tl.zeros(2).device == tl.device("cpu") and tl.tensor([1.0]).device == tl.device("cpu")
        with pytest.raises(RuntimeError):
            tl.set_default_device("nosuchdevice")
    finally:
        tl.set_default_device(None)
    assert tl.get_default_device() == tl.device("cpu")


# ================================================================ out=

@pytest.mark.parametrize("name, args", [
    ("add", ([[1.0, 2.0], [3.0, 4.0]], [[0.5, 0.5], [1.0, -1.0]])),
    ("mul", ([[1.0, 2.0], [3.0, 4.0]], [[0.5, 0.5], [1.0, -1.0]])),
    ("matmul", ([[1.0, 2.0], [3.0, 4.0]], [[0.5, 0.5], [1.0, -1.0]])),
    ("square", ([[1.0, -2.0], [3.0, 4.0]],)),
    ("cumsum", ([[1.0, -2.0], [3.0, 4.0]], 1)),
])
def test_out_writes_into_the_given_tensor_and_returns_it(name, args):
    ours = [tl.tensor(a) if isinstance(a, list) else a for a in args]
    theirs = [torch.tensor(a) if isinstance(a, list) else a for a in args]
    out, tout = tl.zeros(2, 2), torch.zeros(2, 2)
    result = getattr(tl, name)(*ours, out=out)
    getattr(torch, name)(*theirs, out=tout)
    assert result is out
    assert_like_torch(out, tout, rtol=1e-6)


def test_out_of_another_shape_is_resized_with_pytorchs_warning():
    a, out = tl.ones(3), tl.zeros(2)
    with pytest.warns(UserWarning, match="resized"):
        tl.add(a, a, out=out)
    assert tuple(out.shape) == (3,)
    empty = tl.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tl.add(a, a, out=empty)  # an empty out is resized silently, as in PyTorch


@pytest.mark.parametrize("case", ["requires grad", "float into int"])
def test_out_refuses_what_pytorch_refuses(case):
    def call(mod):
        if case == "requires grad":
            return mod.add(mod.ones(2, requires_grad=True), 1.0, out=mod.zeros(2))
        return mod.add(mod.ones(2), 0.5, out=mod.zeros(2, dtype=mod.int64))
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(RuntimeError, match="add"):
        call(tl)


# ================================================================ Tensor.type, device flags, format

def test_type_names_and_converts_like_pytorch():
    x, tx = tl.tensor([1.5, 2.5]), torch.tensor([1.5, 2.5])
    assert x.type() == tx.type().replace("torch.", "tinygrad_lab.")  # our package's name: see the docstring
    for target in ("torch.LongTensor", "torch.DoubleTensor", "torch.BoolTensor"):
        assert_like_torch(x.type(target), tx.type(target))
    assert_like_torch(x.type(tl.int32), tx.type(torch.int32))
    with pytest.raises(ValueError):
        x.type("torch.NoSuchTensor")


def test_device_flags_answer_as_pytorch_on_a_cpu_tensor():
    x, tx = tl.ones(1), torch.ones(1)
    for flag in ("is_cpu", "is_cuda", "is_xpu", "is_mps", "is_meta", "is_sparse", "is_quantized", "is_mkldnn",
                 "is_nested"):
        assert getattr(x, flag) == getattr(tx, flag), flag


@pytest.mark.parametrize("spec", ["+.2f", ".3e", "8.1f"])
def test_format_spec_on_a_0d_tensor_formats_its_number(spec):
    assert format(tl.tensor(-1.23456), spec) == format(torch.tensor(-1.23456), spec)
    assert f"{tl.tensor(7):d}" == f"{torch.tensor(7):d}"


def test_format_without_a_spec_is_the_tensors_str():
    """Our deliberate difference (Tensor.__format__'s docstring): f'{t}' shows 'tensor(...)', as the lessons print."""
    assert f"{tl.tensor(1.5)}" == str(tl.tensor(1.5)) == "tensor(1.5000)"


def test_format_spec_on_a_tensor_with_elements_is_refused():
    with pytest.raises(TypeError):
        format(tl.ones(2), "+.2f")


# ================================================================ in-place methods

INPLACE = {
    "sin_": (), "tan_": (), "sqrt_": (), "log1p_": (), "sigmoid_": (), "neg_": (), "square_": (),
    "clamp_min_": (0.6,), "clamp_max_": (0.6,), "lerp_": ([0.0, 1.0, 2.0], 0.25),
    "addcmul_": ([1.0, 2.0, 3.0], [0.5, 0.5, 2.0]), "addcdiv_": ([1.0, 2.0, 3.0], [0.5, 4.0, 2.0]),
    "fmod_": (0.3,), "tril_": (), "triu_": (), "cos_": (), "tanh_": (), "ceil_": (), "round_": (), "sign_": (),
    "trunc_": (), "nan_to_num_": (), "remainder_": (0.4,),
    "index_add_": (1, [0, 2], [[1.0, 2.0], [3.0, 4.0]]), "index_copy_": (1, [2, 0], [[1.0, 2.0], [3.0, 4.0]]),
    "index_fill_": (1, [1], -1.0), "masked_scatter_": ([[True, False, True], [False, True, False]], [[5.0, 6.0, 7.0]]),
    "scatter_": (1, [[2], [0]], [[8.0], [9.0]]), "scatter_add_": (1, [[2], [0]], [[8.0], [9.0]]),
    "scatter_reduce_": (1, [[2, 2], [0, 1]], [[8.0, 2.0], [9.0, 3.0]], "amax"),
    "addmm_": ([[1.0, 2.0], [3.0, 4.0]], [[0.5, 0.0, 1.0], [1.0, 2.0, -1.0]]),
}
MATRIX_INPUT = {"tril_", "triu_", "index_add_", "index_copy_", "index_fill_", "masked_scatter_", "scatter_",
                "scatter_add_", "scatter_reduce_", "addmm_"}


def _arg(mod, a):
    """A list argument as a tensor: int64 for integer lists (indices), bool for masks, else float64."""
    if not isinstance(a, list):
        return a
    flat = np.asarray(a).ravel()
    dtype = mod.bool if flat.dtype == bool else mod.int64 if flat.dtype.kind == "i" else mod.float64
    return mod.tensor(a, dtype=dtype)


@pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt")  # sqrt_(-0.7): NaN in both
@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_method_matches_pytorch_in_value_and_gradient(name):
    matrix = name in MATRIX_INPUT
    data = [[0.5, -0.7, 0.9], [1.1, 1.3, -1.5]] if matrix else [0.5, -0.7, 0.9]

    def run(mod):
        leaf = mod.tensor(data, dtype=mod.float64, requires_grad=True)
        args = [_arg(mod, a) for a in INPLACE[name]]
        y = leaf * 1.0
        returned = getattr(y, name)(*args)
        assert returned is y
        (y * mod.arange(y.numel(), dtype=mod.float64).reshape(y.shape)).sum().backward()
        return y, leaf.grad

    (y, g), (ty, tg) = run(tl), run(torch)
    assert_like_torch(y, ty.detach(), rtol=1e-12)
    assert_like_torch(g, tg, rtol=1e-12)


# ================================================================ PyTorch's other names

@pytest.mark.parametrize("alias, original", [
    ("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"), ("arcsinh", "asinh"), ("arctanh", "atanh"),
    ("arctan2", "atan2"), ("moveaxis", "movedim"), ("swapdims", "transpose"), ("swapaxes", "transpose"),
    ("sgn", "sign"), ("fix", "trunc"), ("negative", "neg"), ("ger", "outer"), ("arccosh", "acosh"),
])
def test_alias_names_are_the_same_op(alias, original):
    x = tl.tensor([[0.1, -0.4], [0.3, 0.2]]) + (1.5 if alias == "arccosh" else 0.0)
    args = {"arctan2": (x, x + 1.0), "moveaxis": (x, 0, 1), "swapdims": (x, 0, 1), "swapaxes": (x, 0, 1),
            "ger": (x[0], x[1])}.get(alias, (x,))
    np.testing.assert_array_equal(getattr(tl, alias)(*args).numpy(), getattr(tl, original)(*args).numpy())
    assert hasattr(torch, alias)


def test_small_functions_match_pytorch():
    a, ta = tl.tensor([-7, 7, 5]), torch.tensor([-7, 7, 5])
    assert_like_torch(tl.floor_divide(a, 2), torch.floor_divide(ta, 2))
    f, tf = tl.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
    assert_like_torch(tl.rsub(f, 5.0, alpha=2), torch.rsub(tf, 5.0, alpha=2))
    assert_like_torch(tl.positive(f), torch.positive(tf))
    c = tl.clone(f)
    assert c is not f and np.array_equal(c.numpy(), f.numpy())
    assert tl.numel(tl.ones(2, 3)) == torch.numel(torch.ones(2, 3)) == 6
    assert tl.is_tensor(f) and not tl.is_tensor([1.0])


def test_torch_level_matrix_functions_match_pytorch():
    a = [[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 1.5]]
    x, tx = tl.tensor(a, dtype=tl.float64), torch.tensor(a, dtype=torch.float64)
    assert_like_torch(tl.inverse(x), torch.inverse(tx), rtol=1e-12)
    assert_like_torch(x.inverse(), tx.inverse(), rtol=1e-12)
    assert_like_torch(tl.matrix_power(x, 3), torch.matrix_power(tx, 3), rtol=1e-12)
    assert_like_torch(x.matrix_power(-2), tx.matrix_power(-2), rtol=1e-12)
    for got, want in zip(tl.slogdet(x), torch.slogdet(tx)):
        assert_like_torch(got, want, rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch deprecates chain_matmul
        assert_like_torch(tl.chain_matmul(x, x, x), torch.chain_matmul(tx, tx, tx), rtol=1e-12)
    with pytest.raises(tl.linalg.LinAlgError):
        tl.linalg.inv(tl.zeros(2, 2))
    assert issubclass(tl.linalg.LinAlgError, RuntimeError) and issubclass(torch.linalg.LinAlgError, RuntimeError)


def test_memory_layout_in_elements_matches_pytorch(torch):
    """stride, storage_offset and data_ptr describe where a view's elements sit in its base's memory."""
    for lib in (tl, torch):
        x = lib.arange(12.0).reshape(3, 4)
        v = x.t()[1:, ::2]
        got = (x.stride(), x.t().stride(), x.stride(-1), v.stride(), v.storage_offset(), x[1].storage_offset(),
               x.expand(2, 3, 4).stride(), x.nbytes, x.itemsize, x[1:].data_ptr() - x.data_ptr())
        if lib is tl:
            ours = got
    assert ours == got == ((4, 1), (1, 4), 1, (1, 8), 1, 4, (0, 4, 1), 48, 4, 16)
