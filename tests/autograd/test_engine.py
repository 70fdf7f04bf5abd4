"""The backward engine: Tensor.backward, autograd.grad, higher order, and the step generator."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tinygrad_lab as tl
from tinygrad_lab import autograd
from tinygrad_lab.autograd import AccumulateGrad, BackwardStep, backward_steps

from ._helpers import (assert_close, assert_grads_match, leaf, node_signature, ones_like, pair, program,
                       reachable_nodes, to_np)

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True:UserWarning")

X = [0.5, -1.0, 2.0]


# ---------------------------------------------------------------- Tensor.backward

def test_scalar_backward(torch, device):
    x, tx = pair(torch, X, device=device)
    (x * x * x).sum().backward()
    (tx * tx * tx).sum().backward()
    assert_grads_match([(x, tx)])
    assert_close(x.grad, 3 * np.square(X))


def test_backward_of_a_leaf_itself():
    x = leaf(3.0)
    x.backward()
    assert_close(x.grad, 1.0)


def test_backward_with_gradient(torch):
    x, tx = pair(torch, X)
    v = [1.0, 10.0, 100.0]
    (x.sin() * 2.0).backward(gradient=tl.tensor(np.array(v)))
    (tx.sin() * 2.0).backward(gradient=torch.tensor(v, dtype=torch.float64))
    assert_grads_match([(x, tx)])
    assert_close(x.grad, 2 * np.cos(X) * v)


def test_non_scalar_backward_without_gradient_raises():
    x = leaf(X)
    with pytest.raises(RuntimeError, match="scalar"):
        (x * 2.0).backward()


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        leaf(X, requires_grad=False).sum().backward()


def test_gradient_shape_mismatch_raises():
    x = leaf(X)
    with pytest.raises(RuntimeError, match="shape"):
        (x * 2.0).backward(gradient=tl.ones(2, dtype=tl.float64))


def test_gradients_accumulate_across_backward_calls(torch):
    x, tx = pair(torch, X)
    for _ in range(2):
        (x * x).sum().backward()
        (tx * tx).sum().backward()
    assert_grads_match([(x, tx)])
    assert_close(x.grad, 4 * np.array(X))


def test_retain_graph_allows_second_backward(torch):
    x, tx = pair(torch, X)
    y, ty = x.exp().sum(), tx.exp().sum()
    y.backward(retain_graph=True)
    ty.backward(retain_graph=True)
    y.backward()
    ty.backward()
    assert_grads_match([(x, tx)])
    assert_close(x.grad, 2 * np.exp(X))


def test_second_backward_without_retain_graph_raises():
    x = leaf(X)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_second_autograd_grad_without_retain_graph_raises():
    x = leaf(X)
    y = (x * x).sum()
    autograd.grad(y, x)
    with pytest.raises(RuntimeError, match="second time"):
        autograd.grad(y, x)


def test_inputs_restricts_accumulation(torch):
    x, tx = pair(torch, X)
    w, tw = pair(torch, [2.0, 3.0, 4.0])
    (x * w).sum().backward(inputs=[x])
    (tx * tw).sum().backward(inputs=[tx])
    assert_grads_match([(x, tx), (w, tw)])
    assert w.grad is None


def test_inputs_non_leaf_fills_its_grad(torch):
    x, tx = pair(torch, X)
    h, th = x * 2.0, tx * 2.0
    (h * h).sum().backward(inputs=[h])
    (th * th).sum().backward(inputs=[th])
    assert x.grad is None and tx.grad is None
    assert_close(h.grad, th.grad)


def test_backward_with_multiple_roots(torch):
    x, tx = pair(torch, X)
    a, b = x.sin(), (x * x).sum()
    ta, tb = tx.sin(), (tx * tx).sum()
    autograd.backward([a, b], [tl.ones(3, dtype=tl.float64), None])
    torch.autograd.backward([ta, tb], [torch.ones(3, dtype=torch.float64), None])
    assert_grads_match([(x, tx)])


def test_grad_dtype_follows_the_leaf():
    x = leaf([1.0, 2.0], dtype=np.float32)
    (x.double() * 3.0).sum().backward()
    assert x.grad.dtype == tl.float32
    assert_close(x.grad, [3.0, 3.0])


# ---------------------------------------------------------------- autograd.grad

def test_grad_single_output_and_input():
    x = leaf(X)
    (g,) = autograd.grad((x * x).sum(), x)
    assert_close(g, 2 * np.array(X))
    assert x.grad is None  # grad() returns, it does not accumulate
    assert not g.requires_grad and g.grad_fn is None


def test_grad_multiple_outputs_and_inputs(torch):
    x, tx = pair(torch, X)
    w, tw = pair(torch, [2.0, 3.0, 4.0])
    outs = [(x * w).sum(), (x.exp() + w).sum()]
    touts = [(tx * tw).sum(), (tx.exp() + tw).sum()]
    gx, gw = autograd.grad(outs, [x, w])
    tgx, tgw = torch.autograd.grad(touts, [tx, tw])
    assert_close(gx, tgx)
    assert_close(gw, tgw)


def test_grad_with_grad_outputs(torch):
    x, tx = pair(torch, X)
    v = np.array([1.0, -2.0, 0.5])
    (g,) = autograd.grad(x.tanh() * x, x, grad_outputs=tl.tensor(v))
    (tg,) = torch.autograd.grad(tx.tanh() * tx, tx, grad_outputs=torch.tensor(v))
    assert_close(g, tg)


def test_grad_allow_unused():
    x, unused = leaf(X), leaf([1.0])
    gx, gu = autograd.grad((x * 2.0).sum(), [x, unused], allow_unused=True)
    assert_close(gx, [2.0, 2.0, 2.0])
    assert gu is None


def test_grad_unused_input_without_allow_unused_raises():
    x, unused = leaf(X), leaf([1.0])
    with pytest.raises(RuntimeError, match="allow_unused"):
        autograd.grad((x * 2.0).sum(), [x, unused])


def test_grad_materialize_grads():
    x, unused = leaf(X), leaf([1.0, 2.0])
    _, gu = autograd.grad((x * 2.0).sum(), [x, unused], materialize_grads=True)
    assert_close(gu, [0.0, 0.0])


def test_grad_wrt_non_leaf_inputs(torch):
    x, tx = pair(torch, X)
    h, th = x * 3.0, tx * 3.0
    y, ty = (h.sin() * h).sum(), (th.sin() * th).sum()
    gh, gx = autograd.grad(y, [h, x])
    tgh, tgx = torch.autograd.grad(ty, [th, tx])
    assert_close(gh, tgh)
    assert_close(gx, tgx)


def test_grad_wrt_non_leaf_only_does_not_touch_leaves():
    x = leaf(X)
    h = x * 3.0
    (gh,) = autograd.grad((h * h).sum(), h)
    assert_close(gh, 2 * 3.0 * np.array(X))
    assert x.grad is None


def test_grad_input_that_does_not_require_grad_raises():
    x = leaf(X)
    with pytest.raises(RuntimeError, match="does not require grad"):
        autograd.grad((x * 2.0).sum(), leaf(X, requires_grad=False))


# ---------------------------------------------------------------- higher order (create_graph=True)

def test_second_derivative_of_cube():
    x = leaf(X)
    (g,) = autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    assert_close(g, 3 * np.square(X))
    (gg,) = autograd.grad(g.sum(), x)
    assert_close(gg, 6 * np.array(X))


def test_third_derivative_of_sin():
    x = leaf(X)
    (g1,) = autograd.grad(x.sin().sum(), x, create_graph=True)
    (g2,) = autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = autograd.grad(g2.sum(), x)
    assert_close(g1, np.cos(X))
    assert_close(g2, -np.sin(X))
    assert_close(g3, -np.cos(X))


def test_backward_with_create_graph_makes_grad_differentiable(torch):
    x, tx = pair(torch, X)
    (x * x * x.exp()).sum().backward(create_graph=True)
    (tx * tx * tx.exp()).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None
    (g2,) = autograd.grad(x.grad.sum(), x)
    (tg2,) = torch.autograd.grad(tx.grad.sum(), tx)
    assert_close(g2, tg2)


def test_hessian_vector_product_matches_torch(torch, rng):
    a_np, x_np, v_np = rng.standard_normal((4, 3)), rng.standard_normal(3), rng.standard_normal(3)

    def f(lib_x, a):
        return ((a @ lib_x).tanh() ** 2).sum() + (lib_x * lib_x * lib_x).sum()

    x = leaf(x_np)
    (g,) = autograd.grad(f(x, tl.tensor(a_np)), x, create_graph=True)
    (hvp,) = autograd.grad((g * tl.tensor(v_np)).sum(), x)

    tx = torch.tensor(x_np, requires_grad=True)
    _, thvp = torch.autograd.functional.hvp(lambda t: f(t, torch.tensor(a_np)), tx, torch.tensor(v_np))
    assert_close(hvp, thvp, rtol=1e-10, atol=1e-12)


def test_mixed_second_partials(torch):
    x, tx = pair(torch, [1.5])
    y, ty = pair(torch, [-0.5])
    (gx,) = autograd.grad((x * x * y.exp()).sum(), x, create_graph=True)
    (gxy,) = autograd.grad(gx.sum(), y)
    (tgx,) = torch.autograd.grad((tx * tx * ty.exp()).sum(), tx, create_graph=True)
    (tgxy,) = torch.autograd.grad(tgx.sum(), ty)
    assert_close(gxy, tgxy)


# ---------------------------------------------------------------- graph shapes

def test_diamond_gets_summed_gradients(torch):
    x, tx = pair(torch, X)
    a, ta = x * 2.0, tx * 2.0
    (a.sin() * a.cos() + a).sum().backward()
    (ta.sin() * ta.cos() + ta).sum().backward()
    assert_grads_match([(x, tx)])


@pytest.mark.parametrize("expr", ["x * x", "x + x", "x * x + x - x / (x * x + 1)"])
def test_same_tensor_used_several_times(torch, expr):
    x, tx = pair(torch, X)
    eval(expr, {"x": x}).sum().backward()
    eval(expr, {"x": tx}).sum().backward()
    assert_grads_match([(x, tx)])


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, max_side=4),
                  elements=st.floats(-3, 3, allow_nan=False)))
def test_random_inputs_diamond_matches_torch(data):
    torch = pytest.importorskip("torch", exc_type=ImportError)
    x, tx = pair(torch, data)
    w, tw = pair(torch, np.flip(data).copy() * 0.5 + 1.0)

    def f(a, b):
        h = a * b + a.tanh()
        return (h * h.sin() - h / (b * b + 1.0)).sum()

    f(x, w).backward()
    f(tx, tw).backward()
    assert_grads_match([(x, tx), (w, tw)])


def test_program_matches_torch(torch):
    (x, w, b), loss = program()
    loss.backward()
    tx, tw, tb = (torch.tensor(to_np(t), requires_grad=True) for t in (x, w, b))
    h = (tx @ tw + tb).tanh()
    tloss = (h * h).sum() + (h.exp().reshape(6) * 0.5).mean() - tx[1:, :2].sin().sum()
    tloss.backward()
    assert_close(loss, tloss)
    assert_grads_match([(x, tx), (w, tw), (b, tb)])


def test_wide_graph():
    n = 3000
    x = leaf([1.0, 2.0])
    total = tl.stack([x * float(i) for i in range(n)]).sum()
    total.backward()
    expected = sum(range(n))
    assert_close(x.grad, [expected, expected])


def test_wide_fan_out_into_one_node():
    n = 3000
    x = leaf([1.0, 2.0])
    h = x.exp()
    parts = [h * float(i) for i in range(n)]
    tl.stack(parts).sum().backward()
    assert_close(x.grad, np.exp([1.0, 2.0]) * sum(range(n)))


_DEEP = """
import sys, time
import tinygrad_lab as tl
sys.setrecursionlimit(1000)
x = tl.tensor(2.0, requires_grad=True)
t0 = time.perf_counter()
y = x
for _ in range(100_000):
    y = y * 1.0
