"""Checks the exercise notebooks' graded cells call.

Each check compares a learner's code with an independent truth (NumPy, finite differences) on inputs
of its own beyond the notebook's examples, smallest first so that the first failure is the simplest;
refuses the library's own implementation where the exercise is to write it; and answers a wrong
attempt with an `AssertionError` whose message ends in a HINT: what was wrong, with the shapes and
numbers involved, and where to look, without giving the answer away.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import time
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from .. import creation, datasets, nn, optim
from ..autograd import BackwardStep, Function, events, gradcheck, no_grad
from ..autograd.gradcheck import GradcheckError
from ..graph import BackwardStepper
from ..random import manual_seed
from ..tensor import Tensor
from . import broken

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


def _graded(check: Callable) -> Callable:
    """A check as a graded cell calls it: a failure's traceback shows the learner's cell, this
    wrapper's three lines and the hint, not the check's own code (which pytest hides too)."""
    @functools.wraps(check)
    def run(*args, **kwargs):
        __tracebackhide__ = True
        try:
            return check(*args, **kwargs)
        except AssertionError as e:
            raise AssertionError(str(e)) from None  # the check's answer: read its HINT below
    return run


# ---------------------------------------------------------------- refusing the library's own implementation

def _from_library(cls: type) -> bool:
    return cls.__module__.split(".")[0] == "tinygrad_lab"


def _refuse_library_bases(cls, allowed: tuple[type, ...], what: str, instead: str) -> None:
    """`cls` (or a class it derives from) must not be one of tinygrad_lab's own, other than `allowed`."""
    if not isinstance(cls, type):
        raise _hint(f"expected a class, got {type(cls).__name__}", instead)
    borrowed = [k for k in cls.__mro__ if _from_library(k) and k not in allowed and k is not object]
    if borrowed:
        k = borrowed[0]
        raise _hint(f"{cls.__name__} is built on {k.__module__}.{k.__qualname__}: the library's own {what}, "
                    f"which this exercise asks you to write", instead)


class _LibraryUsed(Exception):
    """Raised by a library piece that a check has switched off while a learner's code runs."""


@contextlib.contextmanager
def _refusing(targets: Sequence[tuple[object, str]]) -> Iterator[list[str]]:
    """While the block runs, each `owner.name` raises _LibraryUsed; yields the names that were called
    (recorded, so that a learner's `except Exception` cannot hide a call)."""
    used: list[str] = []
    saved = []
    for owner, name in targets:
        label = f"{getattr(owner, '__name__', owner)}.{name}"

        def refused(*args, _label=label, **kwargs):
            used.append(_label)
            raise _LibraryUsed(f"{_label} is switched off while the check runs your code")
        saved.append((owner, name, vars(owner).get(name, _MISSING)))
        setattr(owner, name, refused)
    try:
        yield used
    finally:
        for owner, name, original in reversed(saved):
            if original is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, original)


_MISSING = object()
_SWITCHED_OFF_CALLS: list[str] = []  # what a switched-off engine function records when it is called


def _raising_code(label: str, n_free: int):
    """The code of a function that records a call to `label` and raises _LibraryUsed, with `n_free`
    free variables (a function's code can only be swapped for code with as many)."""
    free = [f"_free{i}" for i in range(n_free)]
    keep = f"        (lambda: ({', '.join(free)},))\n" if free else ""
    source = ("def _outer():\n" + "".join(f"    {v} = None\n" for v in free)
              + "    def switched_off(*args, **kwargs):\n" + keep
              + "        from tinygrad_lab.exercises import checks\n"
              + f"        checks._SWITCHED_OFF_CALLS.append({label!r})\n"
              + f"        raise checks._LibraryUsed({label + ' is switched off while the check runs your code'!r})\n"
              + "    return switched_off\n")
    scope: dict = {}
    exec(compile(source, f"<switched off: {label}>", "exec"), scope)
    return scope["_outer"]().__code__


@contextlib.contextmanager
def _switched_off(functions: dict[str, Callable]) -> Iterator[list[str]]:
    """While the block runs, each engine function (label -> function) raises _LibraryUsed however a
    learner's code reaches it: by its module's name, a name imported earlier, `seams.reference(...)`.
    Its code is swapped, so every reference to the function object is switched off, and put back
    after. Yields the labels called (recorded: a learner's `except Exception` cannot hide a call)."""
    saved = []
    start = len(_SWITCHED_OFF_CALLS)
    try:
        for label, f in functions.items():
            f = inspect.unwrap(f.__func__ if isinstance(f, (staticmethod, classmethod)) else f)
            saved.append((f, f.__code__))
            f.__code__ = _raising_code(label, len(f.__code__.co_freevars))
        called: list[str] = []
        yield called
    finally:
        for f, code in reversed(saved):
            f.__code__ = code
        called_now = _SWITCHED_OFF_CALLS[start:]
        del _SWITCHED_OFF_CALLS[start:]
    called.extend(dict.fromkeys(called_now))


