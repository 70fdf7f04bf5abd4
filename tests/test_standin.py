"""The stand-in device behaves as CuPy where CuPy differs from NumPy (tests/fake_cupy.py), and its
list of CuPy's API is the one CuPy itself gives for the versions the `cuda` extra allows.

Each behaviour below is one a GPU has and NumPy has not; if the stand-in lost it, the device
tests would pass in CI for code that breaks on a GPU.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import tinygrad_lab as tl

from . import fake_cupy, make_cupy_api
from .fake_cupy import cupy as cp
from .fake_cupy import cupyx, peek

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- the API list, and the extra's pin

def test_the_api_list_comes_from_each_cupy_version_the_extra_allows():
    data = json.loads((ROOT / "tests" / "cupy_api.json").read_text())
    assert data["generated_by"] == "python tests/make_cupy_api.py"
    assert sorted(data["versions"]) == sorted(make_cupy_api.VERSIONS) == ["13", "14"]
    for major, v in data["versions"].items():
        assert v["version"].startswith(major + ".")
        assert len(v["modules"]["cupy"]) > 400 and "__getitem__" in v["classes"]["cupy.ndarray"]
        assert v["flags"] == ["c_contiguous", "f_contiguous", "owndata"]  # CuPy has no writeable flag
        assert v["ufunc_call_kwargs"] == ["out", "dtype", "casting"]
    (lo, hi), = re.findall(r'"cupy-cuda12x>=(\d+),<(\d+)"', (ROOT / "pyproject.toml").read_text())
    lo, hi = int(lo), int(hi)
    assert [str(v) for v in range(lo, hi)] == list(make_cupy_api.VERSIONS), \
        f"the cuda extra allows CuPy {lo} to {hi - 1}; tests/cupy_api.json describes {list(make_cupy_api.VERSIONS)}"


def test_only_what_every_listed_version_has_is_offered():
    assert hasattr(cp, "take_along_axis") and hasattr(cp, "indices")
    assert not hasattr(cp, "put_along_axis")  # CuPy 14 only
    assert not hasattr(cp, "bool")  # CuPy 14 only (cupy.bool_ is in both)
    with pytest.raises(TypeError, match=r"cupy.indices\(\) got an unexpected keyword argument 'sparse'"):
        cp.indices((2, 3), sparse=True)
    with pytest.raises(TypeError, match="Wrong arguments"):
        cp.add(cp.ones(2), 1, where=cp.ones(2, dtype=bool))  # CuPy's ufuncs take out, dtype, casting only
    x = cp.ones(3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'initial'"):
        x.max(initial=0)


# ---------------------------------------------------------------- host conversion and operands

def test_implicit_conversion_to_numpy_is_refused_with_cupys_message():
    x = cp.arange(3.0)
    for convert in (np.asarray, np.array, lambda a: np.asarray([a, a]), memoryview):
        with pytest.raises(TypeError) as info:
            convert(x)
        assert "Implicit conversion to a NumPy array is not allowed" in str(info.value) or convert is memoryview
    assert not hasattr(x, "__array_interface__")
    np.testing.assert_array_equal(x.get(), [0, 1, 2])  # the explicit way
    np.testing.assert_array_equal(cp.asnumpy(x), [0, 1, 2])


def test_host_arrays_are_not_operands_of_device_functions():
    x = cp.arange(3.0)
    with pytest.raises(TypeError, match="Unsupported type"):
        cp.add(x, np.ones(3))
    with pytest.raises(TypeError, match="Unsupported type"):
        x + np.ones(3)
    with pytest.raises(TypeError, match="Unsupported type"):
        cp.concatenate([x, np.ones(3)])
    assert isinstance(np.exp(x), cp.ndarray)  # NumPy's functions dispatch to CuPy's (__array_ufunc__)
    assert isinstance(np.sum(x), cp.ndarray)  # (__array_function__)
    with pytest.raises(TypeError, match="no implementation found"):
        np.busday_count(x, x)  # a NumPy function CuPy lacks


def test_results_are_device_arrays_never_numpy_scalars():
    x = cp.arange(4.0)
    for r in (x.sum(), x[1], x.max(), cp.dot(x, x), x.mean()):
        assert isinstance(r, cp.ndarray) and r.shape == ()


# ---------------------------------------------------------------- flags and writes

def test_no_writeable_flag_and_broadcast_views_accept_writes():
    x = cp.zeros(3)
    assert not hasattr(x.flags, "writeable")
    assert x.flags.c_contiguous and x.flags.owndata and x.flags["C_CONTIGUOUS"]
    e = cp.broadcast_to(x, (2, 3))
    assert e.base is x and not e.flags.owndata
    e[0, 1] = 5.0  # NumPy refuses (read-only view); CuPy writes, racing where elements share memory
    assert peek(x)[1] == 5.0


# ---------------------------------------------------------------- indexing

def test_out_of_bounds_integer_array_indices_wrap_around():
    x = cp.arange(5) * 10
    np.testing.assert_array_equal(x[cp.asarray([5, -6, 7])].get(), [0, 40, 20])
    np.testing.assert_array_equal(cp.take(x, cp.asarray([6])).get(), [10])
    np.testing.assert_array_equal(cp.take_along_axis(x, cp.asarray([5]), 0).get(), [0])
    y = cp.zeros(5)
    y[cp.asarray([6])] = 1.0
    cupyx.scatter_add(y, cp.asarray([7]), cp.asarray([2.0]))
    np.testing.assert_array_equal(y.get(), [0, 1, 2, 0, 0])
    with pytest.raises(IndexError):
        x[5]  # a Python int index is checked, as in CuPy


def test_repeated_indices_in_an_assignment_keep_the_first_value():
    y = cp.zeros(3)
    y[cp.asarray([1, 1, 1])] = cp.asarray([1.0, 2.0, 3.0])
    assert peek(y)[1] == 1.0  # NumPy keeps the last (3.0); CuPy: undefined


# ---------------------------------------------------------------- arithmetic

def test_float_remainder_and_floor_division_are_computed_as_cupy_does():
    a = cp.asarray([1.0, 5.0, -5.0])
    b = cp.asarray([0.1, np.inf, np.inf])
    np.testing.assert_array_equal((a // b).get(), np.floor(np.array([1.0, 5, -5]) / [0.1, np.inf, np.inf]))
    got = (a % b).get()
    assert got[0] == 0.0 and np.isnan(got[1:]).all()  # NumPy (fmod-based): 0.0999..., 5.0, inf
    np.testing.assert_array_equal((cp.asarray([7, -7]) % 3).get(), [1, 2])  # integers as NumPy


@pytest.mark.parametrize("dtype, scalar, result", [
    ("int8", 300, "int16"), ("int8", 5, "int8"), ("uint8", -1, "int16"), ("float16", 1e5, "float32"),
    ("float16", 256, "float32"), ("float16", 0.5, "float16"), ("float32", 1e39, "float64"),
    ("float32", 0.1, "float32"), ("int32", 2.5, "float64")])
def test_python_scalars_promote_by_value_as_in_cupy_13(dtype, scalar, result):
    assert (cp.ones(2, dtype=dtype) + scalar).dtype == np.dtype(result)


# ---------------------------------------------------------------- counting

def test_every_device_to_host_read_counts_as_a_sync_with_its_site():
    c = fake_cupy.counters
    x = cp.arange(4.0)
    c.reset()
    x.sum().item()
    float(x[0])
    int(x[1])
    bool(x[2] > 0)
    x.tolist()
    x.get()
    cp.asnumpy(x)
    x[x > 1]  # boolean mask: the output's size must be read first
    cp.nonzero(x)
    assert c.syncs == 9
    assert {what for what, _ in c.sync_sites} == {"item", "float", "int", "bool", "tolist", "get",
                                                  "boolean mask indexing", "nonzero (output size depends on the data)"}
    assert all(site.startswith("test_standin.py:") for _, site in c.sync_sites)


def test_launches_count_new_arrays_not_views():
    c = fake_cupy.counters
    x = cp.arange(6.0)
    c.reset()
    x.reshape(2, 3).T[0]
    cp.broadcast_to(x, (2, 6))
    cp.empty(3)
    assert c.launches == 0
    y = x * 2
    y += 1
    cp.sum(y)
    assert c.launches == 3
    cp.asarray(np.ones(2))
    assert c.uploads == 1


def test_a_sync_inside_allow_synchronize_false_raises():
    x = cp.arange(3.0)
    with cupyx.allow_synchronize(False):
        y = x * 2  # no sync
        with pytest.raises(cupyx.DeviceSynchronized):
            y.sum().item()


# ---------------------------------------------------------------- ElementwiseKernel (the jit's fused kernels)

def test_elementwise_kernels_fuse_multiply_add_unless_compiled_with_fmad_false():
    rng = np.random.default_rng(0)
    a, b, c = (cp.asarray(rng.standard_normal(1000).astype(np.float32)) for _ in range(3))
    src = ("float32 in0, float32 in1, float32 in2", "float32 out0", "float v0 = in0 * in1; float v1 = v0 + in2; out0 = v1;")
    eager = (a * b + c).get()
    fused = cp.ElementwiseKernel(*src)(a, b, c).get()
    exact = cp.ElementwiseKernel(*src, options=("--fmad=false",))(a, b, c).get()
    np.testing.assert_array_equal(exact, eager)
    assert (fused != eager).any()  # one rounding instead of two
    wide = (a.get().astype(np.float64) * b.get() + c.get()).astype(np.float32)
    np.testing.assert_array_equal(fused, wide)


# ---------------------------------------------------------------- the device

def test_the_standin_device_runs_the_cuda_backend_on_the_fake_cupy():
    from tinygrad_lab.backends.cuda import CUDABackend
    t = tl.ones(3, device="standin:1")
    backend = tl.device("standin").backend
    assert isinstance(backend, CUDABackend) and backend.xp is cp
    assert isinstance(t._data, cp.ndarray)
    with pytest.raises(RuntimeError, match=r"invalid device ordinal: standin:2 asked for.*standin:0 to standin:1"):
        tl.ones(1, device="standin:2")


def test_scatter_operations_take_only_the_dtypes_cudas_atomics_do():
    with pytest.raises(TypeError, match="scatter_add only supports"):
        cupyx.scatter_add(cp.zeros(3, dtype="int64"), cp.asarray([0]), cp.asarray([1]))
    with pytest.raises(TypeError, match="scatter_max only supports"):
        cp.maximum.at(cp.zeros(3, dtype="int64"), cp.asarray([0]), cp.asarray([1]))
    cupyx.scatter_add(cp.zeros(3, dtype="float16"), cp.asarray([0]), cp.asarray([1.0], dtype="float16"))
