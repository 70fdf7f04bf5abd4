"""Seams: a learner's function replaces one piece of the engine for the length of a `with` block,
and the real engine runs it. Each seam is tested with a correct learner function (the same numbers
as the engine's own, bit for bit, or the same training) and a deliberately wrong one (graph.compare
names the node where its gradients first differ, with the numbers)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import graph, seams
from tinygrad_lab.autograd import engine
from tinygrad_lab.graph.compare import compare
from tinygrad_lab.ops import broadcast, conv
from tinygrad_lab.ops.elementwise import Mul, Pow
from tinygrad_lab.utils.data import dataloader

# ---------------------------------------------------------------- learners' pieces (correct and wrong)


def learner_mul_backward(ctx, g):
    """d(a*b)/da = g*b, d/db = g*a, each summed back to its input's shape (a learner's, with tensor ops)."""
    a, b = ctx.saved_tensors
    ga = learner_unbroadcast(g * b, ctx.input_shapes[0]) if ctx.needs_input_grad[0] else None
    gb = learner_unbroadcast(g * a, ctx.input_shapes[1]) if ctx.needs_input_grad[1] else None
    return ga, gb


def wrong_mul_backward(ctx, g):  # forgets the other factor on the second input
    a, b = ctx.saved_tensors
    return learner_unbroadcast(g * b, ctx.input_shapes[0]), learner_unbroadcast(g * 1.0, ctx.input_shapes[1])


def learner_unbroadcast(grad, shape):
    while grad.dim() > len(shape):
        grad = grad.sum(0)
    for i, n in enumerate(shape):
        if n == 1 and grad.shape[i] != 1:
            grad = grad.sum(i, keepdim=True)
    return grad


def wrong_unbroadcast(grad, shape):  # averages over the leading (batch) dims instead of summing
    while grad.dim() > len(shape):
        grad = grad.mean(0)
    for i, n in enumerate(shape):
        if n == 1 and grad.shape[i] != 1:
            grad = grad.sum(i, keepdim=True)
    return grad


def learner_order(roots):
    """Depth-first topological sort: a node after everything that feeds it, reversed."""
    order, seen = [], set()

    def visit(node):
        if node in seen:
            return
        seen.add(node)
        for nxt, _ in node.next_functions:
            if nxt is not None:
                visit(nxt)
        order.append(node)

    for r in roots:
        visit(r)
    return order[::-1]


def wrong_order(roots):
    """Breadth-first from the roots: a node reached by a short and a long path runs too early."""
    order, seen, frontier = [], set(roots), list(roots)
    while frontier:
        node = frontier.pop(0)
        order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    return order


def learner_accumulate(total, grad):
    return total + grad


def wrong_accumulate(total, grad):  # the classic bug: the last gradient overwrites the others
    return grad


# ---------------------------------------------------------------- programs


def mlp(seed: int = 0):
    """A small MLP's loss, its parameters by name; float64, so that sums are exact enough to compare."""
    tl.manual_seed(seed)
    model = tl.nn.Sequential(tl.nn.Linear(3, 5), tl.nn.Tanh(), tl.nn.Linear(5, 2)).double()
    x = tl.randn(4, 3, dtype=tl.float64)
    y = tl.tensor([0, 1, 1, 0])
    loss = tl.nn.functional.cross_entropy(model(x), y)
    return model, loss


def grads_of(model) -> list:
    return [p.grad.numpy().copy() for p in model.parameters()]


def backward_grads(replace=None) -> list:
    model, loss = mlp()
    if replace is None:
        loss.backward()
    else:
        with seams.replace(*replace):
            loss.backward()
    return grads_of(model)


def assert_bit_identical(a: list, b: list) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def diamond():
    """x feeds the loss through a short path (x * 3) and a long one ((x * 2).exp() * 5): BFS runs the
    node where they meet before the long path has delivered."""
    x = tl.tensor([0.1, 0.2, 0.3], dtype=tl.float64, requires_grad=True)
    h = x * 2.0
    return x, ((h * 3.0) + (h.exp() * 5.0).exp()).sum()


# ---------------------------------------------------------------- the mechanism


