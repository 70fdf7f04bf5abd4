"""gradcheck: compare autograd's Jacobian with finite differences.

A teaching tool as much as a test tool: the error message prints both
Jacobians, so a wrong backward is visible at a glance. Use float64 inputs;
float32 central differences are too noisy for tight tolerances.
"""
from __future__ import annotations

import warnings

import numpy as np

from .api import grad
from .tensor_base import TensorBase, make


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical gradients disagree."""


def _outputs(fn, inputs) -> tuple:
    out = fn(*inputs)
    return (out,) if isinstance(out, TensorBase) else tuple(out)


def _flat_outputs(fn, inputs) -> np.ndarray:
    outs = _outputs(fn, inputs)
    return np.concatenate([np.asarray(o._device.backend.to_host(o._data), dtype=np.float64).ravel()
                           for o in outs if o._data.dtype.kind == "f"] or [np.zeros(0)])


def numerical_jacobian(fn, inputs, eps: float = 1e-6) -> list:
    """Per differentiable input, the (outputs x input-elements) Jacobian by central differences."""
    jacobians = []
    for x in inputs:
        if not (isinstance(x, TensorBase) and x._requires_grad):
            continue
        data = x._data  # perturbed in memory (outside autograd), one element at a time, then restored
        cols = []
        for idx in np.ndindex(data.shape):
            orig = data[idx].item()
            data[idx] = orig + eps
            plus = _flat_outputs(fn, inputs)
            data[idx] = orig - eps
            minus = _flat_outputs(fn, inputs)
            data[idx] = orig
            cols.append((plus - minus) / (2 * eps))
        n_out = _flat_outputs(fn, inputs).size
        jacobians.append(np.stack(cols, axis=1) if cols else np.zeros((n_out, 0)))
    return jacobians


def analytical_jacobian(fn, inputs) -> list:
    """Per differentiable input, the Jacobian from backward: one vector-Jacobian product per output element."""
    diff_inputs = [x for x in inputs if isinstance(x, TensorBase) and x._requires_grad]
    outs = [o for o in _outputs(fn, inputs) if o._data.dtype.kind == "f"]
    n_out = sum(o._data.size for o in outs)
    jac = [np.zeros((n_out, x._data.size)) for x in diff_inputs]
    row = 0
    for o in outs:
        if o._grad_fn is None and not o._requires_grad:  # a constant output: zero rows
            row += o._data.size
            continue
        xp = o._device.backend.xp
        for j in range(o._data.size):
            seed = xp.zeros(o._data.size, dtype=o._data.dtype)
            seed[j] = 1
            gs = grad(o, diff_inputs, make(seed.reshape(o._data.shape), o._device), retain_graph=True,
                      allow_unused=True)
            for m, g in enumerate(gs):
                if g is None:
                    continue
                if g._data.shape != diff_inputs[m]._data.shape:  # the engine checks only user Functions' shapes
                    raise GradcheckError(f"the gradient of differentiable input {m} has shape {list(g._data.shape)}, "
                                         f"but the input has shape {list(diff_inputs[m]._data.shape)}")
                jac[m][row] = np.asarray(g._device.backend.to_host(g._data), dtype=np.float64).ravel()
            row += 1
    return jac


def gradcheck(fn, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True) -> bool:
    """True when autograd's gradients of `fn(*inputs)` match central finite differences
    for every input that requires grad; otherwise raise GradcheckError (or return False)."""
    inputs = (inputs,) if isinstance(inputs, TensorBase) else tuple(inputs)
    for i, x in enumerate(inputs):
        if isinstance(x, TensorBase) and x._requires_grad and x._data.dtype != np.float64:
            warnings.warn(f"gradcheck: input {i} requires grad but is {x.dtype}, not float64; finite differences "
                          f"will be inaccurate", stacklevel=2)
    numerical = numerical_jacobian(fn, inputs, eps)
    try:
        analytical = analytical_jacobian(fn, inputs)
    except GradcheckError:  # a gradient of the wrong shape
        if raise_exception:
            raise
        return False
    for i, (n, a) in enumerate(zip(numerical, analytical)):
        if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
            if not raise_exception:
                return False
            with np.printoptions(precision=4, suppress=True, linewidth=120):
                raise GradcheckError(f"Jacobian mismatch for differentiable input {i}:\nnumerical:\n{n}\n"
                                     f"analytical:\n{a}\nmax abs difference: {np.max(np.abs(a - n)):.3g}")
    return True


def gradgradcheck(fn, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, seed: int = 0, raise_exception: bool = True) -> bool:
    """gradcheck of the gradient itself: checks second derivatives (create_graph=True)."""
    inputs = (inputs,) if isinstance(inputs, TensorBase) else tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = tuple(make(o._device.backend.asarray(rng.standard_normal(o._data.shape)).astype(o._data.dtype),
                                  o._device).requires_grad_()
                             for o in _outputs(fn, inputs) if o._data.dtype.kind == "f")
    n_in = len(inputs)

    def first_derivative(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = [o for o in _outputs(fn, ins) if o._data.dtype.kind == "f"]
        ds = [x for x in ins if isinstance(x, TensorBase) and x._requires_grad]
        gs = grad(outs, ds, gos, create_graph=True, allow_unused=True, materialize_grads=True)
        return tuple(gs)

    return gradcheck(first_derivative, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