t1 = time.perf_counter()
y.backward()
t2 = time.perf_counter()
del y
t3 = time.perf_counter()
assert x.grad.item() == 1.0, x.grad
y = x
for _ in range(100_000):
    y = y * 1.0
t4 = time.perf_counter()
del y                       # a graph that was never backpropagated (saved tensors still held)
t5 = time.perf_counter()
print(f"OK {t2 - t1:.3f} {t3 - t2:.3f} {t5 - t4:.3f}")
"""


def test_deep_graph_backward_and_free_without_recursion():
    """100,000 nodes deep: iterative topological order and no recursive free.
    Run in a subprocess: a recursive deallocation would crash the interpreter."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(_DEEP)], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=120)
    assert proc.returncode == 0, f"rc={proc.returncode}\n{proc.stderr[-3000:]}"
    assert "RecursionError" not in proc.stderr
    line = proc.stdout.strip().splitlines()[-1]
    assert line.startswith("OK"), proc.stdout
    backward_s, free_s, free_unrun_s = map(float, line.split()[1:])
    assert backward_s < 10.0, f"backward through 100,000 nodes took {backward_s:.2f} s"
    assert free_s < 5.0 and free_unrun_s < 5.0, (free_s, free_unrun_s)


# ---------------------------------------------------------------- the step generator

