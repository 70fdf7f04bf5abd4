"""Checks the exercise notebooks' graded cells call.

Each check compares a student's code with an independent truth (the library's own
layers and optimizers, `autograd.gradcheck`, a trusted reference computation) and,
when they differ, raises an `AssertionError` whose message is a HINT: what was
wrong, with the shapes and numbers involved, and where to look.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from .. import creation, nn, optim
from ..graph import BackwardStepper
from . import broken
from ..autograd import grad, gradcheck, no_grad
from ..autograd.gradcheck import GradcheckError
from ..tensor import Tensor

_RTOL, _ATOL = 1e-6, 1e-8


def _np(t) -> np.ndarray:
    return t.detach().numpy() if isinstance(t, Tensor) else np.asarray(t)


def _close(a, b, rtol: float = _RTOL, atol: float = _ATOL) -> bool:
    a, b = _np(a), _np(b)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol))


def _fmt(t) -> str:
    with np.printoptions(precision=4, suppress=True, linewidth=100, threshold=12):
        return str(_np(t))


def _hint(what: str, look: str) -> AssertionError:
    return AssertionError(f"{what}\nHINT: {look}")


# ---------------------------------------------------------------- exercise 1: a Function's backward

def check_function_backward(function, reference: Callable, shapes: Sequence[tuple] = ((4, 3), (4, 3)),
                            seed: int = 0) -> None:
    """`function.apply` gives `reference`'s values and gradients on random float64 inputs of `shapes`,
    and passes `autograd.gradcheck`. `reference` is the same maths written with built-in ops."""
    rng = np.random.default_rng(seed)
    xs = [creation.tensor(rng.uniform(0.5, 2.0, s) * rng.choice([-1.0, 1.0], s), dtype="float64",
                          requires_grad=True) for s in shapes]
    out, want = function.apply(*xs), reference(*xs)
    if not isinstance(out, Tensor) or tuple(out.shape) != tuple(want.shape):
        got = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
        raise _hint(f"forward returned {got}, expected a tensor of shape {tuple(want.shape)}",
                    "forward(ctx, ...) must return the result as a Tensor, computed with tensor ops")
    if not _close(out, want):
        raise _hint(f"forward gives the wrong values:\n got {_fmt(out)}\nwant {_fmt(want)}",
                    "check the formula in forward before you look at backward")
    g = creation.tensor(rng.standard_normal(tuple(want.shape)), dtype="float64")
    got = _student_grads(function, xs, g)
    truth = grad(reference(*xs), xs, g)
    ones = creation.ones(tuple(want.shape), dtype="float64")
    got_ones, truth_ones = _student_grads(function, xs, ones), grad(reference(*xs), xs, ones)
    for i, (a, t) in enumerate(zip(got, truth)):
        if a is None:
            raise _hint(f"backward returned None for input {i}, which requires grad",
                        f"return one gradient per input of forward ({len(xs)} here), in the same order")
        if _close(a, t):
            continue
        where = f"gradient of input {i} is wrong:\n got {_fmt(a)}\nwant {_fmt(t)}"
        if _close(a, -t):
            raise _hint(where, "it has the wrong sign: differentiate again, minus signs included")
        if any(j != i and _close(a, o) for j, o in enumerate(truth)):
            raise _hint(where, "it is the gradient of another input: return the gradients in the order "
                               "of forward's arguments")
        if _close(got_ones[i], truth_ones[i]):
            raise _hint(where, "it is right only when grad_output is all ones: multiply the local derivative "
                               "by the incoming gradient (chain rule: grad_input = grad_output * d out/d input)")
        raise _hint(where, "write d out/d input on paper for one element, and compare with what backward "
                           "computes; use the tensors saved in forward with ctx.save_for_backward")
    try:
        gradcheck(function.apply, xs)
    except GradcheckError as e:
        raise _hint(f"gradcheck failed: {e}", "compare backward with finite differences element by element") from e


def _student_grads(function, xs: list[Tensor], g: Tensor) -> tuple:
    try:
        return grad(function.apply(*xs), xs, g, allow_unused=True)
    except RuntimeError as e:
        raise _hint(f"backward raised: {e}", "backward must return one gradient per input of forward, "
                                             "each of that input's shape") from e


# ---------------------------------------------------------------- exercise 2: Linear

def check_linear(linear_cls, seed: int = 0) -> None:
    """`linear_cls(in_features, out_features)` is an `nn.Module` that computes what `nn.Linear`
    computes from the same weights, forward and backward, with PyTorch's weight layout and init."""
    def close(a, b) -> bool:  # float32 weights: nn.Linear may sum in another order
        return _close(a, b, rtol=1e-5, atol=1e-6)

    for n_in, n_out in ((3, 2), (4, 4)):
        mine = linear_cls(n_in, n_out)
        _check_linear_params(mine, n_in, n_out)
        ref = nn.Linear(n_in, n_out, dtype=mine.weight.dtype)
        with no_grad():
            ref.weight.copy_(mine.weight)
            ref.bias.copy_(mine.bias)
        rng = np.random.default_rng(seed)
        x_mine = creation.tensor(rng.standard_normal((5, n_in)), dtype=mine.weight.dtype, requires_grad=True)
        x_ref = x_mine.detach().clone().requires_grad_()
        try:
            out = mine(x_mine)
        except RuntimeError as e:
            raise _hint(f"forward on x of shape (5, {n_in}) raised: {e}",
                        f"weight is ({n_out}, {n_in}), so y = x @ weight.T + bias") from e
        want = ref(x_ref)
        if tuple(out.shape) != tuple(want.shape):
            raise _hint(f"output shape {tuple(out.shape)}, expected {tuple(want.shape)}",
                        "y = x @ weight.T + bias has one row per sample and out_features columns")
        if not close(out, want):
            x, w, b = x_ref.detach(), ref.weight.detach(), ref.bias.detach()
            what = f"Linear({n_in}, {n_out}) output is wrong:\n got {_fmt(out)}\nwant {_fmt(want)}"
            if close(out, x @ w.T):
                raise _hint(what, "the bias is missing: add self.bias to x @ weight.T")
            if n_in == n_out and (close(out, x @ w + b) or close(out, x @ w)):
                raise _hint(what, "weight is (out_features, in_features): multiply by its transpose, x @ weight.T")
            raise _hint(what, "y = x @ weight.T + bias, using the module's own parameters")
        g = creation.tensor(rng.standard_normal(tuple(want.shape)), dtype=want.dtype)
        (out * g).sum().backward()
        (want * g).sum().backward()
        for name, a, t in (("weight", mine.weight.grad, ref.weight.grad), ("bias", mine.bias.grad, ref.bias.grad),
                           ("input", x_mine.grad, x_ref.grad)):
            if a is None or not close(a, t):
                raise _hint(f"the gradient of {name} is wrong (got {'None' if a is None else _fmt(a)}, "
                            f"want {_fmt(t)})", "build forward from differentiable tensor ops only "
                                                "(no .numpy(), .detach() or .item() on the way)")