def test_names_reference_and_no_dispatcher_when_unused():
    names = seams.names()
    for name in ("Mul.backward", "unbroadcast", "backward_order", "accumulate", "SGD.step", "Adam.step", "batch",
                 "im2col"):
        assert name in names and seams.get(name).doc
    # nobody replaces them: the engine calls the references themselves (no dispatcher, no cost)
    assert seams.reference("unbroadcast") is broadcast.sum_to
    assert seams.reference("backward_order") is engine.backward_order
    assert seams.reference(Mul) is Mul.backward and seams.get(Mul).name == "Mul.backward"
    assert seams.reference("im2col") is conv.im2col and seams.reference("batch") is dataloader.fetch_batch
    assert seams.reference("SGD.step") is tl.optim.SGD.step


def test_replace_is_undone_and_nests():
    original = Mul.__dict__["backward"]
    outer, inner = (lambda ctx, g: (g, g)), (lambda ctx, g: (g * 2.0, g * 2.0))
    with seams.replace(Mul, outer):
        assert seams.current(Mul).__wrapped__ is outer
        with seams.replace("Mul.backward", inner):
            assert seams.current(Mul).__wrapped__ is inner
            assert seams.reference(Mul) is original.__func__
        assert seams.current(Mul).__wrapped__ is outer
    assert Mul.__dict__["backward"] is original and seams.current(Mul) is original.__func__
    with pytest.raises(ZeroDivisionError):
        with seams.replace("unbroadcast", learner_unbroadcast):
            1 / 0
    assert broadcast.sum_to is seams.reference("unbroadcast") and not seams.in_force("unbroadcast")


def test_inside_a_replacement_the_seam_is_the_engines_own():
    calls = []

    def wraps_the_engines(roots):  # calls backward_order by its usual name: no recursion
        calls.append(len(roots))
        return engine.backward_order(roots)

    with seams.replace("backward_order", wraps_the_engines):
        assert_bit_identical(backward_grads(), backward_grads(("backward_order", wraps_the_engines)))
    assert calls == [1, 1]  # once per pass (the mlp has one root), the nested call ran the engine's


def test_unknown_seams_and_non_functions_are_refused_clearly():
    with pytest.raises(KeyError, match="unbroadcast"):
        seams.get("unbroadcst")
    with pytest.raises(KeyError, match="seams.names"):
        seams.get(tl.nn.Linear)
    with pytest.raises(TypeError, match="needs a function"):
        with seams.replace("accumulate", 3.0):
            pass


def test_a_replacement_is_per_thread():
    """While one thread runs a wrong backward for Mul, another thread's backward uses the engine's."""
    inside, release = threading.Event(), threading.Event()
    seen = {}

    def wrong_and_waiting(ctx, g):
        inside.set()
        assert release.wait(30)
        return wrong_mul_backward(ctx, g)

    def learner_thread():
        a = tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True)
        with seams.replace(Mul, wrong_and_waiting):
            (a * a).sum().backward()
        seen["learner"] = a.grad.numpy().copy()

    t = threading.Thread(target=learner_thread, daemon=True)
    t.start()
    assert inside.wait(30)
    try:
        expected = backward_grads()  # this thread, while the other one is inside its wrong backward
    finally:
        release.set()
        t.join(30)
    model, loss = mlp()
    loss.backward()
    assert_bit_identical(expected, grads_of(model))
    np.testing.assert_array_equal(seen["learner"], [2.0, 3.0])  # a from the first factor, 1 from the wrong one


def test_the_stepper_runs_the_learners_piece():
    a = tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True)
    with seams.replace(Mul, wrong_mul_backward):
        tl.graph.BackwardStepper((a * a).sum()).run()
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 3.0])


# ---------------------------------------------------------------- each seam: right and wrong


