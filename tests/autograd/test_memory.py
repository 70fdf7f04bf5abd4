"""The graph is freed by reference counting alone: saved tensors go after backward,
nodes go with the last tensor that references them, and nothing leaks over many steps.

Every check runs with the cyclic garbage collector disabled, so an object that is only
freed by `gc.collect()` (i.e. one caught in a reference cycle) counts as a leak."""
from __future__ import annotations

import contextlib
import gc
import sys
import time
import tracemalloc
import weakref

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import autograd

from ._helpers import MyExp, SinCos, assert_close, leaf, program, reachable_nodes


@contextlib.contextmanager
def gc_disabled():
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _refs(*objs) -> list:
    return [weakref.ref(o) for o in objs]


def _alive(refs) -> list:
    return [r() for r in refs if r() is not None]


def _graph_refs(loss) -> list:
    """Weak references to every node of loss's graph."""
    return _refs(*reachable_nodes(loss.grad_fn))


def _data_ref(t):
    """A weak reference to the array holding t's values."""
    return weakref.ref(t.detach().numpy())


def test_saved_tensors_released_by_backward(rng):
    with gc_disabled():
        x, w = leaf(rng.standard_normal((3, 4))), leaf(rng.standard_normal((4, 2)))
        h = (x @ w).tanh()          # tanh saves its output, Mul below saves h itself
        refs = [_data_ref(h), weakref.ref(h)]
        loss = (h * h).sum()
        del h
        assert len(_alive(refs)) == 2  # held by the graph until backward
        loss.backward()
        assert _alive(refs) == []      # released while loss and its graph still exist
        assert loss.grad_fn is not None


def test_retain_graph_keeps_saved_tensors_until_the_graph_is_dropped():
    with gc_disabled():
        x = leaf([0.5, 1.0, 1.5])
        h = x.exp()
        refs = [_data_ref(h), weakref.ref(h)]
        loss = (h * h).sum()
        del h
        loss.backward(retain_graph=True)
        assert len(_alive(refs)) == 2
        loss.backward(retain_graph=True)
        assert len(_alive(refs)) == 2
        assert_close(x.grad, 2 * 2 * np.exp(2 * np.array([0.5, 1.0, 1.5])))
        node_refs = _graph_refs(loss)
        x_ref = weakref.ref(x)
        del loss
        assert _alive(refs) == []
        survivors = _alive(node_refs)  # only the leaf's own AccumulateGrad, which the leaf owns
        assert [type(n).__name__ for n in survivors] == ["AccumulateGrad"]
        assert survivors[0].variable is x
        assert x_ref() is not None and x.grad is not None
        acc_ref = weakref.ref(survivors[0])
        del survivors, x
        assert x_ref() is None and acc_ref() is None  # freed by refcounting: no cycle leaf <-> node


# ---------------------------------------------------------------- whole programs freed without gc

def _plain(rng):
    (x, w, b), loss = program(1)
    return [x, w, b], loss


def _custom_functions(rng):
    x = leaf(rng.standard_normal(4))
    s, c = SinCos.apply(MyExp.apply(x))
    return [x], (s * c).sum()


def _retain_grad_and_hooks(rng):
    x = leaf(rng.standard_normal(4))
    y = x * 2.0
    y.retain_grad()
    y.register_hook(lambda g: g * 3.0)
    x.register_hook(lambda g: g + 1.0)
    return [x, y], (y.exp() * y).sum()


def _in_place_and_setitem(rng):
    x, v = leaf(rng.standard_normal(4)), leaf(rng.standard_normal(2))
    y = x * 2.0
    y.mul_(3.0)
    y[1:3] = v
    y += 1.0
    return [x, v, y], (y * y).sum()


def _multi_output_and_views(rng):
    x = leaf(rng.standard_normal((2, 6)))
    a, b, c = x.split(2, dim=1)
    return [x, a, c], (a * b + c.exp()).sum()


BUILDERS = [_plain, _custom_functions, _retain_grad_and_hooks, _in_place_and_setitem, _multi_output_and_views]


