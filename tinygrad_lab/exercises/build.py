"""Checks of the build-it track (notebooks/exercises/build_*.ipynb): the learner writes a piece of
the engine, the engine runs it in place of its own (`tinygrad_lab.seams`), and these checks grade it.

Each check, like those of checks.py, compares the learner's piece with an independent truth (NumPy,
finite differences) on inputs of its own beyond the notebook's, smallest first; runs it inside the
engine through its seam; switches the engine's own piece off while the learner's runs (its code
swapped for code that raises, however the learner reaches it: `checks._switched_off`), so that a
piece that calls the engine's scores nothing; and answers a wrong piece with a HINT. A blank piece
(nbgrader's `raise NotImplementedError()`) gets a hint of where to start.
"""
from __future__ import annotations

import functools
import sys
from collections.abc import Callable

import numpy as np

from .. import creation, dtypes, nn, optim, seams
from ..autograd import BackwardStep, engine, no_grad
from ..autograd.gradcheck import analytical_jacobian, gradcheck, numerical_jacobian
from ..ops import broadcast, conv
from ..ops.linalg import Matmul
from ..random import manual_seed
from ..tensor import Tensor
from ..utils.data import collate, dataloader, sampler
from ..utils.data.dataset import TensorDataset
from .checks import (_close, _fd_vjp, _fmt, _hint, _library_optimizers, _LibraryUsed, _np,
                     _refuse_library_bases, _switched_off, _watching)


def _build_check(piece: str, start: str) -> Callable:
    """A graded check of the build-it piece `piece`: a NotImplementedError (the blank notebook) becomes
    a hint of where to start; a failure's message is the check's HINT, its traceback short."""
    def wrap(check: Callable) -> Callable:
        @functools.wraps(check)
        def run(*args, **kwargs):
            __tracebackhide__ = True
            try:
                return check(*args, **kwargs)
            except NotImplementedError:
                message = f"{piece} raised NotImplementedError: it is not written yet\nHINT: {start}"
            except AssertionError as e:
                message = str(e)
            raise AssertionError(message) from None
        return run
    return wrap


def _refused(called: list[str], instead: str) -> None:
    """The hint for a learner's piece that called a switched-off engine function."""
    if called:
        raise _hint(f"your code called the engine's own {called[0]}, the piece this exercise asks you to write "
                    f"(it is switched off while the check runs your code)", instead)


def _call(piece: str, fn: Callable, *args, look: str = "read the error above; then your code again"):
    """fn(*args); an exception of the learner's code (other than NotImplementedError, which the check's
    wrapper answers) becomes a hint naming it."""
    try:
        return fn(*args)
    except (NotImplementedError, AssertionError, _LibraryUsed):
        raise
    except Exception as e:
        raise _hint(f"{piece} raised {type(e).__name__}: {e}", look) from e


def _float64(rng: np.random.Generator, shape, low: float = -2.0, high: float = 2.0, grad: bool = True) -> Tensor:
    return creation.tensor(rng.uniform(low, high, shape), dtype="float64", requires_grad=grad)


# ================================================================ build 01: numerical gradients

_NUMERIC_CASES = (  # (name, f, its gradient, shape), smallest first
    ("sum(x**3)", lambda x: float(np.sum(x ** 3)), lambda x: 3 * x ** 2, ()),
    ("sum(x**3)", lambda x: float(np.sum(x ** 3)), lambda x: 3 * x ** 2, (1,)),
    ("sum(sin(x) * x)", lambda x: float(np.sum(np.sin(x) * x)), lambda x: np.cos(x) * x + np.sin(x), (4,)),
    ("sum(x * roll(x, 1))", lambda x: float(np.sum(x * np.roll(x, 1))), lambda x: np.roll(x, 1) + np.roll(x, -1),
     (5,)),
    ("sum(exp(x) @ w)", lambda x: float(np.sum(np.exp(x) @ np.arange(1.0, 3.0))),
     lambda x: np.exp(x) * np.arange(1.0, 3.0), (3, 2)),
)


@_build_check("numerical_grad", "for each element i of x: add eps to x[i] and evaluate f, subtract 2 * eps and "
                                "evaluate f again, then put x[i] back; the slope is the difference of the two "
                                "values over the distance between the two points")
def check_numerical_grad(numerical_grad: Callable, seed: int = 0) -> None:
    """`numerical_grad(f, x, eps)` returns the gradient of f (a NumPy function of a float64 array, to a
    float) at x by central differences, for functions and shapes of the check's own (the analytic
    gradient is the truth), and leaves x as it was; it evaluates f only (no autograd)."""
    rng = np.random.default_rng(seed)
    switched = {"gradcheck.numerical_jacobian": numerical_jacobian, "autograd.gradcheck": gradcheck}
    for name, f, truth, shape in _NUMERIC_CASES:
        x = np.array(rng.uniform(0.2, 1.5, shape) * rng.choice([-1.0, 1.0], shape), dtype=np.float64)
        before = x.copy()
        with _switched_off(switched) as called, _watching() as seen:
            try:
                got = _call("numerical_grad", numerical_grad, f, x, 1e-6)
            except _LibraryUsed:
                got = None
        _refused(called, "evaluate f at nearby points yourself: x with one element moved by +eps, then by -eps")
        if any(isinstance(e, BackwardStep) for e in seen):
            raise _hint("numerical_grad runs a backward pass: that is autograd, the thing a numerical gradient "
                        "checks", "compute slopes from values of f only: (f(x + eps) - f(x - eps)) / (2 eps), "
                              "one element at a time")
        _check_numeric(name, f, x, before, got, truth(before))


def _check_numeric(name: str, f: Callable, x, before, got, want) -> None:
    if not np.array_equal(x, before):
        raise _hint(f"for f(x) = {name}, x was changed by numerical_grad: {_fmt(before)} became {_fmt(x)}",
                    "put each element back after moving it (or work on a copy): the caller's x must not change")
    if isinstance(got, (float, np.generic)):
        got = np.asarray(got)
    if not isinstance(got, np.ndarray) or got.shape != np.shape(before):
        what = f"shape {got.shape}" if isinstance(got, np.ndarray) else type(got).__name__
        raise _hint(f"for x of shape {np.shape(before)}, numerical_grad returned {what}",
                    "return a NumPy array of x's shape: one slope per element of x (np.zeros_like(x) to start)")
    if np.allclose(got, want, rtol=1e-7, atol=1e-8):
        return
    what = f"for f(x) = {name} at x = {_fmt(before)}: got {_fmt(got)}, the gradient is {_fmt(want)}"
    eps = 1e-6
    forward = np.array([(f(before + eps * _unit(before, i)) - f(before)) / eps for i in np.ndindex(before.shape)])
    if np.allclose(got, 2 * want, rtol=1e-5, atol=1e-7):
        raise _hint(what, "twice the gradient: x + eps and x - eps are 2 * eps apart")
    if np.allclose(got.ravel(), forward, rtol=1e-9, atol=1e-12) or np.allclose(got, want, rtol=1e-4, atol=1e-6):
        raise _hint(what, "close, but not close enough: use the eps you are given, and the central difference "
                          "(f(x + eps) - f(x - eps)) / (2 eps), off by about eps² f'''/6; a one-sided difference "
                          "(f(x + eps) - f(x)) / eps is off by about eps f''/2")
    raise _hint(what, "move one element at a time, evaluate f on the whole array each time, and put the element "
                      "back before moving the next")


def _unit(x, i) -> np.ndarray:
    e = np.zeros_like(x)
    e[i] = 1.0
    return e


def _wrong_tanh(ctx, g):  # ignores the incoming gradient: right only where it is 1
    (out,) = ctx.saved_tensors
    return 1 - out * out


def _wrong_mul(ctx, g):  # the second input's gradient forgets the other factor
    a, b = ctx.saved_tensors
    ga, gb = g * b, g * 1.0
    return broadcast.sum_to(ga, ctx.input_shapes[0]), broadcast.sum_to(gb, ctx.input_shapes[1])


