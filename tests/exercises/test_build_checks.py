"""The build-it track's checks (tinygrad_lab.exercises.build), and the generic part for the lessons'
exercises 07-14 (lessons.py; their typical mistakes are in test_lesson_checks.py): each passes the notebook's own solution,
fails typical wrong pieces with a HINT that names the mistake, answers a blank piece with a hint of
where to start, and refuses every gaming attempt of gamed.py (the engine's own piece reached in any
way: switched off while the learner's runs). The right pieces are read from the committed notebooks'
solution cells, so what is tested is what the course hands out."""
from __future__ import annotations

from pathlib import Path

import nbformat
import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import exercises, seams
from tinygrad_lab.ops import broadcast

from ..test_seams import learner_order as recursive_order
from ..test_seams import wrong_order  # breadth-first
from .gamed import GAMED

pytestmark = pytest.mark.usefixtures("no_leftover_subscribers")
SOURCE = Path(__file__).resolve().parents[2] / "notebooks" / "exercises"
BUILD = sorted(p.stem for p in SOURCE.glob("build_*.ipynb"))
LESSONS = [f"{k:02d}_{name}" for k, name in enumerate(
    ("gradient_by_hand", "control_flow", "rnn_layer", "resume_training", "data_parallel_gradients",
     "tensorboard_logging", "timing_async_work", "attention"), start=7)]
CHECKED = BUILD + LESSONS  # the exercises whose notebook solutions and gaming attempts are run here


def notebook_cells(exercise: str) -> list:
    return nbformat.read(SOURCE / f"{exercise}.ipynb", as_version=4).cells


def pieces(exercise: str, replace: dict | None = None) -> dict:
    """The names the notebook's setup and solution cells define (solution cells replaced by `replace`)."""
    ns: dict = {}
    for cell in notebook_cells(exercise):
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") == "setup" or meta.get("solution"):
            source = (replace or {}).get(meta["grade_id"], cell.source)
            exec(compile(source, f"<{exercise}: {meta['grade_id']}>", "exec"), ns)
    return ns


def graded_cells(exercise: str) -> list[str]:
    return [c.source for c in notebook_cells(exercise)
            if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata["nbgrader"].get("solution")]


def fails_with(check, *args, hint: str) -> str:
    with pytest.raises(AssertionError) as info:
        check(*args)
    message = str(info.value)
    assert "HINT:" in message and hint in message, message
    return message


def test_the_track_has_its_ten_notebooks_and_their_checks_are_exported():
    assert [b[:8] for b in BUILD] == [f"build_{k:02d}" for k in range(1, 11)]
    for name in ("check_numerical_grad", "check_unbroadcast", "check_backward_order", "check_matmul_backward",
                 "check_sgd_step", "check_adam_step", "check_fetch_batch", "check_im2col", "check_layer_norm",
                 "check_train_epoch"):
        assert name in exercises.__all__


@pytest.mark.parametrize("exercise", CHECKED)
def test_the_notebooks_solutions_pass_their_graded_cells(exercise):
    ns = pieces(exercise)
    for source in graded_cells(exercise):
        exec(source, ns)


@pytest.mark.parametrize("exercise", CHECKED)
def test_a_blank_piece_gets_a_hint_of_where_to_start(exercise):
    """nbgrader's student version: each solution's body raises NotImplementedError."""
    blank = {}
    for cell in notebook_cells(exercise):
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            lines, out, inside = cell.source.splitlines(), [], False
            for line in lines:
                if "### BEGIN SOLUTION" in line:
                    inside = True
                    out.append(line.replace("### BEGIN SOLUTION", "raise NotImplementedError()"))
                elif "### END SOLUTION" in line:
                    inside = False
                elif not inside:
                    out.append(line)
            blank[meta["grade_id"]] = "\n".join(out)
    ns = pieces(exercise, blank)
    for source in graded_cells(exercise):
        with pytest.raises(AssertionError) as info:
            exec(source, ns)
        assert "NotImplementedError: it is not written yet\nHINT:" in str(info.value), str(info.value)


@pytest.mark.parametrize("exercise, attempt", [(e, a) for e in CHECKED for a in GAMED[e]])
def test_every_gaming_attempt_is_refused_with_a_hint(exercise, attempt):
    ns = pieces(exercise, GAMED[exercise][attempt])
    for source in graded_cells(exercise):
        with pytest.raises(AssertionError) as info:
            exec(source, ns)
        assert "HINT:" in str(info.value)


