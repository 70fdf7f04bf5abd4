"""Every op in op_table.OPS, on hypothesis-drawn shapes and values:
1. gradcheck (analytical vs finite-difference Jacobians, float64);
2. forward values, dtypes, shapes and gradients against PyTorch (skipped without it);
3. gradgradcheck (second derivatives) for a representative subset, and the same
   subset's Hessian-vector products against PyTorch;
4. the same ops in float16 against PyTorch (values, dtypes, gradients).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tinygrad_lab.autograd import grad as tl_grad
from tinygrad_lab.autograd import gradcheck, gradgradcheck

from .op_table import GRADGRAD, OPS, OPS_BY_NAME, TL, assert_matches, dtype_name, to_numpy, to_tl, to_torch, torch_lib

# the `torch` fixture only imports a module, so sharing it across examples is safe
_FIXTURE_OK = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
RTOL, ATOL = 1e-10, 1e-12


def _tl_fn(spec, case):
    return lambda *xs: spec.call(TL, xs, case.kwargs)


@pytest.mark.parametrize("spec", OPS, ids=repr)
@settings(max_examples=15)
@given(data=st.data())
def test_gradcheck(spec, data):
    case, arrays = data.draw(spec.examples(), label="case, inputs")
    xs = [to_tl(a, requires_grad=True) for a in arrays]
    assert gradcheck(_tl_fn(spec, case), xs)


def _weighted_loss(outputs, weights):
    """sum(out * w) over the float outputs: every output element gets its own weight."""
    return sum((o * w).sum() for o, w in zip(outputs, weights) if w is not None)


def _run_both(spec, case, arrays, seed: int):
    """Outputs and weighted-loss pieces for tinygrad_lab and torch on the same inputs:
    ((xs, outs, weights) for TL, (ts, outs, weights) for torch)."""
    rng = np.random.default_rng(seed)
    xs = [to_tl(a, requires_grad=True) for a in arrays]
    ts = [to_torch(a, requires_grad=True) for a in arrays]
    out_tl = spec.call(TL, xs, case.kwargs)
    out_t = spec.call(torch_lib(), ts, case.kwargs, torch=True)
    w = [rng.standard_normal(tuple(r.shape)) if r.dtype.is_floating_point else None for r in out_t]
    return ((xs, out_tl, [None if a is None else to_tl(a) for a in w]),
            (ts, out_t, [None if a is None else to_torch(a) for a in w]))


@pytest.mark.parametrize("spec", OPS, ids=repr)
@settings(max_examples=20, suppress_health_check=_FIXTURE_OK)
@given(data=st.data())
def test_matches_torch(spec, data, torch):
    case, arrays = data.draw(spec.examples(), label="case, inputs")
    (xs, out_tl, w_tl), (ts, out_t, w_t) = _run_both(spec, case, arrays, data.draw(st.integers(0, 2**32 - 1)))

    assert len(out_tl) == len(out_t), f"{len(out_tl)} outputs, PyTorch gives {len(out_t)}"
    for i, (o, r) in enumerate(zip(out_tl, out_t)):
        assert_matches(o, r, RTOL, ATOL, what=f"output {i}")

    _weighted_loss(out_tl, w_tl).backward()
    _weighted_loss(out_t, w_t).backward()
    for i, (x, t) in enumerate(zip(xs, ts)):
        assert (x.grad is None) == (t.grad is None), f"input {i}: grad {x.grad!r}, PyTorch {t.grad!r}"
        if t.grad is not None:
            assert_matches(x.grad, t.grad, RTOL, ATOL, what=f"gradient of input {i}")


@pytest.mark.parametrize("spec", [OPS_BY_NAME[n] for n in GRADGRAD], ids=repr)
@settings(max_examples=8)
@given(data=st.data())
def test_gradgradcheck(spec, data):
    case, arrays = data.draw(spec.examples(), label="case, inputs")
    xs = [to_tl(a, requires_grad=True) for a in arrays]
    assert gradgradcheck(_tl_fn(spec, case), xs)


def _hvp(grad, loss, leaves, vs) -> list:
    """d/dx <d(loss)/dx, v> via create_graph=True, as NumPy arrays (zeros where nothing depends on x)."""
    first = grad(loss, leaves, create_graph=True, allow_unused=True)
    terms = [(g * v).sum() for g, v in zip(first, vs) if g is not None and g.requires_grad]
    second = grad(sum(terms), leaves, allow_unused=True) if terms else [None] * len(leaves)
    return [np.zeros(tuple(x.shape)) if g is None else to_numpy(g) for x, g in zip(leaves, second)]


@pytest.mark.parametrize("spec", [OPS_BY_NAME[n] for n in GRADGRAD], ids=repr)
@settings(max_examples=10, suppress_health_check=_FIXTURE_OK)
@given(data=st.data())
def test_second_derivatives_match_torch(spec, data, torch):
    """Hessian-vector products of the weighted loss, against PyTorch."""
    case, arrays = data.draw(spec.examples(), label="case, inputs")
    seed = data.draw(st.integers(0, 2**32 - 1))
    (xs, out_tl, w_tl), (ts, out_t, w_t) = _run_both(spec, case, arrays, seed)
    vs = [np.random.default_rng(seed + 1).standard_normal(a.shape) for a in arrays]
    got = _hvp(tl_grad, _weighted_loss(out_tl, w_tl), xs, [to_tl(v) for v in vs])
    want = _hvp(torch.autograd.grad, _weighted_loss(out_t, w_t), ts, [to_torch(v) for v in vs])
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=f"Hessian-vector product for input {i}")


def _close_in_half(got, want, what: str) -> None:
    """float16 results agree to 1% of the larger of 1 and the reference's largest finite value: a few
    roundings of float16's 11 bits. (The drawn inputs are small; float16 accumulation over thousands
    of values, where PyTorch accumulates in float32, has its own tests in test_bad_input.)"""
    want = to_numpy(want).astype(np.float64)
    scale = max(1.0, np.abs(want[np.isfinite(want)]).max(initial=0.0))
    np.testing.assert_allclose(to_numpy(got).astype(np.float64), want, rtol=1e-2, atol=1e-2 * scale, err_msg=what)


@pytest.mark.parametrize("spec", OPS, ids=repr)
@settings(max_examples=10, suppress_health_check=_FIXTURE_OK, deadline=None)
@given(data=st.data())
def test_float16_matches_torch(spec, data, torch):
    """The same inputs in float16: outputs, their dtypes and the gradients of their sum, against PyTorch."""
    case, arrays = data.draw(spec.examples(), label="case, inputs")
    arrays = [a.astype(np.float16) if a.dtype == np.float64 else a for a in arrays]
    xs = [to_tl(a, requires_grad=a.dtype == np.float16) for a in arrays]
    ts = [to_torch(a, requires_grad=a.dtype == np.float16) for a in arrays]
    out_tl, out_t = spec.call(TL, xs, case.kwargs), spec.call(torch_lib(), ts, case.kwargs, torch=True)
    for i, (o, r) in enumerate(zip(out_tl, out_t)):
        assert dtype_name(o) == dtype_name(r), f"output {i}: dtype {dtype_name(o)}, PyTorch gives {dtype_name(r)}"
        _close_in_half(o, r, f"output {i}")
    floats = [i for i, r in enumerate(out_t) if r.dtype.is_floating_point]
    if not floats:
        return
    sum(out_tl[i].float().sum() for i in floats).backward()
    sum(out_t[i].float().sum() for i in floats).backward()
    for i, (x, t) in enumerate(zip(xs, ts)):
        assert (x.grad is None) == (t.grad is None), f"input {i}: grad {x.grad!r}, PyTorch {t.grad!r}"
        if t.grad is not None:
            _close_in_half(x.grad, t.grad, f"gradient of input {i}")