def _wrong_exp(ctx, g):  # off by a few percent
    (out,) = ctx.saved_tensors
    return g * out * 1.02


_GRAD_CHECK_CASES = (  # (what, fn, input shapes, a seam replaced by a wrong backward or None), the right ones first
    ("tanh(x)", lambda x: x.tanh(), [(3,)], None),
    ("x * y", lambda x, y: x * y, [(2, 3), (2, 3)], None),
    ("x @ y", lambda x, y: x @ y, [(2, 3), (3, 2)], None),
    ("exp(x).sum(-1) * y", lambda x, y: x.exp().sum(-1) * y, [(3, 2), (3,)], None),
    ("exp(x) with a backward off by 2%", lambda x: x.exp(), [(4,)], ("Exp.backward", _wrong_exp)),
    ("x * y with y's gradient wrong", lambda x, y: x * y, [(2, 2), (2, 2)], ("Mul.backward", _wrong_mul)),
    ("tanh(x) with a backward that ignores its incoming gradient", lambda x: x.tanh(), [(3,)],
     ("Tanh.backward", _wrong_tanh)),
)


@_build_check("grad_check", "compute the engine's gradient with backward(), your numerical_grad of the same "
                            "scalar, and compare them with a tolerance (np.allclose(..., atol=atol, rtol=rtol))")
def check_grad_check(grad_check: Callable, seed: int = 1) -> None:
    """`grad_check(fn, inputs)` returns True for ops whose backward is right and False where a wrong
    backward runs in the engine's place (through the seams: a few percent off, one input wrong, one that
    ignores its incoming gradient), on inputs of the check's own; it uses the learner's numerical_grad,
    not the library's gradcheck."""
    rng = np.random.default_rng(seed)
    switched = {"autograd.gradcheck": gradcheck, "gradcheck.numerical_jacobian": numerical_jacobian,
                "gradcheck.analytical_jacobian": analytical_jacobian}
    for what, fn, shapes, wrong in _GRAD_CHECK_CASES:
        inputs = [_float64(rng, s, 0.2, 1.2) for s in shapes]
        with _switched_off(switched) as called:
            try:
                if wrong is None:
                    verdict = _call("grad_check", grad_check, fn, inputs)
                else:
                    with seams.replace(*wrong):
                        verdict = _call("grad_check", grad_check, fn, inputs)
            except _LibraryUsed:
                verdict = None
        _refused(called, "compare the engine's gradient (backward) with your own numerical_grad")
        _judge_grad_check(what, verdict, wrong)


def _judge_grad_check(what: str, verdict, wrong) -> None:
    if not isinstance(verdict, (bool, np.bool_)):
        raise _hint(f"grad_check returned {type(verdict).__name__} for {what}",
                    "return True when every input's gradient matches, False otherwise")
    if wrong is None and not verdict:
        raise _hint(f"grad_check says the gradient of {what} is wrong, but the engine's is right",
                    "compare within a tolerance (np.allclose with atol and rtol); compute the numerical gradient in "
                    "float64 on a copy of each input's values, with every input at its own value")
    if wrong is not None and verdict:
        look = {"Mul.backward": "check every input's gradient, not only the first one's",
                "Tanh.backward": "you reduce fn's output with .sum(), so every gradient that reaches the op is 1, "
                                 "and a backward that ignores it looks right: weight the outputs with random numbers "
                                 "first, (out * w).sum(), in both gradients",
                "Exp.backward": "compare the two gradients element by element with a tolerance (np.allclose), "
                                "not their sums or signs"}[wrong[0]]
        raise _hint(f"grad_check passed {what}", look)


# ================================================================ build 02: a Function, forward and backward

def _sigmoid_truth(x):
    return 1 / (1 + (-x).exp())


@_build_check("Sigmoid", "forward: compute 1 / (1 + exp(-x)) with tensor ops and save the output with "
                         "ctx.save_for_backward; backward: return grad_output times the derivative, written "
                         "with the saved output")
def check_sigmoid_function(function) -> None:
    """`function` (the learner's Sigmoid) gives the logistic function's values and, through its own
    backward, the gradients finite differences give, on random float64 inputs of several shapes;
    forward is built from tensor ops (not the library's sigmoid) and backward computes the gradient."""
    from .checks import check_function_backward
    from ..ops.elementwise import Sigmoid
    x = creation.tensor([0.5, -1.0], dtype="float64")
    with _watching() as seen:
        with no_grad():
            _call("Sigmoid.forward", function.forward, _Ctx(), x)
    if Sigmoid in {getattr(e, "fn", None) for e in seen}:
        raise _hint("forward calls the library's sigmoid (x.sigmoid(), tl.sigmoid or nn.functional.sigmoid)",
                    "build it from exp, +, and division: 1 / (1 + (-x).exp())")
    check_function_backward(function, _sigmoid_truth, shapes=[(4, 3)], seed=3,
                            forward_hint="forward should compute 1 / (1 + exp(-x)), element by element")


class _Ctx:
    """A ctx for calling a learner's forward outside the engine."""

    def __init__(self):
        self.saved_tensors = ()
        self.needs_input_grad = (True,)

    def save_for_backward(self, *tensors) -> None:
        self.saved_tensors = tensors


@_build_check("Sigmoid.backward", "write backward first (the check above says how)")
def check_sigmoid_in_engine(function, seed: int = 4) -> None:
    """The learner's backward, in place of the engine's Sigmoid backward (seam "Sigmoid.backward"), gives
    the gradients finite differences give through a small network with nn.Sigmoid layers; the engine's
    own Sigmoid backward is switched off meanwhile."""
    from ..ops.elementwise import Sigmoid
    check_sigmoid_function(function)  # right on its own first: its hints say what is wrong
    rng = np.random.default_rng(seed)
    x, w1, w2 = (_float64(rng, s, -1.5, 1.5) for s in ((5, 3), (3, 4), (4, 2)))

    def net(x, w1, w2):
        return nn.functional.sigmoid(nn.functional.sigmoid(x @ w1) @ w2)
    g = rng.standard_normal((5, 2))
    with _switched_off({"Sigmoid.backward": Sigmoid.backward}) as called, seams.replace("Sigmoid.backward",
                                                                                         function.backward):
        try:
            _call("your backward (in the engine)", lambda: (net(x, w1, w2) * creation.tensor(g)).sum().backward())
        except _LibraryUsed:
            pass
    _refused(called, "compute the gradient from the saved output yourself")
    truth = _fd_vjp(net, [x, w1, w2], g)
    for name, t, want in zip(("x", "w1", "w2"), (x, w1, w2), truth):
        if t.grad is None or not _close(t.grad, want, rtol=1e-5, atol=1e-7):
            raise _hint(f"with your backward in the engine, the gradient of {name} in sigmoid(sigmoid(x @ w1) @ w2) "
                        f"is {_fmt(t.grad) if t.grad is not None else None}, expected {_fmt(want)}",
                        "the engine's Sigmoid saves one tensor, its OUTPUT: your forward must save the same (only "
                        "the output), so that your backward reads the right tensor in the engine too")


# ================================================================ build 03: unbroadcast

_UNBROADCAST_CASES = (  # (the gradient's shape, the input's shape), smallest first
    ((3,), (3,)), ((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 3), (2, 1)), ((2, 3), ()), ((4, 2, 3), (2, 1)),
    ((3, 4, 5), (4, 1)), ((2, 3, 4), (1,)), ((5, 1, 4), (1, 1, 4)), ((2, 3, 4), (2, 1, 4)))


@_build_check("unbroadcast", "first sum over the leading dims the gradient has in excess (while grad.dim() > "
                             "len(shape)); then sum, keeping the dim, where shape has 1 and the gradient more")
