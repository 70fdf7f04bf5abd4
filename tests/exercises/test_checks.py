"""Each check passes a right answer, fails typical wrong ones with a HINT naming the mistake, and
refuses the gaming attempts (the library's own implementation where the exercise is to write it)."""
from __future__ import annotations

import math
import traceback

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tinygrad_lab as tl
from tinygrad_lab.autograd import Function
from tinygrad_lab.exercises import (broken, check_bug_report, check_classifier, check_fixed_op,
                                    check_function_backward, check_gradcheck, check_linear, check_linear_init,
                                    check_momentum_helps, check_pairwise_sq_dists, check_sgd_momentum,
                                    check_speedup)

from .gamed import GAMED

pytestmark = pytest.mark.usefixtures("no_leftover_subscribers")


def fails_with(check, *args, hint: str, **kwargs) -> str:
    """`check(*args)` raises an AssertionError whose message has a HINT and contains `hint`."""
    with pytest.raises(AssertionError) as info:
        check(*args, **kwargs)
    message = str(info.value)
    assert "HINT:" in message and hint in message, message
    return message


def gamed(exercise: str, attempt: str, **notebook) -> dict:
    """The names a registered gaming attempt (gamed.py) defines, its cells run with the notebook's
    imports and the `notebook` globals it uses."""
    ns = {"tl": tl, "math": math, "Function": Function, **notebook}
    for source in GAMED[exercise][attempt].values():
        exec(compile(source, f"<{exercise}: {attempt}>", "exec"), ns)
    return ns


# ---------------------------------------------------------------- a Function's backward (exercises 1 and 4)

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


def right_hypot(g, x, y, out):
    return g * x / out, g * y / out


def calls_backward(g, x, y, out):
    with tl.enable_grad():
        xd, yd = x.detach().requires_grad_(), y.detach().requires_grad_()
        ((xd * xd + yd * yd).sqrt() * g).sum().backward()
    return xd.grad, yd.grad


def test_function_backward_passes_a_correct_backward():
    check_function_backward(hypot(right_hypot), ref_hypot)
    check_gradcheck(hypot(right_hypot))


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


def test_function_backward_is_checked_beyond_the_visible_example():
    """Right at the notebook's 3-4-5 point only (x, y > 0 there): the check's random inputs of both signs catch it."""
    wrong = hypot(lambda g, x, y, out: (g * x.abs() / out, g * y.abs() / out))
    xs = (tl.tensor([3.0], requires_grad=True), tl.tensor([4.0], requires_grad=True))
    wrong.apply(*xs).sum().backward()
    assert np.allclose(xs[0].grad.numpy(), 0.6) and np.allclose(xs[1].grad.numpy(), 0.8)
    fails_with(check_function_backward, wrong, ref_hypot, hint="is wrong")


@pytest.mark.parametrize("function", [gamed("01_function_backward", "backward asks autograd")["Hypot"],
                                      hypot(calls_backward)], ids=["autograd.grad", ".backward()"])
def test_a_backward_that_asks_the_engine_is_refused(function):
    for check, args in ((check_function_backward, (ref_hypot,)), (check_gradcheck, ())):
        fails_with(check, function, *args, hint="write the local derivative as a formula")


def test_a_library_op_is_refused():
    fails_with(check_function_backward, broken.Softplus, lambda x: (x.exp() + 1).log(), shapes=[(3,)],
               hint="derive from tl.autograd.Function only")


def test_gradcheck_hint():
    fails_with(check_gradcheck, hypot(lambda g, x, y, out: (g * x / out, g * x / out)), hint="gradcheck")


@given(st.floats(0.02, 0.5), st.sampled_from([-1.0, 1.0]), st.integers(0, 1))
def test_any_scaled_gradient_fails(eps, sign, which):
    """Property: a backward off by a factor 1 ± eps in either input's gradient never passes."""
    factor = [1.0, 1.0]
    factor[which] += sign * eps
    fails_with(check_function_backward, hypot(lambda g, x, y, out: (factor[0] * g * x / out, factor[1] * g * y / out)),
               ref_hypot, hint=f"gradient of input {which} is wrong")


# ---------------------------------------------------------------- Linear (exercise 2)

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


class Detached(GoodLinear):
    def forward(self, x):
        return tl.tensor(x.detach().numpy() @ self.weight.detach().numpy().T) + self.bias


class OnlyMatrices(GoodLinear):
    """Right for a (batch, in) input; flattens any other shape away."""
    def forward(self, x):
        return x.reshape(-1, x.shape[-1]) @ self.weight.T + self.bias


def test_linear_passes_a_correct_module():
    check_linear(GoodLinear)
    check_linear_init(GoodLinear)


