"""Checks of the lessons' small exercises 07-14 (notebooks/exercises/NN_*.ipynb): one for each lesson
that had none (the map is notebooks/COURSE.md).

As in checks.py: the truth is independent (NumPy, finite differences, the check's own reference run),
the inputs are the check's own beyond the notebook's, the library's implementation is refused where
the exercise is to write it, a wrong answer gets a HINT and a blank one (NotImplementedError) a hint
of where to start (build.py's `_build_check`).
"""
from __future__ import annotations

import copy
import os
import tempfile
from collections.abc import Callable

import numpy as np

from .. import creation, nn, optim
from ..autograd import BackwardStep
from ..random import manual_seed
from ..serialization import load
from ..tensor import Tensor
from .build import _build_check, _call, _float64, _refused
from .checks import _close, _fd_vjp, _fmt, _hint, _LibraryUsed, _np, _switched_off, _watching

def _backward_or_hint(out: Tensor, g: np.ndarray, where: str) -> None:
    """Sends g back from out, or says that out was cut off from the graph (no backward could reach the inputs)."""
    if not out.requires_grad:
        raise _hint(f"{where}: the result is cut off from the graph (it needs no gradient)",
                    "tensor ops only: no .detach(), .numpy(), .item() or tl.tensor(...) on the way")
    (out * creation.tensor(g)).sum().backward()


# ================================================================ 07 (lesson 00): a gradient by hand

_LSQ_SHAPES = ((1, 1), (4, 1), (5, 2), (9, 3), (20, 4))  # (n samples, d features), smallest first


@_build_check("loss_gradient", "L is the mean over the n samples of (x_i · w - y_i)²: differentiate one sample's "
                               "term with the chain rule, then average; in matrix form it is one product with x")
def check_loss_gradient(loss_gradient: Callable, seed: int = 0) -> None:
    """`loss_gradient(w, x, y)` is the gradient of L = mean((x @ w - y)²) with respect to w (finite
    differences are the truth), for data of the check's own, computed from a formula: no backward pass."""
    rng = np.random.default_rng(seed)
    for n, d in _LSQ_SHAPES:
        w, x, y = (_float64(rng, s, grad=False) for s in ((d,), (n, d), (n,)))
        with _watching() as seen:
            got = _call("loss_gradient", loss_gradient, w, x, y)
        if any(isinstance(e, BackwardStep) for e in seen):
            raise _hint("loss_gradient runs a backward pass (.backward() or autograd.grad): the engine is computing "
                        "the gradient, not your formula", "write dL/dw with tensor ops: the residuals x @ w - y, a "
                                                          "product with x, a factor from the square and the mean")
        want = _fd_vjp(lambda w: ((x @ w - y) ** 2).mean(), [w], np.ones(()))[0]
        _judge_gradient(got, want, n, d)


def _judge_gradient(got, want: np.ndarray, n: int, d: int) -> None:
    where = f"for {n} samples of {d} features"
    if not isinstance(got, Tensor) or tuple(got.shape) != want.shape:
        shown = list(got.shape) if isinstance(got, Tensor) else type(got).__name__
        raise _hint(f"{where}, loss_gradient returned {shown}, expected a tensor of w's shape {list(want.shape)}",
                    "one number per weight: (x @ w - y) has one residual per sample; which product with x turns "
                    "n residuals into d numbers?")
    if _close(got, want, rtol=1e-6, atol=1e-9):
        return
    what = f"{where}: got {_fmt(got)}, the gradient is {_fmt(want)}"
    for factor, look in ((0.5, "the derivative of a square u² is 2u: a factor 2 is missing"),
                         (n, "the loss is a MEAN over the samples: divide by n"),
                         (-1.0, "the sign is flipped: the residual is x @ w - y")):
        if _close(got, factor * want, rtol=1e-6, atol=1e-9):
            raise _hint(what, look)
    raise _hint(what, "for one sample, d/dw (x_i · w - y_i)² = 2 (x_i · w - y_i) x_i; average that over the samples")


# ================================================================ 08 (lesson 04): control flow in the graph