def check_unbroadcast(unbroadcast: Callable, seed: int = 0) -> None:
    """`unbroadcast(grad, shape)` sums grad down to `shape` (NumPy's answer) for pairs of shapes of the
    check's own (leading dims, dims of size 1, both, a scalar), with tensor ops that keep it
    differentiable; the engine's own sum_to is switched off meanwhile."""
    from ..ops.broadcast import SumTo
    rng = np.random.default_rng(seed)
    for grad_shape, shape in _UNBROADCAST_CASES:
        g = _float64(rng, grad_shape)
        with _switched_off({"broadcast.sum_to": broadcast.sum_to, "SumTo": SumTo.forward}) as called:
            try:
                got = _call("unbroadcast", unbroadcast, g, shape)
            except _LibraryUsed:
                got = None
        _refused(called, "sum with tensor ops: grad.sum(dim) and grad.sum(dim, keepdim=True)")
        _judge_unbroadcast(g, shape, got)


def _judge_unbroadcast(g: Tensor, shape: tuple, got) -> None:
    gs, want = tuple(g.shape), _np_sum_to(_np(g), shape)
    where = f"unbroadcast(grad of shape {list(gs)}, {shape})"
    if not isinstance(got, Tensor):
        raise _hint(f"{where} returned {type(got).__name__}", "return a tinygrad_lab Tensor made with tensor ops")
    if tuple(got.shape) != shape:
        look = ("sum with keepdim=True over the dims where shape has 1, so that they stay (as size 1)"
                if len(got.shape) == len(shape) or len(got.shape) < len(shape) else
                "sum away the leading dims the gradient has in excess: the result has len(shape) dims")
        raise _hint(f"{where} has shape {list(got.shape)}, expected {list(shape)}", look)
    if not _close(got, want):
        if _close(got, want / (np.prod(gs) / max(np.prod(shape), 1))):
            raise _hint(f"{where} is {_fmt(got)}, expected {_fmt(want)}",
                        "that is the mean: a broadcast input was used by every copy, so its gradient is the SUM")
        raise _hint(f"{where} is {_fmt(got)}, expected {_fmt(want)}", "sum over exactly the broadcast dims")
    if got.grad_fn is None and g.requires_grad and gs != shape:
        raise _hint(f"{where} is not connected to the gradient it came from",
                    "stay in tensor ops (no .numpy() or tl.tensor(...)): with create_graph the engine differentiates "
                    "through unbroadcast too")


def _np_sum_to(a: np.ndarray, shape: tuple) -> np.ndarray:
    lead = a.ndim - len(shape)
    a = a.sum(axis=tuple(range(lead))) if lead else a
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and a.shape[i] != 1)
    return a.sum(axis=axes, keepdims=True) if axes else a


def _broadcasting_program(x, b, s, w):
    """Every kind of broadcast: a bias over rows, a scale over columns, a scalar, a batch of matrices."""
    return (((x * s + b) * 0.5).tanh() @ w).sum(0)


@_build_check("unbroadcast", "write unbroadcast first (the check above says how)")
def check_unbroadcast_in_engine(unbroadcast: Callable, seed: int = 1) -> None:
    """With the learner's unbroadcast in the engine (seam "unbroadcast"), a program that broadcasts in
    every way gets the gradients finite differences give; the engine's own is switched off meanwhile."""
    rng = np.random.default_rng(seed)
    ins = [_float64(rng, s) for s in ((2, 3, 4), (4,), (3, 1), (4, 2))]
    g = rng.standard_normal((3, 2))
    with _switched_off({"broadcast.sum_to": broadcast.sum_to}) as called, seams.replace("unbroadcast", unbroadcast):
        try:
            _call("the engine's backward with your unbroadcast",
                  lambda: (_broadcasting_program(*ins) * creation.tensor(g)).sum().backward())
        except _LibraryUsed:
            pass
    _refused(called, "sum with tensor ops yourself")
    for name, t, want in zip(("x", "b", "s", "w"), ins, _fd_vjp(_broadcasting_program, ins, g)):
        if t.grad is None or not _close(t.grad, want, rtol=1e-5, atol=1e-7):
            raise _hint(f"with your unbroadcast in the engine, the gradient of {name} (shape {list(t.shape)}) is wrong",
                        "run the first check's cases by hand: every broadcast input's gradient goes through it")


# ================================================================ build 04: the backward walk

def _random_program(rng: np.random.Generator, n_ops: int) -> Tensor:
    """A random program of float64 ops on three leaves, each op on one or two earlier tensors: a graph
    with many nodes reached by several paths."""
    made = [_float64(rng, (3,), 0.2, 1.0) for _ in range(3)]
    for _ in range(n_ops):
        a, b = (made[int(i)] for i in rng.integers(0, len(made), 2))
        kind = int(rng.integers(0, 5))
        made.append([a + b, a * b, (a * 0.5).tanh(), a - b * 0.3, (a * b).sin()][kind])
    return sum(made[-3:]).sum()


def _reachable(roots: list) -> set:
    seen, stack = set(roots), list(roots)
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


@_build_check("backward_order", "keep a stack of nodes to visit and a set of nodes seen; a node goes into the "
                                "order after all of its inputs (next_functions), then reverse the order")
def check_backward_order(backward_order: Callable, seed: int = 0) -> None:
    """`backward_order(roots)` lists every node reachable from the roots once, each before all of its
    inputs, for random graphs of the check's own (nodes reached by several paths, two roots) and for a
    chain of 3000 ops (no recursion limit); the engine's own order is switched off meanwhile."""
    rng = np.random.default_rng(seed)
    graphs = [[_random_program(rng, n).grad_fn] for n in (1, 4, 12, 30)]
    graphs.append([_random_program(rng, 8).grad_fn, _random_program(rng, 8).grad_fn])
    chain = _float64(rng, (2,))
    for _ in range(3000):
        chain = chain * 1.0001
    graphs.append([chain.sum().grad_fn])
    for roots in graphs:
        with _switched_off({"engine.backward_order": engine.backward_order}) as called:
            try:
                order = _call("backward_order", backward_order, roots)
            except _LibraryUsed:
                order = None
            except AssertionError as e:
                if "RecursionError" in str(e):
                    raise _hint(f"on a chain of {len(_reachable(roots))} nodes, backward_order hit Python's "
                                f"recursion limit ({sys.getrecursionlimit()})",
                                "a recursive walk goes one call deeper per node: keep your own stack (a list) "
                                "of nodes to visit instead") from None
                raise
        _refused(called, "walk node.next_functions yourself")
        _judge_order(roots, order)


def _judge_order(roots: list, order) -> None:
    if not isinstance(order, (list, tuple)):
        raise _hint(f"backward_order returned {type(order).__name__}", "return a list of nodes")
    if any(n is None for n in order):
        raise _hint("the order contains None", "next_functions holds (None, 0) for inputs that need no gradient: "
                                                "skip them")
    want = _reachable(roots)
    if len(set(order)) != len(order):
        raise _hint(f"the order lists {len(order)} nodes, {len(order) - len(set(order))} of them more than once",
                    "each node once: a node reached by several paths is added only the first time (keep a set)")
    missing, extra = want - set(order), set(order) - want
    if missing or extra:
        n = next(iter(missing or extra))
        raise _hint(f"the order {'misses' if missing else 'has nodes not reachable from the roots, e.g.'} "
                    f"{len(missing or extra)} node(s), e.g. {n.name}",
                    "every node reachable from the roots through next_functions, leaves' AccumulateGrad nodes "
                    "included, and nothing else")
    position = {n: i for i, n in enumerate(order)}
    for n in order:
        for nxt, _ in n.next_functions:
            if nxt is not None and position[nxt] < position[n]:
                raise _hint(f"{nxt.name} comes before {n.name}, which uses its output: {n.name} would send it a "
                            f"gradient after it has already run",
                            "order by dependencies, not by distance from the root (breadth-first is not enough "
                            "where two paths of different lengths meet): a node after every node that uses it. "
                            "Reverse a depth-first post-order, or count each node's users first")


