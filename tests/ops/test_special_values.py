"""Elementwise ops at the values where formulas break: 0 and -0, ±1, infinities, NaN, numbers so small their
squares underflow and so large they overflow. PyTorch's OpInfo samples are random numbers away from these,
so its conformance test never sees them. Here every unary and binary elementwise op of op_db that we provide
runs on all of them (binary: every pair) in float64, and its values and the gradients of their sum must be
PyTorch's, NaN for NaN, infinity for infinity. PyTorch's vectorised kernels and its kernels for one element
do not always agree there (softshrink's gradient at NaN is 0 in one, 1 in the other; fmod(1e300, 1e-300) is
NaN in one): it runs both ways, and either answer is accepted. `KNOWN` lists where we still differ, by op and
by which inputs, with why; every other element is compared."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_lab as tl
from tests.ops.test_opinfo_conformance import _cmi, _numpy, resolve, torch

VALUES = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 3.0, -2.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 1e300,
                   100.0, -100.0])

_nan = np.isnan
_inf = np.isinf


def _underflows(a, b):
    with np.errstate(all="ignore"):
        return (a != 0) & (a / b == 0)


KNOWN = {  # op name -> ("value" or "grad", which inputs (a function of the input arrays), why we differ there)
    "abs": ("grad", lambda x: _nan(x), "at NaN PyTorch's gradient is 0 (its sign(NaN) is 0), ours NaN"),
    **{name: ("value", lambda x: _nan(x), "PyTorch's sign(NaN) is 0, NumPy's (ours) NaN") for name in ("sign", "sgn")},
    "acosh": ("grad", lambda x: x == -1, "at -1, outside the domain: ours -inf, PyTorch's inf"),
    "frexp": ("grad", lambda x: np.abs(x) == 1e-300, "the mantissa's gradient at a subnormal-range input"),
    "sinc": ("grad", lambda x: np.abs(x) == 1e-300, "(pi x)**2 underflows: ours NaN, PyTorch's 0"),
    "digamma": ("grad", lambda x: (x <= 0) & (x == np.floor(x)), "at its poles: ours inf, PyTorch's a large "
                "finite number (or NaN at -inf)"),
    "lgamma": ("value", lambda x: x == -np.inf, "lgamma(-inf): SciPy's -inf, PyTorch's inf"),
    "logit": ("grad", lambda x: (x == 0) & np.signbit(x), "at -0.0: ours -inf, PyTorch's inf"),
    "pow": ("value", lambda a, b: (a == -np.inf) & (b == 0.5), "(-inf) ** 0.5 is sqrt(-inf): NaN here, inf in "
            "PyTorch (C's pow)"),
    "float_power": ("value", lambda a, b: (a == -np.inf) & (b == 0.5), "as pow"),
    "__rpow__": ("value", lambda a, b: (b == -np.inf) & (a == 0.5), "as pow"),
    "floor_divide": ("value", lambda a, b: _inf(a) | _inf(b) | _underflows(a, b), "an infinite operand, or a "
                     "quotient that underflows: PyTorch floors (a - fmod(a, b)) / b, NumPy (ours) a / b, so "
                     "1 // -inf and -1e-300 // 1e300 are -1 there, -0 here (and inf // 1 NaN there, inf here)"),
    "remainder": ("grad", lambda a, b: _inf(a) | _inf(b) | _underflows(a, b), "its gradient for b is -(a // b): "
                  "as floor_divide"),
    "__rmod__": ("grad", lambda a, b: _inf(a) | _inf(b) | _underflows(b, a), "as remainder"),
    "igamma": ("value", lambda a, b: _nan(a) | _nan(b), "NaN arguments: SciPy gives NaN, PyTorch a number"),
    "igammac": ("value", lambda a, b: _nan(a) | _nan(b), "as igamma"),
    **{name: ("grad", lambda a, b: _nan(a) | _nan(b), "a NaN operand: PyTorch's gradient goes to both inputs, "
              "ours to one") for name in ("max", "maximum", "min", "minimum")},
    **{name: ("grad", lambda x: _nan(x), "at NaN PyTorch's gradient takes the branch its comparison leaves "
              "(x <= 0 is false), ours the other") for name in (
        "nn.functional.elu", "nn.functional.celu", "nn.functional.selu", "nn.functional.hardsigmoid", "special.i1",
        "special.i1e")},
}


def _infos(kind):
    return [pytest.param(info, id=info.name + (f".{info.variant_test_name}" if info.variant_test_name else ""))
            for info in kind if resolve(info) is not None and torch.float64 in info.dtypes]


def _evaluate(lib, fn, arrays, grad: bool):
    """fn on tensors of `arrays` (float64): (values, gradients of their sum) as arrays, or an error's name."""
    inputs = [lib.tensor(a, dtype=lib.float64, requires_grad=grad) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(*inputs)
        except Exception as e:  # noqa: BLE001 - the refusal's type is what is compared
            return type(e).__name__, None
        out = out[0] if isinstance(out, (tuple, list)) else out
        values = np.asarray(_numpy(out), dtype=float)
        if not (grad and out.requires_grad):
            return values, None
        try:
            grads = lib.autograd.grad(out.sum(), inputs, allow_unused=True)
        except Exception as e:  # noqa: BLE001
            return values, type(e).__name__
    return values, [np.zeros(a.shape) if g is None else np.asarray(_numpy(g), float) for g, a in zip(grads, arrays)]


def _one_by_one(fn, arrays, grad: bool):
    """_evaluate with PyTorch, each element on its own (0-d tensors), stacked."""
    each = [_evaluate(torch, fn, [np.asarray(a[i]) for a in arrays], grad) for i in range(arrays[0].size)]
    if any(isinstance(v, str) for v, _ in each) or any(isinstance(g, str) for _, g in each):
        return None
    grads = None if each[0][1] is None else [np.stack([g[k] for _, g in each]) for k in range(len(arrays))]
    return np.stack([v for v, _ in each]), grads


def _compare(info, arrays):
    fn, grad = resolve(info), bool(info.supports_autograd)
    ours, theirs = _evaluate(tl, fn, arrays, grad), _evaluate(torch, info.op, arrays, grad)
    alone = _one_by_one(info.op, arrays, grad)
    what, which, _ = KNOWN.get(info.name, (None, lambda *a: np.zeros(arrays[0].shape, bool), ""))
    keep = ~which(*arrays)
    if isinstance(theirs[0], str) or isinstance(ours[0], str):
        assert ours[0] == theirs[0]
        return
    _assert_same(ours[0], theirs[0], alone and alone[0], keep if what == "value" else slice(None), arrays, "values")
    if theirs[1] is None or what == "grad" and not keep.any():
        return
    assert not isinstance(ours[1], str) and ours[1] is not None, f"gradient: {ours[1]}, PyTorch computes one"
    for i, (g, w) in enumerate(zip(ours[1], theirs[1])):
        _assert_same(g, w, alone and alone[1] and alone[1][i], keep if what in ("grad", "value") else slice(None),
                     arrays, f"gradient {i}")


def _same(got, want):
    return np.isclose(got, want, rtol=1e-6, atol=1e-12, equal_nan=True) | (got == want)


def _assert_same(got, want, want_alone, keep, arrays, what: str) -> None:
    """got equals want (PyTorch's vectorised answer) or want_alone (its one-element answers) at every kept input."""
    g, w = np.broadcast_to(got, want.shape)[keep], want[keep]
    bad = ~_same(g, w)
    if want_alone is not None:
        bad &= ~_same(g, np.broadcast_to(want_alone, want.shape)[keep])
    where = [tuple(float(a[keep][i]) for a in arrays) for i in np.flatnonzero(bad)[:5]]
    assert not bad.any(), f"{what} differ at inputs {where}: ours {g[bad][:5]}, PyTorch's {w[bad][:5]}"


@pytest.mark.parametrize("info", _infos(_cmi.unary_ufuncs))
def test_unary_at_special_values(info):
    _compare(info, [VALUES])


@pytest.mark.parametrize("info", _infos(_cmi.binary_ufuncs))
def test_binary_at_special_value_pairs(info):
    a, b = np.meshgrid(VALUES, VALUES, indexing="ij")
    _compare(info, [a.ravel(), b.ravel()])