def _make_cell(rng: np.random.Generator, h: int) -> tuple:
    """A contracting recurrent cell h' = tanh(h @ W + x @ U), its weights (float64, requiring grad)."""
    W = _float64(rng, (h, h), -0.35, 0.35)
    U = _float64(rng, (2, h), -1.0, 1.0)
    return (lambda hid, x: (hid @ W + x @ U).tanh()), W, U


def _np_unroll(W, U, h0, xs) -> np.ndarray:
    h = h0
    for x in xs:
        h = np.tanh(h @ W + x @ U)
    return h


@_build_check("unroll", "start from h0 and apply cell once per input, in a Python loop: h = cell(h, x)")
def check_unroll(unroll: Callable, seed: int = 0) -> None:
    """`unroll(cell, h0, xs)` applies `cell` once per element of the list `xs` (any length, 0 included)
    and returns the last hidden state, with the gradients finite differences give."""
    rng = np.random.default_rng(seed)
    for length in (0, 1, 3, 7):
        cell, W, U = _make_cell(rng, 3)
        h0 = _float64(rng, (2, 3))
        xs = [_float64(rng, (2, 2), grad=False) for _ in range(length)]
        got = _call("unroll", unroll, cell, h0, xs)
        want = _np_unroll(_np(W), _np(U), _np(h0), [_np(x) for x in xs])
        if not isinstance(got, Tensor) or not _close(got, want):
            raise _hint(f"for a sequence of {length} inputs, unroll returned "
                        f"{_fmt(got) if isinstance(got, Tensor) else type(got).__name__}, expected {_fmt(want)}",
                        "one cell per input, as many as the list has (none for an empty list: h0 itself)")
        if length:
            _judge_loop_grads(f"a sequence of {length} inputs", got, [h0, W],
                              lambda h0, W: _tensor_unroll(W, U, h0, xs))


def _judge_loop_grads(where: str, out: Tensor, leaves: list, fn: Callable) -> None:
    g = np.random.default_rng(7).standard_normal(tuple(out.shape))
    _backward_or_hint(out, g, f"for {where}")
    for name, t, want in zip(("h0", "W"), leaves, _fd_vjp(fn, leaves, g)):
        if t.grad is None or not _close(t.grad, want, rtol=1e-5, atol=1e-7):
            raise _hint(f"for {where}, the gradient of {name} is wrong", "keep every step in the graph: tensor ops "
                                                                         "only, no .detach() or .numpy() in the loop")


@_build_check("run_until_settled", "loop: h_new = cell(h, x); stop when the largest change (h_new - h).abs().max() "
                                   "is below tol (or after max_steps); count the steps")
def check_run_until_settled(run_until_settled: Callable, seed: int = 1) -> None:
    """`run_until_settled(cell, h, x, tol, max_steps)` applies `cell(h, x)` until the largest change of h is
    below tol (or max_steps applications) and returns (h, the number of applications), NumPy's answer for
    cells and tolerances of the check's own; the gradients flow through exactly the steps that ran."""
    rng = np.random.default_rng(seed)
    for tol, max_steps in ((1e-1, 100), (1e-4, 100), (1e-8, 100), (1e-8, 3)):
        cell, W, U = _make_cell(rng, 4)
        h0, x = _float64(rng, (1, 4)), _float64(rng, (1, 2), grad=False)
        want_h, want_steps = _np_settle(_np(W), _np(U), _np(h0), _np(x), tol, max_steps)
        got = _call("run_until_settled", run_until_settled, cell, h0, x, tol, max_steps)
        if not isinstance(got, tuple) or len(got) != 2:
            raise _hint(f"run_until_settled returned {type(got).__name__}", "return a pair: (h, steps)")
        h, steps = got
        if steps != want_steps or not isinstance(h, Tensor) or not _close(h, want_h):
            raise _hint(f"tol={tol}, max_steps={max_steps}: returned {steps} steps, expected {want_steps}",
                        "count every application of cell; stop as soon as the change is below tol, and never run "
                        "more than max_steps")
        xs = [x] * want_steps
        _judge_loop_grads(f"tol={tol} ({want_steps} steps)", h, [h0, W], lambda h0, W: _tensor_unroll(W, U, h0, xs))


