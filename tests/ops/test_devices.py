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
