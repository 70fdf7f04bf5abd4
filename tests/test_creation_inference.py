"""Tensors from Python data are built in the requested dtype from the exact values (never through
float32 first), with PyTorch's dtype inference and its errors for values a dtype cannot hold; every
factory and every layer constructor takes its sizes as whole numbers (shapes.sizes / shapes.size)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinygrad_lab as tl

from ._helpers import dtype_name


def test_float64_data_is_exact():
    """Was: 0.10000000149, 0.0, inf (through float32 first)."""
    t = tl.tensor([0.1, 1e-106, 1e300], dtype=tl.float64)
    assert t.tolist() == [0.1, 1e-106, 1e300]
    assert tl.tensor(0.1, dtype=tl.float64).item() == 0.1
    assert tl.tensor([[1e-320, -2.5e307]], dtype=tl.float64).tolist() == [[1e-320, -2.5e307]]
    assert tl.full((2,), 0.1, dtype=tl.float64).tolist() == [0.1, 0.1]
    assert tl.as_tensor([0.1], dtype=tl.float64).item() == 0.1


def test_float16_data_is_rounded_once_from_the_exact_value():
    # 0.1 + 2**-14 lies between two float16 values; rounding through float32 first can pick the other one
    values = [0.1, 1 / 3, 2049.0, 65504.0, 1e-7, 70000.0]
    with np.errstate(over="ignore"):
        expected = np.array(values, dtype=np.float64).astype(np.float16).tolist()
    assert tl.tensor(values, dtype=tl.float16).tolist() == expected


def test_large_integers_keep_their_value():
    assert tl.tensor([2**62 + 1]).item() == 2**62 + 1
    assert tl.tensor(-2**63).item() == -2**63
    assert tl.tensor([2**64], dtype=tl.float64).item() == float(2**64)


INFERRED = {
    "ints": [1, 2],
    "int_and_float": [1, 2.5],
    "bool_and_int": [True, 1],
    "bool_and_float": [True, 1.5],
    "bools": [True, False],
    "nested": [[1, 2], [3, 4.0]],
    "scalar_int": 3,
    "scalar_float": 2.5,
    "scalar_bool": True,
    "numpy_float64_scalar": np.float64(1.0),
    "numpy_float64_in_list": [np.float64(1.0), 2.5],
    "numpy_float32_with_int": [np.float32(1.5), 2],
    "numpy_int32_scalar": np.int32(3),
    "numpy_int32_with_int": [np.int32(1), 2],
    "numpy_int32_with_float": [np.int32(1), 2.5],
    "numpy_float16_scalar": np.float16(2),
    "numpy_uint8_with_int": [np.uint8(3), -1],
    "arrays_in_list": [np.zeros(2), np.ones(2)],
    "int32_array_and_list": [np.array([1, 2], dtype=np.int32), [3, 4]],
    "tuple": (1.0, 2.0),
    "range": range(3),
    "empty": [],
    "empty_rows": [[], []],
    "float_overflows_float32": [1e300],
}


@pytest.mark.parametrize("name", INFERRED)
def test_dtype_inference_matches_pytorch(torch, name):
    data = INFERRED[name]
    expected = torch.tensor(data)
    actual = tl.tensor(data)
    assert dtype_name(actual.dtype) == dtype_name(expected.dtype)
    assert actual.tolist() == expected.tolist()


WITH_DTYPE = {
    "uint8_wraps_negative": ([-1], "uint8"),
    "float_to_int_truncates": ([2.7, -2.7], "int64"),
    "float_to_bool": ([0.5, 0.0], "bool"),
    "int_to_float16": ([3, 70000], "float16"),
    "big_int_to_float64": ([2**64], "float64"),
    "int_fits_int32": ([2**31 - 1, -2**31], "int32"),
}


@pytest.mark.parametrize("name", WITH_DTYPE)
def test_data_with_a_dtype_matches_pytorch(torch, name):
    data, dt = WITH_DTYPE[name]
    assert tl.tensor(data, dtype=getattr(tl, dt)).tolist() == torch.tensor(data, dtype=getattr(torch, dt)).tolist()


REFUSED = {  # data, dtype name or None, PyTorch's exception type, our message
    "int_beyond_int64": (2**63, None, ValueError, r"tensor\(\): Overflow when unpacking long long"),
    "int_beyond_int64_in_list": ([1, 2**63], None, ValueError, "Overflow when unpacking long long"),
    "int_beyond_int64_to_uint8": (2**63, "uint8", ValueError, "Overflow"),
    "300_into_uint8": ([300], "uint8", RuntimeError, "cannot be converted to type uint8 without overflow"),
    "2**31_into_int32": ([2**31], "int32", RuntimeError, "cannot be converted to type int32 without overflow"),
    "inf_into_int64": ([math.inf], "int64", RuntimeError, "cannot be converted to type int64 without overflow"),
    "nan_into_int64": ([math.nan], "int64", RuntimeError, "cannot be converted to type int64 without overflow"),
    "none": ([1, None], None, RuntimeError, "Could not infer dtype of NoneType"),
    "dict": ({"a": 1}, None, RuntimeError, "Could not infer dtype of dict"),
    "generator": ((i for i in range(2)), None, RuntimeError, "Could not infer dtype of generator"),
    "string": (["a"], None, (TypeError, ValueError), "invalid data type 'str'"),
    "ragged": ([[1], [1, 2]], None, ValueError, "rectangular"),
}


@pytest.mark.parametrize("name", REFUSED)
def test_data_pytorch_refuses_is_refused_alike(name):
    data, dt, exc, message = REFUSED[name]
    with pytest.raises(exc, match=message):
        tl.tensor(data, dtype=None if dt is None else getattr(tl, dt))


@pytest.mark.parametrize("name", REFUSED)
def test_pytorch_refuses_the_same_data(torch, name):
    data, dt, exc, _ = REFUSED[name]
    if name == "generator":
        data = (i for i in range(2))  # the first test used it up
    with pytest.raises(exc):
        torch.tensor(data, dtype=None if dt is None else getattr(torch, dt))


def test_full_refuses_a_value_its_dtype_cannot_hold(torch):
    with pytest.raises(RuntimeError, match=r"full\(\): value cannot be converted to type uint8"):
        tl.full((2,), 300, dtype=tl.uint8)
    with pytest.raises(RuntimeError):
        torch.full((2,), 300, dtype=torch.uint8)


# ---------------------------------------------------------------- sizes and counts

FACTORIES = {  # program(module, bad size): a factory given a size
    "zeros": lambda m, n: m.zeros(n, 3),
    "ones": lambda m, n: m.ones((3, n)),
    "empty": lambda m, n: m.empty([n]),
    "full": lambda m, n: m.full((n,), 1.0),
    "rand": lambda m, n: m.rand(n),
    "randn": lambda m, n: m.randn(2, n),
    "randint": lambda m, n: m.randint(0, 5, (n,)),
    "randperm": lambda m, n: m.randperm(n),
    "eye": lambda m, n: m.eye(n),
    "eye_m": lambda m, n: m.eye(2, n),
    "linspace": lambda m, n: m.linspace(0, 1, n),
    "new_zeros": lambda m, n: m.zeros(2).new_zeros(n),
    "new_ones": lambda m, n: m.zeros(2).new_ones((n, 2)),
    "new_full": lambda m, n: m.zeros(2).new_full((n,), 2.0),
}
LAYERS = {  # program(module, bad size): a layer constructor given a size
    "Linear": lambda m, n: m.nn.Linear(n, 4),
    "Linear_out": lambda m, n: m.nn.Linear(4, n),
    "Bilinear": lambda m, n: m.nn.Bilinear(2, n, 3),
    "Conv1d": lambda m, n: m.nn.Conv1d(n, 4, 3),
    "Conv2d_kernel": lambda m, n: m.nn.Conv2d(3, 4, n),
    "BatchNorm1d": lambda m, n: m.nn.BatchNorm1d(n),
    "BatchNorm2d": lambda m, n: m.nn.BatchNorm2d(n),
    "LayerNorm": lambda m, n: m.nn.LayerNorm(n),
    "LayerNorm_shape": lambda m, n: m.nn.LayerNorm([3, n]),
    "Embedding": lambda m, n: m.nn.Embedding(n, 3),
    "Embedding_dim": lambda m, n: m.nn.Embedding(10, n),
    "PReLU": lambda m, n: m.nn.PReLU(n),
    "RNNCell": lambda m, n: m.nn.RNNCell(n, 3),
    "LSTMCell": lambda m, n: m.nn.LSTMCell(2, n),
    "GRUCell": lambda m, n: m.nn.GRUCell(n, 3),
    "LSTM_layers": lambda m, n: m.nn.LSTM(2, 3, num_layers=n),
}


@pytest.mark.parametrize("name", [*FACTORIES, *LAYERS])
@pytest.mark.parametrize("bad", [2.5, 2.0])
def test_a_float_size_is_a_type_error_naming_the_argument(torch, name, bad):
    """Was: zeros(2.5, 3) -> [2, 3], nn.Linear(2.7, 4) -> a 2x4 layer (the float was truncated)."""
    program = {**FACTORIES, **LAYERS}[name]
    with pytest.raises(TypeError, match=rf"(argument '\w+'|should be of type int).*float"):
        program(tl, bad)
    with pytest.raises((TypeError, ValueError) if name == "Conv1d" else TypeError):
        program(torch, bad)  # PyTorch's Conv1d checks 2.5 % groups first: a ValueError


@pytest.mark.parametrize("name", [n for n in [*FACTORIES, *LAYERS] if n not in ("LSTM_layers",)])
def test_a_negative_size_is_pytorchs_runtime_error(torch, name):
    """Was: randperm(-1) -> an empty tensor."""
    program = {**FACTORIES, **LAYERS}[name]
    with pytest.raises(RuntimeError, match=r"negative"):
        program(tl, -1)
    with pytest.raises(RuntimeError):
        program(torch, -1)


def test_whole_numbers_of_other_types_are_sizes(torch):
    """NumPy integers and one-element integer tensors are sizes, as in PyTorch; a bool is not."""
    assert tl.zeros(np.int64(2), 3).shape == (2, 3)
    assert tl.zeros(tl.tensor(2)).shape == (2,)
    assert tl.nn.Linear(np.int32(2), 3).weight.shape == (3, 2)
    with pytest.raises(TypeError, match="bool"):
        tl.zeros(True)
    with pytest.raises(TypeError):
        torch.zeros(True)
    with pytest.raises(TypeError, match=r"must be int, not tensor\(2\.\)"):
        tl.randperm(tl.tensor(2.0))


def test_a_layer_without_elements_warns_as_pytorch_does():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        layer = tl.nn.Linear(0, 4)
    assert layer.weight.shape == (4, 0)
