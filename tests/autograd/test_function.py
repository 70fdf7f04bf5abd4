"""Custom autograd.Function subclasses (PyTorch's documented form) and the graph nodes
that every op, built-in or custom, records."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import autograd
from tinygrad_lab.autograd import AccumulateGrad, Function, Node, gradcheck, gradgradcheck

from ._helpers import LinearFunction, MyExp, SinCos, assert_close, assert_grads_match, leaf, pair, to_np

X = [0.3, -1.2, 2.0]


# ---------------------------------------------------------------- custom Functions: values and gradients

def test_exp_saving_its_output_hand_derived(device):
    x = leaf(X, device=device)
    y = MyExp.apply(x)
    assert_close(y, np.exp(X))
    assert y.requires_grad and y.grad_fn is not None
    (y * leaf([1.0, 2.0, 3.0], False, device=device)).sum().backward()
    assert_close(x.grad, np.exp(X) * [1.0, 2.0, 3.0])


def test_exp_gradcheck_and_gradgradcheck():
    x = leaf(X)
    assert gradcheck(MyExp.apply, (x,))
    # backward uses the saved output, which is itself differentiable: d2/dx2 exp = exp
    assert gradgradcheck(MyExp.apply, (x,))


def test_exp_second_derivative_through_saved_output():
    x = leaf(X)
    (g,) = autograd.grad(MyExp.apply(x).sum(), x, create_graph=True)
    (gg,) = autograd.grad(g.sum(), x)
    assert_close(gg, np.exp(X))


def test_two_outputs_both_used_hand_derived():
    x = leaf(X)
    s, c = SinCos.apply(x)
    assert_close(s, np.sin(X))
    assert_close(c, np.cos(X))
    assert s.grad_fn is c.grad_fn  # one node, two outputs
    (2.0 * s + 3.0 * c).sum().backward()
    assert_close(x.grad, 2 * np.cos(X) - 3 * np.sin(X))


def test_two_outputs_only_one_used_gets_zeros_for_the_other():
    x = leaf(X)
    s, c = SinCos.apply(x)
    c.sum().backward()
    assert_close(x.grad, -np.sin(X))


def test_two_outputs_gradcheck():
    assert gradcheck(SinCos.apply, (leaf(X),))


def test_two_outputs_matches_torch(torch):
    x, tx = pair(torch, X)
    s, c = SinCos.apply(x)
    (s * c + s).sum().backward()
    ts, tc = tx.sin(), tx.cos()
    (ts * tc + ts).sum().backward()
    assert_grads_match([(x, tx)])


def test_set_materialize_grads_false_passes_none():
    received = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2.0, x * 3.0

        @staticmethod
        def backward(ctx, g1, g2):
            received.append((g1 is None, g2 is None))
            out = 0.0
            if g1 is not None:
                out = out + g1 * 2.0
            if g2 is not None:
                out = out + g2 * 3.0
            return out

    x = leaf(X)
    a, b = Two.apply(x)
    b.sum().backward()
    assert received == [(True, False)]
    assert_close(x.grad, [3.0, 3.0, 3.0])


@pytest.mark.parametrize("needs", [(True, True, True), (False, True, True), (True, False, False),
                                   (True, True, False)])
def test_needs_input_grad_matches_torch(torch, needs):
    rng = np.random.default_rng(1)
    xi, wi, bi = rng.standard_normal((4, 3)), rng.standard_normal((2, 3)), rng.standard_normal(2)
    x, tx = pair(torch, xi, needs[0])
    w, tw = pair(torch, wi, needs[1])
    b, tb = pair(torch, bi, needs[2])
    LinearFunction.seen.clear()
    out = LinearFunction.apply(x, w, b)
    tout = torch.nn.functional.linear(tx, tw, tb)
    assert_close(out, tout)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    assert LinearFunction.seen == [needs]
    assert_grads_match([(x, tx), (w, tw), (b, tb)])


def test_needs_input_grad_without_optional_bias(torch):
    x, tx = pair(torch, [[1.0, 2.0], [3.0, 4.0]])
    w, tw = pair(torch, [[0.5, -1.0]])
    LinearFunction.seen.clear()
    LinearFunction.apply(x, w).sum().backward()
    torch.nn.functional.linear(tx, tw).sum().backward()
    assert LinearFunction.seen == [(True, True)]  # one entry per forward argument
    assert_grads_match([(x, tx), (w, tw)])


def test_extra_none_gradients_are_allowed():
    # PyTorch: returning more gradients than inputs is fine as long as the extra ones are None
    class ExtraNone(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * 2.0, None

    x = leaf(X)
    ExtraNone.apply(x).sum().backward()
    assert_close(x.grad, [2.0, 2.0, 2.0])


class SortedWithOrder(Function):
    """Two float outputs, the second marked non-differentiable (as sort's indices)."""

    @staticmethod
    def forward(ctx, x):
        order = x.detach().numpy().argsort(kind="stable")
        ctx.order = order
        values = tl.tensor(x.detach().numpy()[order])
        idx = tl.tensor(order.astype(np.float64))
        ctx.mark_non_differentiable(idx)
        return values, idx

    @staticmethod
    def backward(ctx, g_values, g_idx):
        assert g_idx is not None and not np.any(to_np(g_idx))  # zeros, materialized
        grad = np.zeros(len(ctx.order))
        grad[ctx.order] = to_np(g_values)
        return tl.tensor(grad)


def test_mark_non_differentiable():
    x = leaf([3.0, 1.0, 2.0])
    values, idx = SortedWithOrder.apply(x)
    assert values.requires_grad and values.grad_fn is not None
    assert not idx.requires_grad and idx.grad_fn is None
    assert to_np(idx).tolist() == [1.0, 2.0, 0.0]
    (values * leaf([10.0, 20.0, 30.0], False)).sum().backward()
    assert_close(x.grad, [30.0, 10.0, 20.0])


class ScaleShift(Function):
    """x * scale + shift with non-tensor arguments stored on ctx."""

    @staticmethod
    def forward(ctx, x, scale, shift):
        ctx.scale = scale
        return x * scale + shift

    @staticmethod
    def backward(ctx, g):
        return g * ctx.scale, None, None


def test_non_tensor_arguments():
    x = leaf(X)
    y = ScaleShift.apply(x, 3.0, 2)
    assert_close(y, np.array(X) * 3 + 2)
    assert len(y.grad_fn.next_functions) == 1  # as PyTorch: one entry per tensor argument
    assert y.grad_fn.needs_input_grad == (True, False, False)
    y.sum().backward()
    assert_close(x.grad, [3.0, 3.0, 3.0])
    assert gradcheck(lambda t: ScaleShift.apply(t, -0.5, 7.0), (leaf(X),))


def test_forward_runs_without_recording():
    inside = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2.0
            inside.append((tl.is_grad_enabled(), y.grad_fn, y.requires_grad))
            return y

        @staticmethod
        def backward(ctx, g):
            return g * 2.0

    x = leaf(X)
    out = Probe.apply(x)
    assert inside == [(False, None, False)]
    assert tl.is_grad_enabled()
    assert out.grad_fn.fn is Probe  # the node is the custom Function's, not Mul's
    out.sum().backward()
    assert_close(x.grad, [2.0, 2.0, 2.0])


def test_custom_function_under_no_grad_records_nothing():
    x = leaf(X)
    with tl.no_grad():
        y = MyExp.apply(x)
    assert y.grad_fn is None and not y.requires_grad
    assert_close(y, np.exp(X))


def test_custom_function_without_grad_inputs_records_nothing():
    y = MyExp.apply(leaf(X, requires_grad=False))
    assert y.grad_fn is None and not y.requires_grad


def test_custom_function_composes_with_builtin_ops(torch):
    x, tx = pair(torch, X)
    y = (MyExp.apply(x * 2.0) + 1.0).log()
    y.sum().backward()
    ((tx * 2.0).exp() + 1.0).log().sum().backward()
    assert_grads_match([(x, tx)])


# ---------------------------------------------------------------- misuse: wrong number / shape of gradients

class TooManyGrads(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * 2.0, g


class TooFewGrads(Function):
    @staticmethod
    def forward(ctx, x, y):
        return x * y

    @staticmethod
    def backward(ctx, g):
        return g


class WrongShapeGrad(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g.sum()


@pytest.mark.parametrize("fn, args", [(TooManyGrads, 1), (TooFewGrads, 2)])
def test_wrong_number_of_gradients_names_the_function(fn, args):
    xs = [leaf(X) for _ in range(args)]
    y = fn.apply(*xs)
    with pytest.raises(RuntimeError, match=fn.__name__) as info:
        y.sum().backward()
    assert "number of gradients" in str(info.value)


def test_wrong_gradient_shape_names_the_function_and_shapes():
    y = WrongShapeGrad.apply(leaf(X))
    with pytest.raises(RuntimeError, match="WrongShapeGrad") as info:
        y.sum().backward()
    assert "3" in str(info.value) and "shape" in str(info.value)


class ArrayGrad(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g.numpy() * 2.0  # an array, not a Tensor


class TrailingNones(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3.0

    @staticmethod
    def backward(ctx, g):
        return g * 3.0, None, None  # extra Nones are allowed, as in PyTorch


def test_a_gradient_that_is_not_a_tensor_names_the_function_and_type():
    with pytest.raises(TypeError, match=r"ArrayGrad.*type ndarray at index 0; expected a Tensor or None"):
        ArrayGrad.apply(leaf(X)).sum().backward()


def test_extra_trailing_none_gradients_are_dropped():
    x = leaf(X)
    TrailingNones.apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(len(X), 3.0, np.float32))


def test_wrong_gradient_shape_in_autograd_grad_too():
    x = leaf(X)
    with pytest.raises(RuntimeError, match="WrongShapeGrad"):
        autograd.grad(WrongShapeGrad.apply(x).sum(), x)


# ---------------------------------------------------------------- graph nodes: names, edges, ids

def test_grad_fn_names():
    x, y = leaf(X), leaf([1.0, 2.0, 3.0])
    assert repr((x * y).grad_fn) == "<MulBackward>"
    assert (x * y).grad_fn.name == "MulBackward"
    assert repr((x + y).grad_fn) == "<AddBackward>"
    assert repr(x.exp().grad_fn) == "<ExpBackward>"
    assert repr(x.sum().grad_fn) == "<SumBackward>"
    assert repr(MyExp.apply(x).grad_fn) == "<MyExpBackward>"
    assert x.grad_fn is None and x.is_leaf
    assert "grad_fn=<MulBackward>" in repr(x * y)


def test_next_functions_structure():
    x, y = leaf(X), leaf([1.0, 2.0, 3.0])
    m = x * y
    z = m + x
    add = z.grad_fn
    assert isinstance(add, Node)
    assert len(add.next_functions) == 2
    (mul_node, nr0), (acc_x, nr1) = add.next_functions
    assert mul_node is m.grad_fn and nr0 == 0 and nr1 == 0
    assert isinstance(acc_x, AccumulateGrad) and acc_x.variable is x
    acc_x2, acc_y = (e[0] for e in mul_node.next_functions)
    assert acc_x2 is acc_x  # one AccumulateGrad per leaf
    assert acc_y.variable is y
    assert acc_x.next_functions == ()


def test_next_functions_none_for_inputs_without_grad_and_output_nr():
    x = leaf(X)
    c = leaf([1.0, 1.0, 1.0], requires_grad=False)
    y = x * c
    assert y.grad_fn.next_functions[1] == (None, 0)  # as PyTorch
    assert y.grad_fn.needs_input_grad == (True, False)
    s, co = SinCos.apply(x)
    z = co * s
    assert z.grad_fn.next_functions == ((s.grad_fn, 1), (s.grad_fn, 0))


def test_node_ids_increase_in_creation_order():
    x = leaf(X)
    a = x * 2.0
    b = a + 1.0
    c = b.exp()
    d = MyExp.apply(c)
    ids = [t.grad_fn.id for t in (a, b, c, d)]
    assert ids == sorted(ids) and len(set(ids)) == 4
    for t in (a, b, c, d):  # every node's id is larger than its inputs'
        for e in t.grad_fn.next_functions:
            if e is not None:
                assert e[0].id < t.grad_fn.id


def test_builtin_ops_are_functions():
    x = leaf(X)
    y = x * 2.0
    assert isinstance(y.grad_fn.fn, type)
    assert issubclass(y.grad_fn.fn, Function)
    assert y.grad_fn.fn.__name__ == "Mul"
    for t in (x.exp(), x.sum(), x.reshape(3, 1), x[1:], x @ x, x.tanh()):
        assert issubclass(t.grad_fn.fn, Function), t.grad_fn
    # and the built-in Function can be applied directly, like a custom one
    mul = y.grad_fn.fn
    z = mul.apply(x, x)
    assert_close(z, np.square(X))
    z.sum().backward()
    assert_close(x.grad, 2 * np.array(X))


def test_ctx_is_the_node():
    captured = []

    class Capture(Function):
        @staticmethod
        def forward(ctx, x):
            captured.append(ctx)
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return g

    y = Capture.apply(leaf(X))
    assert captured == [y.grad_fn]


# ---------------------------------------------------------------- built-in ops are marked, not guessed

def test_builtin_ops_are_marked_by_their_base_class_not_their_module():
    from tinygrad_lab.ops import Op
    from tinygrad_lab.ops.elementwise import Mul

    assert issubclass(Mul, Op) and Mul.array_forward
    # a copy of Mul in a user's notebook: the same path when it subclasses Op ...
    CopiedMul = type("CopiedMul", (Op,), {"forward": Mul.forward, "backward": Mul.backward})
    assert CopiedMul.array_forward
    # ... and the user Function path when it subclasses Function, wherever it is defined
    UserMul = type("UserMul", (Function,), {"forward": Mul.forward, "backward": Mul.backward,
                                            "__module__": "tinygrad_lab.ops.elementwise"})
    assert not UserMul.array_forward
    x = leaf([1.0, 2.0, 3.0])
    for fn in (CopiedMul, UserMul):
        y = fn.apply(x, x)
        assert y.grad_fn.fn is fn
        y.sum().backward()
    assert_close(x.grad, 2 * 2 * np.array([1.0, 2.0, 3.0]))


def test_a_user_functions_backward_is_checked_and_a_builtin_ops_is_not():
    from tinygrad_lab.ops import Op

    def wrong_shape(ctx, g):
        return g.sum()

    class UserOp(Function):
        forward = staticmethod(lambda ctx, x: x._data * 2.0)
        backward = staticmethod(wrong_shape)

    class BuiltinOp(Op):
        forward = staticmethod(lambda ctx, x: x._data * 2.0)
        backward = staticmethod(wrong_shape)

    with pytest.raises(RuntimeError, match="UserOpBackward returned an invalid gradient"):
        UserOp.apply(leaf(X)).sum().backward()
    x = leaf(X)
    BuiltinOp.apply(x).sum().backward()  # trusted: the wrong shape reaches .grad (tests check built-in ops)
    assert x.grad.shape == ()


def test_make_gives_the_fields_init_declares():
    from tinygrad_lab.autograd.tensor_base import make
    arr = np.ones(3)
    fast, slow = make(arr, tl.device("cpu")), tl.Tensor(arr, tl.device("cpu"))
    assert type(fast) is type(slow) is tl.Tensor
    for name in vars(slow):  # every field __init__ declares reads the same from a tensor make() built
        assert getattr(fast, name) is getattr(slow, name), name
    scalar = make(np.float32(2.0), tl.device("cpu"))._data  # a NumPy scalar becomes a 0-d array
    assert isinstance(scalar, np.ndarray) and scalar.shape == ()
    with pytest.raises(TypeError, match="create tensors with tinygrad_lab.tensor"):
        tl.Tensor([1.0, 2.0])


def test_a_node_declares_its_fields_in_init_or_with_their_defaults_in_the_class():
    import inspect
    y = leaf(X) * 2.0
    source = inspect.getsource(Node.__init__)
    body = inspect.getsource(Node).split("    def __init__")[0]  # the class body before __init__: the defaults
    for name in vars(y.grad_fn):
        declared_in_init = f"self.{name} " in source or f"self.{name}:" in source
        assert declared_in_init or re.search(rf"^    {name}\b.*=.*#", body, re.M), name