@_build_check("accumulate", "two gradients for the same tensor: return their sum, as a new tensor")
def check_accumulate(accumulate: Callable, seed: int = 2) -> None:
    """`accumulate(total, grad)` returns total + grad (NumPy's sum) as a new differentiable tensor,
    leaving total as it was, for random shapes; the engine's own is switched off meanwhile."""
    rng = np.random.default_rng(seed)
    for shape in ((), (3,), (2, 4)):
        total, g = _float64(rng, shape) * 1.0, _float64(rng, shape)  # as in the engine: total is no leaf
        before = _np(total).copy()

        with _switched_off({"engine.accumulate": engine.accumulate}) as called:
            try:
                got = _call("accumulate", accumulate, total, g)
            except _LibraryUsed:
                got = None
        _refused(called, "combine the two gradients with a tensor op yourself")
        if not np.array_equal(_np(total), before):
            raise _hint("accumulate changed `total` in place", "return a new tensor: the engine may still hold "
                                                                "`total` elsewhere (a hook, create_graph)")
        if not isinstance(got, Tensor) or not _close(got, before + _np(g)):
            shown = _fmt(got) if isinstance(got, Tensor) else type(got).__name__
            look = ("that is the last gradient alone: the first one is lost" if isinstance(got, Tensor)
                    and _close(got, g) else "each path's contribution adds up")
            raise _hint(f"accumulate({_fmt(before)}, {_fmt(g)}) returned {shown}", look)
        if got.grad_fn is None:
            raise _hint("the result is not connected to its inputs", "use a tensor op (+), not NumPy: with "
                                                                     "create_graph the sum is differentiated too")


@_build_check("backward_order / accumulate", "write both pieces first (the checks above say how)")
def check_walk_in_engine(backward_order: Callable, accumulate: Callable, seed: int = 3) -> None:
    """With the learner's order and accumulate in the engine (seams "backward_order" and "accumulate"),
    random programs get the gradients finite differences give (the two pieces pass their own checks
    first: the engine's walk needs its own order meanwhile, so they are switched off there)."""
    check_backward_order(backward_order)
    check_accumulate(accumulate)
    rng = np.random.default_rng(seed)

    for n_ops in (3, 10, 25):
        leaves, program = _leaves_and_program(rng, n_ops)
        with seams.replace("backward_order", backward_order), seams.replace("accumulate", accumulate):
            _call("the engine's backward with your pieces", lambda: program(*leaves).backward())
        for i, (t, want) in enumerate(zip(leaves, _fd_vjp(program, leaves, np.ones(())))):
            unused = t.grad is None and not np.any(want)  # a leaf the random program does not use
            if not unused and (t.grad is None or not _close(t.grad, want, rtol=1e-5, atol=1e-7)):
                raise _hint(f"in a random program of {n_ops} ops, leaf {i}'s gradient with your pieces is "
                            f"{_fmt(t.grad) if t.grad is not None else None}, expected {_fmt(want)}",
                            "pass the checks above first; compare your pass with the engine's on this graph with "
                            "widgets.CompareStepper")


def _leaves_and_program(rng: np.random.Generator, n_ops: int) -> tuple:
    plan = [(tuple(int(i) for i in rng.integers(0, 3 + k, 2)), int(rng.integers(0, 5))) for k in range(n_ops)]

    def program(*leaves):
        made = list(leaves)
        for (i, j), kind in plan:
            a, b = made[i], made[j]
            made.append([a + b, a * b, (a * 0.5).tanh(), a - b * 0.3, (a * b).sin()][kind])
        return sum(made[-3:]).sum()
    return [_float64(rng, (3,), 0.2, 1.0) for _ in range(3)], program


# ================================================================ build 05: matmul's backward

_MATMUL_CASES = (  # (a's shape, b's shape), smallest first; batch dims broadcast
    ((1, 1), (1, 1)), ((2, 3), (3, 4)), ((4, 3), (3, 1)), ((3, 3), (3, 3)), ((2, 4, 3), (3, 5)),
    ((2, 4, 3), (2, 3, 5)), ((1, 4, 3), (3, 3, 5)))


@_build_check("matmul_backward", "out = a @ b, so grad_output has out's shape; the gradient of a must have a's "
                                 "shape and that of b b's: find the product of grad_output with b (or a), "
                                 "transposed where needed, that has it")
def check_matmul_backward(matmul_backward: Callable, seed: int = 0) -> None:
    """With the learner's backward in place of the engine's Matmul backward (seam "Matmul.backward"),
    a @ b gets NumPy's gradients for matrices and batches of matrices whose batch dims broadcast;
    the engine's own is switched off, and the learner's runs no backward pass of its own."""
    rng = np.random.default_rng(seed)
    nested: list = []

    def watched(ctx, g):
        with _watching() as seen:
            out = matmul_backward(ctx, g)
        nested.extend(e for e in seen if isinstance(e, BackwardStep))
        return out
    for sa, sb in _MATMUL_CASES:
        a, b = _float64(rng, sa), _float64(rng, sb)
        g = rng.standard_normal(np.broadcast_shapes(sa[:-2], sb[:-2]) + (sa[-2], sb[-1]))
        with _switched_off({"Matmul.backward": Matmul.backward}) as called, seams.replace(Matmul, watched):
            try:
                _call("matmul_backward", lambda: ((a @ b) * creation.tensor(g)).sum().backward(),
                      look=f"a is {list(sa)}, b is {list(sb)}, grad_output {list(g.shape)}: check each product's "
                           f"shapes; where b was broadcast over a batch, sum its gradient back to b's shape")
            except _LibraryUsed:
                pass
        _refused(called, "compute the two products yourself")
        if nested:
            raise _hint("matmul_backward runs a backward pass of its own (autograd.grad or .backward())",
                        "write the two gradients as matrix products of grad_output with the saved a and b")
        _judge_matmul(a, b, g)


def _judge_matmul(a: Tensor, b: Tensor, g: np.ndarray) -> None:
    av, bv = _np(a), _np(b)
    truth = {"a": _np_sum_to(g @ np.swapaxes(bv, -1, -2), av.shape),
             "b": _np_sum_to(np.swapaxes(av, -1, -2) @ g, bv.shape)}
    for name, t in (("a", a), ("b", b)):
        want = truth[name]
        if t.grad is None or not _close(t.grad, want, rtol=1e-6, atol=1e-8):
            where = f"for a {list(av.shape)} @ b {list(bv.shape)}, the gradient of {name} is wrong"
            got = _np(t.grad) if t.grad is not None else None
            transposed = np.swapaxes(want, -1, -2)
            if got is not None and got.shape == want.shape == transposed.shape and np.allclose(got, transposed):
                raise _hint(where, "it is the transpose of the right one: check the order of the product")
            raise _hint(f"{where}:\n got {_fmt(got) if got is not None else None}\nwant {_fmt(want)}",
                        "grad a = grad_output @ bᵀ and grad b = aᵀ @ grad_output hold for one matrix; for batches, "
                        "transpose the last two dims (.mT) and sum over the batch dims an input was broadcast over")


# ================================================================ build 06: an optimizer's step

def _optimizer_steps() -> dict:
    """Every library optimizer's own step function, by name (to switch off while a learner's runs)."""
    return {f"{k.__name__}.step": vars(k)["step"] for k in _library_optimizers() if "step" in vars(k)}


_SGD_CONFIGS = (  # (lr, momentum, weight_decay)
    (0.1, 0.0, 0.0), (0.1, 0.9, 0.0), (0.05, 0.5, 0.01))


@_build_check("sgd_step", "for each group, for each parameter with a gradient: g = grad + weight_decay * p; with "
                          "momentum, keep a buffer in optimizer.state[p]; update p in place under no_grad")
def check_sgd_step(sgd_step: Callable, steps: int = 4, seed: int = 0) -> None:
    """The learner's step in place of SGD's (seam "SGD.step") moves the parameters as PyTorch's rule
    (computed here in NumPy) for several lr, momentum and weight_decay, over two parameter groups with
    their own lr and a parameter without a gradient; the library's optimizers' steps are switched off."""
    for lr, momentum, wd in _SGD_CONFIGS:
        _run_optimizer(sgd_step, "SGD.step", lambda ps, lr=lr, m=momentum, wd=wd: optim.SGD(
            ps, lr=lr, momentum=m, weight_decay=wd), _sgd_rule(lr, momentum, wd), steps,
            np.random.default_rng(seed), f"lr={lr}, momentum={momentum}, weight_decay={wd}")