def _np_settle(W, U, h, x, tol: float, max_steps: int) -> tuple:
    for step in range(1, max_steps + 1):
        new = np.tanh(h @ W + x @ U)
        if np.abs(new - h).max() < tol:
            return new, step
        h = new
    return h, max_steps


def _tensor_unroll(W, U, h, xs):
    for x in xs:
        h = (h @ W + x @ U).tanh()
    return h


# ================================================================ 09 (lesson 09): an RNN layer

def _np_rnn(x, h0, W_ih, W_hh, b_ih, b_hh) -> tuple:
    h, out = h0, []
    for x_t in x:
        h = np.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        out.append(h)
    return np.stack(out), h


_RNN_SIZES = ((1, 1, 1, 1), (3, 2, 4, 5), (6, 3, 2, 3))  # (T, N, input size, hidden size)


@_build_check("rnn", "h = h0; for each time step t: h = tanh(x[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh); collect each "
                     "h, and stack them along a new first dim")
def check_rnn(rnn: Callable, seed: int = 0) -> None:
    """`rnn(x, h0, W_ih, W_hh, b_ih, b_hh)` returns (outputs (T, N, H), the last hidden state (N, H)) as
    nn.RNN's formula (NumPy's answer), with its gradients, for sizes of the check's own; the library's RNN
    layers are switched off meanwhile."""
    rng = np.random.default_rng(seed)
    switched = {k.forward.__qualname__: k.forward for k in (nn.RNN, nn.RNNCell, nn.LSTM, nn.GRU)}  # shared: once
    for T, N, I, H in _RNN_SIZES:
        args = [_float64(rng, s, -0.8, 0.8) for s in ((T, N, I), (N, H), (H, I), (H, H), (H,), (H,))]
        with _switched_off(switched) as called:
            try:
                got = _call("rnn", rnn, *args)
            except _LibraryUsed:
                got = None
        _refused(called, "write the recurrence yourself: a loop over the time steps")
        _judge_rnn(got, args, (T, N, I, H))


def _judge_rnn(got, args: list, sizes: tuple) -> None:
    T, N, I, H = sizes
    where = f"for T={T} steps, a batch of {N}, {I} inputs and {H} hidden units"
    want_out, want_h = _np_rnn(*[_np(a) for a in args])
    if not isinstance(got, tuple) or len(got) != 2 or not all(isinstance(t, Tensor) for t in got):
        raise _hint(f"{where}: rnn returned {type(got).__name__}", "return (outputs, h_last), two tensors")
    out, h = got
    if tuple(out.shape) != want_out.shape or tuple(h.shape) != want_h.shape:
        raise _hint(f"{where}: shapes {list(out.shape)} and {list(h.shape)}, expected {list(want_out.shape)} and "
                    f"{list(want_h.shape)}", "outputs: every step's h, stacked along a new first dim (tl.stack)")
    if not _close(out, want_out) or not _close(h, want_h):
        look = ("x @ W_ih.T: the weights are (hidden, input) as in nn.RNN" if I != H else
                "h_t = tanh(x_t W_ihᵀ + b_ih + h_(t-1) W_hhᵀ + b_hh), with the previous step's h")
        raise _hint(f"{where}: the values are wrong:\n got {_fmt(out)}\nwant {_fmt(want_out)}", look)
    g = np.random.default_rng(3).standard_normal(want_out.shape)
    _backward_or_hint(out, g, where)
    for name, t, want in zip(("x", "h0", "W_ih", "W_hh", "b_ih", "b_hh"), args,
                             _fd_vjp(lambda *a: creation.tensor(_np_rnn(*[_np(v) for v in a])[0]), args, g)):
        if t.grad is None or not _close(t.grad, want, rtol=1e-5, atol=1e-7):
            raise _hint(f"{where}: the gradient of {name} is wrong", "tensor ops only: no .numpy(), .item() or "
                                                                     "tl.tensor(...) on the way")


# ================================================================ 10 (lesson 10): a checkpoint to resume from

def _resume_setup(seed: int) -> tuple:
    manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
    opt = optim.Adam(model.parameters(), lr=0.05)
    return model, opt, optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)


