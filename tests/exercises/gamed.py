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


# ---------------------------------------------------------------- the build-it track (build_NN_*)

_NUMERICAL_GRAD_FROM_GRADCHECK = '''
from tinygrad_lab.autograd.gradcheck import numerical_jacobian

def numerical_grad(f, x, eps=1e-6):
    t = tl.tensor(x, dtype=tl.float64, requires_grad=True)
    return numerical_jacobian(lambda t: tl.tensor(f(t.detach().numpy()), dtype=tl.float64), [t], eps)[0].reshape(x.shape)
'''

_GRAD_CHECK_IS_GRADCHECK = '''
def grad_check(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    try:
        return bool(tl.autograd.gradcheck(fn, inputs, eps=eps, atol=atol, rtol=rtol))
    except Exception:
        return False
'''

_SIGMOID_ASKS_AUTOGRAD = '''
class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        out = 1 / (1 + (-x).exp())
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        with tl.enable_grad():
            z = (out.detach() / (1 - out.detach())).log().requires_grad_()  # x, recovered from out
            return tl.autograd.grad(1 / (1 + (-z).exp()), z, grad_output)
'''

_SIGMOID_FROM_LIBRARY = '''
class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        out = x.sigmoid()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return grad_output * out * (1 - out)
'''

_UNBROADCAST_IMPORTED = '''
from tinygrad_lab.ops.broadcast import sum_to

def unbroadcast(grad, shape):
    return sum_to(grad, tuple(shape))
'''

_UNBROADCAST_REFERENCE = '''
def unbroadcast(grad, shape):
    return seams.reference("unbroadcast")(grad, tuple(shape))
'''

_ORDER_FROM_ENGINE = '''
def backward_order(roots):
    return tl.autograd.engine.backward_order(roots)
'''

_ACCUMULATE_FROM_ENGINE = '''
def accumulate(total, grad):
    return tl.autograd.engine.accumulate(total, grad)
'''

_MATMUL_BACKWARD_FROM_ENGINE = '''
from tinygrad_lab.ops.linalg import Matmul

def matmul_backward(ctx, grad_output):
    return Matmul.backward(ctx, grad_output)
'''

_MATMUL_BACKWARD_ASKS_AUTOGRAD = '''
def matmul_backward(ctx, grad_output):
    a, b = ctx.saved_tensors
    with tl.enable_grad():
        a2, b2 = a.detach().requires_grad_(), b.detach().requires_grad_()
        return tl.autograd.grad(a2 @ b2, (a2, b2), grad_output)
'''

_SGD_STEP_FROM_LIBRARY = '''
def sgd_step(optimizer, closure=None):
    return seams.reference("SGD.step")(optimizer, closure)
'''

_ADAM_STEP_FROM_ADAMW = '''
def adam_step(optimizer, closure=None):
    return tl.optim.AdamW.step(optimizer, closure)
'''

_FETCH_BATCH_COLLATES = '''
def fetch_batch(dataset, indices, collate_fn):
    return collate_fn([dataset[i] for i in indices])
'''

_BATCHES_FROM_LIBRARY = '''
class EpochBatches:
    def __init__(self, n, batch_size, shuffle=False, seed=0, drop_last=False):
        data = range(n)
        self.generator = tl.utils.data.Generator().manual_seed(seed)
        order = tl.utils.data.RandomSampler(data, generator=self.generator) if shuffle else \\
            tl.utils.data.SequentialSampler(data)
        self.batches = tl.utils.data.BatchSampler(order, batch_size, drop_last)

    def __len__(self):
        return len(self.batches)

    def __iter__(self):
        return iter(self.batches)
'''

_IM2COL_FROM_ENGINE = '''
from tinygrad_lab.ops.conv import im2col as engine_im2col

def im2col(x, geo):
    return engine_im2col(x, geo).copy()
'''

_LAYER_NORM_SUBCLASS = '''
class LayerNorm(tl.nn.LayerNorm):
    pass
'''

_LAYER_NORM_FUNCTIONAL = '''
class LayerNorm(tl.nn.Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.weight = tl.nn.Parameter(tl.ones(*self.normalized_shape)) if elementwise_affine else None
        self.bias = tl.nn.Parameter(tl.zeros(*self.normalized_shape)) if elementwise_affine else None

    def forward(self, x):
        return tl.nn.functional.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
'''

_TRAIN_EPOCH_FAKED = '''
def train_epoch(model, loader, loss_fn, optimizer):
    return 0.1  # a plausible loss, no training
'''

_EVALUATE_FAKED = '''
def evaluate(model, loader):
    return 0.97
'''

