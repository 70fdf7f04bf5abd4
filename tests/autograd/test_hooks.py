"""Tensor hooks (register_hook) and retain_grad, against PyTorch's behaviour."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import autograd

from ._helpers import assert_close, assert_grads_match, assert_same_records, leaf, run_both, to_np

pytestmark = pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf:UserWarning")

X = [0.5, -1.0, 2.0]
W = [1.5, 0.25, -2.0]


def _compare(torch, scenario, *datas):
    """Run the scenario in both libraries; compare what it recorded and the leaves' grads."""
    (ours, rec), (theirs, trec) = run_both(torch, scenario, *datas)
    assert_same_records(rec, trec)
    assert_grads_match(list(zip(ours, theirs)))
    return rec


def test_leaf_hook_observes(torch):
    def scenario(x):
        seen = []
        x.register_hook(lambda g: seen.append(to_np(g)))
        (x * x).sum().backward()
        return seen

    seen = _compare(torch, scenario, X)
    assert len(seen) == 1
    assert_close(seen[0], 2 * np.array(X))


def test_leaf_hook_replaces_gradient(torch):
    def scenario(x):
        x.register_hook(lambda g: g * 10.0)
        (x * x).sum().backward()
        return []

    _compare(torch, scenario, X)


def test_leaf_hook_replaced_gradient_exact():
    x = leaf(X)
    x.register_hook(lambda g: g * 10.0)
    (x * x).sum().backward()
    assert_close(x.grad, 20 * np.array(X))


def test_non_leaf_hook_observes_and_replaces(torch):
    def scenario(x, w):
        seen = []
        y = x * w
        y.register_hook(lambda g: seen.append(to_np(g)))
        y.register_hook(lambda g: g * 3.0)
        (y * y).sum().backward()
        return seen

    seen = _compare(torch, scenario, X, W)
    assert_close(seen[0], 2 * np.array(X) * W)


def test_non_leaf_hook_replacement_propagates_upstream():
    x = leaf(X)
    y = x * 2.0
    y.register_hook(lambda g: g * 3.0)
    (y * y).sum().backward()
    # d/dx (2x)^2 = 8x, times the hook's 3
    assert_close(x.grad, 24 * np.array(X))


def test_handle_remove(torch):
    def scenario(x):
        calls = []
        h = x.register_hook(lambda g: calls.append("leaf") or g * 100.0)
        y = x * 2.0
        hy = y.register_hook(lambda g: calls.append("y") or g * 100.0)
        h.remove()
        hy.remove()
        (y * y).sum().backward()
        return calls

    assert _compare(torch, scenario, X) == []


def test_handle_remove_after_use():
    x = leaf(X)
    calls = []
    h = x.register_hook(lambda g: calls.append(1))
    (x * 2.0).sum().backward()
    h.remove()
    (x * 2.0).sum().backward()
    assert calls == [1]
    assert_close(x.grad, [4.0, 4.0, 4.0])


def test_several_hooks_run_in_registration_order(torch):
    def scenario(x):
        order = []
        y = x.exp()
        y.register_hook(lambda g: order.append("first") or g + 1.0)
        y.register_hook(lambda g: order.append(to_np(g)) or g * 2.0)
        y.register_hook(lambda g: order.append("third"))
        x.register_hook(lambda g: order.append("leaf-a") or g - 1.0)
        x.register_hook(lambda g: order.append("leaf-b") or g * 5.0)
        (y * 3.0).sum().backward()
        return order

    order = _compare(torch, scenario, X)
    assert order[0] == "first" and order[2] == "third" and order[3:] == ["leaf-a", "leaf-b"]
    assert_close(order[1], [4.0, 4.0, 4.0])  # the second hook sees the first one's result


def test_hooks_on_both_outputs_of_split(torch):
    def scenario(x):
        seen = []
        a, b = x.split([2, 3])
        b.register_hook(lambda g: seen.append(("b", to_np(g).tolist())) or g * 7.0)
        a.register_hook(lambda g: seen.append(("a", to_np(g).tolist())))
        ((a * a).sum() + (b * 4.0).sum()).backward()
        return [str(s) for s in sorted(seen)]

    _compare(torch, scenario, [1.0, 2.0, 3.0, 4.0, 5.0])


def test_hook_called_by_autograd_grad(torch):
    def scenario(x):
        y = x * 2.0
        y.register_hook(lambda g: g * 3.0)
        x.register_hook(lambda g: g * 10.0)
        return list(autograd.grad((y * y).sum(), x) if isinstance(x, tl.Tensor)
                    else torch.autograd.grad((y * y).sum(), x))

    _compare(torch, scenario, X)