def _check_linear_params(mine, n_in: int, n_out: int) -> None:
    w, b = getattr(mine, "weight", None), getattr(mine, "bias", None)
    if not isinstance(w, Tensor):
        raise _hint("the module has no tensor attribute `weight`", "store the weight matrix as self.weight")
    if tuple(w.shape) != (n_out, n_in):
        raise _hint(f"weight has shape {tuple(w.shape)} for Linear({n_in}, {n_out}), expected {(n_out, n_in)}",
                    "PyTorch stores weight as (out_features, in_features); forward then uses weight.T")
    if not isinstance(b, Tensor):
        raise _hint("the module has no bias tensor (self.bias is missing or None)",
                    f"add self.bias, a parameter of shape ({n_out},), and add it in forward")
    if tuple(b.shape) != (n_out,):
        raise _hint(f"bias has shape {tuple(b.shape)}, expected ({n_out},)", "one bias per output feature")
    registered = {id(p) for p in mine.parameters()}
    for name, p in (("weight", w), ("bias", b)):
        if id(p) not in registered:
            raise _hint(f"{name} is not in model.parameters(), so no optimizer would ever update it",
                        f"wrap it in nn.Parameter: self.{name} = tl.nn.Parameter(...)")
    bound = 1 / np.sqrt(n_in)
    for name, p in (("weight", w), ("bias", b)):
        v = _np(p)
        if np.abs(v).max() > bound * (1 + 1e-6) or np.ptp(v) == 0:  # the margin: float32 rounding
            raise _hint(f"{name} values {_fmt(v)} are not drawn from U(-1/√in, 1/√in) = "
                        f"U(-{bound:.3f}, {bound:.3f})",
                        "initialise like nn.Linear: uniform in ±1/√in_features, different for each entry")