def test_an_ops_backward():
    assert_bit_identical(backward_grads((Mul, learner_mul_backward)), backward_grads())
    x = tl.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=tl.float64, requires_grad=True)
    w = tl.tensor([0.5, -1.0], dtype=tl.float64, requires_grad=True)
    loss = (x * w).tanh().sum()
    assert compare(loss, Mul, learner_mul_backward).identical
    result = compare(loss, "Mul.backward", wrong_mul_backward, params={"w": w})
    assert not result and result.first.graph_node.op == "Mul"
    assert result.first.what == "sent" and result.first.argument == "b"
    np.testing.assert_allclose(result.first.expected, (x.detach().numpy() * (1 - np.tanh(
        x.detach().numpy() * [0.5, -1.0]) ** 2)).sum(0))
    assert "node 2 (Mul)" in repr(result) and "sent to b" in repr(result)


def test_a_gradient_for_an_input_that_needs_none_is_no_difference():
    """The engine drops what a backward sends to an input that needs no gradient (as PyTorch does): a
    learner's matmul backward that computes both gradients always agrees there; its real mistake (the
    transpose of b's gradient, square weights) is the first difference, at the matmul with w2."""
    tl.manual_seed(0)
    x, w1, w2 = tl.randn(4, 3), tl.randn(3, 3, requires_grad=True), tl.randn(3, 3, requires_grad=True)
    loss = ((x @ w1).tanh() @ w2).pow(2).mean()
    assert compare(loss, "Matmul.backward", lambda ctx, g: (g @ ctx.saved_tensors[1].T,
                                                            ctx.saved_tensors[0].T @ g)).identical
    result = compare(loss, "Matmul.backward", lambda ctx, g: (g @ ctx.saved_tensors[1].T, g.T @ ctx.saved_tensors[0]),
                     params={"w1": w1, "w2": w2})
    assert result.first.graph_node.op == "Matmul" and result.first.argument == "b"
    assert result.first.graph_node.inputs[1][0] == next(n.id for n in result.graph if n.name == "w2")
    np.testing.assert_allclose(result.first.got, result.first.expected.T)


def _learner_pow_backward(ctx, g):
    a, b, _ = ctx.saved_tensors
    if isinstance(b, tl.Tensor):
        ga = g * b * a ** (b - 1)
    else:
        ga = g * (b * a ** (b - 1))
    return ga, None


def test_the_comparisons_code_panels_mark_only_the_lines_that_ran_in_each_pass():
    """x ** 3: in both backwards only the branch for a number exponent ran, and the engine's gradient
    for the exponent (which needs none) was not computed; their lines lose their marks."""
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    result = compare((x ** 3).sum(), "Pow.backward", _learner_pow_backward)
    assert result.identical
    yours, engines, _ = result.sources(next(n for n in result.nodes if n.op == "Pow"))

    def marked(source):
        return {source.lines[k].strip() for k in source.marks}

    assert "ga = g * (b * a ** (b - 1))" in marked(yours) and "ga = g * b * a ** (b - 1)" not in marked(yours)
    assert "ga = g * b * a ** (b - 1)" in marked(graph.backward_source(Pow, _learner_pow_backward))
    unmarked = "gb = _unbroadcast(ctx, mul(g, db), 1)"
    assert unmarked not in marked(engines) and "ga = _unbroadcast(ctx, mul(g, da), 0)" in marked(engines)
    assert unmarked in marked(graph.backward_source(Pow))


def test_a_learners_backward_is_checked_like_a_user_functions():
    a = tl.tensor([1.0, 2.0], requires_grad=True)
    with seams.replace(Mul, lambda ctx, g: g):
        with pytest.raises(RuntimeError, match="MulBackward returned an incorrect number of gradients"):
            (a * a).sum().backward()
    result = compare((a * 2.0).sum(), Mul, lambda ctx, g: (g.sum(), None))
    assert isinstance(result.error, RuntimeError) and "invalid gradient" in str(result.error)
    assert result.failed_at.name == "MulBackward" and not result