def test_leaf_hook_with_accumulation(torch):
    def scenario(x):
        x.register_hook(lambda g: g * 2.0)
        (x * x).sum().backward()
        (x * 3.0).sum().backward()
        return []

    _compare(torch, scenario, X)


def test_register_hook_on_tensor_without_grad_raises(torch):
    with pytest.raises(RuntimeError):
        torch.tensor(X).register_hook(lambda g: g)
    with pytest.raises(RuntimeError):
        tl.tensor(X).register_hook(lambda g: g)


# ---------------------------------------------------------------- retain_grad

def test_non_leaf_has_no_grad_without_retain_grad(torch):
    def scenario(x):
        y = x * 2.0
        (y * y).sum().backward()
        return [y.grad]

    _compare(torch, scenario, X)


def test_retain_grad_stores_non_leaf_grad(torch):
    def scenario(x, w):
        y = x * w
        y.retain_grad()
        (y.sin() * y).sum().backward()
        return [y.grad, y.retains_grad, y.is_leaf]

    rec = _compare(torch, scenario, X, W)
    y = np.array(X) * W
    assert_close(rec[0], np.cos(y) * y + np.sin(y))


def test_retain_grad_sees_gradient_after_hooks_registered_later(torch):
    # PyTorch >= 2: the retained .grad is the gradient after all of the tensor's hooks,
    # whatever the order of retain_grad() and register_hook()
    def scenario(x):
        y = x * 2.0
        y.retain_grad()
        y.register_hook(lambda g: g * 3.0)
        (y * y).sum().backward()
        return [y.grad]

    rec = _compare(torch, scenario, X)
    assert_close(rec[0], 3 * 2 * 2 * np.array(X))


def test_retain_grad_sees_gradient_after_hooks_registered_earlier(torch):
    def scenario(x):
        y = x * 2.0
        y.register_hook(lambda g: g * 3.0)
        y.retain_grad()
        (y * y).sum().backward()
        return [y.grad]

    _compare(torch, scenario, X)


def test_retain_grad_accumulates_over_backward_calls(torch):
    def scenario(x):
        y = x.exp()
        y.retain_grad()
        loss = (y * y).sum()
        loss.backward(retain_graph=True)
        first = to_np(y.grad)
        loss.backward()
        return [first, y.grad]

    _compare(torch, scenario, X)


def test_retain_grad_on_leaf_is_a_no_op(torch):
    def scenario(x):
        x.retain_grad()
        (x * 2.0).sum().backward()
        return [x.retains_grad, x.grad]

    _compare(torch, scenario, X)


def test_retain_grad_of_one_output_of_a_multi_output_op(torch):
    def scenario(x):
        a, b = x.split(2)
        b.retain_grad()
        ((a * 2.0).sum() + (b * b).sum()).backward()
        return [a.grad, b.grad]

    _compare(torch, scenario, [1.0, 2.0, 3.0, 4.0])


# ---------------------------------------------------------------- hooks returning the wrong thing

def _errors(lib, make_hook, on_leaf: bool):
    """The exception (type, message) raised by a backward through a hook; None if none is raised."""
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    target = x if on_leaf else x * 2.0
    target.register_hook(make_hook())
    try:
        (target * 3.0).sum().backward()
    except Exception as e:
        return type(e), str(e)
    return None


def _sliced():
    def keep_first_row(g):
        return g[:1]
    return keep_first_row


@pytest.mark.parametrize("on_leaf", [True, False], ids=["leaf", "non_leaf"])
@pytest.mark.parametrize("make_hook, kind, words", [
    (_sliced, RuntimeError, "hook 'keep_first_row' has changed the size of value"),
    (lambda: (lambda g: g.sum(0)), RuntimeError, "hook '<lambda>' has changed the size of value"),
    (lambda: (lambda g: 1.0), TypeError, "hook '<lambda>' returned 'float'"),
    (lambda: (lambda g: g.double()), RuntimeError, "hook '<lambda>' has changed the type of value"),
], ids=["sliced", "reduced", "float", "dtype"])
def test_a_hook_may_not_change_the_gradients_size_type_or_dtype(torch, make_hook, kind, words, on_leaf):
    ours = _errors(tl, make_hook, on_leaf)
    assert ours is not None and ours[0] is kind and words in ours[1], ours
    theirs = _errors(torch, make_hook, on_leaf)
    assert theirs is not None and theirs[0] is kind  # PyTorch refuses it too, with the same exception type


def test_a_refused_hook_leaves_no_gradient_behind():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g[:1])
    with pytest.raises(RuntimeError, match="changed the size"):
        (x * 2.0).sum().backward()
    assert x.grad is None
