"""The lessons' exercises 07-14 (tinygrad_lab.exercises.lessons): typical wrong answers fail with a HINT
that names the mistake. (Their solutions, blank versions and gaming attempts are run by
test_build_checks.py, from the committed notebooks.)"""
from __future__ import annotations

import math
import time

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import exercises

from .test_build_checks import fails_with, pieces

pytestmark = pytest.mark.usefixtures("no_leftover_subscribers")


@pytest.mark.parametrize("wrong, hint", [
    (lambda w, x, y: (x.T @ (x @ w - y)) / len(y), "a factor 2 is missing"),
    (lambda w, x, y: 2 * (x.T @ (x @ w - y)), "divide by n"),
    (lambda w, x, y: 2 * (x.T @ (y - x @ w)) / len(y), "the sign is flipped"),
    (lambda w, x, y: ((x @ w - y) ** 2).mean(), "expected a tensor of w's shape"),
])
def test_gradient_by_hand_mistakes(wrong, hint):
    fails_with(exercises.check_loss_gradient, wrong, hint=hint)


def test_control_flow_mistakes():
    def one_short(cell, h0, xs):
        for x in xs[:-1]:
            h0 = cell(h0, x)
        return h0
    fails_with(exercises.check_unroll, one_short, hint="one cell per input")

    right = pieces("08_control_flow")["run_until_settled"]
    fails_with(exercises.check_run_until_settled, lambda cell, h, x, tol, max_steps: right(cell, h, x, tol, 100),
               hint="never run more than max_steps")


def test_rnn_mistakes():
    def no_hidden_bias(x, h0, W_ih, W_hh, b_ih, b_hh):
        h, out = h0, []
        for x_t in x:
            h = (x_t @ W_ih.T + b_ih + h @ W_hh.T).tanh()
            out.append(h)
        return tl.stack(out), h
    fails_with(exercises.check_rnn, no_hidden_bias, hint="with the previous step's h")
    fails_with(exercises.check_rnn, lambda *args: no_hidden_bias(*args)[0], hint="return (outputs, h_last)")


def test_resume_mistakes():
    right = pieces("10_resume_training")

    def model_only(path, model, optimizer, scheduler, epoch):
        tl.save({"model": model.state_dict(), "scheduler": scheduler.state_dict(), "epoch": epoch}, path)

    def load_model_only(path, model, optimizer, scheduler):
        saved = tl.load(path)
        model.load_state_dict(saved["model"])
        scheduler.load_state_dict(saved["scheduler"])
        return saved["epoch"]
    fails_with(exercises.check_resume, model_only, load_model_only, hint="(optimizer.state_dict())")

    def no_scheduler(path, model, optimizer, scheduler):
        saved = tl.load(path)
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        return saved["epoch"]
    fails_with(exercises.check_resume, right["save_checkpoint"], no_scheduler, hint="scheduler.state_dict()")
    fails_with(exercises.check_resume, right["save_checkpoint"],
               lambda *args: right["load_checkpoint"](*args) and 0, hint="return the epoch stored")


def _parallel(weight):
    """A data-parallel gradient whose shard gradients are combined with weight(shard size, n, world)."""
    import copy

    def data_parallel_grads(model, X, y, world_size):
        total = [tl.zeros_like(p) for p in model.parameters()]
        for shard in np.array_split(np.arange(len(y)), world_size):
            worker, index = copy.deepcopy(model), tl.tensor(shard)
            tl.nn.functional.cross_entropy(worker(X[index]), y[index]).backward()
            for t, p in zip(total, worker.parameters()):
                t += p.grad * weight(len(shard), len(y), world_size)
        for p, t in zip(model.parameters(), total):
            p.grad = t
    return data_parallel_grads


def test_data_parallel_mistakes():
    fails_with(exercises.check_data_parallel, _parallel(lambda k, n, w: 1.0), hint="summed")
    fails_with(exercises.check_data_parallel, _parallel(lambda k, n, w: 1.0 / w), hint="weight each by its shard")
    exercises.check_data_parallel(_parallel(lambda k, n, w: k / n))


def _logger(offset=0, norm=True):
    def train_and_log(writer, model, optimizer, X, y, steps):
        for step in range(steps):
            optimizer.zero_grad()
            loss = tl.nn.functional.cross_entropy(model(X), y)
            loss.backward()
            writer.add_scalar("loss", loss.item(), step + offset)
            if norm:
                writer.add_scalar("grad_norm", sum((p.grad.double() ** 2).sum().item()
                                                   for p in model.parameters()) ** 0.5, step + offset)
            optimizer.step()
    return train_and_log


def test_tensorboard_logging_mistakes():
    fails_with(exercises.check_tensorboard_logging, _logger(offset=1), hint="global_step=step")
    fails_with(exercises.check_tensorboard_logging, _logger(norm=False), hint="nothing was logged under 'grad_norm'")


def _timer(warm_sync=True, end_sync=True, divide=True):
    def time_per_call(fn, synchronize, repeats=3, clock=time.perf_counter):
        fn()
        if warm_sync:
            synchronize()
        start = clock()
        for _ in range(repeats):
            fn()
        if end_sync:
            synchronize()
        return (clock() - start) / (repeats if divide else 1)
    return time_per_call


def test_timing_mistakes():
    fails_with(exercises.check_time_per_call, _timer(end_sync=False), hint="that is the launch only")
    fails_with(exercises.check_time_per_call, _timer(warm_sync=False), hint="synchronize after the warm-up call")
    fails_with(exercises.check_time_per_call, _timer(divide=False), hint="divide the total")


def _attention(scale=True, flip_mask=False):
    def scaled_dot_product_attention(q, k, v, mask=None):
        scores = q @ k.mT / (math.sqrt(q.shape[-1]) if scale else 1.0)
        if mask is not None:
            scores = scores.masked_fill(mask if flip_mask else ~mask, float("-inf"))
        return scores.softmax(-1) @ v
    return scaled_dot_product_attention


def test_attention_mistakes():
    fails_with(exercises.check_attention, _attention(scale=False), hint="divide the scores by sqrt(d)")
    fails_with(exercises.check_attention, _attention(flip_mask=True), hint="the mask says where a query MAY attend")