def test_unbroadcast():
    assert_bit_identical(backward_grads(("unbroadcast", learner_unbroadcast)), backward_grads())
    x = tl.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    b = tl.tensor([1.0, -2.0, 3.0], requires_grad=True)
    s = tl.tensor([[0.5], [2.0]], requires_grad=True)
    loss = ((x + b) * s).sum()  # b is broadcast over rows, s over columns
    assert compare(loss, "unbroadcast", learner_unbroadcast).identical
    result = compare(loss, "unbroadcast", wrong_unbroadcast, params={"b": b, "s": s})
    # the first op whose backward sums a broadcast gradient: the Mul (s's rows), then the Add (b)
    assert result.first.graph_node.op == "Add" and result.first.what == "sent" and result.first.argument == "b"
    np.testing.assert_array_equal(result.first.expected, [2.5, 2.5, 2.5])  # the sum of s over the rows
    np.testing.assert_array_equal(result.first.got, [1.25, 1.25, 1.25])  # their mean
    with seams.replace("unbroadcast", lambda g, shape: g):  # a wrong shape is named, not a NumPy error
        with pytest.raises(RuntimeError, match=r"unbroadcast\(\[2, 3\] -> \[2, 1\]\) returned \[2, 3\]"):
            ((x + b) * s).sum().backward()


def test_backward_order():
    assert_bit_identical(backward_grads(("backward_order", learner_order)), backward_grads())
    x, loss = diamond()
    assert compare(loss, "backward_order", learner_order).identical
    result = compare(loss, "backward_order", wrong_order)
    # x * 2 feeds both paths: BFS runs it after the short path only, so what it received differs
    assert result.first.graph_node.op == "Mul" and result.first.what == "received"
    h = np.array([0.2, 0.4, 0.6])
    np.testing.assert_allclose(result.first.expected, 3 + 5 * np.exp(h) * np.exp(5 * np.exp(h)), rtol=1e-6)
    np.testing.assert_array_equal(result.first.got, [3.0, 3.0, 3.0])  # the short path's gradient only


def test_accumulate():
    assert_bit_identical(backward_grads(("accumulate", learner_accumulate)), backward_grads())
    x, loss = diamond()
    assert compare(loss, "accumulate", learner_accumulate).identical
    result = compare(loss, "accumulate", wrong_accumulate)
    assert result.first.graph_node.op == "Mul" and result.first.what == "received"  # where the paths meet
    h = np.array([0.2, 0.4, 0.6])
    np.testing.assert_allclose(result.first.expected, 3 + 5 * np.exp(h) * np.exp(5 * np.exp(h)), rtol=1e-6)
    np.testing.assert_array_equal(result.first.got, [3.0, 3.0, 3.0])  # the short path's, the last to arrive


def test_im2col():
    rng = np.random.default_rng(0)

    def learner_im2col(x, geo):
        xp = geo.device.backend.xp
        padded = xp.pad(x, ((0, 0), (0, 0), (geo.pt, geo.pb), (geo.pl, geo.pr)))
        cols = xp.empty((geo.C, geo.kh, geo.kw, geo.OH, geo.OW, geo.N), dtype=x.dtype)
        for i in range(geo.kh):
            for j in range(geo.kw):
                r, c = i * geo.dh, j * geo.dw
                window = padded[:, :, r:r + geo.sh * (geo.OH - 1) + 1:geo.sh, c:c + geo.sw * (geo.OW - 1) + 1:geo.sw]
                cols[:, i, j] = window.transpose(1, 2, 3, 0)
        return cols

    def wrong_im2col(x, geo):  # the kernel's rows and columns swapped
        return learner_im2col(x, geo).transpose(0, 2, 1, 3, 4, 5).copy()

    def run(replace=None):
        x = tl.tensor(rng.standard_normal((2, 3, 6, 5)), requires_grad=True)
        w = tl.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
        if replace is None:
            out = tl.nn.functional.conv2d(x, w, stride=(2, 1), padding=1, dilation=(1, 2))
        else:
            with seams.replace("im2col", replace):
                out = tl.nn.functional.conv2d(x, w, stride=(2, 1), padding=1, dilation=(1, 2))
        return x, w, out

    rng = np.random.default_rng(0)
    _, _, reference = run()
    rng = np.random.default_rng(0)
    x, w, out = run(learner_im2col)
    np.testing.assert_array_equal(out.detach().numpy(), reference.detach().numpy())
    loss = (out * out).sum()
    assert compare(loss, "im2col", learner_im2col).identical
    result = compare(loss, "im2col", wrong_im2col, params={"weight": w})
    assert result.first.graph_node.op == "Conv" and result.first.what == "sent" and result.first.argument == "w"


