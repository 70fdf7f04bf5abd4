"""Recurrent layers against PyTorch: same weights (via state_dict) give the same outputs, final
states and gradients; same parameter names, init bounds and repr; and the Python loop over time
records a graph that grows with the sequence."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn

RTOL, ATOL = 1e-9, 1e-12
IN, HID, SEQ, BATCH = 5, 6, 4, 3
CELLS = ("RNNCell", "LSTMCell", "GRUCell")
LAYERS = ("RNN", "LSTM", "GRU")


# ---------------------------------------------------------------- helpers

@pytest.fixture(autouse=True)
def _torch_one_thread():
    """PyTorch's threads on these tiny tensors only contend with other test workers: run it on one
    thread here (restored afterwards)."""
    try:
        import torch
    except ImportError:
        yield
        return
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _pair(torch, name: str, *args, **kwargs):
    """The same layer in float64 from both libraries, ours loaded with PyTorch's weights."""
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    ours = getattr(nn, name)(*args, **kwargs).double()
    ours.load_state_dict({k: tl.tensor(v.detach().double().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _leaves(obj) -> list:
    """The tensors of a (nested) output, in order: out, (h, c) -> [out, h, c]."""
    if isinstance(obj, (tuple, list)):
        return [t for item in obj for t in _leaves(item)]
    return [obj]


def _inputs(torch, shapes: list, seed: int = 1):
    """Random float64 leaf tensors of the given shapes, for both libraries (same values)."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]
    return ([tl.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def _nest(flat: list, structure):
    """Rebuild hx as the layer expects it: None, a tensor, or (h, c)."""
    if structure is None:
        return None
    if structure == "pair":
        return tuple(flat)
    return flat[0]


def _compare(torch, ours, theirs, x_shape, hx_shapes=None, hx_kind="one"):
    """Run both on the same input (and initial state), backprop a random weighting of every
    output, compare outputs, states and the gradients of inputs and parameters."""
    shapes = [x_shape] + list(hx_shapes or [])
    (x, *hx), (tx, *thx) = _inputs(torch, shapes)
    kind = None if not hx_shapes else hx_kind
    out = ours(x, _nest(hx, kind)) if kind else ours(x)
    tout = theirs(tx, _nest(thx, kind)) if kind else theirs(tx)
    outs, touts = _leaves(out), _leaves(tout)
    assert len(outs) == len(touts)
    rng = np.random.default_rng(2)
    loss, tloss = 0, 0
    for o, t in zip(outs, touts):
        assert tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=RTOL, atol=ATOL)
        w = rng.standard_normal(tuple(t.shape))
        loss = loss + (o * tl.tensor(w)).sum()
        tloss = tloss + (t * torch.tensor(w)).sum()
    loss.backward()
    tloss.backward()
    for a, b in zip([x] + hx, [tx] + thx):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=RTOL, atol=ATOL)
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), theirs_params[name].grad.numpy(), rtol=RTOL, atol=ATOL,
                                   err_msg=name)


# ---------------------------------------------------------------- cells

@pytest.mark.parametrize("name", CELLS)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("with_hx", [False, True])
@pytest.mark.parametrize("batched", [True, False])
def test_cell_matches_torch(torch, name, bias, with_hx, batched):
    ours, theirs = _pair(torch, name, IN, HID, bias=bias)
    lead = (BATCH,) if batched else ()
    n_states = 2 if name == "LSTMCell" else 1
    hx_shapes = [lead + (HID,)] * n_states if with_hx else None
    _compare(torch, ours, theirs, lead + (IN,), hx_shapes, "pair" if n_states == 2 else "one")


def test_rnn_cell_relu_matches_torch(torch):
    ours, theirs = _pair(torch, "RNNCell", IN, HID, nonlinearity="relu")
    _compare(torch, ours, theirs, (BATCH, IN), [(BATCH, HID)])


# ---------------------------------------------------------------- layers

# (batch_first, bias, with initial state, batched)
VARIANTS = [(False, True, False, True), (True, True, True, True), (False, False, True, True),
            (True, False, False, True), (False, True, True, False), (True, True, False, False)]


@pytest.mark.parametrize("name", LAYERS)
@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first,bias,with_hx,batched", VARIANTS)
def test_layer_matches_torch(torch, name, num_layers, bidirectional, batch_first, bias, with_hx, batched):
    ours, theirs = _pair(torch, name, IN, HID, num_layers=num_layers, bias=bias, batch_first=batch_first,
                         bidirectional=bidirectional)
    if batched:
        x_shape = (BATCH, SEQ, IN) if batch_first else (SEQ, BATCH, IN)
    else:
        x_shape = (SEQ, IN)
    state_shape = (num_layers * (2 if bidirectional else 1),) + ((BATCH,) if batched else ()) + (HID,)
    n_states = 2 if name == "LSTM" else 1
    hx_shapes = [state_shape] * n_states if with_hx else None
    _compare(torch, ours, theirs, x_shape, hx_shapes, "pair" if n_states == 2 else "one")


def test_rnn_relu_matches_torch(torch):
    ours, theirs = _pair(torch, "RNN", IN, HID, num_layers=2, nonlinearity="relu", bidirectional=True)
    _compare(torch, ours, theirs, (SEQ, BATCH, IN), [(4, BATCH, HID)])


@pytest.mark.parametrize("with_hx", [False, True])
def test_lstm_projection_matches_torch(torch, with_hx):
    ours, theirs = _pair(torch, "LSTM", IN, HID, num_layers=2, proj_size=2, bidirectional=True)
    hx_shapes = [(4, BATCH, 2), (4, BATCH, HID)] if with_hx else None
    _compare(torch, ours, theirs, (SEQ, BATCH, IN), hx_shapes, "pair")


@pytest.mark.parametrize("name", LAYERS)
def test_dropout_one_between_layers_matches_torch(torch, name):
    """dropout=1 drops everything deterministically, so even the training-mode path compares exactly."""
    ours, theirs = _pair(torch, name, IN, HID, num_layers=2, dropout=1.0)
    _compare(torch, ours, theirs, (SEQ, BATCH, IN))


def test_dropout_only_in_training_and_not_after_last_layer():
    tl.manual_seed(0)
    m = nn.GRU(IN, HID, num_layers=2, dropout=0.5).double()
    x = tl.randn(SEQ, BATCH, IN, dtype=tl.float64)
    m.eval()
    a, b = m(x)[0].detach().numpy(), m(x)[0].detach().numpy()
    np.testing.assert_array_equal(a, b)  # eval: deterministic
    m.train()
    c, d = m(x)[0].detach().numpy(), m(x)[0].detach().numpy()
    assert not np.allclose(c, d)  # train: a fresh mask each call
    single = nn.GRU(IN, HID, num_layers=1).double()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        single_drop = nn.GRU(IN, HID, num_layers=1, dropout=0.5).double()
    single_drop.load_state_dict(single.state_dict())
    np.testing.assert_array_equal(single_drop(x)[0].detach().numpy(), single(x)[0].detach().numpy())  # no dropout after the last layer


def test_dropout_with_one_layer_warns():
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        nn.LSTM(IN, HID, dropout=0.2)


@pytest.mark.parametrize("name", LAYERS)
def test_float32_stays_float32_and_matches_torch(torch, name):
    """The default dtype: a float32 model on float32 input computes in float32, as PyTorch's."""
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(IN, HID, num_layers=2, batch_first=True)
    ours = getattr(nn, name)(IN, HID, num_layers=2, batch_first=True)
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(3).standard_normal((BATCH, SEQ, IN)).astype(np.float32)
    for o, t in zip(_leaves(ours(tl.tensor(x))), _leaves(theirs(torch.tensor(x)))):
        assert o.dtype == tl.float32
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- construction

CONFIGS = [
    ("RNN", (10, 20), {}),
    ("RNN", (10, 20, 2), {"nonlinearity": "relu", "bias": False}),
    ("LSTM", (10, 20), {"num_layers": 2, "batch_first": True}),
    ("LSTM", (10, 20), {"proj_size": 5, "dropout": 0.5, "num_layers": 3, "bidirectional": True}),
    ("GRU", (10, 20), {"bidirectional": True, "bias": False}),
    ("GRU", (10, 20), {"dropout": 1, "num_layers": 2}),
    ("RNNCell", (10, 20), {"nonlinearity": "relu", "bias": False}),
    ("RNNCell", (10, 20), {}),
    ("LSTMCell", (10, 20), {"bias": False}),
    ("GRUCell", (10, 20), {}),
]


@pytest.mark.parametrize("name,args,kwargs", CONFIGS)
def test_repr_and_state_dict_keys_match_torch(torch, name, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (k, p), (tk, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert k == tk and tuple(p.shape) == tuple(tp.shape) and p.dtype == tl.float32


def test_repr_examples():
    assert repr(nn.LSTM(10, 20, num_layers=2, batch_first=True)) == "LSTM(10, 20, num_layers=2, batch_first=True)"
    assert repr(nn.GRUCell(3, 4, bias=False)) == "GRUCell(3, 4, bias=False)"


@pytest.mark.parametrize("name", CELLS + LAYERS)
def test_init_bounds(name):
    tl.manual_seed(0)
    m = getattr(nn, name)(7, 25)
    bound = 1 / math.sqrt(25)
    for p in m.parameters():
        a = p.detach().numpy()
        assert a.min() >= -bound and a.max() <= bound
        assert a.max() - a.min() > bound  # spread over the interval, not constant
    assert all(p.requires_grad for p in m.parameters())


def test_all_weights_and_flatten_parameters():
    m = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    m.flatten_parameters()
    assert len(m.all_weights) == 4 and all(len(ws) == 4 for ws in m.all_weights)
    assert m.all_weights[1][0] is m.weight_ih_l0_reverse


def test_constructor_errors():
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="dropout should be a number"):
        nn.GRU(3, 4, dropout=1.5)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.LSTM(3, 0)
    with pytest.raises(TypeError, match="hidden_size should be of type int"):
        nn.LSTM(3, 4.0)
    with pytest.raises(ValueError, match="proj_size has to be smaller"):
        nn.LSTM(3, 4, proj_size=4)


def test_forward_errors():
    m = nn.LSTM(3, 4)
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D, got 4D"):
        m(tl.randn(1, 2, 3, 4))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 3, got 5"):
        m(tl.randn(2, 2, 5))
    with pytest.raises(RuntimeError, match="Expected hidden\\[0\\] size \\(1, 2, 4\\), got \\[1, 3, 4\\]"):
        m(tl.randn(5, 2, 3), (tl.zeros(1, 3, 4), tl.zeros(1, 2, 4)))
    with pytest.raises(RuntimeError, match="hx and cx should also be 3-D"):
        m(tl.randn(5, 2, 3), (tl.zeros(1, 4), tl.zeros(1, 4)))
    with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0"):
        m(tl.randn(0, 2, 3))
    with pytest.raises(RuntimeError, match="hx should also be 2-D"):
        nn.GRU(3, 4)(tl.randn(5, 3), tl.zeros(1, 1, 4))
    with pytest.raises(ValueError, match="does not match weight dtype"):
        nn.RNN(3, 4)(tl.randn(5, 3, dtype=tl.float64))
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 5 expected 3"):
        nn.RNNCell(3, 4)(tl.randn(2, 5))
    with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden0 batch size 3"):
        nn.GRUCell(3, 4)(tl.randn(2, 3), tl.zeros(3, 4))
    with pytest.raises(RuntimeError, match="hidden1 has inconsistent hidden_size: got 5, expected 4"):
        nn.LSTMCell(3, 4)(tl.randn(2, 3), (tl.zeros(2, 4), tl.zeros(2, 5)))
    with pytest.raises(ValueError, match="LSTMCell: Expected input to be 1D or 2D, got 3D instead"):
        nn.LSTMCell(3, 4)(tl.randn(1, 2, 3))


# ---------------------------------------------------------------- define-by-run

def _graph_size(t) -> int:
    """Number of distinct backward nodes reachable from t.grad_fn (iterative walk)."""
    seen, stack = set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(nxt for nxt, _ in node.next_functions)
    return len(seen)


@pytest.mark.parametrize("name", LAYERS)
def test_a_layer_is_one_node_whatever_the_length(name):
    """Each layer and direction is one recorded op over the whole sequence (ops.recurrent.*Layer, as
    cuDNN runs it): the graph does not grow with the sequence. (A loop of nn.*Cell records one node
    per step: tests/ops/test_recurrent.py.)"""
    m = getattr(nn, name)(IN, HID, num_layers=2, bidirectional=True)
    sizes = []
    for length in (2, 3, 7):
        out, _ = m(tl.randn(length, BATCH, IN))
        assert tuple(out.shape) == (length, BATCH, 2 * HID)
        sizes.append(_graph_size(out.sum()))
    assert sizes[0] == sizes[1] == sizes[2]


@pytest.mark.parametrize("name", LAYERS)
def test_double_backward_of_a_layer_matches_torch(torch, name):
    """A gradient penalty through a 2-layer bidirectional layer given h0 (and c0): d/dW of ||dL/dx||².
    The layers' backward runs the composed steps when create_graph is on."""
    ours, theirs = _pair(torch, name, IN, HID, num_layers=2, bidirectional=True, batch_first=True)
    n_states = 2 if name == "LSTM" else 1
    (x, *hx), (tx, *thx) = _inputs(torch, [(BATCH, SEQ, IN)] + [(4, BATCH, HID)] * n_states)
    results = []
    for lib, m, inp, state in ((tl, ours, x, hx), (torch, theirs, tx, thx)):
        out, _ = m(inp, tuple(state) if n_states == 2 else state[0])
        (gx,) = lib.autograd.grad((out * out).sum(), inp, create_graph=True)
        (gx * gx).sum().backward()
        results.append([p.grad.numpy() for p in m.parameters()] + [s.grad.numpy() for s in state])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


def test_sgd_training_steps_match_torch(torch):
    """A few plain SGD steps through an LSTM (backprop through time into every weight) give
    PyTorch's losses step for step."""
    ours, theirs = _pair(torch, "LSTM", 2, 8, batch_first=True)
    (x, head), (tx, thead) = _inputs(torch, [(16, 5, 2), (8, 1)])
    y = x.detach().sum(1)[:, :1]
    ty = tx.detach().sum(1)[:, :1]
    losses, tlosses = [], []
    for _ in range(5):
        for lib, m, inp, w, target, record in ((tl, ours, x, head, y, losses), (torch, theirs, tx, thead, ty, tlosses)):
            out, _ = m(inp)
            loss = ((out[:, -1] @ w - target) ** 2).mean()
            record.append(loss.item())
            params = list(m.parameters()) + [w]
            for p in params:
                p.grad = None
            loss.backward()
            with lib.no_grad():
                for p in params:
                    p -= 0.5 * p.grad
    np.testing.assert_allclose(losses, tlosses, rtol=RTOL)
    assert losses[-1] < losses[0]
