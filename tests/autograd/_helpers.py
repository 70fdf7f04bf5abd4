"""Helpers shared by the autograd tests: conversions, comparison against PyTorch,
a few custom Functions written exactly as in PyTorch's documentation, graph walks
independent of the engine, and a fixed program for the determinism tests."""
from __future__ import annotations

import numpy as np

import tinygrad_lab as tl
from tinygrad_lab.autograd import Function


# ---------------------------------------------------------------- conversions and comparisons

def to_np(t) -> np.ndarray:
    """A host NumPy copy of a tinygrad_lab or torch tensor (or anything array-like)."""
    if isinstance(t, tl.Tensor):
        return np.array(t.detach().cpu().numpy(), copy=True)
    if hasattr(t, "detach") and hasattr(t, "numpy"):  # torch
        return t.detach().cpu().numpy().copy()
    return np.asarray(t)


def assert_close(actual, expected, rtol: float = 1e-6, atol: float = 1e-9) -> None:
    a, e = to_np(actual), to_np(expected)
    assert a.shape == e.shape, f"shape {a.shape} != expected {e.shape}"
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


def pair(torch, data, requires_grad: bool = True, dtype=np.float64, device="cpu"):
    """The same values as a tinygrad_lab tensor and as a torch tensor (both leaves)."""
    arr = np.array(data, dtype=dtype)
    x = tl.tensor(arr, device=device, requires_grad=requires_grad)
    tx = torch.tensor(arr, requires_grad=requires_grad)
    return x, tx


def leaf(data, requires_grad: bool = True, dtype=np.float64, device="cpu"):
    return tl.tensor(np.array(data, dtype=dtype), device=device, requires_grad=requires_grad)


def assert_grads_match(pairs, rtol: float = 1e-6, atol: float = 1e-9) -> None:
    """For each (tinygrad_lab tensor, torch tensor): both have no .grad, or close .grad."""
    for i, (x, tx) in enumerate(pairs):
        if tx.grad is None:
            assert x.grad is None, f"pair {i}: torch has no grad but tinygrad_lab has {x.grad}"
        else:
            assert x.grad is not None, f"pair {i}: tinygrad_lab has no grad, torch has {tx.grad}"
            assert_close(x.grad, tx.grad, rtol, atol)


# ---------------------------------------------------------------- graph walks (independent of the engine)

def reachable_nodes(*roots) -> list:
    """Every node reachable from `roots` through next_functions (iterative DFS, in discovery order)."""
    seen, out, stack = set(), [], list(roots)
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        for e in n.next_functions:
            if e is not None:
                stack.append(e[0])
    return out


def node_signature(nodes) -> list:
    """(name, id relative to the smallest id) per node: comparable between two runs of one program."""
    nodes = list(nodes)
    base = min(n.id for n in nodes)
    return [(n.name, n.id - base) for n in nodes]


def program(seed: int = 0):
    """A fixed small program with a diamond, a view, a reduction and a matmul.
    Returns (leaves, loss)."""
    rng = np.random.default_rng(seed)
    x = leaf(rng.standard_normal((3, 4)))
    w = leaf(rng.standard_normal((4, 2)))
    b = leaf(rng.standard_normal(2))
    h = (x @ w + b).tanh()             # (3, 2)
    a = h * h                          # h used twice
    c = h.exp().reshape(6)             # h used a third time, through a view
    loss = a.sum() + (c * 0.5).mean() - x[1:, :2].sin().sum()
    return (x, w, b), loss


def ones_like(t):
    return tl.ones(*t.shape, dtype=t.dtype, device=t.device)


# ---------------------------------------------------------------- custom Functions (PyTorch's documented form)

class MyExp(Function):
    """exp, saving its output for backward (PyTorch docs' `Exp`)."""

    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


class SinCos(Function):
    """Two outputs: (sin x, cos x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin(), x.cos()

    @staticmethod
    def backward(ctx, g_sin, g_cos):
        (x,) = ctx.saved_tensors
        return g_sin * x.cos() - g_cos * x.sin()


class LinearFunction(Function):
    """PyTorch docs' LinearFunction: input @ weight.T + bias, using ctx.needs_input_grad.
    Every call of backward appends its needs_input_grad to `seen`. Without a bias it
    returns three gradients for two inputs, the extra one None (PyTorch allows this)."""

    seen: list = []

    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input @ weight.t()
        if bias is not None:
            output = output + bias  # the docs' bias.unsqueeze(0).expand_as(output), by broadcasting
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        LinearFunction.seen.append(tuple(ctx.needs_input_grad))
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output @ weight
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t() @ input
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class WrongSquare(Function):
    """x**2 with a wrong backward (forgets the factor 2): for gradcheck to catch."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x


class CubeConstBackward(Function):
    """x**3 whose backward is right at first order but uses x as a constant
    (detached), so its own derivative (the second derivative) is wrong."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        c = x.detach()
        return g * (3.0 * c * c)


# ---------------------------------------------------------------- the same program under both libraries

def run_both(torch, scenario, *datas, requires_grad: bool = True):
    """Run `scenario(*leaves)` once with tinygrad_lab leaves and once with torch leaves
    (same values, float64). Returns ((leaves, result), (torch_leaves, torch_result));
    `scenario` uses only the API the two share (ops, methods, backward, hooks)."""
    pairs = [pair(torch, d, requires_grad) for d in datas]
    ours = [p[0] for p in pairs]
    theirs = [p[1] for p in pairs]
    return (ours, scenario(*ours)), (theirs, scenario(*theirs))


def assert_same_records(ours, theirs, rtol: float = 1e-6, atol: float = 1e-9) -> None:
    """Two lists of recorded values (tensors, numbers, strings) are equal, tensors up to tolerance."""
    assert len(ours) == len(theirs), f"{len(ours)} records vs torch's {len(theirs)}: {ours} vs {theirs}"
    for a, b in zip(ours, theirs):
        if isinstance(b, (str, int)) and not hasattr(b, "shape"):
            assert a == b, f"{a!r} != torch's {b!r}"
        elif b is None:
            assert a is None
        else:
            assert_close(a, b, rtol, atol)