@contextlib.contextmanager
def _watching() -> Iterator[list]:
    """The engine's events (OpEvent, BackwardStep) published while the block runs."""
    seen: list = []
    with events.subscribe(seen.append):
        yield seen


def _ops(seen: list) -> set[type]:
    return {e.fn for e in seen if isinstance(e, events.OpEvent)}


def _ops_of(fn: Callable, *args) -> set[type]:
    """The op classes `fn(*args)` runs, read from the engine's event stream."""
    with _watching() as seen:
        fn(*args)
    return _ops(seen)


# ---------------------------------------------------------------- finite differences: the gradient truth

def _fd_vjp(f: Callable, xs: list[Tensor], g: np.ndarray, eps: float = 1e-6) -> list[np.ndarray]:
    """d/dx_i of sum(f(*xs) * g) for each input, by central differences in float64."""
    base = [_np(x).astype(np.float64) for x in xs]

    def value(arrays) -> float:
        with no_grad():
            out = f(*[creation.tensor(a, dtype="float64") for a in arrays])
        return float((_np(out) * g).sum())
    grads = []
    for i, a in enumerate(base):
        grad = np.zeros_like(a)
        for j in np.ndindex(a.shape):
            step = [b.copy() for b in base]
            step[i][j] += eps
            up = value(step)
            step[i][j] -= 2 * eps
            grad[j] = (up - value(step)) / (2 * eps)
        grads.append(grad)
    return grads


# ---------------------------------------------------------------- exercises 1 and 4: a Function's backward

class _ProbeCtx:
    """The ctx API a Function's forward and backward use, for running them outside the engine, where
    every op they run is published on the event stream."""

    def __init__(self, n_inputs: int):
        self.saved_tensors = ()
        self.needs_input_grad = (True,) * n_inputs

    def save_for_backward(self, *tensors) -> None:
        self.saved_tensors = tensors

    def mark_non_differentiable(self, *outputs) -> None:
        pass

    def set_materialize_grads(self, value: bool) -> None:
        pass


def _refuse_borrowed_backward(function, xs: list[Tensor]) -> None:
    """`function` is a Function of the learner's own, whose backward computes its gradient itself:
    it runs no backward pass of the engine's (autograd.grad, .backward() on ops it records)."""
    _refuse_library_bases(function, (Function,), "op", "derive from tl.autograd.Function only, and write "
                                                       "forward and backward yourself")
    ctx = _ProbeCtx(len(xs))
    with no_grad():
        out = function.forward(ctx, *xs)
    g = creation.ones(tuple(out.shape), dtype=out.dtype) if isinstance(out, Tensor) else out
    with _watching() as seen:
        function.backward(ctx, g)
    if any(isinstance(e, BackwardStep) for e in seen):
        raise _hint("backward runs a backward pass of its own (autograd.grad or .backward() on a graph it "
                    "records): that is the engine computing the gradient for you",
                    "write the local derivative as a formula of the tensors forward saved, and multiply it by "
                    "grad_output")


def _function_cases(shapes: Sequence[tuple], seed: int) -> Iterator[list[Tensor]]:
    """Random float64 inputs, away from 0 with both signs: one element, `shapes`, a 3-D batch
    (the last two only when every input has the same shape: an elementwise op)."""
    n = len(shapes)
    families = [list(shapes)]
    if len(set(map(tuple, shapes))) == 1:
        families = [[(1,)] * n, list(shapes), [(2, 3, 2)] * n]
    for k, family in enumerate(families):
        rng = np.random.default_rng(seed + k)
        yield [creation.tensor(rng.uniform(0.3, 3.0, s) * rng.choice([-1.0, 1.0], s), dtype="float64",
                               requires_grad=True) for s in family]


@_graded
def check_function_backward(function, reference: Callable, shapes: Sequence[tuple] = ((4, 3), (4, 3)),
                            seed: int = 0, forward_hint: str = "check the formula in forward before you "
                                                                 "look at backward") -> None:
    """`function.apply` gives `reference`'s values and, through the learner's backward, the gradients
    that finite differences of `reference` give, on random float64 inputs; its backward is its own."""
    for xs in _function_cases(shapes, seed):
        _refuse_borrowed_backward(function, xs)
        out, want = function.apply(*xs), reference(*xs)
        if not isinstance(out, Tensor) or tuple(out.shape) != tuple(want.shape):
            got = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
            raise _hint(f"forward returned {got}, expected a tensor of shape {tuple(want.shape)}",
                        "forward(ctx, ...) must return the result as a Tensor, computed with tensor ops")
        if not _close(out, want):
            raise _hint(f"forward gives the wrong values:\n got {_fmt(out)}\nwant {_fmt(want)}", forward_hint)
        rng = np.random.default_rng(seed)
        g = rng.standard_normal(tuple(want.shape))
        ones = np.ones(tuple(want.shape))
        _compare_grads(_student_grads(function, xs, g), _fd_vjp(reference, xs, g),
                       _student_grads(function, xs, ones), _fd_vjp(reference, xs, ones), len(xs))