def _steps(loss, **kwargs):
    return list(backward_steps([loss], [ones_like(loss)], **kwargs))


def test_one_step_per_node_each_once():
    _, loss = program()
    nodes = reachable_nodes(loss.grad_fn)
    steps = _steps(loss)
    assert all(isinstance(s, BackwardStep) for s in steps)
    assert [s.index for s in steps] == list(range(len(steps)))
    stepped = [s.node for s in steps]
    assert len({id(n) for n in stepped}) == len(stepped)  # each node once
    assert {id(n) for n in stepped} == {id(n) for n in nodes}  # and every node


def test_first_step_is_the_root_and_leaves_come_last_per_path():
    (x, w, b), loss = program()
    steps = _steps(loss)
    assert steps[0].node is loss.grad_fn
    acc = {id(s.node.variable): s for s in steps if isinstance(s.node, AccumulateGrad)}
    assert set(acc) == {id(x), id(w), id(b)}


def test_node_appears_only_after_all_of_its_consumers():
    _, loss = program()
    steps = _steps(loss)
    position = {id(s.node): i for i, s in enumerate(steps)}
    for i, s in enumerate(steps):
        for e in s.node.next_functions:
            if e[0] is not None:
                assert position[id(e[0])] > i, f"{e[0]} ran before its consumer {s.node}"


