"""Fusion of elementwise chains: the fused replay agrees with the unfused one and with eager mode,
groups form where intermediates stay inside, buffers are reused without leaking between calls."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tinygrad_lab as tl
from tinygrad_lab import jit
from tinygrad_lab.jit import fusion

from ._models import as_tuple, assert_same, host


def every_kernel(a, b):
    """Every fusible op, chained (domains kept valid: logs and roots of positive numbers)."""
    x = a * b + a - b / (b.abs() + 1.0)
    y = ((x.exp() + 0.5).log1p() + 1.0).sqrt().rsqrt().log()
    z = y.sin() * x.cos() + x.tanh() - x.sigmoid() + (-x).relu()
    w = tl.maximum(z, a) + tl.minimum(z, b) + (a.abs() + 0.5) ** 2.5 + 2.0 ** b  # 2.5: no fast path of Pow
    return w.sum(), (w * 2.0).mean(0), w


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64])
def test_fused_agrees_with_unfused_and_eager(dtype, device):
    rng = np.random.default_rng(0)
    a, b = (tl.tensor(rng.standard_normal((5, 4)) * 3, dtype=dtype, device=device) for _ in range(2))
    fused, unfused = jit.trace(every_kernel, (a, b)), jit.trace(every_kernel, (a, b), fuse=False)
    assert fused.kernels and not unfused.kernels
    a2, b2 = (tl.tensor(rng.standard_normal((5, 4)) * 3, dtype=dtype, device=device) for _ in range(2))
    eager = every_kernel(a2, b2)
    assert_same(unfused(a2, b2), eager)  # the ops' own forwards: bit for bit
    assert_same(fused(a2, b2), eager)  # the same ufuncs into buffers: bit for bit on NumPy backends


def test_a_chain_is_one_kernel_with_one_buffer():
    a, b, c = (tl.randn(4) for _ in range(3))
    traced = jit.trace(lambda a, b, c: (a * b + c).relu().sum(), (a, b, c))
    assert [names for names, _ in traced.kernels] == ["Mul, Add, Relu, Sum"]
    assert "fused kernel 0: Mul, Add, Relu, Sum (1 buffer reused between calls)" in traced.code
    assert ".apply(" not in traced.code.split("def forward_engine")[0]  # no dispatch without gradients


def test_groups_stop_where_a_value_leaves_them():
    def shared(a):  # h is read twice, both times inside one group
        h = a * 2.0
        return h * h + h

    def split(a):  # h feeds two groups: it is materialised once, by its own kernel
        h = a * 2.0
        return (h + 1.0).exp(), (h - 1.0).exp()

    def returned(a):  # an output cannot stay inside a group
        h = a.exp()
        return h, h.relu()

    x = tl.randn(3)
    assert [n for n, _ in jit.trace(shared, x).kernels] == ["Mul, Mul, Add"]
    assert [n for n, _ in jit.trace(split, x).kernels] == ["Mul", "Add, Exp", "Sub, Exp"]
    assert [n for n, _ in jit.trace(returned, x).kernels] == ["Exp", "Relu"]


def test_only_floating_elementwise_ops_fuse():
    def fn(a, i):
        return (a * 2.0).exp().matmul(a.T), i * 2, (a > 0)

    traced = jit.trace(fn, (tl.randn(3, 3), tl.tensor([1, 2])))
    assert [n for n, _ in traced.kernels] == ["Mul, Exp"]


def test_results_do_not_alias_the_reused_buffers():
    """Returned arrays are new on every call; a buffer is reused only under ops that copy."""
    def fn(a):
        h = (a * 2.0).exp()
        return h.reshape(-1), (h + 1.0).sum(0)  # a view of the kernel's result leaves the trace

    x1, x2 = tl.randn(2, 3), tl.randn(2, 3)
    traced = jit.trace(fn, x1)
    first = traced(x1)
    kept = [host(t).copy() for t in first]
    traced(x2)
    for t, k in zip(first, kept):
        np.testing.assert_array_equal(host(t), k)


def test_buffers_are_reused_between_calls():
    traced = jit.trace(lambda a: (a * 2.0).exp().sum(), tl.randn(8))
    buffers = {name: value for name, value in traced._forward.__globals__.items() if name.startswith("_buf")}
    assert len(buffers) == 1
    before = {name: id(b) for name, b in buffers.items()}
    for _ in range(3):
        traced(tl.randn(8))
    assert {n: id(traced._forward.__globals__[n]) for n in buffers} == before


def test_cuda_kernel_source():
    """The generated CUDA source (checked as text: CI has no GPU)."""
    a, b = tl.randn(4), tl.randn(4)
    tr = jit.trace(lambda a, b: (a * b + 1.5).relu().sigmoid(), (a, b)).trace
    (group,) = dict.fromkeys(fusion.plan(tr).values())
    in_params, out_params, body = fusion.cuda_source(group)
    assert in_params == "float32 in0, float32 in1" and out_params == "float32 out0"
    assert body.splitlines() == [
        "float v0 = in0 * in1;",
        "float v1 = v0 + ((float)1.5);",
        "float v2 = (v1 > 0 || isnan(v1)) ? v1 : (float)0;",
        "float v3 = (float)1 / ((float)1 + exp(-v2));",
        "out0 = v3;",
    ]
    summed = jit.trace(lambda a: (a * 2.0).sum(), a).trace  # a reduction is not in the C kernels
    assert fusion.cuda_source(next(iter(fusion.plan(summed).values()))) is None


_UNARY = {"neg": lambda x: -x, "exp": lambda x: (x * 0.1).exp(), "log": lambda x: (x.abs() + 0.5).log(),
          "log1p": lambda x: x.abs().log1p(), "sqrt": lambda x: x.abs().sqrt(), "tanh": tl.tanh,
          "sigmoid": tl.sigmoid, "relu": tl.relu, "sin": tl.sin, "cos": tl.cos, "abs": tl.abs,
          "rsqrt": lambda x: (x.abs() + 1.0).rsqrt()}
_BINARY = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
           "div": lambda x, y: x / (y.abs() + 1.0), "max": tl.maximum, "min": tl.minimum,
           "pow": lambda x, y: x.abs() ** 2.0, "scalar": lambda x, y: 0.5 * x - 2.0}


@given(ops=st.lists(st.tuples(st.sampled_from(sorted(_UNARY) + sorted(_BINARY)), st.integers(0, 3)),
                    min_size=1, max_size=8),
       shape=st.sampled_from([(5,), (2, 3), (4, 1)]), dtype=st.sampled_from(["float32", "float64"]),
       reduce=st.booleans())
def test_random_elementwise_chains_fused_match_eager(ops, shape, dtype, reduce):
    """A random program of elementwise ops over three inputs (one broadcast), optionally summed."""
    rng = np.random.default_rng(len(ops))
    inputs = [tl.tensor(rng.standard_normal(s), dtype=getattr(tl, dtype)) for s in (shape, shape, shape[-1:])]

    def program(*xs):
        values = list(xs)
        for name, k in ops:
            x = values[k % len(values)]
            values.append(_UNARY[name](x) if name in _UNARY else _BINARY[name](x, values[(k + 1) % len(values)]))
        return values[-1].sum() if reduce else values[-1]

    traced = jit.trace(program, inputs)
    fresh = [tl.tensor(rng.standard_normal(s), dtype=getattr(tl, dtype)) for s in (shape, shape, shape[-1:])]
    expected, got = as_tuple(program(*fresh)), as_tuple(traced(*fresh))
    rtol = 1e-6 if dtype == "float32" else 1e-12
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(host(g), host(e), rtol=rtol, atol=rtol)


def test_cuda_kernel_compiles_once_up_front(monkeypatch):
    """The stand-in device's CuPy (tests/fake_cupy.py) builds the kernel; it is called once at once."""
    from .. import fake_cupy
    built = []

    class Kernel(fake_cupy.ElementwiseKernel):
        def __init__(self, in_params, out_params, operation, **kwargs):
            built.append((in_params, kwargs["name"]))
            super().__init__(in_params, out_params, operation, **kwargs)
            self.calls = 0

        def __call__(self, *arrays):
            self.calls += 1
            return super().__call__(*arrays)

    monkeypatch.setattr(fake_cupy.cupy, "ElementwiseKernel", Kernel)
    a, b = tl.randn(4, device="standin"), tl.randn(4, device="standin")
    traced = jit.trace(lambda a, b: (a * b).exp(), (a, b))
    assert built == [("float32 in0, float32 in1", "tinygrad_lab_fused_0")]
    assert "one CUDA kernel" in traced.code and traced.kernels[0][1] is not None
    (group,) = dict.fromkeys(fusion.plan(traced.trace).values())
    assert fusion.cuda_kernel(group, "again").calls == 1
    on_cpu = jit.trace(lambda a: a.exp(), tl.randn(4)).trace
    assert fusion.cuda_kernel(next(iter(fusion.plan(on_cpu).values())), "k") is None  # NumPy compiles no kernels


def test_a_cuda_kernel_that_does_not_compile_falls_back_with_a_warning(monkeypatch):
    from .. import fake_cupy

    class Broken:
        def __init__(self, *args, **kwargs):
            raise RuntimeError("nvrtc: error")

    monkeypatch.setattr(fake_cupy.cupy, "ElementwiseKernel", Broken)
    tr = jit.trace(lambda a: a.exp(), tl.randn(4, device="standin")).trace
    (group,) = dict.fromkeys(fusion.plan(tr).values())
    with pytest.warns(RuntimeWarning, match="did not compile .*nvrtc: error.*runs as CuPy ufuncs"):
        assert fusion.cuda_kernel(group, "k") is None