def test_the_engine_is_whole_again_after_a_refusal():
    """A switched-off piece gets its code back, even when the learner's code raised."""
    ns = pieces("build_03_unbroadcast", GAMED["build_03_unbroadcast"]["imports the engine's sum_to"])
    with pytest.raises(AssertionError):
        exercises.check_unbroadcast(ns["unbroadcast"])
    x = tl.ones(2, 3, requires_grad=True)
    b = tl.ones(3, requires_grad=True)
    (x + b).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), [2.0, 2.0, 2.0])
    assert broadcast.sum_to(tl.ones(2, 3), (3,)).tolist() == [2.0, 2.0, 2.0]


# ---------------------------------------------------------------- typical mistakes, piece by piece

def test_numerical_gradient_mistakes():
    right = pieces("build_01_numerical_gradients")["numerical_grad"]

    def one_sided(f, x, eps=1e-6):
        g = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            y = x.copy()
            y[i] += eps
            g[i] = (f(y) - f(x)) / eps
        return g

    def not_restored(f, x, eps=1e-6):
        g = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            x[i] += eps
            up = f(x)
            x[i] -= 2 * eps
            g[i] = (up - f(x)) / (2 * eps)
        return g

    fails_with(exercises.check_numerical_grad, one_sided, hint="central difference")
    fails_with(exercises.check_numerical_grad, lambda f, x, eps=1e-6: 2 * right(f, x, eps), hint="2 * eps apart")
    fails_with(exercises.check_numerical_grad, not_restored, hint="put each element back")


def test_gradient_check_mistakes():
    ns = pieces("build_01_numerical_gradients")
    right, numerical_grad = ns["grad_check"], ns["numerical_grad"]

    def reduces_with_sum(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
        out = fn(*inputs)
        for x in inputs:
            x.grad = None
        out.sum().backward()
        values = [x.detach().numpy() for x in inputs]
        for k, x in enumerate(inputs):
            def scalar(v, k=k):
                return fn(*[tl.tensor(v if j == k else values[j], dtype=tl.float64) for j in range(len(inputs))]).sum().item()
            if not np.allclose(x.grad.numpy(), numerical_grad(scalar, values[k].copy(), eps), atol=atol, rtol=rtol):
                return False
        return True

    def first_input_only(fn, inputs, **options):
        return right(lambda *xs: fn(*xs), inputs[:1] + [x.detach() for x in inputs[1:]]) if len(inputs) > 1 else \
            right(fn, inputs)

    fails_with(exercises.check_grad_check, reduces_with_sum, hint="weight the outputs with random numbers")
    fails_with(exercises.check_grad_check, lambda fn, inputs, **k: True, hint="grad_check passed")
    fails_with(exercises.check_grad_check, lambda fn, inputs, **k: False, hint="the engine's is right")
    fails_with(exercises.check_grad_check, lambda fn, inputs, **k: 1, hint="return True when")


def test_sigmoid_that_saves_its_input_is_right_alone_and_wrong_in_the_engine():
    class SavesInput(tl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 1 / (1 + (-x).exp())

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            s = 1 / (1 + (-x).exp())
            return g * s * (1 - s)

    exercises.check_sigmoid_function(SavesInput)
    fails_with(exercises.check_sigmoid_in_engine, SavesInput, hint="its OUTPUT")


def test_unbroadcast_mistakes():
    right = pieces("build_03_unbroadcast")["unbroadcast"]

    def mean(grad, shape):
        while grad.dim() > len(shape):
            grad = grad.mean(0)
        for i, n in enumerate(shape):
            if n == 1 and grad.shape[i] != 1:
                grad = grad.mean(i, keepdim=True)
        return grad

    def leading_only(grad, shape):
        while grad.dim() > len(shape):
            grad = grad.sum(0)
        return grad

    def drops_dims(grad, shape):
        out = right(grad, shape)
        return out.reshape(-1) if out.dim() > 1 else out

    def via_numpy(grad, shape):
        return tl.tensor(broadcast_sum(grad.detach().numpy(), shape), dtype=grad.dtype)

    fails_with(exercises.check_unbroadcast, mean, hint="that is the mean")
    fails_with(exercises.check_unbroadcast, leading_only, hint="keepdim=True")
    fails_with(exercises.check_unbroadcast, drops_dims, hint="expected [1, 3]")
    fails_with(exercises.check_unbroadcast, via_numpy, hint="not connected")


def broadcast_sum(a, shape):
    while a.ndim > len(shape):
        a = a.sum(0)
    return a.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1 and a.shape[i] != 1), keepdims=True)