@pytest.mark.parametrize("cls, hint", [
    (NoTranspose, "x @ weight.T"),
    (InOutLayout, "(out_features, in_features)"),
    (NoBias, "no bias"),
    (BiasNotAdded, "the bias is missing"),
    (NotParameters, "nn.Parameter"),
    (Detached, "differentiable tensor ops"),
    (OnlyMatrices, "keeps every leading axis"),
])
def test_linear_hints(cls, hint):
    fails_with(check_linear, cls, hint=hint)


def test_linear_square_case_catches_the_missing_transpose():
    """With in == out, x @ weight runs: the check still sees the wrong values."""
    class SquareOnly(GoodLinear):
        def forward(self, x):
            return (x @ self.weight if x.shape[-1] == self.weight.shape[0] == self.weight.shape[1]
                    else x @ self.weight.T) + self.bias
    fails_with(check_linear, SquareOnly, hint="multiply by its transpose")


@pytest.mark.parametrize("cls, hint", [
    (gamed("02_linear", "subclasses nn.Linear")["MyLinear"], "is built on tinygrad_lab.nn"),
    (tl.nn.Linear, "is built on tinygrad_lab.nn"),
    (gamed("02_linear", "holds an nn.Linear")["MyLinear"], "holds a library layer (self.inner)"),
    (gamed("02_linear", "calls functional.linear")["MyLinear"], "forward calls the library's linear"),
], ids=["subclass", "alias", "wrapper", "functional"])
def test_linear_refuses_the_library_layer(cls, hint):
    fails_with(check_linear, cls, hint=hint)
    fails_with(check_linear_init, cls, hint=hint)


class ZeroInit(GoodLinear):
    def __init__(self, n_in: int, n_out: int):
        super().__init__(n_in, n_out)
        with tl.no_grad():
            self.weight.zero_()


class NormalInit(GoodLinear):
    """Normal with the bound as its standard deviation, clipped into the bounds: spread wrong."""
    def __init__(self, n_in: int, n_out: int):
        super().__init__(n_in, n_out)
        bound = 1 / math.sqrt(n_in)
        with tl.no_grad():
            self.weight.copy_((tl.randn(n_out, n_in) * bound).clamp(-bound, bound))


class SameEveryTime(GoodLinear):
    def __init__(self, n_in: int, n_out: int):
        tl.manual_seed(0)
        super().__init__(n_in, n_out)


@pytest.mark.parametrize("cls, hint", [
    (ZeroInit, "U(-0.125, 0.125)"), (NormalInit, "standard deviation"), (SameEveryTime, "the same weights"),
])
def test_linear_init_hints(cls, hint):
    check_linear(cls)  # the maths is right; only the initialisation is not
    fails_with(check_linear_init, cls, hint=hint)


# ---------------------------------------------------------------- SGD with momentum (exercise 3)

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
                if p.grad is not None:
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


class TouchesFrozen(GoodSGD):
    def step(self):
        super().step()
        with tl.no_grad():
            for p in self.params:
                if p.grad is None:
                    p -= self.lr


class FixedLrMomentum(GoodSGD):
    """Right for the notebook's lr=0.1, momentum=0.9 only."""
    def __init__(self, params, lr: float, momentum: float = 0.0):
        super().__init__(params, 0.1, 0.9)


WrapsSGD = gamed("03_sgd_momentum", "wraps optim.SGD")["SGDMomentum"]


class SGDInsideStep(GoodSGD):
    """Makes the library's SGD lazily, inside step(), and swallows whatever goes wrong."""
    def step(self):
        try:
            if not hasattr(self, "inner"):
                self.inner = tl.optim.SGD(self.params, lr=self.lr, momentum=self.momentum)
            self.inner.step()
        except Exception:
            super().step()


class SwallowsTheRefusal(GoodSGD):
    """Tries the library's SGD and, when that fails, does nothing at all."""
    def step(self):
        try:
            tl.optim.SGD(self.params, lr=self.lr, momentum=self.momentum).step()
        except Exception:
            pass


def test_sgd_momentum_passes_a_correct_optimizer():
    check_sgd_momentum(GoodSGD)
    check_momentum_helps(GoodSGD)


@pytest.mark.parametrize("cls, hint", [
    (NoMomentum, "keep one velocity buffer per parameter"),
    (Uphill, "moved uphill"),
    (Dampened, "no (1 - momentum) factor"),
    (Rebinds, "did not change"),
    (KeepsGrads, "zero_grad()"),
    (TouchesFrozen, "without a gradient"),
    (FixedLrMomentum, "lr=0.05, momentum=0.5"),
])
def test_sgd_momentum_hints(cls, hint):
    fails_with(check_sgd_momentum, cls, hint=hint)


def test_momentum_helps_hint():
    fails_with(check_momentum_helps, NoMomentum, hint="carry over from step to step")