def _resume_epoch(model, opt, sched, epoch: int) -> None:
    rng = np.random.default_rng(100 + epoch)  # each epoch's data: the same in every run
    X = creation.tensor(rng.standard_normal((16, 3)), dtype="float32")
    y = creation.tensor(rng.integers(0, 2, 16))
    opt.zero_grad()
    nn.functional.cross_entropy(model(X), y).backward()
    opt.step()
    sched.step()


@_build_check("save_checkpoint / load_checkpoint", "save a dict of the model's, the optimizer's and the scheduler's "
                                                   "state_dict() and the epoch with tl.save; load it with tl.load and "
                                                   "give each object its state back with load_state_dict")
def check_resume(save_checkpoint: Callable, load_checkpoint: Callable) -> None:
    """Training for 6 epochs, or for 3, `save_checkpoint(path, model, optimizer, scheduler, epoch)`, then
    fresh objects given their state by `load_checkpoint(path, model, optimizer, scheduler)` (which returns
    the epoch to continue from) and 3 more epochs, ends with the same parameters, bit for bit, as never
    stopping (Adam's moments and the learning-rate schedule included); the file is read back by
    tl.load (a file of the course's format) and each checkpoint holds its own state."""
    model, opt, sched = _resume_setup(0)
    for epoch in range(6):
        _resume_epoch(model, opt, sched, epoch)
    want = [_np(p).copy() for p in model.parameters()]
    with tempfile.TemporaryDirectory() as folder:
        early, late = os.path.join(folder, "early.tl"), os.path.join(folder, "late.tl")
        model, opt, sched = _resume_setup(0)
        for epoch in range(3):
            _resume_epoch(model, opt, sched, epoch)
        _call("save_checkpoint", save_checkpoint, early, model, opt, sched, 3)
        _resume_epoch(model, opt, sched, 3)  # the run goes on: a later checkpoint, the objects changed
        _call("save_checkpoint", save_checkpoint, late, model, opt, sched, 4)
        _judge_file(early)
        fresh = _resume_setup(1)  # other weights, a new optimizer and scheduler
        start = _call("load_checkpoint", load_checkpoint, early, *fresh)
        if start != 3:
            raise _hint(f"load_checkpoint of a checkpoint saved after 3 epochs returned {start!r}",
                        "return the epoch stored in the checkpoint: training continues from there")
        for epoch in range(start, 6):
            _resume_epoch(*fresh, epoch)
    _judge_resumed(fresh, want)


def _judge_file(path: str) -> None:
    if not os.path.isfile(path):
        raise _hint(f"save_checkpoint wrote no file at {path}", "write the checkpoint to the path given, with tl.save")
    try:
        load(path)
    except Exception as e:
        raise _hint(f"tl.load cannot read the checkpoint ({type(e).__name__}: {e})",
                    "save with tl.save: a dict of state dicts and plain numbers (no pickle, no whole objects)") from e


def _judge_resumed(fresh: tuple, want: list) -> None:
    model, opt, sched = fresh
    if opt.param_groups[0]["lr"] != 0.05 * 0.5 ** 3:
        raise _hint(f"after resuming, the learning rate is {opt.param_groups[0]['lr']}, the schedule says "
                    f"{0.05 * 0.5 ** 3}", "the learning rate lives in the optimizer's param_groups "
                                          "(optimizer.state_dict()) and the schedule's position in "
                                          "scheduler.state_dict(): both belong in the checkpoint")
    if not all(np.array_equal(_np(p), w) for p, w in zip(model.parameters(), want)):
        raise _hint("the resumed run ends with other parameters than the run that never stopped",
                    "restore the model AND the optimizer (Adam keeps running averages of the gradients: "
                    "optimizer.state_dict()), from the file you are given, not from objects in memory")


# ================================================================ 11 (lesson 13): data-parallel gradients

@_build_check("data_parallel_grads", "split X and y into world_size shards (np.array_split's sizes); for each shard, "
                                     "a copy of the model computes the gradient of the mean loss on its shard; "
                                     "combine the copies' gradients into model's .grad")