def test_backward_order_mistakes():
    ns = pieces("build_04_backward_walk")

    def with_duplicates(roots):
        order = ns["backward_order"](roots)
        return order + order[-1:]

    def with_none(roots):
        return ns["backward_order"](roots) + [None]

    fails_with(exercises.check_backward_order, wrong_order, hint="breadth-first is not enough")
    fails_with(exercises.check_backward_order, recursive_order, hint="recursion limit")
    fails_with(exercises.check_backward_order, with_duplicates, hint="more than once")
    fails_with(exercises.check_backward_order, with_none, hint="skip them")
    fails_with(exercises.check_backward_order, lambda roots: list(roots), hint="misses")
    fails_with(exercises.check_accumulate, lambda total, g: g, hint="the last gradient alone")
    fails_with(exercises.check_accumulate, lambda total, g: total.add_(g), hint="in place")


def test_matmul_backward_mistakes():
    unbroadcast = seams.reference("unbroadcast")

    def transposed_b(ctx, g):  # where the shapes let it pass unnoticed: a square b
        a, b = ctx.saved_tensors
        gb = a.mT @ g
        return unbroadcast(g @ b.mT, tuple(a.shape)), unbroadcast(gb.mT if b.shape[-1] == b.shape[-2] else gb,
                                                                   tuple(b.shape))


    def no_batch_sum(ctx, g):
        a, b = ctx.saved_tensors
        return g @ b.mT, a.mT @ g

    def scaled(ctx, g):
        a, b = ctx.saved_tensors
        return unbroadcast(g @ b.mT, tuple(a.shape)), unbroadcast(a.mT @ g, tuple(b.shape)) * 2

    fails_with(exercises.check_matmul_backward, transposed_b, hint="transpose of the right one")
    fails_with(exercises.check_matmul_backward, no_batch_sum, hint="sum its gradient back to b's shape")
    fails_with(exercises.check_matmul_backward, scaled, hint="grad b = aᵀ @ grad_output")


