"""Factories: tensors from data (tensor, as_tensor, from_numpy, .numpy()), filled
tensors (zeros/ones/full/empty/eye/arange/linspace and *_like) and random tensors
(rand/randn/randint/randperm/normal, manual_seed and the fixed default seed).
Values, shapes and dtypes are compared with PyTorch where it has the same factory."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import tinygrad_lab as tl

from ._helpers import DTYPE_NAMES, FLOAT_NAMES, assert_like_torch, dtype_name, pair

# ================================================================ tensor(): dtype inference and copies

DATA = {
    "floats": [1.5, -2.0, 3.25],
    "ints": [1, -2, 3],
    "bools": [True, False, True],
    "ints_and_floats": [1, 2.5],
    "bools_and_ints": [True, 2],
    "nested_2d": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
    "nested_3d_ints": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]],
    "scalar_float": 3.5,
    "scalar_int": 3,
    "scalar_bool": True,
    "empty": [],
    "numpy_float64": np.array([1.5, 2.5]),
    "numpy_float32": np.array([1.5, 2.5], np.float32),
    "numpy_float16": np.array([1.5, 2.5], np.float16),
    "numpy_int32": np.array([1, 2], np.int32),
    "numpy_uint8": np.array([1, 255], np.uint8),
    "numpy_bool": np.array([True, False]),
    "numpy_0d_float64": np.array(2.5),
}


@pytest.mark.parametrize("data", DATA.values(), ids=DATA.keys())
def test_tensor_matches_pytorch(torch, data):
    assert_like_torch(tl.tensor(data), torch.tensor(data))


@pytest.mark.parametrize("data,expected", [
    ([1.5, 2.0], "float32"), ([1, 2], "int64"), ([True, False], "bool"), ([1, 2.5], "float32"),
    (np.array([1.5]), "float64"), (np.array([1], np.int32), "int32"), (2.5, "float32"), ([], "float32"),
], ids=["floats", "ints", "bools", "mixed", "numpy_float64", "numpy_int32", "scalar", "empty"])
def test_tensor_dtype_inference(data, expected):
    assert tl.tensor(data).dtype is getattr(tl, expected)


def test_tensor_nested_lists_give_the_shape():
    t = tl.tensor([[[1, 2, 3], [4, 5, 6]]])
    assert t.shape == (1, 2, 3)
    assert t.tolist() == [[[1, 2, 3], [4, 5, 6]]]
    assert tl.tensor(7.0).shape == ()


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_tensor_dtype_argument_matches_pytorch(torch, name):
    t, ref = pair(torch, [[0, 1], [2, 3]], name)
    assert t.dtype is getattr(tl, name)
    assert_like_torch(t, ref)


def test_tensor_copies_its_data():
    arr = np.array([1.0, 2.0])
    t = tl.tensor(arr)
    arr[0] = 100.0
    assert t.tolist() == [1.0, 2.0]
    assert not np.shares_memory(t.numpy(), arr)


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_tensor_requires_grad_on_float(name):
    t = tl.tensor([1.0, 2.0], dtype=getattr(tl, name), requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.grad is None and t.grad_fn is None


@pytest.mark.parametrize("name", ["bool", "uint8", "int32", "int64"])
def test_tensor_requires_grad_on_int_is_a_runtime_error(torch, name):
    with pytest.raises(RuntimeError, match="floating point"):
        torch.tensor([1, 0], dtype=getattr(torch, name), requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        tl.tensor([1, 0], dtype=getattr(tl, name), requires_grad=True)


def test_tensor_requires_grad_on_inferred_int_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="floating point"):
        tl.tensor([1, 2], requires_grad=True)


# ================================================================ as_tensor / from_numpy / numpy(): memory sharing

@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_as_tensor_shares_memory_with_matching_dtype(name):
    arr = np.zeros(4, dtype=name)
    t = tl.as_tensor(arr)
    assert t.dtype is getattr(tl, name)
    assert np.shares_memory(t.numpy(), arr)
    arr[1] = 1
    assert t.tolist()[1] == 1


def test_as_tensor_copies_when_the_dtype_differs(torch):
    arr = np.array([1.5, 2.5])
    t, ref = tl.as_tensor(arr, dtype=tl.float32), torch.as_tensor(arr, dtype=torch.float32)
    assert not np.shares_memory(t.numpy(), arr)
    assert_like_torch(t, ref)


def test_as_tensor_of_python_data_matches_pytorch(torch):
    assert_like_torch(tl.as_tensor([1.5, 2.0]), torch.as_tensor([1.5, 2.0]))
    assert_like_torch(tl.as_tensor([[1, 2]]), torch.as_tensor([[1, 2]]))


def test_as_tensor_of_a_tensor_is_the_same_tensor():
    t = tl.tensor([1.0, 2.0])
    assert tl.as_tensor(t) is t


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_from_numpy_keeps_the_dtype(name):
    arr = np.ones(3, dtype=name)
    assert tl.from_numpy(arr).dtype is getattr(tl, name)


def test_from_numpy_writes_through_both_ways():
    arr = np.arange(4.0)
    t = tl.from_numpy(arr)
    assert np.shares_memory(t.numpy(), arr)
    arr[0] = 100.0  # array -> tensor
    assert t[0].item() == 100.0
    t[1] = -5.0  # tensor -> array (setitem)
    t.add_(1.0)  # tensor -> array (in-place op)
    np.testing.assert_array_equal(arr, [101.0, -4.0, 3.0, 4.0])


def test_from_numpy_of_a_non_contiguous_view_shares_memory(torch):
    base = np.arange(6.0).reshape(2, 3)
    t = tl.from_numpy(base.T)
    assert np.shares_memory(t.numpy(), base)
    base[0, 2] = -1.0
    assert_like_torch(t, torch.from_numpy(base.T))


def test_from_numpy_rejects_a_list(torch):
    with pytest.raises(TypeError):
        torch.from_numpy([1, 2])
    with pytest.raises(TypeError, match="ndarray"):
        tl.from_numpy([1, 2])


def test_numpy_is_zero_copy_both_ways():
    t = tl.zeros(3)
    n = t.numpy()
    assert np.shares_memory(n, t.numpy())
    n[0] = 7.0  # array -> tensor
    assert t.tolist() == [7.0, 0.0, 0.0]
    t.add_(1.0)  # tensor -> array
    np.testing.assert_array_equal(n, [8.0, 1.0, 1.0])


def test_detach_numpy_shares_memory_with_a_tensor_requiring_grad():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    n = x.detach().numpy()
    n[0] = 5.0
    assert x.tolist() == [5.0, 2.0]


@pytest.mark.parametrize("make", [lambda: tl.tensor([1.0, 2.0], requires_grad=True),
                                  lambda: tl.tensor([1.0, 2.0], requires_grad=True) * 2],
                         ids=["leaf", "non_leaf"])
def test_numpy_on_a_tensor_requiring_grad_suggests_detach(make):
    with pytest.raises(RuntimeError, match=r"detach\(\)"):
        make().numpy()


# ================================================================ filled tensors vs PyTorch

FILLED = {
    "zeros": lambda m: m.zeros(2, 3),
    "zeros_tuple": lambda m: m.zeros((2, 3)),
    "zeros_int64": lambda m: m.zeros(2, 3, dtype=m.int64),
    "zeros_empty": lambda m: m.zeros(0),
    "zeros_0d": lambda m: m.zeros(()),
    "ones": lambda m: m.ones(4),
    "ones_bool": lambda m: m.ones(3, dtype=m.bool),
    "ones_float64": lambda m: m.ones(2, 2, dtype=m.float64),
    "full_int": lambda m: m.full((2, 3), 7),
    "full_float": lambda m: m.full((2,), 2.5),
    "full_bool": lambda m: m.full((2,), True),
    "full_dtype": lambda m: m.full((2, 2), 3, dtype=m.float64),
    "eye": lambda m: m.eye(3),
    "eye_wide": lambda m: m.eye(2, 4),
    "eye_tall": lambda m: m.eye(4, 2),
    "eye_int64": lambda m: m.eye(3, dtype=m.int64),
    "eye_bool": lambda m: m.eye(2, dtype=m.bool),
    "arange_end": lambda m: m.arange(5),
    "arange_start_end": lambda m: m.arange(2, 9),
    "arange_step": lambda m: m.arange(1, 10, 3),
    "arange_negative_step": lambda m: m.arange(10, 0, -3),
    "arange_negative_unit_step": lambda m: m.arange(5, 0, -1),
    "arange_negative_start": lambda m: m.arange(-3, 3),
    "arange_empty": lambda m: m.arange(0),
    "arange_start_equals_end": lambda m: m.arange(3, 3),
    "arange_float_end": lambda m: m.arange(5.0),
    "arange_fractional_end": lambda m: m.arange(2.5),
    "arange_float_step_tenth": lambda m: m.arange(0, 1, 0.1),
    "arange_float_step_quarter": lambda m: m.arange(0, 1, 0.25),
    "arange_float_inexact_end": lambda m: m.arange(1, 2.5, 0.5),
    "arange_float_negative_start": lambda m: m.arange(-1.0, 1.0, 0.3),
    "arange_float_negative_step": lambda m: m.arange(1.0, 0, -0.3),
    "arange_float_negative_step_tenth": lambda m: m.arange(0.0, -1.0, -0.1),
    "arange_dtype_float64": lambda m: m.arange(5, dtype=m.float64),
    "arange_int_args_float_dtype": lambda m: m.arange(0, 5, 2, dtype=m.float32),
    "zeros_like": lambda m: m.zeros_like(m.tensor([[1, 2, 3]], dtype=m.int32)),
    "ones_like": lambda m: m.ones_like(m.tensor([[1.5], [2.5]], dtype=m.float64)),
    "ones_like_dtype": lambda m: m.ones_like(m.tensor([1, 2]), dtype=m.float32),
    "full_like_int": lambda m: m.full_like(m.tensor([1, 2], dtype=m.int32), 7),
    "full_like_float": lambda m: m.full_like(m.tensor([1.0, 2.0]), 2.5),
    "full_like_truncates_into_int": lambda m: m.full_like(m.tensor([1, 2]), 2.7),
}
# linspace computes its points differently in PyTorch (from both ends), so compare with a tolerance
LINSPACE = {
    "linspace": lambda m: m.linspace(0, 1, 5),
    "linspace_symmetric": lambda m: m.linspace(-1, 1, 7),
    "linspace_descending": lambda m: m.linspace(2, -2, 5),
    "linspace_one_step": lambda m: m.linspace(0, 10, 1),
    "linspace_zero_steps": lambda m: m.linspace(0, 1, 0),
    "linspace_float64": lambda m: m.linspace(0, 1, 5, dtype=m.float64),
    "linspace_int64": lambda m: m.linspace(0, 10, 5, dtype=m.int64),
}


@pytest.mark.parametrize("program", FILLED.values(), ids=FILLED.keys())
def test_filled_tensor_matches_pytorch(torch, program):
    assert_like_torch(program(tl), program(torch))


@pytest.mark.parametrize("program", LINSPACE.values(), ids=LINSPACE.keys())
def test_linspace_matches_pytorch(torch, program):
    assert_like_torch(program(tl), program(torch), rtol=1e-6, atol=1e-6)


def test_filled_values_by_hand():
    assert tl.zeros(2, 2).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert tl.full((3,), 7).tolist() == [7, 7, 7] and tl.full((3,), 7).dtype is tl.int64
    assert tl.eye(2, 3).tolist() == [[1, 0, 0], [0, 1, 0]]
    assert tl.arange(10, 0, -3).tolist() == [10, 7, 4, 1] and tl.arange(10, 0, -3).dtype is tl.int64
    np.testing.assert_allclose(tl.arange(1.0, 0, -0.3).numpy(), [1.0, 0.7, 0.4, 0.1], rtol=1e-6)
    assert tl.arange(0, 1, 0.1).shape == (10,) and tl.arange(0, 1, 0.1).dtype is tl.float32
    np.testing.assert_allclose(tl.linspace(0, 1, 5).numpy(), [0, 0.25, 0.5, 0.75, 1])


EMPTY = {
    "empty": lambda m: m.empty(2, 3),
    "empty_tuple_int64": lambda m: m.empty((4,), dtype=m.int64),
    "empty_like": lambda m: m.empty_like(m.tensor([[True, False]])),
    "empty_like_dtype": lambda m: m.empty_like(m.tensor([1, 2]), dtype=m.float16),
}


@pytest.mark.parametrize("program", EMPTY.values(), ids=EMPTY.keys())
def test_empty_shape_and_dtype_match_pytorch(torch, program):
    t, ref = program(tl), program(torch)
    assert isinstance(t, tl.Tensor)
    assert tuple(t.shape) == tuple(ref.shape)
    assert dtype_name(t.dtype) == dtype_name(ref.dtype)


SIZED = {"zeros": tl.zeros, "ones": tl.ones, "empty": tl.empty, "rand": tl.rand, "randn": tl.randn}


@pytest.mark.parametrize("factory", SIZED.values(), ids=SIZED.keys())
def test_size_accepts_varargs_tuple_list_and_size(factory):
    for t in (factory(2, 3), factory((2, 3)), factory([2, 3]), factory(tl.Size([2, 3]))):
        assert t.shape == (2, 3)
    assert factory(()).shape == ()
    assert factory(0).shape == (0,)


@pytest.mark.parametrize("factory", SIZED.values(), ids=SIZED.keys())
def test_negative_size_is_a_runtime_error(torch, factory):
    with pytest.raises(RuntimeError):
        getattr(torch, factory.__name__)(2, -1)
    with pytest.raises(RuntimeError, match="negative dimension"):
        factory(2, -1)


# ================================================================ random tensors

RANDOM = {
    "rand": lambda m: m.rand(2, 3),
    "rand_tuple": lambda m: m.rand((4,)),
    "rand_float64": lambda m: m.rand(3, dtype=m.float64),
    "rand_float16": lambda m: m.rand(3, dtype=m.float16),
    "randn": lambda m: m.randn(3, 2),
    "randn_float64": lambda m: m.randn((5,), dtype=m.float64),
    "randint_low_high": lambda m: m.randint(3, 10, (2, 3)),
    "randint_high": lambda m: m.randint(10, (4,)),
    "randint_int32": lambda m: m.randint(0, 5, (3,), dtype=m.int32),
    "randperm": lambda m: m.randperm(6),
    "randperm_empty": lambda m: m.randperm(0),
    "normal_scalars": lambda m: m.normal(2.0, 3.0, size=(2, 3)),
    "normal_tensor_mean": lambda m: m.normal(m.zeros(4), 1.0),
    "normal_tensor_std": lambda m: m.normal(0.0, m.ones(2, 2)),
    "normal_tensor_both": lambda m: m.normal(m.zeros(3), m.ones(3)),
}


@pytest.mark.parametrize("program", RANDOM.values(), ids=RANDOM.keys())
def test_random_shape_and_dtype_match_pytorch(torch, program):
    t, ref = program(tl), program(torch)
    assert isinstance(t, tl.Tensor)
    assert tuple(t.shape) == tuple(ref.shape)
    assert dtype_name(t.dtype) == dtype_name(ref.dtype)


N = 100_000


def _samples(program) -> np.ndarray:
    tl.manual_seed(0)
    return program().numpy().astype(np.float64)


def test_rand_range_and_statistics():
    x = _samples(lambda: tl.rand(N))
    assert x.min() >= 0.0 and x.max() < 1.0
    assert abs(x.mean() - 0.5) < 0.01
    assert abs(x.std() - (1 / 12) ** 0.5) < 0.01


def test_randn_statistics():
    x = _samples(lambda: tl.randn(N))
    assert np.isfinite(x).all()
    assert abs(x.mean()) < 0.02
    assert abs(x.std() - 1.0) < 0.02


def test_normal_scalar_statistics():
    x = _samples(lambda: tl.normal(2.0, 3.0, size=(N,)))
    assert abs(x.mean() - 2.0) < 0.06
    assert abs(x.std() - 3.0) < 0.06


def test_normal_tensor_statistics():
    x = _samples(lambda: tl.normal(tl.full((N,), 5.0), 0.5))
    assert abs(x.mean() - 5.0) < 0.01
    assert abs(x.std() - 0.5) < 0.01


def test_randint_range_and_statistics():
    x = _samples(lambda: tl.randint(3, 10, (N,)))
    assert set(np.unique(x).tolist()) == set(range(3, 10))  # every value in [low, high), never high
    assert abs(x.mean() - 6.0) < 0.05


def test_randint_high_only_starts_at_zero():
    x = _samples(lambda: tl.randint(4, (1000,)))
    assert set(np.unique(x).tolist()) == {0, 1, 2, 3}


@pytest.mark.parametrize("n", [0, 1, 7, 100])
def test_randperm_is_a_permutation(n):
    p = tl.randperm(n)
    assert p.dtype is tl.int64
    assert sorted(p.tolist()) == list(range(n))


DRAWS = {
    "rand": lambda: tl.rand(5),
    "randn": lambda: tl.randn(2, 3),
    "randint": lambda: tl.randint(0, 100, (6,)),
    "randperm": lambda: tl.randperm(10),
    "normal": lambda: tl.normal(0.0, 1.0, size=(4,)),
    "normal_tensor": lambda: tl.normal(tl.zeros(4), tl.ones(4)),
    "sequence": lambda: tl.cat([tl.rand(3), tl.randn(3), tl.rand(3)]),
}


@pytest.mark.parametrize("draw", DRAWS.values(), ids=DRAWS.keys())
def test_manual_seed_makes_draws_repeat(draw):
    tl.manual_seed(0)
    first = draw().numpy().copy()
    tl.manual_seed(0)
    second = draw().numpy()
    np.testing.assert_array_equal(first, second)
    tl.manual_seed(1)
    assert not np.array_equal(first, draw().numpy())  # another seed, another stream


def test_draws_without_reseeding_differ():
    tl.manual_seed(0)
    assert not np.array_equal(tl.rand(8).numpy(), tl.rand(8).numpy())


PYTORCH_DEFAULT_SEED = 67280421310721  # torch.initial_seed() in a fresh process
_FRESH_PROCESS = ("import json, tinygrad_lab as tl; print(json.dumps([tl.initial_seed(), tl.rand(4).tolist(), "
                  "tl.randn(3).tolist(), tl.randint(0, 1000, (5,)).tolist()]))")


def _draw_in_fresh_process() -> list:
    root = pathlib.Path(tl.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", _FRESH_PROCESS], capture_output=True, text=True, env=env,
                         cwd=root, timeout=120, check=True)
    return json.loads(out.stdout)


def test_fresh_process_has_a_fixed_default_seed():
    first, second = _draw_in_fresh_process(), _draw_in_fresh_process()
    assert first == second
    seed, rand, randn, randint = first
    assert seed == PYTORCH_DEFAULT_SEED
    tl.manual_seed(seed)  # the default stream is the one manual_seed(initial_seed()) gives
    assert tl.rand(4).tolist() == rand
    assert tl.randn(3).tolist() == randn
    assert tl.randint(0, 1000, (5,)).tolist() == randint


def test_manual_seed_sets_initial_seed():
    tl.manual_seed(1234)
    assert tl.initial_seed() == 1234


def test_python_floats_with_a_float64_dtype_keep_their_precision():
    """tensor([0.7], dtype=float64) holds the double 0.7, not 0.7 rounded through the default float32."""
    torch = pytest.importorskip("torch")
    assert_like_torch(tl.tensor([0.7, 1e-40], dtype=tl.float64), torch.tensor([0.7, 1e-40], dtype=torch.float64))