# ---------------------------------------------------------------- exercise 3: SGD with momentum

def check_sgd_momentum(sgd_cls, lr: float = 0.1, momentum: float = 0.9, steps: int = 5) -> None:
    """`sgd_cls(params, lr=..., momentum=...)` with `step()` and `zero_grad()` moves the parameters
    exactly as `optim.SGD` does, step after step, on a small quadratic loss."""
    rng = np.random.default_rng(0)
    starts = [rng.standard_normal((3,)), rng.standard_normal((2, 2))]
    scales = [creation.tensor(rng.uniform(0.5, 2.0, s.shape), dtype="float64") for s in starts]
    mine = [creation.tensor(s, dtype="float64", requires_grad=True) for s in starts]
    ref = [creation.tensor(s, dtype="float64", requires_grad=True) for s in starts]
    opt, ref_opt = sgd_cls(mine, lr=lr, momentum=momentum), optim.SGD(ref, lr=lr, momentum=momentum)

    def loss(ps: list[Tensor]) -> Tensor:  # a different gradient at every point: (a p² + sin p) summed
        return sum(((a * p * p) + p.sin()).sum() for a, p in zip(scales, ps))

    for k in range(1, steps + 1):
        opt.zero_grad()
        ref_opt.zero_grad()
        for i, p in enumerate(mine):
            if p.grad is not None and np.any(_np(p.grad) != 0):
                raise _hint(f"after zero_grad(), parameter {i}'s .grad is {_fmt(p.grad)}",
                            "zero_grad() must reset every parameter's .grad (to None, as PyTorch does); "
                            "otherwise backward adds the new gradient to the old one")
        loss(mine).backward()
        loss(ref).backward()
        before = [p.detach().clone() for p in mine]
        grads = [p.grad.detach().clone() for p in mine]
        buffers = [_np(b).copy() if (b := ref_opt.state[p].get("momentum_buffer")) is not None else None
                   for p in ref]  # copies: SGD updates its buffers in place
        opt.step()
        ref_opt.step()
        for i, (p, r) in enumerate(zip(mine, ref)):
            if _close(p, r):
                continue
            what = f"after step {k}, parameter {i} is {_fmt(p)}, expected {_fmt(r)}"
            delta, g = _np(p) - _np(before[i]), _np(grads[i])
            if np.allclose(delta, 0):
                raise _hint(what, "the parameter did not change: update it in place under tl.no_grad() "
                                  "(p -= ... or p.sub_(...)); `p = p - ...` only rebinds a local name")
            if np.allclose(delta, lr * g):
                raise _hint(what, "you moved uphill: subtract lr times the (momentum) gradient")
            if k > 1 and np.allclose(delta, -lr * g):
                raise _hint(what, "this step used only the current gradient: keep one velocity buffer per "
                                  "parameter across steps, b = momentum * b + grad, and step with p -= lr * b")
            if k > 1 and np.allclose(delta, -lr * (momentum * buffers[i] + (1 - momentum) * g)):
                raise _hint(what, "PyTorch's momentum adds the full gradient: b = momentum * b + grad "
                                  "(no (1 - momentum) factor)")
            raise _hint(what, "on step 1, b = grad; then b = momentum * b + grad; always p -= lr * b")


# ---------------------------------------------------------------- exercise 5: vectorise