def _train(steps: int = 5, replace=None) -> list:
    model, _ = mlp()
    opt = tl.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = tl.randn(4, 3, dtype=tl.float64), tl.tensor([0, 1, 1, 0])
    for _ in range(steps):
        opt.zero_grad()
        tl.nn.functional.cross_entropy(model(x), y).backward()
        if replace is None:
            opt.step()
        else:
            with seams.replace(*replace):
                opt.step()
    return [p.detach().numpy().copy() for p in model.parameters()]


def learner_sgd_step(opt, closure=None):
    """SGD with momentum, PyTorch's rule: b = momentum * b + g; p -= lr * b."""
    with tl.no_grad():
        for group in opt.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = opt.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = p.grad.clone()
                else:
                    state["momentum_buffer"].mul_(group["momentum"]).add_(p.grad)
                p.add_(state["momentum_buffer"], alpha=-group["lr"])


def test_an_optimizers_step():
    assert_bit_identical(_train(replace=(tl.optim.SGD, learner_sgd_step)), _train())

    def no_momentum(opt, closure=None):
        with tl.no_grad():
            for group in opt.param_groups:
                for p in group["params"]:
                    p.add_(p.grad, alpha=-group["lr"])

    wrong, right = _train(replace=("SGD.step", no_momentum)), _train()
    assert not all(np.array_equal(a, b) for a, b in zip(wrong, right))
    # the learner's step counts as a step for the lr schedulers' order check
    model, _ = mlp()
    opt = tl.optim.SGD(model.parameters(), lr=0.1)
    with seams.replace(tl.optim.SGD, learner_sgd_step):
        opt.step()
    assert opt._opt_called


def test_the_dataloaders_batching():
    data = tl.utils.data.TensorDataset(tl.arange(10.0).reshape(5, 2), tl.tensor([0, 1, 0, 1, 1]))

    def learner_batch(dataset, indices, collate_fn):
        samples = [dataset[i] for i in indices]
        return [tl.stack([s[k] for s in samples]) for k in range(len(samples[0]))]

    def wrong_batch(dataset, indices, collate_fn):  # loses each batch's last sample
        return learner_batch(dataset, indices[:-1] if len(indices) > 1 else indices, collate_fn)

    def batches(replace=None):
        loader = tl.utils.data.DataLoader(data, batch_size=2, shuffle=True, generator=tl.utils.data.Generator().manual_seed(1))
        if replace is None:
            return [[t.numpy().copy() for t in b] for b in loader]
        with seams.replace("batch", replace):
            return [[t.numpy().copy() for t in b] for b in loader]

    reference = batches()
    assert [len(b[0]) for b in reference] == [2, 2, 1]
    for got, want in zip(batches(learner_batch), reference):
        assert_bit_identical(got, want)
    assert [len(b[0]) for b in batches(wrong_batch)] == [1, 1, 1]


def test_the_stepper_finishes_a_pass_whose_order_is_wrong():
    x, loss = diamond()
    with seams.replace("backward_order", lambda roots: learner_order(roots)[::-1]):  # leaves first
        stepper = tl.graph.BackwardStepper(loss)
        stepper.run()
    assert stepper.done and [s.op for s in stepper.history] == ["Sum"] and x.grad is None


def test_a_seam_nobody_replaces_costs_nothing():
    """No seams code runs in a training step while no seam is replaced (counted as bytecodes.py counts)."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bytecodes.py"
    spec = importlib.util.spec_from_file_location("bytecodes", path)
    bytecodes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bytecodes)
    model, _ = mlp()
    opt = tl.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = tl.randn(4, 3, dtype=tl.float64), tl.tensor([0, 1, 1, 0])

    def step():
        opt.zero_grad()
        tl.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    step()
    ops, _ = bytecodes.count(step)
    assert not [key for key in ops if key.startswith("seams.py:")]
    with seams.replace("backward_order", learner_order):
        ops, _ = bytecodes.count(step)
    assert [key for key in ops if key.startswith("seams.py:")]  # the check sees a seam that runs