def test_step_order_is_identical_between_runs():
    _, loss1 = program()
    sig1 = node_signature(s.node for s in _steps(loss1))
    _, loss2 = program()
    sig2 = node_signature(s.node for s in _steps(loss2))
    assert sig1 == sig2
    assert len(sig1) > 10


def test_step_records_gradients():
    x = leaf(X)
    y = x.exp()
    loss = y.sum()
    steps = _steps(loss)
    names = [s.node.name for s in steps]
    assert names == ["SumBackward", "ExpBackward", "AccumulateGrad"]
    assert_close(steps[0].grad_outputs[0], 1.0)
    assert_close(steps[1].grad_outputs[0], np.ones(3))
    assert_close(steps[1].grad_inputs[0], np.exp(X))
    assert_close(steps[2].grad_inputs[0], np.exp(X))
    assert_close(x.grad, np.exp(X))


def test_draining_the_generator_equals_backward_bit_for_bit():
    leaves1, loss1 = program(3)
    loss1.backward()
    leaves2, loss2 = program(3)
    for _ in backward_steps([loss2], [ones_like(loss2)]):
        pass
    for a, b in zip(leaves1, leaves2):
        assert a.grad is not None
        assert np.array_equal(to_np(a.grad), to_np(b.grad))


def test_generator_is_lazy_one_node_per_next():
    x = leaf(X)
    loss = (x.exp() * 2.0).sum()
    gen = backward_steps([loss], [ones_like(loss)])
    first = next(gen)
    assert first.node is loss.grad_fn
    assert x.grad is None  # nothing upstream ran yet
    rest = list(gen)
    assert rest[-1].node.name == "AccumulateGrad"
    assert_close(x.grad, 2 * np.exp(X))


def test_generator_restores_grad_mode_when_abandoned():
    x = leaf(X)
    loss = (x.exp() * 2.0).sum()
    gen = backward_steps([loss], [ones_like(loss)])
    next(gen)
    gen.close()
    assert tl.is_grad_enabled()
    with tl.no_grad():
        gen = backward_steps([(x * 3.0).sum().detach().requires_grad_()], [tl.tensor(1.0, dtype=tl.float64)])
        list(gen)
        assert not tl.is_grad_enabled()