@pytest.mark.parametrize("build", BUILDERS, ids=[b.__name__.strip("_") for b in BUILDERS])
@pytest.mark.parametrize("run_backward", [True, False], ids=["backward", "no_backward"])
def test_graph_freed_by_refcounting_alone(rng, build, run_backward):
    with gc_disabled():
        tensors, loss = build(rng)
        node_refs = _graph_refs(loss)
        tensor_refs = _refs(loss, *tensors)
        data_refs = [_data_ref(t) for t in tensors]
        assert len(node_refs) > 2
        if run_backward:
            loss.backward()
            assert tensors[0].grad is not None
        del tensors, loss
        alive = _alive(node_refs) + _alive(tensor_refs) + _alive(data_refs)
        assert alive == [], f"kept alive without gc: {alive}"


def test_autograd_grad_with_create_graph_freed_by_refcounting(rng):
    with gc_disabled():
        x = leaf(rng.standard_normal(3))
        y = (x ** 3).sum()
        (g,) = autograd.grad(y, x, create_graph=True)
        (gg,) = autograd.grad(g.sum(), x)
        assert_close(gg, 6 * x.detach().numpy())
        refs = _graph_refs(y) + _graph_refs(g) + _refs(x, y, g, gg)
        del x, y, g, gg
        assert _alive(refs) == []


def test_no_cycles_found_by_the_collector(rng):
    """A forward/backward with gc off leaves nothing for gc.collect() to find."""
    gc.collect()
    gc.disable()
    try:
        for build in BUILDERS:
            tensors, loss = build(rng)
            loss.backward()
            del tensors, loss
        found = gc.collect()
    finally:
        gc.enable()
    assert found == 0, f"gc.collect() found {found} unreachable objects (reference cycles)"


# ---------------------------------------------------------------- no growth over a training loop

def test_no_leak_over_ten_thousand_steps():
    rng = np.random.default_rng(0)
    xs = tl.tensor(rng.standard_normal((8, 4)))
    ys = tl.tensor(rng.standard_normal((8, 1)))
    w = leaf(rng.standard_normal((4, 1)) * 0.1)
    b = leaf([0.0])
    lr = 0.05

    def step():
        pred = (xs @ w + b).tanh()
        loss = ((pred - ys) ** 2).mean()
        loss.backward()
        with tl.no_grad():
            for p in (w, b):
                p -= lr * p.grad
                p.grad = None
        return loss

    objects, blocks, losses = {}, {}, []
    gc.collect()
    gc.disable()
    t0 = time.perf_counter()
    try:
        for i in range(1, 10_001):
            loss = step()
            if i in (1, 1_000, 3_000, 10_000):
                losses.append(loss.item())
                del loss
                objects[i] = len(gc.get_objects())  # container objects: tensors, nodes, tuples, dicts
                blocks[i] = sys.getallocatedblocks()  # every small Python allocation
    finally:
        gc.enable()
    seconds = time.perf_counter() - t0
    assert losses[-1] < losses[0]  # it did train
    assert w.is_leaf and w.grad is None
    # a leak of even one object per step would show as ~9,000 here
    assert abs(objects[10_000] - objects[1_000]) <= 20, objects
    # small blocks: compared after warm-up, since CPython's tuple free list (up to 2,000
    # tuples per size, not a leak) fills by about one block per step in the first ~2,000 steps
    assert abs(blocks[10_000] - blocks[3_000]) <= 200, blocks
    assert seconds < 60, f"10,000 small steps took {seconds:.1f} s"


def test_no_leak_in_traced_memory():
    """tracemalloc (slower, so fewer steps): the bytes held stay flat once warm
    (CPython's free lists and NumPy's small-buffer cache fill during the first
    ~2,000 steps; measured flat from there to 20,000)."""
    x = leaf(np.linspace(-1, 1, 16).reshape(4, 4))
    traced = {}
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        for i in range(1, 5_001):
            loss = (x @ x).exp().sum()
            loss.backward()
            x.grad = None
            del loss
            if i in (2_500, 5_000):
                traced[i] = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
        gc.enable()
    assert traced[5_000] - traced[2_500] < 16 * 1024, traced  # bytes; a leak would be 2,500 steps of garbage