@pytest.mark.parametrize("cls, hint", [
    (WrapsSGD, "calls the library's SGD.__init__"),
    (gamed("03_sgd_momentum", "subclasses optim.SGD")["SGDMomentum"], "built on tinygrad_lab.optim.sgd.SGD"),
    (SGDInsideStep, "calls the library's SGD.__init__"),
    (SwallowsTheRefusal, "calls the library's SGD.__init__"),
], ids=["wrapper", "subclass", "inside-step", "swallows"])
def test_sgd_momentum_refuses_the_library_optimizer(cls, hint):
    fails_with(check_sgd_momentum, cls, hint=hint)
    fails_with(check_momentum_helps, cls, hint=hint)


def test_the_library_optimizers_work_again_after_a_check():
    with pytest.raises(AssertionError):
        check_sgd_momentum(WrapsSGD)
    p = tl.tensor([1.0], requires_grad=True)
    (p * p).sum().backward()
    tl.optim.SGD([p], lr=0.5, momentum=0.9).step()
    assert p.item() == 0.0


@given(st.floats(0.05, 0.5), st.sampled_from([-1.0, 1.0]))
def test_any_wrong_learning_rate_fails(eps, sign):
    class OffLr(GoodSGD):
        def __init__(self, params, lr: float, momentum: float = 0.0):
            super().__init__(params, lr * (1 + sign * eps), momentum)
    fails_with(check_sgd_momentum, OffLr, hint="after step 1")


# ---------------------------------------------------------------- find the bug, then fix it (exercise 4)

def bug_steps():
    t = broken.program()
    stepper = tl.graph.BackwardStepper(t["loss"])
    return t, {s.op: s for s in iter(stepper.step, None)}


def test_bug_report_accepts_the_buggy_op_and_the_gradient_it_should_send():
    t, steps = bug_steps()
    check_bug_report("Softplus", steps["Softplus"].grad_output * t["h"].detach().sigmoid())


@pytest.mark.parametrize("answer, hint", [
    ("Square", "AFTER"), ("Scale", "AFTER"), ("Matmul", "BEFORE"), ("Mul", "the steps are"), (None, "the steps are"),
])
def test_bug_report_hints_on_the_op(answer, hint):
    fails_with(check_bug_report, answer, None, hint=hint)


def test_bug_report_hints_on_what_should_be_sent():
    t, steps = bug_steps()
    softplus = steps["Softplus"]
    fails_with(check_bug_report, "Softplus", None, hint="set should_send")
    fails_with(check_bug_report, "Softplus", softplus.sends[0][2], hint="is what its broken backward sends")
    at_output = softplus.grad_output * t["a"].detach().sigmoid()  # the derivative taken at the op's output
    fails_with(check_bug_report, "Softplus", at_output, hint="at the op's INPUT")


class FixedOp(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x.exp() + 1).log()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.sigmoid()


# the wrong op fixed: the learner's own copy of the program's (correct) Square
FixedWrongOp = type("FixedWrongOp", (Function,), {k: staticmethod(getattr(broken.Square, k))
                                                  for k in ("forward", "backward")})


class StillBroken(FixedOp):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        s = x.sigmoid()
        return g * s * (1 - s)


class SubclassesBroken(broken.Softplus):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.sigmoid()


def test_fixed_op_passes_the_fix():
    check_fixed_op(FixedOp)


BY_TRIAL = gamed("04_find_the_bug", "trial and error, then autograd",
                 stepper=tl.graph.BackwardStepper(broken.program()["loss"]))


def test_bug_report_refuses_an_answer_found_by_trial_and_error():
    assert BY_TRIAL["buggy_op"] == "Softplus"  # the check named it...
    fails_with(check_bug_report, BY_TRIAL["buggy_op"], BY_TRIAL["should_send"],  # ...not what it should send
               hint="is what its broken backward sends")


@pytest.mark.parametrize("cls, hint", [
    (FixedWrongOp, "what the op you found in Part 1 computes"),
    (StillBroken, "write d out/d input on paper"),
    (BY_TRIAL["FixedOp"], "write the local derivative as a formula"),
    (SubclassesBroken, "derive from tl.autograd.Function only"),
])
def test_fixed_op_hints_and_refusals(cls, hint):
    message = fails_with(check_fixed_op, cls, hint=hint)
    if cls is not SubclassesBroken:  # which names its own base class
        assert "oftplus" not in message, "a spoiler for Part 1"


# ---------------------------------------------------------------- vectorise (exercise 5)

def slow_sq_dists(X):
    n = X.shape[0]
    out = tl.zeros(n, n)
    for i in range(n):
        for j in range(n):
            out[i, j] = ((X[i] - X[j]) ** 2).sum()
    return out


def fast_sq_dists(X):
    return ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)


zeros = gamed("05_vectorise", "zeros")["pairwise_sq_dists"]
through_scipy = gamed("05_vectorise", "scipy's cdist")["pairwise_sq_dists"]