def check_speedup(slow: Callable, fast: Callable, *inputs, min_speedup: float = 10.0) -> float:
    """`fast(*inputs)` returns what `slow(*inputs)` returns, as a Tensor, at least `min_speedup`
    times faster (best of several runs each); returns the measured speed-up."""
    want, got = slow(*inputs), fast(*inputs)
    if not isinstance(got, Tensor):
        raise _hint(f"fast returned a {type(got).__name__}, not a tinygrad_lab Tensor",
                    "stay in tensor ops (no .numpy() or Python lists) so that gradients can still flow")
    if tuple(got.shape) != tuple(want.shape):
        raise _hint(f"fast returned shape {tuple(got.shape)}, slow returns {tuple(want.shape)}",
                    "line the axes up with None / unsqueeze so that broadcasting builds every pair")
    if not _close(got, want, rtol=1e-4, atol=1e-4):
        err = np.abs(_np(got) - _np(want))
        i = np.unravel_index(err.argmax(), err.shape)
        raise _hint(f"fast differs from slow: at index {tuple(int(j) for j in i)} got {_np(got)[i]:.5g}, "
                    f"want {_np(want)[i]:.5g}", "compare one element by hand: which axis does each term run over?")
    t_slow, t_fast = _best_time(slow, inputs, 2), _best_time(fast, inputs, 20)
    speedup = t_slow / t_fast
    if speedup < min_speedup:
        raise _hint(f"fast is only {speedup:.1f}x faster than slow (need {min_speedup:g}x)",
                    "a Python loop over elements is left somewhere: one tensor op should handle every pair")
    return speedup


def _best_time(fn: Callable, inputs: tuple, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(*inputs)
        best = min(best, time.perf_counter() - t0)
    return best


# ---------------------------------------------------------------- exercise 6: train to a target

def check_accuracy(model: Callable, X: Tensor, y: Tensor, target: float) -> float:
    """The fraction of `X` that `model` classifies as `y` (argmax of its outputs) is at least
    `target`; returns that accuracy."""
    with no_grad():
        out = model(X)
    n_classes = int(_np(y).max()) + 1
    if out.ndim != 2 or out.shape[0] != len(y) or out.shape[1] < n_classes:
        raise _hint(f"the model maps {tuple(X.shape)} to {tuple(out.shape)}, expected ({len(y)}, {n_classes})",
                    "one row of class scores (logits) per sample")
    acc = float((_np(out).argmax(axis=1) == _np(y)).mean())
    if acc < target:
        raise _hint(f"accuracy {acc:.3f} is below the target {target:.3f}",
                    "scale the inputs (pixels are 0..16), check the loss goes down while training, and try "
                    "more steps or another learning rate; never train on the test set")
    return acc


# ---------------------------------------------------------------- exercise 4: find the bug

def check_bug_report(op_name: str) -> None:
    """`op_name` is the op whose backward step in `broken.program()` first sends a wrong gradient,
    found by comparing every step with the same program run with a correct backward."""
    ops = [s.op for s in _steps(fixed=False)]
    if op_name not in ops:
        raise _hint(f"no step of this backward pass runs an op called {op_name!r}",
                    f"the steps are, in order: {', '.join(ops)}; use step.op's spelling")
    bad = next(i for i, (s, t) in enumerate(zip(_steps(fixed=False), _steps(fixed=True)))
               if not all(_close(a, b) for (_, _, a), (_, _, b) in zip(s.sends, t.sends)))
    mine = ops.index(op_name)
    if mine < bad:
        raise _hint(f"step {mine} ({op_name}) sends the right gradients",
                    "the gradients go wrong in a step that runs AFTER it: keep stepping")
    if mine > bad:
        raise _hint(f"the gradient arriving at step {mine} ({op_name}) is already wrong",
                    "the bug is in a step that ran BEFORE it: compare what each step sends with "
                    "grad_output times the op's local derivative")


def _steps(fixed: bool) -> list:
    stepper = BackwardStepper(broken.program(fixed=fixed)["loss"])
    stepper.run()
    return stepper.history