def _compare_grads(got, truth, got_ones, truth_ones, n_inputs: int) -> None:
    for i, (a, t) in enumerate(zip(got, truth)):
        if a is None:
            raise _hint(f"backward returned None for input {i}, which requires grad",
                        f"return one gradient per input of forward ({n_inputs} here), in the same order")
        if _close(a, t, rtol=1e-5, atol=1e-7):
            continue
        where = f"gradient of input {i} is wrong:\n got {_fmt(a)}\nwant {_fmt(t)}"
        if _close(a, -t, rtol=1e-5, atol=1e-7):
            raise _hint(where, "it has the wrong sign: differentiate again, minus signs included")
        if any(j != i and _close(a, o, rtol=1e-5, atol=1e-7) for j, o in enumerate(truth)):
            raise _hint(where, "it is the gradient of another input: return the gradients in the order "
                               "of forward's arguments")
        if _close(got_ones[i], truth_ones[i], rtol=1e-5, atol=1e-7):
            raise _hint(where, "it is right only when grad_output is all ones: multiply the local derivative "
                               "by the incoming gradient (chain rule: grad_input = grad_output * d out/d input)")
        raise _hint(where, "write d out/d input on paper for one element, and compare with what backward "
                           "computes; use the tensors saved in forward with ctx.save_for_backward")


def _student_grads(function, xs: list[Tensor], g: np.ndarray) -> tuple:
    from ..autograd import grad
    try:
        return grad(function.apply(*xs), xs, creation.tensor(g, dtype="float64"), allow_unused=True)
    except RuntimeError as e:
        raise _hint(f"backward raised: {e}", "backward must return one gradient per input of forward, "
                                             "each of that input's shape") from e


@_graded
def check_gradcheck(function, shapes: Sequence[tuple] = ((2, 3), (2, 3)), seed: int = 1) -> None:
    """`autograd.gradcheck` passes on `function.apply` for random float64 inputs, and its backward is
    its own (no backward pass of the engine's inside)."""
    for xs in _function_cases(shapes, seed):
        _refuse_borrowed_backward(function, xs)
        try:
            gradcheck(function.apply, xs)
        except GradcheckError as e:
            raise _hint(f"gradcheck failed: {e}",
                        "gradcheck compares backward with finite differences element by element: the "
                        "numbers above show which input and element differ") from e


# ---------------------------------------------------------------- exercise 2: Linear

def _linear_ops() -> set[type]:
    """The ops only the library's linear runs (a fused op), not the formula x @ w.T + b."""
    x, w, b = creation.ones(2, 3), creation.ones(4, 3), creation.ones(4)
    return _ops_of(nn.functional.linear, x, w, b) - _ops_of(lambda: x @ w.T + b)


_LINEAR_CASES = (  # (in_features, out_features, input shape without the feature axis), smallest first
    (1, 1, (1,)), (3, 2, (5,)), (4, 4, (5,)), (5, 1, (3,)), (2, 3, (2, 4)))


def _refuse_library_linear(linear_cls) -> None:
    """`linear_cls` is the learner's own layer: not built on, holding or calling the library's linear."""
    _refuse_library_bases(linear_cls, (nn.Module,), "layer", "derive from tl.nn.Module only, and build the "
                                                             "weight, the bias and forward from tensors")
    mine = linear_cls(3, 2)
    inner = [f"self.{name}" for name, m in mine.named_modules() if m is not mine and _from_library(type(m))]
    if inner:
        raise _hint(f"the module holds a library layer ({inner[0]}) and lets it do the work",
                    "keep only the two parameters, and compute forward from them yourself")
    with _watching() as seen:
        with contextlib.suppress(Exception):  # a forward that fails is the value checks' business
            mine(creation.ones(4, 3, dtype=getattr(getattr(mine, "weight", None), "dtype", None)))
    borrowed = _ops(seen) & _linear_ops()
    if borrowed:
        raise _hint(f"forward calls the library's linear ({', '.join(k.__name__ for k in borrowed)} op: "
                    f"tl.nn.functional.linear or an nn.Linear)", "write y = x @ weight.T + bias with tensor ops "
                                                                 "yourself")


