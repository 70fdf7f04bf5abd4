"""The gaming attempts every exercise must score 0 on, under nbgrader's autograde.

GAMED[exercise][attempt] maps the grade_id of each solution cell the attempt fills in to that
cell's source; the rest of the submission is the student version as released. An attempt reuses
the library's own implementation where the exercise is to write it (or otherwise gets the marks
without the work). Every exercise in notebooks/exercises/ needs at least one entry here:
tests/exercises/test_gamed.py fails without it, and the nbgrader flow tests grade each attempt.
"""
from __future__ import annotations

_HYPOT_ASKS_AUTOGRAD = '''
class Hypot(Function):
    @staticmethod
    def forward(ctx, x, y):
        out = (x * x + y * y).sqrt()
        ctx.save_for_backward(x, y, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        x, y, out = ctx.saved_tensors
        with tl.enable_grad():  # let the engine differentiate forward again
            xd, yd = x.detach().requires_grad_(), y.detach().requires_grad_()
            return tl.autograd.grad((xd * xd + yd * yd).sqrt(), (xd, yd), grad_output)
'''

_LINEAR_SUBCLASS = '''
class MyLinear(tl.nn.Linear):
    pass
'''

_LINEAR_WRAPPER = '''
class MyLinear(tl.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.inner = tl.nn.Linear(in_features, out_features)
        self.weight, self.bias = self.inner.weight, self.inner.bias

    def forward(self, x):
        return self.inner(x)
'''

_LINEAR_FUNCTIONAL = '''
class MyLinear(tl.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        self.weight = tl.nn.Parameter(tl.rand(out_features, in_features) * (2 * bound) - bound)
        self.bias = tl.nn.Parameter(tl.rand(out_features) * (2 * bound) - bound)

    def forward(self, x):
        return tl.nn.functional.linear(x, self.weight, self.bias)
'''

_SGD_WRAPPER = '''
class SGDMomentum:
    def __init__(self, params, lr, momentum=0.0):
        self.opt = tl.optim.SGD(params, lr=lr, momentum=momentum)

    def zero_grad(self):
        self.opt.zero_grad()

    def step(self):
        self.opt.step()
'''

_SGD_SUBCLASS = '''
class SGDMomentum(tl.optim.SGD):
    pass
'''

_BUG_BY_TRIAL = '''
from tinygrad_lab.exercises import check_bug_report

buggy_op = should_send = None
for step in iter(stepper.step, None):  # ask the check about every op, with what the engine sent
    sent = step.sends[0][2] if step.sends else None
    try:
        check_bug_report(step.op, sent)
    except AssertionError as e:
        if str(e).startswith("right op"):
            buggy_op, should_send = step.op, sent
'''

_FIX_BY_AUTOGRAD = '''
class FixedOp(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return tl.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        with tl.enable_grad():
            xd = x.detach().requires_grad_()
            return tl.autograd.grad(tl.nn.functional.softplus(xd), xd, grad_output)
'''

_DISTS_ZEROS = '''
def pairwise_sq_dists(X):
    return tl.zeros(X.shape[0], X.shape[0])  # 0 on the diagonal, and symmetric
'''

_DISTS_SCIPY = '''
from scipy.spatial.distance import cdist

def pairwise_sq_dists(X):
    a = X.detach().numpy()
    return tl.tensor(cdist(a, a, "sqeuclidean"), dtype=X.dtype)
'''

_TRAIN_ON_TEST = '''
def train(X, y):
    X, y = tl.cat([X, X_test]), tl.cat([y, y_test])  # the test images too
    model = tl.nn.Sequential(tl.nn.Linear(64, 64), tl.nn.ReLU(), tl.nn.Linear(64, 10))
    opt = tl.optim.Adam(model.parameters(), lr=0.02)
    for epoch in range(80):
        opt.zero_grad()
        tl.nn.functional.cross_entropy(model(X), y).backward()
        opt.step()
    return model
'''

_TRAIN_SKLEARN = '''
from sklearn.neighbors import KNeighborsClassifier

class Neighbours(tl.nn.Module):
    def __init__(self, X, y):
        super().__init__()
        self.knn = KNeighborsClassifier(3).fit(X.numpy(), y.numpy())
        self.unused = tl.nn.Parameter(tl.zeros(1))

    def forward(self, X):
        return tl.tensor(self.knn.predict_proba(X.numpy()), dtype=tl.float32) + 0 * self.unused

def train(X, y):
    return Neighbours(X, y)
'''

GAMED: dict[str, dict[str, dict[str, str]]] = {
    "01_function_backward": {
        "backward asks autograd": {"hypot": _HYPOT_ASKS_AUTOGRAD},
    },
    "02_linear": {
        "subclasses nn.Linear": {"my_linear": _LINEAR_SUBCLASS},
        "holds an nn.Linear": {"my_linear": _LINEAR_WRAPPER},
        "calls functional.linear": {"my_linear": _LINEAR_FUNCTIONAL},
    },
    "03_sgd_momentum": {
        "wraps optim.SGD": {"sgd_momentum": _SGD_WRAPPER},
        "subclasses optim.SGD": {"sgd_momentum": _SGD_SUBCLASS},
    },
    "04_find_the_bug": {
        "trial and error, then autograd": {"find_bug": _BUG_BY_TRIAL, "fixed_op": _FIX_BY_AUTOGRAD},
    },
    "05_vectorise": {
        "zeros": {"vectorised": _DISTS_ZEROS},
        "scipy's cdist": {"vectorised": _DISTS_SCIPY},
    },
    "06_train_digits": {
        "trains on the test set": {"train": _TRAIN_ON_TEST},
        "a scikit-learn classifier": {"train": _TRAIN_SKLEARN},
    },
}