def _sgd_rule(lr: float, momentum: float, wd: float) -> Callable:
    def rule(p, g, state, group_lr):
        g = g + wd * p
        if momentum:
            state["b"] = g.copy() if "b" not in state else momentum * state["b"] + g
            g = state["b"]
        return p - group_lr * g
    rule.lr = lr
    return rule


_ADAM_CONFIGS = (  # (lr, betas, eps, weight_decay)
    (0.01, (0.9, 0.999), 1e-8, 0.0), (0.1, (0.8, 0.9), 1e-3, 0.0), (0.05, (0.9, 0.99), 1e-6, 0.1))


@_build_check("adam_step", "for each parameter with a gradient keep state['step'], state['exp_avg'] (m) and "
                           "state['exp_avg_sq'] (v) in optimizer.state[p]; update m and v, correct their bias, and "
                           "move p in place under no_grad")
def check_adam_step(adam_step: Callable, steps: int = 4, seed: int = 1) -> None:
    """The learner's step in place of Adam's (seam "Adam.step") moves the parameters as Adam's rule
    (computed here in NumPy) for several lr, betas, eps and weight_decay, over two parameter groups and
    a parameter without a gradient; the library's optimizers' steps are switched off."""
    for lr, betas, eps, wd in _ADAM_CONFIGS:
        _run_optimizer(adam_step, "Adam.step", lambda ps, lr=lr, b=betas, e=eps, wd=wd: optim.Adam(
            ps, lr=lr, betas=b, eps=e, weight_decay=wd), _adam_rule(lr, betas, eps, wd), steps,
            np.random.default_rng(seed), f"lr={lr}, betas={betas}, eps={eps}, weight_decay={wd}")


def _adam_rule(lr: float, betas: tuple, eps: float, wd: float) -> Callable:
    b1, b2 = betas

    def rule(p, g, state, group_lr):
        g = g + wd * p
        state["t"] = state.get("t", 0) + 1
        state["m"] = b1 * state.get("m", 0) + (1 - b1) * g
        state["v"] = b2 * state.get("v", 0) + (1 - b2) * g * g
        m_hat, v_hat = state["m"] / (1 - b1 ** state["t"]), state["v"] / (1 - b2 ** state["t"])
        return p - group_lr * m_hat / (np.sqrt(v_hat) + eps)
    rule.lr = lr
    return rule


def _run_optimizer(step: Callable, seam: str, make: Callable, rule: Callable, steps: int,
                   rng: np.random.Generator, config: str) -> None:
    """Two groups (the second with lr / 10) and a frozen parameter, `steps` steps of a small loss, each
    step compared with `rule` applied in NumPy."""
    starts = [rng.standard_normal(s) for s in ((3,), (2, 2), (4,))]
    scales = [rng.uniform(0.5, 2.0, s.shape) for s in starts]
    ps = [creation.tensor(s, dtype="float64", requires_grad=True) for s in starts]
    frozen = creation.tensor([1.0], dtype="float64", requires_grad=True)
    opt = make([{"params": [ps[0], frozen, ps[1]]}, {"params": [ps[2]], "lr": rule.lr / 10}])
    ref, states = [s.copy() for s in starts], [{} for _ in starts]
    for k in range(1, steps + 1):
        opt.zero_grad()
        sum(((creation.tensor(a, dtype="float64") * p * p) + p.sin()).sum() for a, p in zip(scales, ps)).backward()
        grads = [2 * a * r + np.cos(r) for a, r in zip(scales, ref)]
        before = [_np(p).copy() for p in ps]
        with _switched_off(_optimizer_steps()) as called, seams.replace(seam, step):
            try:
                _call(seam.split(".")[0].lower() + "_step", opt.step)
            except _LibraryUsed:
                pass
        _refused(called, "update the parameters yourself, with the group's options and optimizer.state[p]")
        ref = [rule(r, g, st, rule.lr if i < 2 else rule.lr / 10) for i, (r, g, st) in enumerate(zip(ref, grads, states))]
        for i, (p, want) in enumerate(zip(ps, ref)):
            _judge_step(config, k, i, _np(p), want, before[i])
        if _np(frozen).item() != 1.0:
            raise _hint("a parameter without a gradient (.grad is None) was changed by step()",
                        "skip parameters whose .grad is None, as PyTorch does")


def _judge_step(config: str, k: int, i: int, got: np.ndarray, want: np.ndarray, before: np.ndarray) -> None:
    if _close(got, want, rtol=1e-6, atol=1e-9):
        return
    what = f"{config}: after step {k}, parameter {i}{' (second group, lr / 10)' if i == 2 else ''} is {_fmt(got)}, " \
           f"expected {_fmt(want)}"
    if np.allclose(got, before):
        raise _hint(what, "the parameter did not change: update it in place under tl.no_grad() (p.add_(...), "
                          "p -= ...); `p = p - ...` only rebinds a local name")
    if i == 2:
        raise _hint(what, "each parameter group has its own options: read lr (and the rest) from the group "
                          "the parameter is in, group['lr']")
    if k == 1:
        raise _hint(what, "already the first step is wrong: write the rule for one step on paper and compare")
    raise _hint(what, "the first step is right, a later one is not: what you keep in optimizer.state[p] between "
                      "steps (the buffer, the moments, the step count) is not updated as the rule says")


# ================================================================ build 07: a DataLoader's batching

class _Pairs:
    """A map-style dataset of (a (2, 3) float tensor, a Python int label): not a TensorDataset."""

    def __init__(self, n: int, seed: int):
        rng = np.random.default_rng(seed)
        self.x, self.y = rng.standard_normal((n, 2, 3)).astype(np.float32), rng.integers(0, 5, n)

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int):
        return creation.tensor(self.x[i]), int(self.y[i])


def _library_batching() -> dict:
    return {"dataloader.fetch_batch": dataloader.fetch_batch, "collate.default_collate": collate.default_collate,
            "collate.default_convert": collate.default_convert}


@_build_check("fetch_batch", "take the samples dataset[i] for i in indices; then stack their first entries into "
                             "one tensor (tl.stack) and their second entries into another")
def check_fetch_batch(fetch_batch: Callable, seed: int = 0) -> None:
    """`fetch_batch(dataset, indices, collate_fn)` returns [inputs, targets]: the samples at `indices`, in
    that order, stacked along a new first dim (labels that are Python ints become an int64 tensor), for
    datasets of the check's own, directly and inside a DataLoader (seam "batch"); the library's batching
    (fetch_batch, default_collate) is switched off meanwhile."""
    data = _Pairs(11, seed)
    for indices in ([3], [0, 1, 2], [7, 2, 9, 2]):
        with _switched_off(_library_batching()) as called:
            try:
                got = _call("fetch_batch", fetch_batch, data, indices, collate.default_collate)
            except _LibraryUsed:
                got = None
        _refused(called, "stack the samples yourself (tl.stack, tl.tensor): collate_fn is the library's collation")
        _judge_batch(data, indices, got)
    loader = dataloader.DataLoader(data, batch_size=4)
    with _switched_off(_library_batching()) as called, seams.replace("batch", fetch_batch):
        try:
            batches = _call("the DataLoader with your fetch_batch", lambda: list(loader))
        except _LibraryUsed:
            batches = []
    _refused(called, "stack the samples yourself")
    for k, batch in enumerate(batches):
        _judge_batch(data, list(range(4 * k, min(4 * k + 4, 11))), batch)