def check_data_parallel(data_parallel_grads: Callable, seed: int = 0) -> None:
    """`data_parallel_grads(model, X, y, world_size)` leaves in each parameter's .grad the gradient of the
    mean cross-entropy over the whole batch (the check's own full-batch run is the truth), computed from
    world_size shards of the batch (shards of unequal size included), none larger than
    ceil(n / world_size): the model never sees the whole batch at once."""
    rng = np.random.default_rng(seed)
    for n, world in ((4, 1), (8, 2), (10, 4), (9, 3), (7, 3)):
        manual_seed(seed + n)
        model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 3)).double()
        X = creation.tensor(rng.standard_normal((n, 3)), dtype="float64")
        y = creation.tensor(rng.integers(0, 3, n))
        reference = copy.deepcopy(model)
        nn.functional.cross_entropy(reference(X), y).backward()
        largest = _largest_batch_seen(data_parallel_grads, model, X, y, world)
        limit = -(-n // world)
        if largest > limit:
            raise _hint(f"with {n} samples on {world} workers, a model saw a batch of {largest}",
                        f"each worker sees only its shard (at most {limit} samples here)")
        _judge_parallel_grads(model, reference, n, world)


def _largest_batch_seen(fn: Callable, model, X, y, world: int) -> int:
    seen: list[int] = []
    original = nn.Sequential.forward

    def watched(self, x):
        seen.append(len(x))
        return original(self, x)
    nn.Sequential.forward = watched  # copies of the model (deepcopy) are watched too
    try:
        _call("data_parallel_grads", fn, model, X, y, world)
    finally:
        nn.Sequential.forward = original
    return max(seen, default=0)


def _judge_parallel_grads(model, reference, n: int, world: int) -> None:
    sizes = [len(s) for s in np.array_split(np.arange(n), world)]
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        want = _np(q.grad)
        if p.grad is None:
            raise _hint(f"after data_parallel_grads, {name}.grad is None", "write the combined gradient into each "
                                                                          "parameter of `model` (p.grad = ...)")
        if _close(p.grad, want, rtol=1e-6, atol=1e-9):
            continue
        where = f"{n} samples on {world} workers (shards of {sizes}): {name}.grad is wrong"
        if _close(p.grad, want * world, rtol=1e-6, atol=1e-9):
            raise _hint(where, "the workers' gradients were summed: all-reduce then divide (average)")
        raise _hint(where, "each worker's loss is the MEAN over its shard; with shards of different sizes, a plain "
                           "average of the workers' gradients is not the full batch's: weight each by its shard's size")


# ================================================================ 12 (lesson 14): logging to TensorBoard

def _logged_run(seed: int, steps: int) -> tuple:
    """The check's own run: (losses, gradient norms) of `steps` steps on the check's model and data."""
    model, opt, X, y = _logging_setup(seed)
    losses, norms = [], []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(X), y)
        loss.backward()
        losses.append(loss.item())
        norms.append(float(np.sqrt(sum((_np(p.grad).astype(np.float64) ** 2).sum() for p in model.parameters()))))
        opt.step()
    return losses, norms


def _logging_setup(seed: int) -> tuple:
    manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    X = creation.tensor(rng.standard_normal((32, 4)), dtype="float32")
    return model, optim.SGD(model.parameters(), lr=0.2), X, creation.tensor(rng.integers(0, 3, 32))


@_build_check("train_and_log", "each step: zero the gradients, loss, backward; writer.add_scalar('loss', "
                               "loss.item(), step); the gradient norm likewise under 'grad_norm'; then the "
                               "optimizer's step")