def one_loop(X):
    return tl.stack([((X - X[i]) ** 2).sum(-1) for i in range(X.shape[0])])


X_POINTS = tl.randn(30, 4)


def test_pairwise_and_speedup_pass_a_vectorised_version():
    check_pairwise_sq_dists(fast_sq_dists)
    assert check_speedup(slow_sq_dists, fast_sq_dists, X_POINTS, min_speedup=5) >= 5


@pytest.mark.parametrize("fn, hint", [
    (zeros, "D[0, 1]"),
    (through_scipy, "not connected to X"),
    (lambda X: fast_sq_dists(X).numpy(), "it raised RuntimeError"),
    (lambda X: ((X[:, None, :] - X[None, :, :]) ** 2), "sum over the last axis"),
    (lambda X: fast_sq_dists(X).sqrt(), "compare one element by hand"),
    (lambda X: fast_sq_dists(X.detach()), "not connected to X"),
], ids=["zeros", "scipy", "ndarray", "no-sum", "sqrt", "detached"])
def test_pairwise_hints(fn, hint):
    fails_with(check_pairwise_sq_dists, fn, hint=hint)


def test_pairwise_accepts_a_loop_that_is_right():
    check_pairwise_sq_dists(one_loop)  # the values are right: the speed is the other cell's business


@pytest.mark.parametrize("fast, hint", [
    (lambda X: fast_sq_dists(X).numpy(), "stay in tensor ops"),
    (lambda X: ((X[:, None, :] - X[None, :, :]) ** 2), "broadcasting builds every pair"),
    (lambda X: fast_sq_dists(X).sqrt(), "compare one element by hand"),
    (zeros, "compare one element by hand"),
    (through_scipy, "not connected to its input"),
    (one_loop, "tensor ops on 4 points and"),
    (slow_sq_dists, "a Python loop"),
], ids=["ndarray", "shape", "values", "zeros", "scipy", "one-loop", "slow"])
def test_speedup_hints(fast, hint):
    fails_with(check_speedup, slow_sq_dists, fast, X_POINTS, min_speedup=5, hint=hint)


# ---------------------------------------------------------------- train to a target (exercise 6)

tl.manual_seed(0)
DIGITS_X, DIGITS_Y = tl.datasets.digits()
DIGITS_X = DIGITS_X / 16.0


def fit(X, y, epochs: int = 60):
    model = tl.nn.Sequential(tl.nn.Linear(64, 32), tl.nn.ReLU(), tl.nn.Linear(32, 10))
    opt = tl.optim.Adam(model.parameters(), lr=0.02)
    for _ in range(epochs):
        opt.zero_grad()
        tl.nn.functional.cross_entropy(model(X), y).backward()
        opt.step()
    return model


uses_the_notebooks_data = gamed("06_train_digits", "trains on the test set", X_test=DIGITS_X, y_test=DIGITS_Y)["train"]


def loads_the_data(X, y):
    Xa, ya = tl.datasets.digits()
    return fit(Xa / 16.0, ya)


def test_classifier_passes_a_trained_network():
    assert check_classifier(fit) >= 0.95


@pytest.mark.parametrize("train, hint", [
    (lambda X, y: fit(X, y, epochs=1), "below the target"),
    (lambda X, y: (lambda inputs: fit(X, y)(inputs)[:, :5]), "not a tinygrad_lab network"),
    (lambda X, y: tl.nn.Sequential(tl.nn.Linear(64, 10), tl.nn.Linear(10, 3)), "expected (397, 10)"),
    (uses_the_notebooks_data, "withheld"),
    (loads_the_data, "loads the data set itself"),
    (gamed("06_train_digits", "a scikit-learn classifier")["train"], "do not depend on its parameters"),
], ids=["undertrained", "function", "three-classes", "notebook-data", "loads-data", "sklearn"])
def test_classifier_hints_and_refusals(train, hint):
    fails_with(check_classifier, train, hint=hint)


def test_the_notebooks_data_and_loaders_come_back_after_a_check():
    notebook = uses_the_notebooks_data.__globals__  # the namespace its cell ran in, as a notebook's
    before = notebook["X_test"]
    with pytest.raises(AssertionError):
        check_classifier(uses_the_notebooks_data)
    with pytest.raises(AssertionError):
        check_classifier(loads_the_data)
    assert notebook["X_test"] is before
    assert tl.datasets.digits()[0].shape == (1797, 64)


def test_a_failed_check_shows_the_learner_the_hint_not_the_checks_code():
    """The traceback holds the caller's frame and the check's three-line wrapper, nothing deeper."""
    with pytest.raises(AssertionError) as info:
        check_linear(NoTranspose)
    assert len(traceback.extract_tb(info.tb)) == 2 and info.value.__suppress_context__
    assert "HINT:" in str(info.value)
