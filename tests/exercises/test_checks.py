"""Each check passes a correct solution and fails typical wrong ones with a HINT naming the mistake."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.autograd import Function
from tinygrad_lab.exercises import (check_accuracy, check_bug_report, check_function_backward, check_linear,
                                    check_sgd_momentum, check_speedup)


def fails_with(check, *args, hint: str, **kwargs) -> None:
    """`check(*args)` raises an AssertionError whose message has a HINT containing `hint`."""
    with pytest.raises(AssertionError) as info:
        check(*args, **kwargs)
    message = str(info.value)
    assert "HINT:" in message and hint in message, message


# ---------------------------------------------------------------- Function backward

def hypot(backward):
    """A Hypot Function with the given backward(g, x, y, out) -> grads."""
    class Hypot(Function):
        @staticmethod
        def forward(ctx, x, y):
            out = (x * x + y * y).sqrt()
            ctx.save_for_backward(x, y, out)
            return out

        @staticmethod
        def backward(ctx, g):
            return backward(g, *ctx.saved_tensors)
    return Hypot


def ref_hypot(x, y):
    return (x * x + y * y).sqrt()


def test_function_backward_passes_a_correct_backward():
    check_function_backward(hypot(lambda g, x, y, out: (g * x / out, g * y / out)), ref_hypot)


@pytest.mark.parametrize("backward, hint", [
    (lambda g, x, y, out: (-g * x / out, -g * y / out), "wrong sign"),
    (lambda g, x, y, out: (g * y / out, g * x / out), "order of forward's arguments"),
    (lambda g, x, y, out: (x / out, y / out), "multiply the local derivative by the incoming gradient"),
    (lambda g, x, y, out: (g * x / out, None), "returned None for input 1"),
    (lambda g, x, y, out: g * x / out, "one gradient per input"),
    (lambda g, x, y, out: (g * x, g * y), "write d out/d input on paper"),
], ids=["sign", "swapped", "no-grad-output", "none", "one-grad", "wrong-formula"])
def test_function_backward_hints(backward, hint):
    fails_with(check_function_backward, hypot(backward), ref_hypot, hint=hint)


def test_function_backward_checks_forward_first():
    fails_with(check_function_backward, hypot(lambda g, x, y, out: (g, g)), lambda x, y: x + y,
               hint="formula in forward")


# ---------------------------------------------------------------- Linear

class GoodLinear(tl.nn.Module):
    def __init__(self, n_in: int, n_out: int):
        super().__init__()
        bound = 1 / math.sqrt(n_in)
        self.weight = tl.nn.Parameter(tl.rand(n_out, n_in) * (2 * bound) - bound)
        self.bias = tl.nn.Parameter(tl.rand(n_out) * (2 * bound) - bound)

    def forward(self, x):
        return x @ self.weight.T + self.bias


class NoTranspose(GoodLinear):
    def forward(self, x):
        return x @ self.weight + self.bias


class InOutLayout(GoodLinear):
    def __init__(self, n_in: int, n_out: int):
        super().__init__(n_in, n_out)
        self.weight = tl.nn.Parameter(self.weight.detach().T.contiguous())

    def forward(self, x):
        return x @ self.weight + self.bias


class NoBias(GoodLinear):
    def __init__(self, n_in: int, n_out: int):
        super().__init__(n_in, n_out)
        self.bias = None

    def forward(self, x):
        return x @ self.weight.T


class BiasNotAdded(GoodLinear):
    def forward(self, x):
        return x @ self.weight.T


class NotParameters(GoodLinear):
    def __init__(self, n_in: int, n_out: int):
        super().__init__(n_in, n_out)
        self.__dict__["weight"] = self._parameters.pop("weight").detach().requires_grad_()


class ZeroInit(GoodLinear):
    def __init__(self, n_in: int, n_out: int):
        super().__init__(n_in, n_out)
        with tl.no_grad():
            self.weight.zero_()


class Detached(GoodLinear):
    def forward(self, x):
        return tl.tensor(x.detach().numpy() @ self.weight.detach().numpy().T) + self.bias


def test_linear_passes_a_correct_module():
    check_linear(GoodLinear)


@pytest.mark.parametrize("cls, hint", [
    (NoTranspose, "x @ weight.T"),
    (InOutLayout, "(out_features, in_features)"),
    (NoBias, "no bias"),
    (BiasNotAdded, "the bias is missing"),
    (NotParameters, "nn.Parameter"),
    (ZeroInit, "U(-1/√in, 1/√in)"),
    (Detached, "differentiable tensor ops"),
])
def test_linear_hints(cls, hint):
    fails_with(check_linear, cls, hint=hint)


def test_linear_square_case_catches_the_missing_transpose():
    """With in == out, x @ weight runs: the check still sees the wrong values."""
    class SquareOnly(GoodLinear):
        def forward(self, x):
            return (x @ self.weight if x.shape[1] == self.weight.shape[0] == self.weight.shape[1]
                    else x @ self.weight.T) + self.bias
    fails_with(check_linear, SquareOnly, hint="multiply by its transpose")


# ---------------------------------------------------------------- SGD with momentum

class GoodSGD:
    def __init__(self, params, lr: float, momentum: float = 0.0):
        self.params, self.lr, self.momentum = list(params), lr, momentum
        self.buffers = [None] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def update(self, i: int, p):
        if self.buffers[i] is None:
            self.buffers[i] = p.grad.clone()
        else:
            self.buffers[i] = self.momentum * self.buffers[i] + p.grad
        p -= self.lr * self.buffers[i]

    def step(self):
        with tl.no_grad():
            for i, p in enumerate(self.params):
                self.update(i, p)


class NoMomentum(GoodSGD):
    def update(self, i, p):
        p -= self.lr * p.grad


class Uphill(GoodSGD):
    def update(self, i, p):
        super().update(i, p)
        p += 2 * self.lr * self.buffers[i]


class Dampened(GoodSGD):
    def update(self, i, p):
        g = p.grad if self.buffers[i] is None else self.momentum * self.buffers[i] + (1 - self.momentum) * p.grad
        self.buffers[i] = g
        p -= self.lr * g


class Rebinds(GoodSGD):
    def update(self, i, p):
        p = p - self.lr * p.grad  # noqa: F841  (the mistake under test)


class KeepsGrads(GoodSGD):
    def zero_grad(self):
        pass


def test_sgd_momentum_passes_a_correct_optimizer():
    check_sgd_momentum(GoodSGD)


@pytest.mark.parametrize("cls, hint", [
    (NoMomentum, "keep one velocity buffer per parameter"),
    (Uphill, "moved uphill"),
    (Dampened, "no (1 - momentum) factor"),
    (Rebinds, "did not change"),
    (KeepsGrads, "zero_grad()"),
])
def test_sgd_momentum_hints(cls, hint):
    fails_with(check_sgd_momentum, cls, hint=hint)


# ---------------------------------------------------------------- the bug hunt

def test_bug_report_accepts_the_buggy_op():
    check_bug_report("Softplus")


@pytest.mark.parametrize("answer, hint", [
    ("Square", "AFTER"), ("Scale", "AFTER"), ("Matmul", "BEFORE"), ("Mul", "the steps are"), (None, "the steps are"),
])
def test_bug_report_hints(answer, hint):
    fails_with(check_bug_report, answer, hint=hint)


# ---------------------------------------------------------------- vectorise

def slow_sq_dists(X):
    n = X.shape[0]
    out = tl.zeros(n, n)
    for i in range(n):
        for j in range(n):
            out[i, j] = ((X[i] - X[j]) ** 2).sum()
    return out


def fast_sq_dists(X):
    return ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)


X_POINTS = tl.randn(30, 4)


def test_speedup_passes_a_vectorised_version():
    assert check_speedup(slow_sq_dists, fast_sq_dists, X_POINTS, min_speedup=5) >= 5


@pytest.mark.parametrize("fast, hint", [
    (lambda X: fast_sq_dists(X).numpy(), "stay in tensor ops"),
    (lambda X: ((X[:, None, :] - X[None, :, :]) ** 2), "broadcasting builds every pair"),
    (lambda X: ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1).sqrt(), "compare one element by hand"),
    (slow_sq_dists, "a Python loop"),
], ids=["numpy", "shape", "values", "slow"])
def test_speedup_hints(fast, hint):
    fails_with(check_speedup, slow_sq_dists, fast, X_POINTS, min_speedup=5, hint=hint)


# ---------------------------------------------------------------- accuracy

Y = tl.tensor([0, 1, 2, 1, 0, 2, 2, 1])


def logits_for(labels):
    """A 'model' whose outputs pick `labels`."""
    return lambda X: tl.from_numpy(np.eye(3)[np.asarray(labels)])


def test_accuracy_passes_and_returns_the_accuracy():
    assert check_accuracy(logits_for(Y.numpy()), tl.zeros(8, 2), Y, target=0.9) == 1.0


def test_accuracy_hints_below_target():
    wrong = Y.numpy().copy()
    wrong[:4] = (wrong[:4] + 1) % 3
    fails_with(check_accuracy, logits_for(wrong), tl.zeros(8, 2), Y, target=0.9, hint="never train on the test set")


def test_accuracy_hints_wrong_output_shape():
    fails_with(check_accuracy, lambda X: tl.zeros(8), tl.zeros(8, 2), Y, target=0.5, hint="one row of class scores")