def check_tensorboard_logging(train_and_log: Callable, seed: int = 3, steps: int = 12) -> None:
    """`train_and_log(writer, model, optimizer, X, y, steps)` trains for `steps` steps and writes, at
    global_step 0, 1, ..., the step's loss under 'loss' and the L2 norm of all the parameters' gradients
    (before the step) under 'grad_norm': TensorBoard's own reader finds the check's own run's numbers."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from ..utils.tensorboard import SummaryWriter
    want_loss, want_norm = _logged_run(seed, steps)
    model, opt, X, y = _logging_setup(seed)
    with tempfile.TemporaryDirectory() as folder:
        with SummaryWriter(folder) as writer:
            _call("train_and_log", train_and_log, writer, model, opt, X, y, steps)
        acc = EventAccumulator(folder, size_guidance={"scalars": 0})
        acc.Reload()
        tags = acc.Tags()["scalars"]
        for tag, want in (("loss", want_loss), ("grad_norm", want_norm)):
            if tag not in tags:
                raise _hint(f"nothing was logged under {tag!r} (the tags: {sorted(tags)})",
                            f"writer.add_scalar({tag!r}, value, step) at every step")
            _judge_logged(tag, [(e.step, e.value) for e in acc.Scalars(tag)], want)


def _judge_logged(tag: str, got: list, want: list) -> None:
    steps = [s for s, _ in got]
    if steps != list(range(len(want))):
        raise _hint(f"{tag!r} was logged at steps {steps[:8]}{' ...' if len(steps) > 8 else ''}, expected 0, 1, ..., "
                    f"{len(want) - 1}", "pass global_step=step (counting from 0), once per step")
    values = np.array([v for _, v in got])
    if np.allclose(values, want, rtol=1e-5, atol=1e-6):
        return
    k = int(np.argmax(~np.isclose(values, want, rtol=1e-5, atol=1e-6)))
    look = {"loss": "log loss.item() of the step's own loss, every step",
            "grad_norm": "the square root of the sum of every gradient element squared, over all parameters, "
                         "after backward and before optimizer.step() (and before zero_grad)"}[tag]
    raise _hint(f"{tag!r} at step {k} is {values[k]:.6g}, the run's is {want[k]:.6g}", look)


# ================================================================ 13 (lesson 15): timing asynchronous work

class _VirtualDevice:
    """A device whose launches return at once and whose work takes `work` seconds of a virtual clock:
    the clock moves by the launch cost at each launch, and by the queued work at each synchronize."""

    def __init__(self, work: float, launch: float = 1e-5):
        self.now, self.queued, self.work, self.launch_cost = 0.0, 0.0, work, launch
        self.launches = self.syncs = 0

    def clock(self) -> float:
        return self.now

    def run(self) -> None:
        self.launches += 1
        self.now += self.launch_cost
        self.queued += self.work

    def synchronize(self) -> None:
        self.syncs += 1
        self.now += self.queued
        self.queued = 0.0


@_build_check("time_per_call", "synchronize after a warm-up call, read clock(), call fn repeats times, synchronize "
                               "again, read clock(); return the time per call")
def check_time_per_call(time_per_call: Callable) -> None:
    """`time_per_call(fn, synchronize, repeats, clock)` measures the work of fn per call on an asynchronous
    device (the check's virtual one, whose clock it must use): a warm-up call first, whose work is not
    counted, synchronize before each reading of the clock, the total divided by repeats."""
    for work, repeats in ((0.05, 1), (0.02, 3), (0.1, 4)):
        dev = _VirtualDevice(work)
        reads: list = []

        def clock():
            reads.append(dev.now)
            return dev.now
        got = _call("time_per_call", time_per_call, dev.run, dev.synchronize, repeats, clock)
        where = f"{repeats} call(s) of {work * 1e3:g} ms of work each"
        if dev.launches != repeats + 1:
            raise _hint(f"{where}: fn was called {dev.launches} times", "one warm-up call, then `repeats` timed calls")
        if not isinstance(got, (float, int)) or isinstance(got, bool):
            raise _hint(f"{where}: returned {type(got).__name__}", "return the seconds per call, a float")
        per_call = work + dev.launch_cost
        if abs(got - per_call) <= 1e-9:
            continue
        look = ("use the clock you are given, clock(): it is the device's" if len(reads) < 2 else
                "that is the launch only: the device works after fn returns, so synchronize before reading the clock "
                "at the end" if got < work / 2 else
                "the warm-up's work was still running when the clock started: synchronize after the warm-up call"
                if abs(got - (work * (repeats + 1) / repeats + dev.launch_cost)) < 1e-9 else
                "divide the total by the number of timed calls" if abs(got - per_call * repeats) < 1e-9 else
                "clock() before the timed calls, after them (and after synchronize), difference over repeats")

        raise _hint(f"{where}: measured {got:.6g} s per call, the work takes {per_call:.6g} s", look)


# ================================================================ 14 (lesson 16): attention

def _np_attention(q, k, v, mask) -> np.ndarray:
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    return scores / scores.sum(-1, keepdims=True) @ v


_ATTENTION_CASES = (  # (q's shape, the number of keys, v's width, a mask?)
    ((1, 1), 1, 1, False), ((3, 4), 5, 2, False), ((2, 3, 4), 3, 4, False), ((2, 2, 4, 8), 6, 3, False),
    ((4, 4), 4, 4, True), ((2, 5, 3), 5, 2, True))


@_build_check("scaled_dot_product_attention", "scores = q @ k.mT / sqrt(d) (d: the size of q's last dim); where mask "
                                              "is False, a score of -inf; softmax over the keys (the last dim); "
                                              "then @ v")
def check_attention(attention: Callable, seed: int = 0) -> None:
    """`scaled_dot_product_attention(q, k, v, mask=None)` gives softmax(q kᵀ / √d, masked) v (NumPy's
    answer), batch and head dims included, a boolean mask (True: may attend) included, with its gradients;
    built from matmul and softmax, not the library's attention."""
    rng = np.random.default_rng(seed)
    F = nn.functional
    switched = {f"functional.{name}": getattr(F, name) for name in ("scaled_dot_product_attention",
                                                                     "multi_head_attention_forward") if hasattr(F, name)}
    if hasattr(nn, "MultiheadAttention"):
        switched["MultiheadAttention.forward"] = nn.MultiheadAttention.forward
    for qs, n_keys, width, masked in _ATTENTION_CASES:
        q = _float64(rng, qs)
        k = _float64(rng, qs[:-2] + (n_keys, qs[-1]))
        v = _float64(rng, qs[:-2] + (n_keys, width))
        mask = np.tril(np.ones((qs[-2], n_keys), bool)) if masked else None
        with _switched_off(switched) as called:
            try:
                got = _call("scaled_dot_product_attention", attention, q, k, v,
                            None if mask is None else creation.tensor(mask))
            except _LibraryUsed:
                got = None
        _refused(called, "compute it yourself: two matmuls and a softmax")
        _judge_attention(got, q, k, v, mask)


def _judge_attention(got, q, k, v, mask) -> None:
    qa, ka, va = _np(q), _np(k), _np(v)
    want = _np_attention(qa, ka, va, mask)
    where = f"q {list(qa.shape)}, k {list(ka.shape)}, v {list(va.shape)}{', masked' if mask is not None else ''}"
    if not isinstance(got, Tensor) or tuple(got.shape) != want.shape:
        shown = list(got.shape) if isinstance(got, Tensor) else type(got).__name__
        raise _hint(f"{where}: got {shown}, expected shape {list(want.shape)}", "one row of v's width per query")
    if not _close(got, want, rtol=1e-6, atol=1e-9):
        variants = {"divide the scores by sqrt(d), d = q.shape[-1]": _np_attention(qa * np.sqrt(qa.shape[-1]), ka, va,
                                                                                  mask),
                    "the mask says where a query MAY attend (True): put -inf where it is False":
                        _np_attention(qa, ka, va, ~mask) if mask is not None else None}
        for look, variant in variants.items():
            if variant is not None and np.allclose(_np(got), variant, rtol=1e-6, atol=1e-9, equal_nan=True):
                raise _hint(f"{where}: the values are wrong", look)
        raise _hint(f"{where}: the values are wrong:\n got {_fmt(got)}\nwant {_fmt(want)}",
                    "softmax over the LAST dim (each query's weights over the keys sum to 1), then multiply by v")
    g = np.random.default_rng(1).standard_normal(want.shape)
    _backward_or_hint(got, g, where)
    truths = _fd_vjp(lambda a, b, c: creation.tensor(_np_attention(_np(a), _np(b), _np(c), mask)), [q, k, v], g)
    for name, t, truth in zip("qkv", (q, k, v), truths):
        if t.grad is None or not _close(t.grad, truth, rtol=1e-5, atol=1e-7):
            raise _hint(f"{where}: the gradient of {name} is wrong", "tensor ops only (no .numpy() on the way); for "
                                                                     "the mask, use masked_fill or where, not "
                                                                     "in-place writes to a tensor that needs a gradient")