@_graded
def check_linear(linear_cls, seed: int = 0) -> None:
    """`linear_cls(in_features, out_features)` is an `nn.Module` of the learner's own, with PyTorch's
    weight layout, that computes x @ weight.T + bias (NumPy's answer) forward and backward for any
    leading batch shape."""
    _refuse_library_linear(linear_cls)
    rng = np.random.default_rng(seed)
    for n_in, n_out, batch in _LINEAR_CASES:
        mine = linear_cls(n_in, n_out)
        _check_linear_params(mine, n_in, n_out)
        x = creation.tensor(rng.standard_normal((*batch, n_in)), dtype=mine.weight.dtype, requires_grad=True)
        try:
            out = mine(x)
        except RuntimeError as e:
            raise _hint(f"forward on x of shape {tuple(x.shape)} raised: {e}",
                        f"weight is ({n_out}, {n_in}), so y = x @ weight.T + bias, for any number of "
                        f"leading batch axes") from e
        _check_linear_values(mine, x, out, n_in, n_out)
        _check_linear_grads(mine, x, out, rng)


def _check_linear_values(mine, x: Tensor, out, n_in: int, n_out: int) -> None:
    xv, w, b = _np(x).astype(np.float64), _np(mine.weight).astype(np.float64), _np(mine.bias).astype(np.float64)
    want = xv @ w.T + b
    if not isinstance(out, Tensor) or tuple(out.shape) != want.shape:
        got = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
        raise _hint(f"Linear({n_in}, {n_out}) maps an input of shape {tuple(x.shape)} to {got}, expected "
                    f"{want.shape}", "y = x @ weight.T + bias keeps every leading axis of x and replaces the "
                                     "last one (in_features) by out_features")

    def close(a, b) -> bool:  # float32 weights
        return _close(a, b, rtol=1e-4, atol=1e-5)
    if close(out, want):
        return
    what = f"Linear({n_in}, {n_out}) output is wrong:\n got {_fmt(out)}\nwant {_fmt(want)}"
    if close(out, xv @ w.T):
        raise _hint(what, "the bias is missing: add self.bias to x @ weight.T")
    if n_in == n_out and (close(out, xv @ w + b) or close(out, xv @ w)):
        raise _hint(what, "weight is (out_features, in_features): multiply by its transpose, x @ weight.T")
    raise _hint(what, "y = x @ weight.T + bias, using the module's own parameters")