def test_zero_dim_results_are_arrays_so_in_place_and_accumulation_work():
    """NumPy gives scalars (immutable) for 0-d results; tensors hold 0-d arrays instead, so a second
    backward into a 0-d leaf accumulates and in-place ops on a 0-d result work."""
    w = tl.tensor(0.5, requires_grad=True)
    loss = w * 2.0
    loss.backward(retain_graph=True)
    loss.backward()
    assert w.grad.item() == 4.0
    s = tl.tensor([1.0, 2.0]).sum()
    s.add_(1)
    s *= 2
    assert s.item() == 8.0
    assert isinstance((tl.tensor(3.0) * 2)._data, np.ndarray)


def test_fresh_gradients_become_grad_without_a_copy_and_nothing_else_is_touched():
    """AccumulateGrad keeps a large fresh gradient array as .grad (no copy), as PyTorch steals it;
    later accumulation into it must never change another tensor, a hook's or a user's tensor."""
    from tinygrad_lab.autograd.engine import _STEAL_MIN
    n = _STEAL_MIN + 1
    rng = np.random.default_rng(0)
    a = tl.tensor(rng.standard_normal(n), requires_grad=True)
    b = tl.tensor(rng.standard_normal(n), requires_grad=True)
    b_before = b.detach().numpy().copy()
    (a * b).sum().backward()
    (a * b).sum().backward()  # accumulates in place into the kept array
    np.testing.assert_array_equal(a.grad.numpy(), 2 * b_before)
    np.testing.assert_array_equal(b.detach().numpy(), b_before)

    # a pass-through gradient (Add sends its incoming gradient on) is shared: copied for each leaf
    x, y = tl.ones(n, requires_grad=True), tl.ones(n, requires_grad=True)
    g = tl.arange(float(n))
    (x * 1.0 + y).backward(g)
    x.grad.add_(10)
    np.testing.assert_array_equal(y.grad.numpy(), np.arange(float(n)))
    np.testing.assert_array_equal(g.numpy(), np.arange(float(n)))
    w = tl.ones(n, requires_grad=True)
    (w + 2.0).backward(g)  # the caller's own gradient, passed straight on to one leaf
    w.grad.add_(10)
    np.testing.assert_array_equal(g.numpy(), np.arange(float(n)))

    # a leaf hook may keep the gradient it sees: then .grad is a copy
    seen = []
    h = a.register_hook(lambda grad: seen.append(grad))
    a.grad = None
    (a * b).sum().backward()
    (a * b).sum().backward()
    np.testing.assert_array_equal(seen[0].numpy(), b_before)
    h.remove()

    # a user Function may return any tensor as a gradient (here one it shares): never kept
    shared = tl.full((n,), 7.0)

    class ReturnsShared(tl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, grad):
            return shared

    z = tl.zeros(n, requires_grad=True)
    out = ReturnsShared.apply(z)
    out.sum().backward(retain_graph=True)
    out.sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), np.full(n, 14.0))
    np.testing.assert_array_equal(shared.numpy(), np.full(n, 7.0))


def test_the_stepper_history_keeps_its_numbers_after_later_accumulation():
    """Stepping is not drained: the gradients a step sent are copied into .grad, so accumulating
    into .grad later leaves the recorded step as it was."""
    from tinygrad_lab import graph
    a = tl.tensor([1.0, 2.0], requires_grad=True)
    b = tl.tensor([3.0, 4.0])
    s = graph.BackwardStepper((a * b).sum())
    s.run()
    mul_step = next(st for st in s.history if st.op == "Mul")
    (a * b).sum().backward()  # accumulates in place into a.grad
    np.testing.assert_array_equal(a.grad.numpy(), [6.0, 8.0])
    np.testing.assert_array_equal(mul_step.raw.grad_inputs[0].numpy(), [3.0, 4.0])


def test_node_names_read_as_strings_and_call_as_in_pytorch():
    x = tl.ones(2, requires_grad=True)
    y = (x * 2).sum()
    assert y.grad_fn.name == "SumBackward" and y.grad_fn.name() == "SumBackward"
    acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
    assert acc.name() == acc.name == "AccumulateGrad"