def _judge_batch(data: _Pairs, indices: list, got) -> None:
    where = f"fetch_batch(dataset, {indices}, ...)"
    if not isinstance(got, (list, tuple)) or len(got) != 2 or not all(isinstance(t, Tensor) for t in got):
        raise _hint(f"{where} returned {type(got).__name__}"
                    f"{f' of {len(got)} items' if isinstance(got, (list, tuple)) else ''}",
                    "return [inputs, targets]: two tensors, as the DataLoader gives them")
    inputs, targets = got
    if tuple(inputs.shape) != (len(indices), 2, 3) or tuple(targets.shape) != (len(indices),):
        raise _hint(f"{where} gave shapes {list(inputs.shape)} and {list(targets.shape)}, expected "
                    f"{[len(indices), 2, 3]} and {[len(indices)]}", "stack along a NEW first dim (one row per "
                                                                      "sample): tl.stack, not tl.cat")
    if not np.array_equal(_np(inputs), data.x[indices]) or not np.array_equal(_np(targets), data.y[indices]):
        raise _hint(f"{where} has the wrong samples", "the batch holds dataset[i] for each i in indices, in that "
                                                     "order (an index may come twice)")
    if targets.dtype != dtypes.int64:
        raise _hint(f"{where}'s targets have dtype {targets.dtype}", "the labels are Python ints: "
                                                                   "tl.tensor(list of ints) gives int64, as "
                                                                   "cross_entropy wants")


@_build_check("EpochBatches", "__iter__: an order of range(n) (a permutation when shuffling, drawn from a "
                              "generator seeded with seed and the epoch number), cut into lists of batch_size")
def check_batch_sampler(batch_sampler_cls, seed: int = 0) -> None:
    """`batch_sampler_cls(n, batch_size, shuffle, seed, drop_last)` yields lists of indices: every index
    once per epoch (each iteration is an epoch), in order without shuffle, in a new order each epoch with
    it, the same epochs again for the same seed and others for another seed, len() batches; it works as a
    DataLoader's batch_sampler; the library's samplers are switched off meanwhile."""
    switched = {f"{k.__name__}.__iter__": vars(k)["__iter__"] for k in
                (sampler.SequentialSampler, sampler.RandomSampler, sampler.BatchSampler)}
    with _switched_off(switched) as called:
        try:
            for n, bs, drop in ((1, 1, False), (10, 3, False), (10, 3, True), (16, 4, False), (7, 10, False)):
                _judge_sampler(batch_sampler_cls, n, bs, drop)
            _judge_loader(batch_sampler_cls)
        except _LibraryUsed:
            pass
    _refused(called, "make the order yourself: np.random.default_rng((seed, epoch)).permutation(n), or tl.randperm "
                     "with a tl.Generator of your own")


def _judge_loader(cls) -> None:
    """As a DataLoader's batch_sampler: the batches are the dataset's rows at the sampler's indices."""
    data = TensorDataset(creation.arange(12.0).reshape(6, 2), creation.arange(6))
    loader = dataloader.DataLoader(data, batch_sampler=_call("EpochBatches", cls, 6, 4, True, 3, False))
    for epoch in range(2):
        batches = _call("a DataLoader with your batch_sampler", lambda: [_np(y).tolist() for _, y in loader])
        if sorted(i for b in batches for i in b) != list(range(6)) or [len(b) for b in batches] != [4, 2]:
            raise _hint(f"a DataLoader with batch_sampler=EpochBatches(6, 4, shuffle=True) gives the labels "
                        f"{batches} in epoch {epoch}", "each epoch: every index once, in batches of 4 then 2")


def _epochs(cls, n: int, bs: int, shuffle: bool, seed: int, drop: bool, epochs: int = 3) -> tuple:
    s = _call("EpochBatches", cls, n, bs, shuffle, seed, drop)
    return s, [[[int(i) for i in b] for b in _call("EpochBatches.__iter__", lambda: list(iter(s)))]
               for _ in range(epochs)]