def _check_linear_grads(mine, x: Tensor, out: Tensor, rng: np.random.Generator) -> None:
    g = rng.standard_normal(tuple(out.shape))
    for p in (mine.weight, mine.bias):
        p.grad = None
    (out * creation.tensor(g, dtype=out.dtype)).sum().backward()
    xv, w = _np(x).astype(np.float64), _np(mine.weight).astype(np.float64)
    g2, x2 = g.reshape(-1, g.shape[-1]), xv.reshape(-1, xv.shape[-1])
    truth = {"weight": g2.T @ x2, "bias": g2.sum(0), "input": g @ w}
    for name, a in (("weight", mine.weight.grad), ("bias", mine.bias.grad), ("input", x.grad)):
        if a is None or not _close(a, truth[name], rtol=1e-4, atol=1e-5):
            raise _hint(f"the gradient of {name} is wrong (got {'None' if a is None else _fmt(a)}, "
                        f"want {_fmt(truth[name])})", "build forward from differentiable tensor ops only "
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


@_graded
def check_linear_init(linear_cls) -> None:
    """A new `linear_cls(64, 64)` (the learner's own) has parameters that look like draws from
    U(-1/√in, 1/√in), as nn.Linear's: inside the bounds, spread over them with the uniform
    distribution's standard deviation bound/√3, and different in each new layer."""
    _refuse_library_linear(linear_cls)
    n_in, n_out = 64, 64
    bound = 1 / np.sqrt(n_in)
    first, second = linear_cls(n_in, n_out), linear_cls(n_in, n_out)
    for name in ("weight", "bias"):
        v = _np(getattr(first, name)).astype(np.float64).ravel()
        uniform_std = bound / np.sqrt(3)
        std_ok = name == "bias" or abs(v.std() - uniform_std) < 0.1 * uniform_std  # 64 biases: too few to tell
        if np.abs(v).max() > bound * (1 + 1e-6) or np.ptp(v) < bound or not std_ok:
            raise _hint(f"Linear({n_in}, {n_out}).{name} has values in [{v.min():.3f}, {v.max():.3f}] with "
                        f"standard deviation {v.std():.3f}; U(-{bound:.3f}, {bound:.3f}) has {uniform_std:.3f}",
                        "initialise like nn.Linear: uniform in ±1/√in_features, different for each entry "
                        "(tl.rand gives U(0, 1): scale and shift it)")
    if _close(first.weight, second.weight):
        raise _hint("two new layers start with the same weights", "draw the initial values at random for "
                                                                  "each layer (no fixed seed inside __init__)")


# ---------------------------------------------------------------- exercise 3: SGD with momentum

def _library_optimizers() -> list[type]:
    found, todo = [], [optim.Optimizer]
    while todo:
        k = todo.pop()
        found.append(k)
        todo += [s for s in k.__subclasses__() if _from_library(s)]
    return found


@contextlib.contextmanager
def _own_optimizer(sgd_cls) -> Iterator[None]:
    """While the block runs the library's optimizers cannot be made or stepped; a class built on one is refused."""
    _refuse_library_bases(sgd_cls, (), "optimizer", "write a plain class with __init__, zero_grad and step: "
                                                    "no tl.optim class underneath")
    targets = [(k, name) for k in _library_optimizers() for name in ("__init__", "step") if name in vars(k)]
    with _refusing(targets) as used:
        try:
            yield
        except (_LibraryUsed, AssertionError):  # the refusal explains a wrong step better than the step
            if not used:
                raise
        if used:
            raise _hint(f"your optimizer calls the library's {used[0]}: the optimizer this exercise asks you "
                        f"to write", "keep one velocity buffer per parameter yourself and update the "
                                     "parameters in place in step()")


_SGD_CASES = ((0.1, 0.9), (0.05, 0.5), (0.1, 0.0))  # (lr, momentum)


@_graded
def check_sgd_momentum(sgd_cls, steps: int = 5, seed: int = 0) -> None:
    """`sgd_cls(params, lr=..., momentum=...)` with `step()` and `zero_grad()` moves the parameters
    as PyTorch's SGD rule does (computed here in NumPy), step after step, on a small loss, for
    several learning rates and momenta; it is the learner's own, not a tl.optim optimizer."""
    with _own_optimizer(sgd_cls):
        for lr, momentum in _SGD_CASES:
            _check_sgd_case(sgd_cls, lr, momentum, steps, np.random.default_rng(seed))


def _check_sgd_case(sgd_cls, lr: float, momentum: float, steps: int, rng: np.random.Generator) -> None:
    starts = [rng.standard_normal((3,)), rng.standard_normal((2, 2))]
    scales = [rng.uniform(0.5, 2.0, s.shape) for s in starts]
    mine = [creation.tensor(s, dtype="float64", requires_grad=True) for s in starts]
    frozen = creation.tensor([1.0], dtype="float64", requires_grad=True)  # never gets a gradient
    ref = [s.copy() for s in starts]
    bufs: list = [None, None]
    opt = sgd_cls([mine[0], frozen, mine[1]], lr=lr, momentum=momentum)
    for k in range(1, steps + 1):
        _check_zero_grad(opt, mine)
        sum(((creation.tensor(a, dtype="float64") * p * p) + p.sin()).sum() for a, p in zip(scales, mine)).backward()
        before = [_np(p).copy() for p in mine]
        grads = [2 * a * r + np.cos(r) for a, r in zip(scales, ref)]  # d/dp of a p² + sin p
        prev = [None if b is None else b.copy() for b in bufs]
        bufs = [g.copy() if b is None else momentum * b + g for b, g in zip(bufs, grads)]
        ref = [r - lr * b for r, b in zip(ref, bufs)]
        opt.step()
        for i, (p, r) in enumerate(zip(mine, ref)):
            _compare_sgd_step(k, i, _np(p), r, before[i], grads[i], prev[i], lr, momentum)
        if _np(frozen).item() != 1.0:
            raise _hint("a parameter without a gradient (.grad is None) was changed by step()",
                        "skip parameters whose .grad is None, as PyTorch does")


def _check_zero_grad(opt, params: list[Tensor]) -> None:
    opt.zero_grad()
    for i, p in enumerate(params):
        if p.grad is not None and np.any(_np(p.grad) != 0):
            raise _hint(f"after zero_grad(), parameter {i}'s .grad is {_fmt(p.grad)}",
                        "zero_grad() must reset every parameter's .grad (to None, as PyTorch does); "
                        "otherwise backward adds the new gradient to the old one")


def _compare_sgd_step(k: int, i: int, got, want, before, g, prev, lr: float, momentum: float) -> None:
    """Parameter i after step k is `want`; otherwise a hint from how it moved (`before` -> `got`)."""
    if _close(got, want):
        return
    what = f"lr={lr}, momentum={momentum}: after step {k}, parameter {i} is {_fmt(got)}, expected {_fmt(want)}"
    delta = got - before
    if np.allclose(delta, 0):
        raise _hint(what, "the parameter did not change: update it in place under tl.no_grad() "
                          "(p -= ... or p.sub_(...)); `p = p - ...` only rebinds a local name")
    if np.allclose(delta, lr * (g if prev is None else momentum * prev + g)):
        raise _hint(what, "you moved uphill: subtract lr times the (momentum) gradient")
    if k > 1 and np.allclose(delta, -lr * g):
        raise _hint(what, "this step used only the current gradient: keep one velocity buffer per "
                          "parameter across steps, b = momentum * b + grad, and step with p -= lr * b")
    if k > 1 and np.allclose(delta, -lr * (momentum * prev + (1 - momentum) * g)):
        raise _hint(what, "PyTorch's momentum adds the full gradient: b = momentum * b + grad "
                          "(no (1 - momentum) factor)")
    raise _hint(what, "on step 1, b = grad; then b = momentum * b + grad; always p -= lr * b")


@_graded
def check_momentum_helps(sgd_cls, steps: int = 50) -> None:
    """In a long narrow valley, L = 0.05 u² + 5 v², momentum 0.9 ends at least 10 times lower than
    plain gradient descent from the same start (the learner's own optimizer, both times)."""
    def descend(momentum: float) -> float:
        p = creation.tensor([10.0, 1.0], dtype="float64", requires_grad=True)
        opt = sgd_cls([p], lr=0.09, momentum=momentum)
        for _ in range(steps):
            opt.zero_grad()
            loss = (creation.tensor([0.05, 5.0], dtype="float64") * p * p).sum()
            loss.backward()
            opt.step()
        return float(_np(loss))
    with _own_optimizer(sgd_cls):
        plain, fast = descend(0.0), descend(0.9)
    if not fast < plain / 10:
        raise _hint(f"after {steps} steps down the valley: loss {fast:.4g} with momentum 0.9, {plain:.4g} without",
                    "momentum should get much further: the velocity buffer must carry over from step to step")


# ---------------------------------------------------------------- exercise 4: find the bug, then fix it

def _true_sends(t: dict[str, Tensor], stage: int) -> np.ndarray:
    """What the backward step of `broken.STAGES[stage]`'s op should send to that op's (first) input:
    the loss's gradient with respect to it, by finite differences of the forward passes from there on."""
    first = broken.STAGES[stage][2][0]

    def downstream(v: Tensor) -> Tensor:
        env = {**t, first: v}
        for name, f, args in broken.STAGES[stage:]:
            env[name] = f(*[env[a] for a in args])
        return env["loss"]
    return _fd_vjp(downstream, [t[first]], np.ones(()))[0]


def _first_wrong_step(t: dict[str, Tensor]) -> tuple[list, int, np.ndarray]:
    """The steps of the broken program's backward, the index of the first that sends a wrong gradient
    (checked against finite differences) and what that step should have sent."""
    stepper = BackwardStepper(t["loss"])
    stepper.run()
    stage_of = {id(t[name].grad_fn): k for k, (name, _, _) in enumerate(broken.STAGES)}
    for i, s in enumerate(stepper.history):
        stage = stage_of.get(id(s.raw.node))
        if stage is None:
            continue
        truth = _true_sends(t, stage)
        if not _close(s.sends[0][2], truth, rtol=1e-5, atol=1e-8):
            return stepper.history, i, truth
    raise RuntimeError("the broken program's backward has no wrong step")


@_graded
def check_bug_report(op_name: str, should_send) -> None:
    """`op_name` is the op whose backward step in `broken.program()` first sends a wrong gradient
    (found here by finite differences, step by step), and `should_send` the gradient it should send."""
    steps, bad, truth = _first_wrong_step(broken.program())
    ops = [s.op for s in steps]
    if op_name not in ops:
        raise _hint(f"no step of this backward pass runs an op called {op_name!r}",
                    f"the steps are, in order: {', '.join(ops)}; use step.op's spelling")
    mine = ops.index(op_name)
    if mine < bad:
        raise _hint(f"step {mine} ({op_name}) sends the right gradients",
                    "the gradients go wrong in a step that runs AFTER it: keep stepping")
    if mine > bad:
        raise _hint(f"the gradient arriving at step {mine} ({op_name}) is already wrong",
                    "the bug is in a step that ran BEFORE it: compare what each step sends with "
                    "grad_output times the op's local derivative")
    sent = _np(steps[bad].sends[0][2])
    if should_send is None or _np(should_send).shape != truth.shape:
        got = "None" if should_send is None else str(_np(should_send).shape)
        raise _hint(f"right op; should_send is {got}, expected a tensor of shape {truth.shape}",
                    "set should_send to the gradient that step ought to send its input: what it received "
                    "(step.grad_output) times the op's local derivative at its input")
    if _close(should_send, truth, rtol=1e-4, atol=1e-7):
        return
    if _close(should_send, sent):
        raise _hint(f"right op, but should_send {_fmt(should_send)} is what its broken backward sends",
                    "compute what it should send yourself: step.grad_output times the local derivative "
                    "(the table above) at the op's input")
    raise _hint(f"right op, but should_send is {_fmt(should_send)}: the step should send something else",
                "grad_output times the local derivative evaluated at the op's INPUT (the tensor before it), "
                "element by element")


@_graded
def check_fixed_op(fixed) -> None:
    """`fixed` is a Function of the learner's own with the forward of the op that `broken.program()`
    gets wrong, and a backward that matches finite differences of it."""
    t = broken.program()
    steps, bad, _ = _first_wrong_step(t)
    buggy = steps[bad].raw.node.fn
    check_function_backward(fixed, lambda x: buggy.apply(x.detach()), shapes=[(6,)], seed=3,
                            forward_hint="forward should compute exactly what the op you found in Part 1 "
                                         "computes (only that op's backward was wrong): copy its formula")


# ---------------------------------------------------------------- exercise 5: vectorise

def _pairwise_truth(x: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """D[i, j] = |x_i - x_j|² and the gradient of sum(D * g) with respect to x."""
    diff = x[:, None, :] - x[None, :, :]
    d = (diff ** 2).sum(-1)
    return d, 2 * ((g + g.T)[:, :, None] * diff).sum(1)


_POINT_SETS = ((1, 1), (2, 3), (5, 1), (7, 4), (30, 8))  # (n points, d dimensions), smallest first


@_graded
def check_pairwise_sq_dists(fn: Callable, seed: int = 0) -> None:
    """`fn(X)` returns the (n, n) tensor of squared distances between the rows of X (NumPy's answer)
    for random sets of points of several sizes, and the right gradients flow back to X through it."""
    rng = np.random.default_rng(seed)
    cases = [(creation.tensor(rng.standard_normal((n, d)), dtype="float64", requires_grad=True),
              rng.standard_normal((n, n))) for n, d in _POINT_SETS]
    results = [_pairwise_values(fn, X) for X, _ in cases]  # every size's values before any gradient
    for (X, g), got in zip(cases, results):
        if got.grad_fn is None:
            raise _hint("the result is not connected to X: no gradient can flow back",
                        "compute it from X with tensor ops (no .numpy(), tl.tensor(...) or .detach() on the way)")
        (got * creation.tensor(g, dtype="float64")).sum().backward()
        if X.grad is None or not _close(X.grad, _pairwise_truth(_np(X), g)[1], rtol=1e-6, atol=1e-9):
            raise _hint(f"for {X.shape[0]} points in {X.shape[1]}-D, the gradient that flows back to X is wrong",
                        "build the result from differentiable tensor ops only")


def _pairwise_values(fn: Callable, X: Tensor) -> Tensor:
    n, d = X.shape
    want = _pairwise_truth(_np(X), np.zeros((n, n)))[0]
    try:
        got = fn(X)
    except Exception as e:
        raise _hint(f"for {n} random points in {d}-D (X requires grad), it raised {type(e).__name__}: {e}",
                    "it must work for any number of points and dimensions; stay in tensor ops") from e
    if not isinstance(got, Tensor):
        raise _hint(f"returned a {type(got).__name__}, not a tinygrad_lab Tensor",
                    "stay in tensor ops (no .numpy() or Python lists) so that gradients can still flow")
    if tuple(got.shape) != want.shape:
        raise _hint(f"for {n} points in {d}-D, returned shape {tuple(got.shape)}, expected {want.shape}",
                    "index X with None to get shapes (n, 1, d) and (1, n, d); their difference is "
                    "(n, n, d); then sum over the last axis")
    if not _close(got, want, rtol=1e-6, atol=1e-9):
        err = np.abs(_np(got) - want)
        i, j = (int(k) for k in np.unravel_index(err.argmax(), err.shape))
        raise _hint(f"for {n} random points in {d}-D, D[{i}, {j}] is {_np(got)[i, j]:.5g}, the squared "
                    f"distance between points {i} and {j} is {want[i, j]:.5g}",
                    "compare one element by hand: which axis does each term run over?")
    return got


@_graded
def check_speedup(slow: Callable, fast: Callable, *inputs, min_speedup: float = 10.0) -> float:
    """`fast(*inputs)` returns what `slow(*inputs)` returns, as a Tensor connected to its inputs, with
    a number of ops that does not grow with the input, at least `min_speedup` times faster (best of
    several runs each); returns the measured speed-up."""
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
    if fast(*[x[:4].detach().requires_grad_() for x in inputs]).grad_fn is None:
        raise _hint("fast's result is not connected to its input: no gradient can flow back",
                    "compute it with tensor ops (no .numpy(), tl.tensor(...) or .detach() on the way)")
    n_small, n_large = len(_ops_seen(fast, [x[:4] for x in inputs])), len(_ops_seen(fast, list(inputs)))
    if n_large > n_small:
        raise _hint(f"fast runs {n_small} tensor ops on 4 points and {n_large} on {len(inputs[0])}",
                    "a Python loop is left somewhere: a fixed number of whole-tensor ops should handle every pair")
    t_slow, t_fast = _best_time(slow, inputs, 2), _best_time(fast, inputs, 20)
    speedup = t_slow / t_fast
    if speedup < min_speedup:
        raise _hint(f"fast is only {speedup:.1f}x faster than slow (need {min_speedup:g}x)",
                    "a Python loop over elements is left somewhere: one tensor op should handle every pair")
    return speedup


def _ops_seen(fn: Callable, inputs: list) -> list:
    with _watching() as seen:
        fn(*inputs)
    return [e for e in seen if isinstance(e, events.OpEvent)]


def _best_time(fn: Callable, inputs: tuple, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(*inputs)
        best = min(best, time.perf_counter() - t0)
    return best


# ---------------------------------------------------------------- exercise 6: train to a target

class _Withheld:
    """What a notebook's data tensors are while a check runs the learner's train(X, y)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr):
        raise RuntimeError(f"{self._name} is withheld while the check runs train(X, y)")

    def __repr__(self) -> str:
        return f"<{self._name}: withheld>"


@contextlib.contextmanager
def _withholding(namespace: dict) -> Iterator[None]:
    """The notebook's tensors, arrays and modules in `namespace` are replaced by _Withheld while the block runs."""
    kinds = (Tensor, np.ndarray, nn.Module)
    hidden = {k: v for k, v in namespace.items() if isinstance(v, kinds) and not k.startswith("_")}
    namespace.update({k: _Withheld(k) for k in hidden})
    try:
        yield
    finally:
        namespace.update(hidden)


def _digits_split(seed: int, n_test: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    X, y = datasets.digits()
    order = np.random.default_rng(seed).permutation(len(y))
    X, y = _np(X) / 16.0, _np(y)
    tr, te = order[n_test:], order[:n_test]
    as_t = creation.tensor
    return as_t(X[tr], dtype="float32"), as_t(y[tr]), as_t(X[te], dtype="float32"), as_t(y[te])


@_graded
def check_classifier(train: Callable, target: float = 0.95, seed: int = 2024, n_test: int = 397) -> float:
    """`train(X, y)` returns a tinygrad_lab model that classifies a held-out part of the digits with
    at least `target` accuracy: the check draws its own split, calls train on the training part only
    (with the notebook's data withheld and the data set's loaders switched off) and measures on the
    rest; returns that accuracy."""
    import sklearn.datasets
    X_train, y_train, X_test, y_test = _digits_split(seed, n_test)
    namespace = getattr(train, "__globals__", {})
    manual_seed(0)
    error = None
    with _withholding(namespace), _refusing([(datasets, "digits"), (sklearn.datasets, "load_digits")]) as used:
        try:
            model = train(X_train, y_train)
        except Exception as e:
            error = e
    if used:
        raise _hint(f"train(X, y) loads the data set itself ({used[0]})",
                    "train only on the X and y it is given: the check keeps its test images from it")
    if error is not None:
        raise _hint(f"train(X, y) raised {type(error).__name__}: {error}",
                    "train must build its model and use only the X and y it is given: the check calls it on a "
                    "split of its own, with the notebook's data and models withheld") from error
    _check_is_trained_network(model, X_test)
    with no_grad():
        out = model(X_test)
    if out.ndim != 2 or tuple(out.shape) != (len(y_test), 10):
        raise _hint(f"the model maps {tuple(X_test.shape)} to {tuple(out.shape)}, expected ({len(y_test)}, 10)",
                    "one row of class scores (logits) per image")
    acc = float((_np(out).argmax(axis=1) == _np(y_test)).mean())
    if acc < target:
        raise _hint(f"trained on the check's own split, the model's accuracy on its held-out images is {acc:.3f}, "
                    f"below the target {target:.3f}", "check the loss goes down while training, then try more "
                                                       "steps, another learning rate or a wider hidden layer")
    return acc


def _check_is_trained_network(model, X: Tensor) -> None:
    """`model` is an nn.Module whose outputs come from its parameters through the engine."""
    if not isinstance(model, nn.Module) or not list(model.parameters()):
        raise _hint(f"train returned {type(model).__name__}, not a tinygrad_lab network with parameters",
                    "build the model from tl.nn layers (e.g. tl.nn.Sequential) and return it")
    model.zero_grad()
    model(X[:16]).sum().backward()
    if all(p.grad is None or not np.any(_np(p.grad)) for p in model.parameters()):
        raise _hint("the model's outputs do not depend on its parameters",
                    "the classifier must be the tinygrad_lab network you trained, not a prediction made elsewhere")
    model.zero_grad()
