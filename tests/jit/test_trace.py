"""jit.trace: a traced function replays the recorded ops; outputs and gradients match eager mode,
parameters are captured by reference, and the pitfalls raise or warn as documented."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import jit, nn
from tinygrad_lab.autograd import Function, events

from ._models import F, as_tuple, assert_same, host, models


@pytest.fixture(autouse=True)
def _clean_event_stream():
    yield
    assert events.subscribers == [], "tracing left a subscriber behind"


def _build(name: str, device: str):
    factory, shape = models()[name]
    tl.manual_seed(0)
    model = factory().to(device)
    return model, tl.randn(*shape, device=device)


@pytest.mark.parametrize("name", sorted(models()))
@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
def test_outputs_match_eager_without_grad(name, fuse, device):
    model, x = _build(name, device)
    traced = jit.trace(model, x, fuse=fuse)
    x2 = tl.randn(*x.shape, device=device)
    with tl.no_grad():
        assert_same(traced(x2), model(x2))  # the same forwards (and ufuncs, fused): bit for bit


@pytest.mark.parametrize("name", sorted(models()))
def test_outputs_and_gradients_match_eager(name, device):
    model, x = _build(name, device)
    traced = jit.trace(model, x)
    x2 = tl.randn(*x.shape, device=device).requires_grad_()

    def run(fn):
        model.zero_grad()
        x2.grad = None
        outs = as_tuple(fn(x2))
        sum(o.sum() for o in outs).backward()
        return outs, [x2.grad] + [p.grad for p in model.parameters()]

    eager_out, eager_grads = run(model)
    traced_out, traced_grads = run(traced)
    assert_same(traced_out, eager_out)  # the same ops through the same engine: bit for bit
    assert_same(tuple(traced_grads), tuple(eager_grads))
    assert traced_out[0].grad_fn is not None


def test_training_a_traced_model_updates_its_parameters():
    """Parameters are captured by reference: the optimizer's in-place updates reach the trace."""
    tl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    x, y = tl.randn(16, 4), tl.randn(16, 1)
    traced = jit.trace(model, x)
    opt = tl.optim.SGD(model.parameters(), lr=0.1)
    before = host(model[0].weight).copy()
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = F.mse_loss(traced(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert not np.array_equal(before, host(model[0].weight))
    assert losses[-1] < losses[0]
    with tl.no_grad():  # the fast path reads the new weights too
        assert_same(traced(x), model(x))


def test_plain_function_with_closure_parameters_and_multiple_outputs():
    tl.manual_seed(0)
    lin = nn.Linear(3, 2)

    def fn(a, b):
        h = lin(a) * b
        return h.softmax(-1), [h.sum(), a]

    a, b = tl.randn(4, 3), tl.randn(4, 2)
    traced = jit.trace(fn, (a, b))
    assert [v.name for v in traced.trace.captured] == ["weight", "bias"]  # named by their module
    a2, b2 = tl.randn(4, 3), tl.randn(4, 2)
    got, expected = traced(a2, b2), fn(a2, b2)
    assert isinstance(got, tuple) and isinstance(got[1], list)  # the structure is kept
    assert_same(got[0], expected[0])
    assert_same(got[1][0], expected[1][0])
    assert got[1][1] is a2  # an input returned as it is stays that tensor


def test_returns_the_same_structure():
    x = tl.randn(3)
    assert isinstance(jit.trace(lambda x: x * 2, x)(x), tl.Tensor)
    assert isinstance(jit.trace(lambda x: (x * 2,), x)(x), tuple)
    assert isinstance(jit.trace(lambda x: [x * 2, x + 1], x)(x), list)


def test_multi_output_ops_replay():
    def fn(x):
        first, second = x.split([1, 2], 1)
        return x.max(1), first * second.sum(1, keepdim=True)

    x = tl.randn(4, 3)
    traced = jit.trace(fn, x)
    x2 = tl.randn(4, 3)
    with tl.no_grad():
        got = traced(x2)
        assert type(got[0]).__name__ == "ValuesIndices"  # max(dim)'s named tuple comes back as one
        assert_same((*got[0], got[1]), (*fn(x2)[0], fn(x2)[1]))
    x3 = tl.randn(4, 3, requires_grad=True)
    got = traced(x3)
    assert_same((*got[0], got[1]), (*fn(x3)[0], fn(x3)[1]))


def test_index_tensors_follow_the_new_inputs():
    """An embedding lookup keeps the indices' array inside its key: the trace substitutes the new one."""
    tl.manual_seed(0)
    emb = nn.Embedding(10, 3)
    traced = jit.trace(emb, tl.tensor([1, 2, 3]))
    idx = tl.tensor([7, 0, 7])
    with tl.no_grad():
        assert_same(traced(idx), emb(idx))
    assert "x0.array" in str(traced)


def test_detach_is_recorded_and_cuts_the_gradient():
    def fn(x):
        return x * x.detach()

    x = tl.randn(3, requires_grad=True)
    traced = jit.trace(fn, x)
    assert [s.fn for s in traced.trace.steps] == [jit.Detach, tl.ops.elementwise.Mul]
    traced(x).sum().backward()
    np.testing.assert_array_equal(host(x.grad), host(x.detach()))  # d/dx x * c = c


def test_dead_code_is_eliminated():
    def fn(x):
        unused = x.exp().sum()  # noqa: F841  (computed and thrown away)
        return x * 2

    traced = jit.trace(fn, tl.randn(3))
    assert [s.fn.__name__ for s in traced.trace.steps] == ["Mul"]


def test_listing_and_code_are_readable():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    traced = jit.trace(model, tl.randn(2, 4))
    listing = str(traced)
    assert "input x0: [2, 4] float32 on cpu" in listing
    assert "captured 0.weight: [3, 4] float32 on cpu" in listing
    assert "v0 = Linear(x0, 0.weight, 0.bias)" in listing and "v1 = Relu(v0)" in listing
    assert listing.rstrip().endswith("return v1")
    assert "def forward(x0):" in traced.code and "def forward_engine(x0):" in traced.code
    assert "Linear.forward(" in traced.code and "Linear.apply(" in traced.code
    assert repr(traced) == "<TracedFunction of Sequential: 2 steps, 1 fused kernel(s)>"
    again = jit.trace(model, tl.randn(2, 4))
    assert str(again) == listing and again.code == traced.code  # deterministic


def test_a_user_function_replays_through_apply():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

    traced = jit.trace(lambda x: Square.apply(x) + 1, tl.randn(3))
    x = tl.randn(3, requires_grad=True)
    with tl.no_grad():
        assert_same(traced(x), Square.apply(x) + 1)
    traced(x).sum().backward()
    np.testing.assert_allclose(host(x.grad), 2 * host(x.detach()), rtol=1e-6)


def test_the_trace_publishes_the_same_events_as_eager_with_gradients():
    x = tl.randn(3, requires_grad=True)
    traced = jit.trace(lambda x: (x * 2).exp(), x)
    seen = []
    with events.subscribe(seen.append):
        traced(x)
    assert [e.fn.__name__ for e in seen] == ["Mul", "Exp"]


def test_engine_path_restores_module_scopes():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    traced = jit.trace(model, tl.randn(2, 4))
    out = traced(tl.randn(2, 4, requires_grad=True))
    assert [type(m).__name__ for m in out.grad_fn.scope] == ["Sequential", "ReLU"]
    assert tl.autograd.function.scope_stack == []


def test_graph_view_of_the_trace_is_the_eager_graph():
    graph = pytest.importorskip("tinygrad_lab.graph")
    if not hasattr(graph, "record"):
        pytest.skip("tinygrad_lab.graph has no record() yet")
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    x = tl.randn(2, 4)
    traced = jit.trace(model, x)
    with graph.record(dict(model.named_parameters())) as rec:
        model(x)
    g = traced.graph()
    assert isinstance(g, graph.Graph)
    for clusters in (False, True):  # the same nodes, names and module clusters
        assert g.to_dot(cluster_modules=clusters) == rec.graph.to_dot(cluster_modules=clusters)


# ---------------------------------------------------------------- the limits, raising or warning

def test_other_shapes_raise_a_clear_error():
    traced = jit.trace(lambda a: a.relu(), tl.ones(4))
    with pytest.raises(RuntimeError, match=r"traced for input 0 of shape \[4\] float32 on cpu, got shape \[5\]"):
        traced(tl.ones(5))
    with pytest.raises(RuntimeError, match=r"got float64"):
        traced(tl.ones(4, dtype=tl.float64))
    with pytest.raises(TypeError, match=r"got a list"):
        traced([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(TypeError, match=r"traced with 1 input\(s\), got 2"):
        traced(tl.ones(4), tl.ones(4))


def test_other_devices_raise(other_device):
    traced = jit.trace(lambda a: a.relu(), tl.ones(4))
    with pytest.raises(RuntimeError, match=rf"on cpu, got on {other_device}"):
        traced(tl.ones(4, device=other_device))


def test_a_model_changed_after_tracing_raises():
    model = nn.Linear(3, 2)
    traced = jit.trace(model, tl.ones(1, 3))
    model.double()
    with pytest.raises(RuntimeError, match=r"captured tensor weight was traced as shape \[2, 3\] float32 on cpu and "
                                           r"is now float64.*Trace again"):
        traced(tl.ones(1, 3))


def test_value_dependent_branch_warns_and_is_frozen():
    def fn(x):
        if x.sum() > 0:  # a Python branch on a tensor's value
            return x * 2
        return x * 3

    with pytest.warns(jit.TracerWarning, match=r"bool\(tensor\).*frozen into the trace") as record:
        traced = jit.trace(fn, tl.ones(3))
    assert record[0].filename == __file__  # points at the branch
    negative = tl.full((3,), -1.0)
    np.testing.assert_array_equal(host(traced(negative)), [-2.0, -2.0, -2.0])  # eager would give -3
    with pytest.warns(jit.TracerWarning) as record:
        jit.trace(fn, tl.ones(3), check_inputs=[(negative,)])
    assert any("on check inputs 0, output 0 of the trace differs" in str(w.message) for w in record)


@pytest.mark.parametrize("convert", [lambda t: t.item(), float, lambda t: t.tolist(), lambda t: t.numpy()])
def test_every_conversion_of_a_traced_value_warns(convert):
    with pytest.warns(jit.TracerWarning, match="turned a traced tensor"):
        jit.trace(lambda x: x * convert(x.sum()), tl.ones(3))


def test_shapes_and_constants_do_not_warn():
    def fn(x):
        n = x.shape[0]  # shapes are fixed by the trace anyway
        if tl.tensor(1.0) > 0:  # a constant's value is the same on every call
            return x * n
        return x

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        traced = jit.trace(fn, tl.ones(3))
    assert traced.trace.steps[-1].fn.__name__ == "Mul"


def test_methods_are_restored_after_tracing():
    before = (tl.Tensor.__bool__, tl.Tensor.item, tl.random.generator, tl.random.numpy_generator)

    def boom(x):
        raise ValueError("inside the traced function")

    with pytest.raises(ValueError):
        jit.trace(boom, tl.ones(2))
    assert (tl.Tensor.__bool__, tl.Tensor.item, tl.random.generator, tl.random.numpy_generator) == before


def test_dropout_in_training_mode_warns():
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    with pytest.warns(jit.TracerWarning, match="random numbers were drawn"):
        jit.trace(model, tl.ones(2, 3))
    g = tl.Generator().manual_seed(0)
    with pytest.warns(jit.TracerWarning, match="random numbers were drawn"):  # a Generator of one's own, too
        jit.trace(lambda x: x + tl.rand(3, generator=g), tl.ones(3))
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jit.trace(model, tl.ones(2, 3))


def test_in_place_change_of_a_traced_tensor_raises():
    def fn(x):
        y = x * 2
        y += 1  # an in-place change: not an op the stream shows
        return y * 3

    with pytest.raises(jit.TracingError, match=r"v0 \(\[3\] float32 on cpu\) was modified in place"):
        jit.trace(fn, tl.ones(3))


def test_in_place_update_of_a_buffer_warns():
    bn = nn.BatchNorm1d(3)  # training mode: the running statistics are updated in place
    with pytest.warns(jit.TracerWarning, match=r"modified running_mean \(\[3\] float32 on cpu\), running_var .* in place"):
        jit.trace(bn, tl.randn(4, 3))


def test_backward_inside_the_traced_function_raises():
    def fn(x):
        y = (x * x).sum()
        y.backward()
        return y

    with pytest.raises(jit.TracingError, match="ran backward"):
        jit.trace(fn, tl.ones(3, requires_grad=True))


def test_bad_results_and_inputs_raise():
    with pytest.raises(jit.TracingError, match="must return tensors .*got int 3"):
        jit.trace(lambda x: 3, tl.ones(2))
    with pytest.raises(TypeError, match="example input 0 is a list"):
        jit.trace(lambda x: x, [[1.0]])
    x = tl.ones(2)
    with pytest.raises(ValueError, match="example inputs 0 and 1 share one array"):
        jit.trace(lambda a, b: a + b, (x, x))


def test_a_trace_inside_a_trace_is_recorded():
    """A subscriber (here the outer tracer) sends the inner replay through the engine, so its ops are seen."""
    inner = jit.trace(lambda x: x.exp() * 2, tl.randn(3))
    outer = jit.trace(lambda x: inner(x + 1).sum(), tl.randn(3))
    assert [s.fn.__name__ for s in outer.trace.steps] == ["Add", "Exp", "Mul", "Sum"]
    x = tl.randn(3)
    with tl.no_grad():
        assert_same(outer(x), ((x + 1).exp() * 2).sum())


def test_gradcheck_and_gradgradcheck_through_a_trace():
    """The engine path is the eager engine: finite differences agree, to second order too."""
    w = tl.randn(3, 2, dtype=tl.float64)
    traced = jit.trace(lambda x: (x @ w).tanh().sum(1), tl.randn(4, 3, dtype=tl.float64))
    x = tl.randn(4, 3, dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(traced, (x,))
    assert tl.autograd.gradgradcheck(traced, (x,))


def test_a_value_dependent_loop_warns_once_per_line():
    def grow(x):
        while x.sum() < 100:  # the same line decides three times
            x = x * 3
        return x

    with pytest.warns(jit.TracerWarning) as record:
        jit.trace(grow, (tl.ones(2),))
    assert len([w for w in record if issubclass(w.category, jit.TracerWarning)]) == 1