def test_optimizer_step_mistakes():
    ns = pieces("build_06_optimizers")

    def no_momentum(opt, closure=None):
        with tl.no_grad():
            for group in opt.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.sub_(group["lr"] * (p.grad + group["weight_decay"] * p))

    def one_lr(opt, closure=None):
        lr = opt.param_groups[0]["lr"]
        for group in opt.param_groups:
            group["lr"] = lr
        ns["sgd_step"](opt)

    def rebinds(opt, closure=None):
        for group in opt.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p = p - group["lr"] * p.grad  # noqa: F841  (the mistake under test)

    def adam_without_bias_correction(opt, closure=None):
        with tl.no_grad():
            for group in opt.param_groups:
                (b1, b2), eps = group["betas"], group["eps"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = opt.state[p]
                    if not state:
                        state["m"], state["v"] = tl.zeros_like(p), tl.zeros_like(p)
                    g = p.grad + group["weight_decay"] * p
                    state["m"] = b1 * state["m"] + (1 - b1) * g
                    state["v"] = b2 * state["v"] + (1 - b2) * g * g
                    p.sub_(group["lr"] * state["m"] / (state["v"].sqrt() + eps))

    fails_with(exercises.check_sgd_step, no_momentum, hint="the first step is right, a later one is not")
    fails_with(exercises.check_sgd_step, one_lr, hint="group['lr']")
    fails_with(exercises.check_sgd_step, rebinds, hint="did not change")
    fails_with(exercises.check_adam_step, adam_without_bias_correction, hint="already the first step is wrong")


def test_batching_mistakes():
    ns = pieces("build_07_dataloader")

    def cat(dataset, indices, collate_fn):
        samples = [dataset[i] for i in indices]
        return [tl.cat([x for x, _ in samples]), tl.tensor([y for _, y in samples])]

    def sorted_indices(dataset, indices, collate_fn):
        return ns["fetch_batch"](dataset, sorted(indices), collate_fn)

    class SameOrderEachEpoch(ns["EpochBatches"]):
        def __iter__(self):
            self.epoch = 0
            return super().__iter__()

    class NoDropLast(ns["EpochBatches"]):
        def __init__(self, n, batch_size, shuffle=False, seed=0, drop_last=False):
            super().__init__(n, batch_size, shuffle, seed, False)

    fails_with(exercises.check_fetch_batch, cat, hint="NEW first dim")
    fails_with(exercises.check_fetch_batch, sorted_indices, hint="in that order")
    fails_with(exercises.check_batch_sampler, SameOrderEachEpoch, hint="a new order for each one")
    fails_with(exercises.check_batch_sampler, NoDropLast, hint="drop_last")


def test_im2col_mistakes():
    right = pieces("build_08_conv_im2col")["im2col"]

    def swapped(x, geo):
        return right(x, geo).transpose(0, 2, 1, 3, 4, 5).copy()

    def no_padding(x, geo):
        cols = right(x, geo)
        cols[...] = 0 if geo.pt or geo.pl else cols
        return cols

    def nchw(x, geo):
        return right(x, geo).transpose(5, 0, 1, 2, 3, 4).copy()

    fails_with(exercises.check_im2col, swapped, hint="the stride steps between outputs")
    fails_with(exercises.check_im2col, nchw, hint="(C, kh, kw, OH, OW, N)")
    assert "HINT" in fails_with(exercises.check_im2col, no_padding, hint="cols[c=")


def test_layer_norm_mistakes():
    right = pieces("build_09_layernorm")["LayerNorm"]

    class Unbiased(right):
        def forward(self, x):
            dims = tuple(range(x.dim() - len(self.normalized_shape), x.dim()))
            n = int(np.prod(self.normalized_shape))
            centered = x - x.mean(dims, keepdim=True)
            out = centered / ((centered * centered).sum(dims, keepdim=True) / (n - 1) + self.eps).sqrt()
            return out * self.weight + self.bias if self.weight is not None else out

    class EpsOutside(right):
        def forward(self, x):
            dims = tuple(range(x.dim() - len(self.normalized_shape), x.dim()))
            centered = x - x.mean(dims, keepdim=True)
            out = centered / ((centered * centered).mean(dims, keepdim=True).sqrt() + self.eps)
            return out * self.weight + self.bias if self.weight is not None else out

    class RandomInit(right):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            if self.weight is not None:
                self.weight = tl.nn.Parameter(tl.rand(*self.normalized_shape))

    fails_with(exercises.check_layer_norm, Unbiased, hint="biased one")
    fails_with(exercises.check_layer_norm, EpsOutside, hint="eps goes inside the square root")
    fails_with(exercises.check_layer_norm, RandomInit, hint="starts as ones")


def test_training_loop_mistakes():
    ns = pieces("build_10_training_loop")

    def no_zero_grad(model, loader, loss_fn, optimizer):
        model.train()
        total = 0.0
        for X, y in loader:
            loss = loss_fn(model(X), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
        return total / len(loader.dataset)

    def no_train_mode(model, loader, loss_fn, optimizer):
        ns["train_epoch"](model, loader, loss_fn, optimizer)  # right, then a second epoch in eval mode
        return None

    def unweighted(model, loader, loss_fn, optimizer):
        model.train()
        losses = []
        for X, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(X), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return sum(losses) / len(losses)

    def keeps_eval(model, loader, loss_fn, optimizer):
        total = 0.0
        for X, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(X), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
        return total / len(loader.dataset)

    def evaluate_with_grad(model, loader):
        model.eval()
        right = sum((model(X).argmax(1) == y).sum().item() for X, y in loader)
        return right / len(loader.dataset)

    fails_with(exercises.check_train_epoch, no_zero_grad, hint="zero them before every backward")
    fails_with(exercises.check_train_epoch, keeps_eval, hint="model.train()")
    fails_with(exercises.check_train_epoch, unweighted, hint="weight each batch's loss by its size")
    fails_with(exercises.check_train_epoch, no_train_mode, hint="returned a NoneType")
    fails_with(exercises.check_evaluate, evaluate_with_grad, hint="tl.no_grad()")
    fails_with(exercises.check_evaluate, lambda model, loader: ns["evaluate"](model, loader) * 0.9, hint="accuracy is")
