"""The jit on a device: fused chains run as one generated CUDA kernel (the stand-in's CuPy runs
the generated C), and ONNX export of a model that lives on a device."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import jit

from .._devices import host
from ._models import models


def chain(a, b, c):
    """Products feeding sums: where nvcc's fused multiply-add would round once instead of twice."""
    return ((a * b + c) * a - b * c).tanh() * 0.5 + a * 0.25


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64])
def test_a_fused_kernel_rounds_as_the_eager_ops(device, dtype):
    rng = np.random.default_rng(0)
    xs = [tl.tensor(rng.standard_normal(4096), dtype=dtype, device=device) for _ in range(3)]
    traced = jit.trace(chain, xs)
    assert len(traced.kernels) == 1
    if device != "cpu":
        assert traced.kernels[0][1] is not None, "the chain did not run as one generated kernel"
    fresh = [tl.tensor(rng.standard_normal(4096), dtype=dtype, device=device) for _ in range(3)]
    np.testing.assert_array_equal(host(traced(*fresh)), host(chain(*fresh)))


def _indexed(model, idx):
    def fn(x):
        return model(x)[idx] * 2.0 + x[[1, 0]].sum()
    return fn


def test_onnx_export_of_a_model_on_a_device(device, tmp_path):
    """The traced constants (weights, an index tensor) are read back to the host explicitly."""
    tl_onnx = pytest.importorskip("tinygrad_lab.onnx")
    ort = pytest.importorskip("onnxruntime")
    tl.manual_seed(0)
    factory, shape = models()["mlp"]
    model = factory().to(device)
    idx = tl.tensor([2, 0, 2], device=device)
    fn = _indexed(model, idx)
    path = tmp_path / "m.onnx"
    tl_onnx.export(fn, tl.randn(*shape, device=device), path)
    x = tl.randn(*shape)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {session.get_inputs()[0].name: host(x)})
    with tl.no_grad():
        expected = host(fn(x.to(device)))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