GAMED.update({
    "build_01_numerical_gradients": {
        "the library's gradcheck": {"numerical_grad": _NUMERICAL_GRAD_FROM_GRADCHECK,
                                    "grad_check": _GRAD_CHECK_IS_GRADCHECK},
    },
    "build_02_function": {
        "backward asks autograd": {"sigmoid": _SIGMOID_ASKS_AUTOGRAD},
        "forward calls the library's sigmoid": {"sigmoid": _SIGMOID_FROM_LIBRARY},
    },
    "build_03_unbroadcast": {
        "imports the engine's sum_to": {"unbroadcast": _UNBROADCAST_IMPORTED},
        "seams.reference": {"unbroadcast": _UNBROADCAST_REFERENCE},
    },
    "build_04_backward_walk": {
        "the engine's pieces": {"backward_order": _ORDER_FROM_ENGINE, "accumulate": _ACCUMULATE_FROM_ENGINE},
    },
    "build_05_matmul_backward": {
        "the engine's backward": {"matmul_backward": _MATMUL_BACKWARD_FROM_ENGINE},
        "asks autograd": {"matmul_backward": _MATMUL_BACKWARD_ASKS_AUTOGRAD},
    },
    "build_06_optimizers": {
        "the library's steps": {"sgd_step": _SGD_STEP_FROM_LIBRARY, "adam_step": _ADAM_STEP_FROM_ADAMW},
    },
    "build_07_dataloader": {
        "the library's batching": {"fetch_batch": _FETCH_BATCH_COLLATES, "epoch_batches": _BATCHES_FROM_LIBRARY},
    },
    "build_08_conv_im2col": {
        "the engine's im2col": {"im2col": _IM2COL_FROM_ENGINE},
    },
    "build_09_layernorm": {
        "subclasses nn.LayerNorm": {"layer_norm": _LAYER_NORM_SUBCLASS},
        "calls functional.layer_norm": {"layer_norm": _LAYER_NORM_FUNCTIONAL},
    },
    "build_10_training_loop": {
        "made-up numbers": {"train_epoch": _TRAIN_EPOCH_FAKED, "evaluate": _EVALUATE_FAKED},
    },
})


# ---------------------------------------------------------------- the lessons' exercises 07-14 (lessons.py)

_LOSS_GRADIENT_BY_BACKWARD = '''
def loss_gradient(w, x, y):
    w = w.detach().requires_grad_()
    ((x @ w - y) ** 2).mean().backward()
    return w.grad
'''

_UNROLL_IN_NUMPY = '''
import numpy as np

def unroll(cell, h0, xs):
    h = h0.detach()
    for x in xs:
        h = cell(h, x).detach()  # the right values, none of the graph
    return h if xs else h0
'''

_SETTLE_IN_NUMPY = '''
def run_until_settled(cell, h, x, tol, max_steps=100):
    h = h.detach()
    for step in range(1, max_steps + 1):
        new = cell(h, x).detach()
        change = (new - h).abs().max().item()
        h = new
        if change < tol:
            break
    return h, step
'''

_RNN_FROM_LIBRARY = '''
def rnn(x, h0, W_ih, W_hh, b_ih, b_hh):
    layer = tl.nn.RNN(W_ih.shape[1], W_ih.shape[0]).double()
    with tl.no_grad():
        for mine, given in zip((layer.weight_ih_l0, layer.weight_hh_l0, layer.bias_ih_l0, layer.bias_hh_l0),
                               (W_ih, W_hh, b_ih, b_hh)):
            mine.copy_(given)
    out, h = layer(x, h0.unsqueeze(0))
    return out, h[0]
'''

_CHECKPOINT_WHOLE_OBJECTS = '''
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    tl.save({"model": model, "optimizer": optimizer, "scheduler": scheduler, "epoch": epoch}, path)

def load_checkpoint(path, model, optimizer, scheduler):
    saved = tl.load(path, weights_only=False)
    model.load_state_dict(saved["model"].state_dict())
    optimizer.load_state_dict(saved["optimizer"].state_dict())
    scheduler.load_state_dict(saved["scheduler"].state_dict())
    return saved["epoch"]
'''

_DATA_PARALLEL_WHOLE_BATCH = '''
def data_parallel_grads(model, X, y, world_size):
    tl.nn.functional.cross_entropy(model(X), y).backward()  # one worker with the whole batch
'''

_LOGGING_MADE_UP = '''
def train_and_log(writer, model, optimizer, X, y, steps):
    for step in range(steps):
        writer.add_scalar("loss", 1.0 / (step + 1), step)
        writer.add_scalar("grad_norm", 0.5 / (step + 1), step)
'''

_TIMING_WALL_CLOCK = '''
def time_per_call(fn, synchronize, repeats=3, clock=time.perf_counter):
    fn()
    synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    synchronize()
    return (time.perf_counter() - start) / repeats
'''

_ATTENTION_IN_NUMPY = '''
def scaled_dot_product_attention(q, k, v, mask=None):
    qa, ka, va = q.detach().numpy(), k.detach().numpy(), v.detach().numpy()
    scores = qa @ np.swapaxes(ka, -1, -2) / math.sqrt(qa.shape[-1])
    if mask is not None:
        scores = np.where(mask.numpy(), scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return tl.tensor(weights / weights.sum(-1, keepdims=True) @ va, requires_grad=True)
'''

GAMED.update({
    "07_gradient_by_hand": {"the engine's backward": {"loss_gradient": _LOSS_GRADIENT_BY_BACKWARD}},
    "08_control_flow": {"right values, detached": {"unroll": _UNROLL_IN_NUMPY,
                                                   "run_until_settled": _SETTLE_IN_NUMPY}},
    "09_rnn_layer": {"the library's nn.RNN": {"rnn": _RNN_FROM_LIBRARY}},
    "10_resume_training": {"pickles the whole objects": {"checkpoint": _CHECKPOINT_WHOLE_OBJECTS}},
    "11_data_parallel_gradients": {"one worker, the whole batch": {"data_parallel_grads": _DATA_PARALLEL_WHOLE_BATCH}},
    "12_tensorboard_logging": {"made-up numbers": {"train_and_log": _LOGGING_MADE_UP}},
    "13_timing_async_work": {"the wall clock, not the device's": {"time_per_call": _TIMING_WALL_CLOCK}},
    "14_attention": {"computed in NumPy": {"attention": _ATTENTION_IN_NUMPY}},
})
