"""In-place ops, version counters and autograd (PyTorch semantics)."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl

from ._helpers import assert_close, assert_grads_match, leaf, run_both, to_np

X = [0.5, -1.0, 2.0]
W = [1.5, 0.25, -2.0]

# (name, in-place statement on `x`, a float tensor of shape (3,)); `lib` is tinygrad_lab or torch
INPLACE = [
    ("add_", "x.add_(1.0)"),
    ("add_tensor", "x.add_(lib.ones(3, dtype=x.dtype))"),
    ("sub_", "x.sub_(1.0)"),
    ("mul_", "x.mul_(2.0)"),
    ("div_", "x.div_(2.0)"),
    ("setitem", "x[0] = 5.0"),
    ("setitem_slice", "x[1:] = lib.ones(2, dtype=x.dtype)"),
    ("zero_", "x.zero_()"),
    ("fill_", "x.fill_(2.0)"),
    ("copy_", "x.copy_(lib.ones(3, dtype=x.dtype))"),
    ("clamp_", "x.clamp_(0.0, 1.0)"),
    ("iadd", "x += 1.0"),
    ("isub", "x -= 1.0"),
    ("imul", "x *= 3.0"),
    ("itruediv", "x /= 4.0"),
]


def _run(stmt: str, lib, x):
    exec(stmt, {"lib": lib, "x": x})


# ---------------------------------------------------------------- version counter

@pytest.mark.parametrize("name, stmt", INPLACE, ids=[n for n, _ in INPLACE])
def test_version_counter_increments_like_torch(torch, name, stmt):
    x = tl.tensor(np.array(X))
    tx = torch.tensor(X, dtype=torch.float64)
    assert x._version == 0
    v0, tv0 = x._version, tx._version
    _run(stmt, tl, x)
    _run(stmt, torch, tx)
    assert x._version - v0 == tx._version - tv0 == 1
    assert_close(x, tx)
    _run(stmt, tl, x)
    assert x._version == 2


def test_out_of_place_ops_do_not_bump_the_version():
    x = tl.tensor(np.array(X))
    _ = x + 1.0, x * 2.0, x.exp(), x[1:], x.clone()
    assert x._version == 0


@pytest.mark.parametrize("make_view", [
    lambda x: x.reshape(3, 2),
    lambda x: x.transpose(0, 1),
    lambda x: x[1:],
    lambda x: x[:, 0],
    lambda x: x.detach(),
    lambda x: x.view(6),
    lambda x: x.t(),
], ids=["reshape", "transpose", "slice", "column", "detach", "view", "t"])
def test_views_share_the_version_counter_and_memory(torch, make_view):
    data = np.arange(6.0).reshape(2, 3)
    x, tx = tl.tensor(data.copy()), torch.tensor(data.copy())
    v, tv = make_view(x), make_view(tx)
    x.add_(1.0)
    tx.add_(1.0)
    assert v._version == x._version == tv._version == tx._version == 1
    v.mul_(2.0)  # in place through the view: the base sees the write and the new version
    tv.mul_(2.0)
    assert x._version == v._version == tx._version == 2
    assert_close(x, tx)
    assert_close(v, tv)


def test_view_of_a_view_shares_the_version_counter(torch):
    x, tx = tl.tensor(np.arange(6.0)), torch.arange(6.0, dtype=torch.float64)
    v, tv = x.reshape(2, 3)[:, 1:].transpose(0, 1), tx.reshape(2, 3)[:, 1:].transpose(0, 1)
    v.add_(10.0)
    tv.add_(10.0)
    assert x._version == tx._version == 1
    assert_close(x, tx)


def test_clone_does_not_share_the_version_counter():
    x = tl.tensor(np.array(X))
    c = x.clone()
    x.add_(1.0)
    assert c._version == 0
    assert_close(c, X)


# ---------------------------------------------------------------- leaves that require grad

@pytest.mark.parametrize("name, stmt", INPLACE, ids=[n for n, _ in INPLACE])
def test_in_place_on_leaf_requiring_grad_raises(torch, name, stmt):
    tx = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        _run(stmt, torch, tx)
    x = leaf(X)
    with pytest.raises(RuntimeError, match="leaf"):
        _run(stmt, tl, x)
    assert_close(x, X)  # nothing written
    assert x._version == 0


@pytest.mark.parametrize("name, stmt", INPLACE, ids=[n for n, _ in INPLACE])
def test_in_place_on_leaf_under_no_grad_works(torch, name, stmt):
    x, tx = leaf(X), torch.tensor(X, dtype=torch.float64, requires_grad=True)
    with tl.no_grad():
        _run(stmt, tl, x)
    with torch.no_grad():
        _run(stmt, torch, tx)
    assert_close(x, tx)
    assert x.is_leaf and x.requires_grad and x.grad_fn is None
    assert x._version == 1


# ---------------------------------------------------------------- non-leaf tensors: the new op is recorded

def test_mul_in_place_on_non_leaf_hand_derived():
    x = leaf(X)
    y = x * 2.0
    y.mul_(3.0)
    assert repr(y.grad_fn) == "<MulBackward>"
    y.sum().backward()
    assert_close(x.grad, [6.0, 6.0, 6.0])
    assert_close(y, np.array(X) * 6)


NON_LEAF = [
    ("mul_", "y = x * 2.0; y.mul_(3.0)"),
    ("add_tensor", "y = x * 2.0; y.add_(w)"),
    ("mul_tensor_after_sin", "y = x.sin(); y.mul_(w)"),  # sin needs its input, not its output
    ("sub_alpha", "y = x * 1.0; y.sub_(w, alpha=2.0)"),
    ("div_tensor", "y = x + 0.0; y.div_(w)"),
    ("iadd_chain", "y = x * 2.0; y += w; y *= 3.0; y -= x"),
    ("exp_", "y = x * 0.5; y.exp_()"),
    ("pow_", "y = x * 1.0; y.pow_(3)"),
    ("clamp_", "y = x * w; y.clamp_(-0.5, 1.0)"),
    ("relu_", "y = x * w; y.relu_()"),
    ("setitem_scalar", "y = x * 2.0; y[1] = 7.0"),
    ("setitem_tensor", "y = x * 2.0; y[0] = w[2]"),
    ("copy_", "y = x * 2.0; y.copy_(w)"),
]


@pytest.mark.parametrize("name, stmt", NON_LEAF, ids=[n for n, _ in NON_LEAF])
def test_in_place_on_non_leaf_gradient_matches_torch(torch, name, stmt):
    def scenario(x, w):
        scope = {"x": x, "w": w}
        exec(stmt, scope)
        y = scope["y"]
        (y * (y + 1.0)).sum().backward()
        return [y, y.is_leaf]

    (ours, (y, is_leaf)), (theirs, (ty, t_is_leaf)) = run_both(torch, scenario, X, W)
    assert_close(y, ty)
    assert is_leaf == t_is_leaf is False
    (x, w), (tx, tw) = ours, theirs
    assert_grads_match([(w, tw)])
    if x.grad is None:
        # x is disconnected when its values were overwritten entirely (copy_): PyTorch's grad is zeros
        assert tx.grad is not None and not np.any(to_np(tx.grad))
    else:
        assert_close(x.grad, tx.grad)


def test_earlier_consumers_keep_the_old_value(torch):
    def scenario(x):
        y = x * 2.0
        z = y + 1.0     # Add saves nothing: it recorded the old y
        y.mul_(5.0)
        (z + y).sum().backward()
        return [y, z]

    (ours, rec), (theirs, trec) = run_both(torch, scenario, X)
    for a, b in zip(rec, trec):
        assert_close(a, b)
    assert_grads_match(list(zip(ours, theirs)))
    assert_close(ours[0].grad, [12.0, 12.0, 12.0])


def test_in_place_before_use_is_fine():
    x = leaf(X)
    y = x * 2.0  # Mul saves its inputs, not its output
    y.add_(1.0)
    (y * y).sum().backward()
    assert_close(x.grad, 4 * (2 * np.array(X) + 1))


# ---------------------------------------------------------------- modified saved tensors are caught

def test_modifying_a_saved_tensor_raises_naming_the_version(torch):
    tx = torch.tensor(X, requires_grad=True)
    ty = tx.exp()
    tz = ty * ty
    ty.add_(1)
    with pytest.raises(RuntimeError, match="version"):
        tz.sum().backward()

    x = leaf(X)
    y = x.exp()
    z = y * y
    y.add_(1.0)
    with pytest.raises(RuntimeError, match=r"version 1.*expected version 0|expected version 0.*version 1") as info:
        z.sum().backward()
    assert "inplace" in str(info.value) or "in-place" in str(info.value)


def test_modifying_a_saved_output_through_detach_raises(torch):
    tx = torch.tensor(X, requires_grad=True)
    ty = tx.exp()  # exp saves its output
    ty.detach().zero_()
    with pytest.raises(RuntimeError, match="version"):
        ty.sum().backward()

    x = leaf(X)
    y = x.exp()
    y.detach().zero_()
    with pytest.raises(RuntimeError, match="version"):
        y.sum().backward()


def test_in_place_self_multiplication_after_use_raises(torch):
    # y *= y saves the old y for the new node; the earlier consumer saved it too
    for lib, x in ((torch, torch.tensor(X, requires_grad=True)), (tl, leaf(X))):
        y = x * 2.0
        z = y * 3.0
        y *= y
        with pytest.raises(RuntimeError, match="version"):
            (z + y).sum().backward()


def test_modifying_an_output_that_exp_saved_raises(torch):
    for lib, x in ((torch, torch.tensor(X, requires_grad=True)), (tl, leaf(X))):
        y = x.exp()  # exp saves its output
        y.mul_(2.0)
        with pytest.raises(RuntimeError, match="version"):
            y.sum().backward()


def test_modifying_a_saved_input_under_no_grad_raises():
    x = leaf(X)
    w = tl.tensor(np.array(W))  # no grad, but saved by Mul for x's gradient
    y = (x * w).sum()
    with tl.no_grad():
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="version"):
        y.backward()


# ---------------------------------------------------------------- x[idx] = v with autograd

SETITEM_CASES = [
    ("int", (3,), lambda: 1, ()),
    ("slice", (4,), lambda: slice(1, 3), (2,)),
    ("list", (4,), lambda: [0, 2], (2,)),
    ("broadcast", (4,), lambda: slice(0, 3), (1,)),
    ("2d_column", (3, 4), lambda: (slice(None), 1), (3,)),
    ("2d_strided_broadcast", (3, 4), lambda: (slice(1, None), slice(None, None, 2)), (1, 2)),
    ("mask", (4,), "mask", (2,)),
]


@pytest.mark.parametrize("name, shape, key, vshape", SETITEM_CASES, ids=[c[0] for c in SETITEM_CASES])
def test_setitem_gradients_match_torch(torch, rng, name, shape, key, vshape):
    a_np, v_np, m_np = rng.standard_normal(shape), rng.standard_normal(vshape), rng.standard_normal(shape)
    mask = np.array([True, False, False, True])

    def scenario(a, v):
        lib = tl if isinstance(a, tl.Tensor) else torch
        k = (lib.tensor(mask) if key == "mask" else key())
        x = a * 1.0  # a non-leaf
        x[k] = v
        (x * lib.tensor(m_np) * x).sum().backward()
        return [x]

    (ours, (x,)), (theirs, (tx,)) = run_both(torch, scenario, a_np, v_np)
    assert_close(x, tx)
    assert_grads_match(list(zip(ours, theirs)))


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("stmt", ["i.add_(1.5)", "i.mul_(1.5)", "i.div_(2)", "i += 0.5",
                                  "i.add_(lib.tensor([0.5, 0.5]))"])
def test_in_place_dtype_error(torch, stmt):
    ti = torch.tensor([1, 2])
    with pytest.raises(RuntimeError):
        exec(stmt, {"i": ti, "lib": torch})
    i = tl.tensor([1, 2])
    with pytest.raises(RuntimeError, match="cast|dtype|type"):
        exec(stmt, {"i": i, "lib": tl})
    assert to_np(i).tolist() == [1, 2]
    assert i.dtype == tl.int64


def test_in_place_int_with_int_is_fine(torch):
    i, ti = tl.tensor([1, 2]), torch.tensor([1, 2])
    i.add_(3)
    ti.add_(3)
    i *= 2
    ti *= 2
    assert to_np(i).tolist() == ti.tolist()
    assert i.dtype == tl.int64


@pytest.mark.parametrize("stmt", ["e.add_(1.0)", "e.mul_(2.0)", "e.clamp_(0.5, 1.0)", "e.copy_(lib.ones(4, 3))",
                                  "e += 1.0"])
def test_in_place_on_expanded_tensor_raises(torch, stmt):
    te = torch.zeros(1, 3).expand(4, 3)
    with pytest.raises(RuntimeError, match="single memory location"):
        exec(stmt, {"e": te, "lib": torch})
    base = tl.zeros(1, 3)
    e = base.expand(4, 3)
    with pytest.raises(RuntimeError, match="memory location|clone"):
        exec(stmt, {"e": e, "lib": tl})
    assert_close(base, np.zeros((1, 3)))


@pytest.mark.parametrize("stmt", ["e.fill_(1.0)", "e.zero_()", "e[0] = 2.0"])
def test_writes_to_expanded_tensor_are_refused_unlike_torch(torch, stmt):
    # A documented deviation (ops/inplace.py): PyTorch allows writes to an expanded
    # tensor whose result does not depend on write order; tinygrad_lab's expanded
    # tensors are read-only NumPy broadcast views, so every write is refused with
    # PyTorch's advice to clone(), and the base is left untouched.
    tb = torch.full((1, 3), 5.0)
    exec(stmt, {"e": tb.expand(4, 3)})  # PyTorch accepts it
    b = tl.full((1, 3), 5.0)
    with pytest.raises(RuntimeError, match="single memory location.*clone"):
        exec(stmt, {"e": b.expand(4, 3)})
    assert_close(b, np.full((1, 3), 5.0))


def test_in_place_broadcast_shape_error(torch):
    with pytest.raises(RuntimeError):
        torch.zeros(3).add_(torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="shape"):
        tl.zeros(3).add_(tl.ones(2, 3))