def _judge_sampler(cls, n: int, bs: int, drop: bool) -> None:
    where = f"EpochBatches(n={n}, batch_size={bs}, drop_last={drop})"
    kept = n - n % bs if drop else n
    sizes = [bs] * (kept // bs) + ([kept % bs] if kept % bs else [])
    s, plain = _epochs(cls, n, bs, False, 0, drop)
    if [len(b) for b in plain[0]] != sizes or _call("len(EpochBatches)", len, s) != len(sizes):
        raise _hint(f"{where}: batches of sizes {[len(b) for b in plain[0]]} (len() {len(s)}), expected {sizes}",
                    "cut the order into batch_size pieces; the last is smaller, or left out with drop_last")
    if plain[0] != [list(range(k, k + m)) for k, m in zip(range(0, n, bs), sizes)]:
        raise _hint(f"{where}, shuffle=False gives {plain[0]}", "without shuffle the indices come in order")
    _judge_shuffled(cls, n, bs, drop, where, kept)


def _judge_shuffled(cls, n: int, bs: int, drop: bool, where: str, kept: int) -> None:
    """Shuffled epochs: each a permutation (of the kept indices), fixed by the seed, new each epoch."""
    _, first = _epochs(cls, n, bs, True, 7, drop)
    _, again = _epochs(cls, n, bs, True, 7, drop)
    _, other = _epochs(cls, n, bs, True, 8, drop)
    for epoch in first:
        flat = [i for b in epoch for i in b]
        if len(flat) != kept or len(set(flat)) != kept or not set(flat) <= set(range(n)):
            raise _hint(f"{where}, shuffled: an epoch gives {epoch}", "shuffle a permutation of range(n): every "
                                                                     "index once (the last ones dropped with drop_last)")
    if first != again:
        raise _hint(f"{where}: two samplers with seed 7 give different epochs", "draw the order from a generator "
                                                                                "seeded with the seed (and the epoch)")
    if n >= 10 and (first[0] == first[1] or first[1] == first[2]):
        raise _hint(f"{where}: consecutive epochs come in the same order", "count the epochs (iterations) and draw "
                                                                           "a new order for each one")
    if n >= 10 and first == other:
        raise _hint(f"{where}: seeds 7 and 8 give the same epochs", "the seed must choose the order")


# ================================================================ build 08: conv2d by im2col

def _np_im2col(x: np.ndarray, geo) -> np.ndarray:
    """cols[c, i, j, oh, ow, n] = x_padded[n, c, oh * sh + i * dh, ow * sw + j * dw], by loops."""
    xp = np.pad(x, ((0, 0), (0, 0), (geo.pt, geo.pb), (geo.pl, geo.pr)))
    cols = np.zeros((geo.C, geo.kh, geo.kw, geo.OH, geo.OW, geo.N), x.dtype)
    for i in range(geo.kh):
        for j in range(geo.kw):
            for oh in range(geo.OH):
                for ow in range(geo.OW):
                    cols[:, i, j, oh, ow, :] = xp[:, :, oh * geo.sh + i * geo.dh, ow * geo.sw + j * geo.dw].T
    return cols


def _np_conv2d(x: np.ndarray, w: np.ndarray, stride, padding, dilation) -> np.ndarray:
    """A direct convolution by loops over the output (the truth the conv's output is checked against)."""
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    O, C, kh, kw = w.shape
    OH = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    OW = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((x.shape[0], O, OH, OW))
    for oh in range(OH):
        for ow in range(OW):
            patch = xp[:, :, oh * sh:oh * sh + dh * (kh - 1) + 1:dh, ow * sw:ow * sw + dw * (kw - 1) + 1:dw]
            out[:, :, oh, ow] = np.einsum("nchw,ochw->no", patch, w)
    return out


_CONV_CASES = (  # (x's shape, w's shape, stride, padding, dilation), smallest first
    ((1, 1, 3, 3), (1, 1, 2, 2), (1, 1), (0, 0), (1, 1)),
    ((2, 3, 5, 4), (4, 3, 3, 3), (1, 1), (0, 0), (1, 1)),
    ((1, 2, 5, 5), (2, 2, 3, 3), (1, 1), (1, 1), (1, 1)),
    ((2, 1, 7, 6), (3, 1, 2, 3), (2, 1), (1, 0), (1, 1)),
    ((1, 2, 8, 7), (2, 2, 3, 2), (1, 2), (2, 1), (2, 1)))


@_build_check("im2col", "make an array of zeros of shape (C, kh, kw, OH, OW, N); pad x; for each kernel offset "
                        "(i, j), copy the strided window of the padded input that offset sees")
def check_im2col(im2col: Callable, seed: int = 0) -> None:
    """With the learner's im2col in the engine (seam "im2col"), conv2d's columns, output and gradients
    are right (a direct convolution and loops in NumPy are the truth) for shapes, strides, paddings and
    dilations of the check's own; the engine's im2col is switched off meanwhile."""
    rng = np.random.default_rng(seed)
    for xs, ws, stride, padding, dilation in _CONV_CASES:
        x, w = _float64(rng, xs), _float64(rng, ws)
        wrong: list = []

        def watched(xa, geo):
            cols = im2col(xa, geo)
            want = _np_im2col(np.asarray(xa), geo)
            if getattr(cols, "shape", None) == want.shape and not np.allclose(np.asarray(cols), want):
                wrong.append((np.asarray(cols), want, geo))
            return cols
        with _switched_off({"conv.im2col": conv.im2col}) as called, seams.replace("im2col", watched):
            try:
                out = _call("im2col", nn.functional.conv2d, x, w, None, stride, padding, dilation,
                            look="im2col must return an array of shape (C, kh, kw, OH, OW, N): the sizes are "
                                 "geo.C, geo.kh, geo.kw, geo.OH, geo.OW, geo.N")
                g = rng.standard_normal(tuple(out.shape))
                (out * creation.tensor(g)).sum().backward()
            except _LibraryUsed:
                out = None
        _refused(called, "build the columns yourself with slicing (and xp.pad)")
        where = f"x {list(xs)}, weight {list(ws)}, stride {stride}, padding {padding}, dilation {dilation}"
        if wrong:
            _judge_columns(where, *wrong[0])
        _judge_conv(where, out, x, w, stride, padding, dilation, g)


def _judge_columns(where: str, got: np.ndarray, want: np.ndarray, geo) -> None:
    c, i, j, oh, ow, n = (int(k) for k in np.argwhere(~np.isclose(got, want))[0])
    look = ("this is a padded border: pad x with geo.pt / geo.pb rows and geo.pl / geo.pr columns of zeros first"
            if want[c, i, j, oh, ow, n] == 0 else
            "row = oh * geo.sh + i * geo.dh and column = ow * geo.sw + j * geo.dw: the stride steps between outputs, "
            "the dilation between kernel taps")
    raise _hint(f"{where}: cols[c={c}, i={i}, j={j}, oh={oh}, ow={ow}, n={n}] is {got[c, i, j, oh, ow, n]:.4g}, the "
                f"input value there is {want[c, i, j, oh, ow, n]:.4g}", look)


def _judge_conv(where: str, out, x, w, stride, padding, dilation, g) -> None:
    want = _np_conv2d(_np(x), _np(w), stride, padding, dilation)
    if out is None or not _close(out, want, rtol=1e-6, atol=1e-8):
        raise _hint(f"{where}: conv2d's output with your im2col is wrong", "compare your columns with the "
                                                                          "formula in the notebook, one offset at a time")
    gx, gw = _fd_vjp(lambda a, b: creation.tensor(_np_conv2d(_np(a), _np(b), stride, padding, dilation)),
                     [x, w], g)
    for name, t, truth in (("input", x, gx), ("weight", w, gw)):
        if t.grad is None or not _close(t.grad, truth, rtol=1e-5, atol=1e-7):
            raise _hint(f"{where}: the gradient of the {name} is wrong with your im2col",
                        "the backward recomputes the columns with your im2col: return a fresh array, and do not "
                        "change x")


# ================================================================ build 09: a layer, LayerNorm

def _np_layer_norm(x: np.ndarray, k: int, w, b, eps: float) -> np.ndarray:
    axes = tuple(range(x.ndim - k, x.ndim))
    out = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    return out * w + b if w is not None else out


_LAYER_NORM_CASES = (  # (normalized_shape, input shape, eps, elementwise_affine)
    (5, (3, 5), 1e-5, True), ((4,), (2, 3, 4), 1e-5, True), ((2, 3), (4, 2, 3), 1e-5, True),
    (6, (2, 6), 0.5, True), (3, (4, 3), 1e-5, False))


@_build_check("LayerNorm", "__init__: keep normalized_shape as a tuple and eps; make weight (ones) and bias (zeros) "
                           "parameters of that shape; forward: normalise over the last len(normalized_shape) dims")
def check_layer_norm(layer_cls, seed: int = 0) -> None:
    """`layer_cls(normalized_shape, eps=1e-5, elementwise_affine=True)` is an nn.Module of the learner's
    own whose forward gives NumPy's layer normalisation (biased variance, eps inside the root, weight and
    bias) and its gradients (finite differences of NumPy's), for shapes of the check's own; the library's
    LayerNorm (module and functional) is switched off meanwhile."""
    _refuse_library_bases(layer_cls, (nn.Module,), "layer", "derive from tl.nn.Module only, and write the "
                                                           "normalisation with tensor ops")
    rng = np.random.default_rng(seed)
    F = nn.functional
    switched = {f"functional.{name}": getattr(F, name) for name in ("layer_norm", "group_norm", "batch_norm",
                                                                     "instance_norm") if hasattr(F, name)}
    switched["LayerNorm.forward"] = nn.LayerNorm.forward
    for ns, shape, eps, affine in _LAYER_NORM_CASES:
        with _switched_off(switched) as called:
            try:
                layer = _call("LayerNorm(...)", layer_cls, ns, eps, affine)
                _judge_layer_norm(layer, ns, shape, eps, affine, rng)
            except _LibraryUsed:
                pass
        _refused(called, "compute the mean and the variance yourself (mean, subtraction, square, sqrt)")


def _judge_layer_norm(layer, ns, shape: tuple, eps: float, affine: bool, rng: np.random.Generator) -> None:
    k = 1 if isinstance(ns, int) else len(ns)
    where = f"LayerNorm({ns!r}, eps={eps}, elementwise_affine={affine}) on an input of shape {list(shape)}"
    _judge_layer_params(layer, where, shape[-k:], affine)
    if affine:
        with no_grad():  # not the initial ones and zeros: the check must see them used
            layer.weight.copy_(creation.tensor(rng.uniform(0.5, 1.5, shape[-k:]), dtype=layer.weight.dtype))
            layer.bias.copy_(creation.tensor(rng.uniform(-1, 1, shape[-k:]), dtype=layer.bias.dtype))
    layer.double()
    x = creation.tensor(rng.standard_normal(shape) * 2 + 1, dtype="float64", requires_grad=True)
    w, b = (_np(layer.weight), _np(layer.bias)) if affine else (None, None)
    out = _call("LayerNorm.forward", layer, x)
    want = _np_layer_norm(_np(x), k, w, b, eps)
    if not isinstance(out, Tensor) or not _close(out, want, rtol=1e-6, atol=1e-8):
        _layer_norm_hint(where, out, _np(x), k, w, b, eps, want)
    g = rng.standard_normal(shape)
    (out * creation.tensor(g)).sum().backward()
    truth = _fd_vjp(lambda t: creation.tensor(_np_layer_norm(_np(t), k, w, b, eps)), [x], g)[0]
    if x.grad is None or not _close(x.grad, truth, rtol=1e-5, atol=1e-7):
        raise _hint(f"{where}: the gradient of the input is wrong", "build forward from differentiable tensor ops "
                                                                   "only (no .numpy(), .item() or .detach())")


def _judge_layer_params(layer, where: str, shape: tuple, affine: bool) -> None:
    if not isinstance(layer, nn.Module):
        raise _hint(f"{where}: got a {type(layer).__name__}", "derive your class from tl.nn.Module")
    params = dict(layer.named_parameters())
    if not affine:
        if params:
            raise _hint(f"{where} has parameters {sorted(params)}", "without elementwise_affine there are none")
        return
    for name, init in (("weight", 1.0), ("bias", 0.0)):
        p = params.get(name)
        if p is None:
            raise _hint(f"{where} has no parameter {name!r} (its parameters: {sorted(params)})",
                        f"self.{name} = tl.nn.Parameter(...) of shape normalized_shape")
        if tuple(p.shape) != shape or not np.all(_np(p) == init):
            raise _hint(f"{where}: {name} has shape {list(p.shape)} and values {_fmt(p)}",
                        f"{name} starts as {'ones' if init else 'zeros'} of shape normalized_shape ({list(shape)})")


def _layer_norm_hint(where: str, out, x: np.ndarray, k: int, w, b, eps: float, want: np.ndarray) -> None:
    if not isinstance(out, Tensor) or tuple(out.shape) != want.shape:
        got = list(out.shape) if isinstance(out, Tensor) else type(out).__name__
        raise _hint(f"{where}: the output is {got}, expected shape {list(want.shape)}",
                    "the output has the input's shape: reduce with keepdim=True so that the statistics broadcast")
    axes = tuple(range(x.ndim - k, x.ndim))
    mean, var = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    n = int(np.prod(x.shape[-k:]))
    scale = (lambda o: o * w + b) if w is not None else (lambda o: o)
    variants = {
        "the variance is the biased one (divide by n, not n - 1), as PyTorch's LayerNorm":
            scale((x - mean) / np.sqrt(var * n / max(n - 1, 1) + eps)),
        "eps goes inside the square root: (x - mean) / sqrt(var + eps)": scale((x - mean) / (np.sqrt(var) + eps)),
        "weight and bias apply after normalising: y = x_hat * weight + bias": (x - mean) / np.sqrt(var + eps),
        f"normalise over the LAST {k} dim(s) of the input (normalized_shape), not over the first":
            scale((x - x.mean(0, keepdims=True)) / np.sqrt(x.var(0, keepdims=True) + eps)),
    }
    for look, variant in variants.items():
        if np.allclose(_np(out), variant, rtol=1e-6, atol=1e-8):
            raise _hint(f"{where}: the output is wrong", look)
    raise _hint(f"{where}: the output is wrong:\n got {_fmt(out)}\nwant {_fmt(want)}",
                "y = (x - mean) / sqrt(var + eps) * weight + bias, mean and var over the last dims")


# ================================================================ build 10: a training loop

def _loop_setup(seed: int) -> tuple:
    """A model with dropout (in eval mode: the loop must switch it), a loader of 50 samples in batches of
    16 (the last smaller), SGD with momentum."""
    manual_seed(seed)
    rng = np.random.default_rng(seed)
    X = creation.tensor(rng.standard_normal((50, 4)), dtype="float32")
    y = creation.tensor(rng.integers(0, 3, 50))
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.25), nn.Linear(8, 3))
    model.eval()
    loader = dataloader.DataLoader(TensorDataset(X, y), batch_size=16)
    return model, loader, optim.SGD(model.parameters(), lr=0.2, momentum=0.9)


