"""Running the same layer or function with tinygrad_lab and with PyTorch, from the same weights and
inputs, and comparing outputs and every gradient (float32 and float64)."""
from __future__ import annotations

import numpy as np

import tinygrad_lab as tl

TOLERANCE = {"float64": (1e-10, 1e-12), "float32": (2e-5, 2e-6)}


def build_pair(torch, make, dtype: str = "float64"):
    """make(nn) -> a module, built with both libraries in `dtype`; ours gets PyTorch's weights."""
    theirs = make(torch.nn).to(getattr(torch, dtype))
    ours = make(tl.nn).to(getattr(tl, dtype))
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _leaves(out) -> list:
    if out is None:
        return []
    if isinstance(out, (tuple, list)):
        return [t for item in out for t in _leaves(item)]
    return [out]


def _close(a, b, rtol: float, atol: float, what: str) -> None:
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape}, PyTorch {b.shape}"
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype}, PyTorch {b.dtype}"
    if a.dtype.kind in "biu":
        np.testing.assert_array_equal(a, b, err_msg=what)
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)


def compare(torch, run, arrays, dtype: str = "float64", modules=None, seed: int = 1, tol=None):
    """run(lib, *tensors) -> a tensor or a (nested) tuple, for lib = tinygrad_lab and torch. Float arrays
    become leaves requiring grad (cast to dtype); other arrays are passed as they are. Compares the
    outputs, then backpropagates the same random weighting of every float output and compares the
    gradients of the inputs and, with modules=(ours, theirs), of every parameter."""
    rtol, atol = tol or TOLERANCE[dtype]
    results = []
    for lib in (tl, torch):
        xs = [lib.tensor(a.astype(dtype), requires_grad=True) if a.dtype.kind == "f" else lib.tensor(a)
              for a in arrays]
        results.append((xs, _leaves(run(lib, *xs))))
    (xs, outs), (txs, touts) = results
    assert len(outs) == len(touts), f"{len(outs)} outputs, PyTorch gives {len(touts)}"
    losses = []
    for i, (o, t) in enumerate(zip(outs, touts)):
        _close(o, t, rtol, atol, f"output {i}")
    for lib, these in ((tl, outs), (torch, touts)):
        floats = [o for o in these if o.dtype.is_floating_point and o.requires_grad]
        if floats:
            losses.append(sum((o * lib.tensor(np.random.default_rng(seed).standard_normal(tuple(o.shape))
                                              .astype(dtype))).sum() for o in floats))
    if len(losses) == 2:
        losses[0].backward()
        losses[1].backward()
        for i, (x, t) in enumerate(zip(xs, txs)):
            if t.requires_grad:
                _close(x.grad, t.grad, rtol, atol, f"gradient of input {i}")
        if modules is not None:
            ours = dict(modules[0].named_parameters())
            theirs = dict(modules[1].named_parameters())
            assert list(ours) == list(theirs)
            for name, p in theirs.items():
                if p.grad is None:
                    assert ours[name].grad is None, name
                else:
                    _close(ours[name].grad, p.grad, rtol, atol, f"gradient of {name}")
    return outs, touts


def randn(*shape, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)