def _reference_epoch(model, loader, loss_fn, opt) -> float:
    model.train()
    total, n = 0.0, 0
    for X, y in loader:
        opt.zero_grad()
        loss = loss_fn(model(X), y)
        loss.backward()
        opt.step()
        total, n = total + loss.item() * len(y), n + len(y)
    return total / n


class _Spy:
    """Counts a model's forward calls in train mode / with grad on, and an optimizer's steps and zero_grads."""

    def __init__(self, model, opt):
        from ..autograd import is_grad_enabled
        self.calls = {"forward": 0, "train": 0, "grad": 0, "step": 0, "zero_grad": 0}
        forward, step, zero = model.forward, opt.step, opt.zero_grad

        def spied_forward(*a, **k):
            self.calls["forward"] += 1
            self.calls["train"] += model.training
            self.calls["grad"] += is_grad_enabled()
            return forward(*a, **k)

        def count(name, fn):
            def counted(*a, **k):
                self.calls[name] += 1
                return fn(*a, **k)
            return counted
        model.forward, opt.step, opt.zero_grad = spied_forward, count("step", step), count("zero_grad", zero)
        zero_model = model.zero_grad
        model.zero_grad = count("zero_grad", zero_model)


@_build_check("train_epoch", "model.train(); then for each batch (X, y) of the loader: zero the gradients, compute "
                             "the loss, backward, step; return the mean loss over the samples")
def check_train_epoch(train_epoch: Callable, seed: int = 0) -> None:
    """`train_epoch(model, loader, loss_fn, optimizer)` runs one epoch as the standard loop does (the
    check's own reference loop from the same start and seeds gives the same parameters), with the model
    in train mode, the gradients zeroed before each backward, one step per batch; and returns the mean of
    the per-sample loss over the epoch (the last batch is smaller) as a float."""
    loss_fn = nn.functional.cross_entropy
    model, loader, opt = _loop_setup(seed)
    _reference_epoch(model, loader, loss_fn, opt)
    want_loss = _reference_epoch(model, loader, loss_fn, opt)
    want = [_np(p).copy() for p in model.parameters()]
    model, loader, opt = _loop_setup(seed)
    _reference_epoch(model, loader, loss_fn, opt)
    model.eval()
    spy = _Spy(model, opt)
    got_loss = _call("train_epoch", train_epoch, model, loader, loss_fn, opt)
    c = spy.calls
    if c["forward"] != len(loader) or c["step"] != len(loader):
        raise _hint(f"one epoch of {len(loader)} batches ran the model {c['forward']} times and optimizer.step() "
                    f"{c['step']} times", "one forward and one step per batch")
    if c["train"] != c["forward"]:
        raise _hint("the model was in eval mode during training (dropout switched off)",
                    "call model.train() at the start: an evaluation before may have left it in eval mode")
    if c["zero_grad"] < len(loader):
        raise _hint(f"the gradients were zeroed {c['zero_grad']} times in {len(loader)} batches",
                    "zero them before every backward (optimizer.zero_grad()): backward ADDS into .grad")
    _judge_epoch(model, want, got_loss, want_loss)


def _judge_epoch(model, want: list, got_loss, want_loss: float) -> None:
    for (name, p), w in zip(model.named_parameters(), want):
        if not _close(p, w, rtol=1e-5, atol=1e-6):
            raise _hint(f"after your epoch, parameter {name} differs from the standard loop's",
                        "per batch: optimizer.zero_grad(); loss = loss_fn(model(X), y); loss.backward(); "
                        "optimizer.step() — once each, in this order")
    if isinstance(got_loss, Tensor) or not isinstance(got_loss, (float, np.floating)):
        raise _hint(f"train_epoch returned a {type(got_loss).__name__}",
                    "return a Python float: loss.item() per batch (a tensor would keep each batch's graph alive)")
    if abs(got_loss - want_loss) > 1e-5 * max(1.0, abs(want_loss)):
        raise _hint(f"train_epoch returned a mean loss of {got_loss:.6f}, the epoch's is {want_loss:.6f}",
                    "the mean over SAMPLES: weight each batch's loss by its size (the last batch is smaller) and "
                    "divide by the number of samples")


@_build_check("evaluate", "model.eval(); under tl.no_grad(), count the samples whose largest output is their "
                          "label; divide by the number of samples")
def check_evaluate(evaluate: Callable, seed: int = 1) -> None:
    """`evaluate(model, loader)` returns the model's accuracy over the loader (the last batch smaller) as
    a float, with the model in eval mode (dropout off) and without recording a graph."""
    model, loader, opt = _loop_setup(seed)
    _reference_epoch(model, loader, nn.functional.cross_entropy, opt)
    model.eval()
    with no_grad():
        correct = sum(int((_np(model(X)).argmax(1) == _np(y)).sum()) for X, y in loader)
    want = correct / len(loader.dataset)
    model.train()
    spy = _Spy(model, opt)
    got = _call("evaluate", evaluate, model, loader)
    if spy.calls["train"]:
        raise _hint("the model was in train mode while evaluating (dropout on)", "call model.eval() first")
    if spy.calls["grad"]:
        raise _hint("evaluate recorded a graph for every batch", "run the model under `with tl.no_grad():`: no "
                                                                 "backward follows")
    if isinstance(got, Tensor) or not isinstance(got, (float, np.floating)) or abs(got - want) > 1e-9:
        raise _hint(f"evaluate returned {got!r}, the accuracy is {want:.4f}",
                    "a float: the number of correct predictions (argmax of each row) over the number of samples, "
                    "counted over every batch")
