"""The fused recurrent cells (ops/recurrent.py): each one recorded op whose hand-written backward
agrees with finite differences and with the same step composed of ordinary ops; gradients of
gradients (create_graph) go through the composed path and agree with finite differences too,
and with PyTorch's double backward of its own cells."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.autograd import gradcheck, gradgradcheck
from tinygrad_lab.ops import recurrent

N, H, P = 3, 4, 2  # batch, hidden size, an LSTM's projection size

# name -> (fused entry point, composed reference, gate blocks, number of state tensors)
CELLS = {
    "rnn_tanh": (lambda *a: recurrent.rnn_cell(*a, "tanh"), lambda *a: recurrent.rnn_cell_composed(*a, "tanh"), 1, 1),
    "rnn_relu": (lambda *a: recurrent.rnn_cell(*a, "relu"), lambda *a: recurrent.rnn_cell_composed(*a, "relu"), 1, 1),
    "lstm": (recurrent.lstm_cell, recurrent.lstm_cell_composed, 4, 2),
    "gru": (recurrent.gru_cell, recurrent.gru_cell_composed, 3, 1),
}


def _operands(kind: str, bias: bool = True, seed: int = 0, device: str = "cpu", h_size: int = H):
    """x_proj (N, G·H), the state(s) (N, H), W_hh (G·H, h_size) and b_hh: float64 leaves."""
    _, _, gates, n_states = CELLS[kind]
    rng = np.random.default_rng(seed)
    shapes = [(N, gates * H), (N, h_size)] + [(N, H)] * (n_states - 1) + [(gates * H, h_size)]
    arrays = [rng.standard_normal(s) for s in shapes]
    if kind == "rnn_relu":
        arrays[0] += 0.3  # away from relu's kink, where finite differences are wrong
    if bias:
        arrays.append(rng.standard_normal(gates * H) * 0.5)
    ts = [tl.tensor(a, requires_grad=True, device=device) for a in arrays]
    return ts if bias else ts + [None]


@pytest.mark.parametrize("kind", CELLS)
@pytest.mark.parametrize("bias", [True, False])
def test_fused_cell_backward_matches_finite_differences(kind, bias):
    fused = CELLS[kind][0]
    assert gradcheck(fused, _operands(kind, bias), eps=1e-6, atol=1e-7)


@pytest.mark.parametrize("kind", CELLS)
def test_gradients_of_gradients_match_finite_differences(kind):
    """create_graph=True: the cell's backward falls back to the composed step, differentiable again."""
    fused = CELLS[kind][0]
    assert gradgradcheck(fused, _operands(kind), eps=1e-6, atol=1e-6)


def _values_and_grads(fn, operands, weights_seed: int = 7):
    outs = fn(*operands)
    outs = outs if isinstance(outs, tuple) else (outs,)
    rng = np.random.default_rng(weights_seed)
    loss = sum((o * tl.tensor(rng.standard_normal(o.shape), device=o.device)).sum() for o in outs)
    leaves = [t for t in operands if t is not None]
    grads = tl.autograd.grad(loss, leaves)
    return [o.detach().cpu().numpy() for o in outs], [g.cpu().numpy() for g in grads]


@pytest.mark.parametrize("kind", CELLS)
def test_fused_cell_equals_the_composed_step(kind, device):
    fused, composed, _, _ = CELLS[kind]
    out_f, grads_f = _values_and_grads(fused, _operands(kind, device=device))
    out_c, grads_c = _values_and_grads(composed, _operands(kind, device=device))
    for a, b in zip(out_f + grads_f, out_c + grads_c):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


def test_lstm_cell_with_a_projected_state():
    """With proj_size, h is smaller than c: W_hh is (4H, proj_size)."""
    ops = _operands("lstm", h_size=P)
    assert gradcheck(recurrent.lstm_cell, ops, eps=1e-6, atol=1e-7)


@pytest.mark.parametrize("kind", CELLS)
def test_only_the_wanted_gradients_are_computed(kind):
    """Inputs that do not require grad get None; the others are right (compared with all wanted)."""
    fused = CELLS[kind][0]
    ops = _operands(kind)
    _, all_grads = _values_and_grads(fused, ops)
    some = _operands(kind)
    for t in some[1:]:
        if t is not None:
            t.requires_grad_(False)
    outs = fused(*some)
    outs = outs if isinstance(outs, tuple) else (outs,)
    rng = np.random.default_rng(7)
    loss = sum((o * tl.tensor(rng.standard_normal(o.shape))).sum() for o in outs)
    loss.backward()
    np.testing.assert_allclose(some[0].grad.numpy(), all_grads[0], rtol=1e-12)
    assert all(t.grad is None for t in some[1:] if t is not None)


@pytest.mark.parametrize("kind", CELLS)
def test_one_step_records_one_node(kind):
    fused = CELLS[kind][0]
    outs = fused(*_operands(kind))
    out = outs[0] if isinstance(outs, tuple) else outs
    expected = {"rnn_tanh": "RNNCellBackward", "rnn_relu": "RNNCellBackward", "lstm": "LSTMCellBackward",
                "gru": "GRUCellBackward"}[kind]
    assert out.grad_fn.name() == expected
    assert all(e[0].name() == "AccumulateGrad" for e in out.grad_fn.next_functions if e[0] is not None)


def test_an_unused_cell_state_gets_a_zero_gradient():
    """Only h' reaches the loss: c' gets no gradient, and the backward treats it as zero."""
    ops = _operands("lstm")
    h, _ = recurrent.lstm_cell(*ops)
    h.sum().backward()
    ref = _operands("lstm")
    hc, _ = recurrent.lstm_cell_composed(*ref)
    hc.sum().backward()
    for a, b in zip(ops, ref):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_mixed_dtypes_are_refused():
    x, h, c, w, b = _operands("lstm")
    with pytest.raises(RuntimeError, match="lstm_cell: expected all operands to have one dtype.*float32"):
        recurrent.lstm_cell(x, h.float(), c, w, b)


def test_mismatched_sizes_are_refused():
    x, h, w, b = _operands("gru")
    with pytest.raises(RuntimeError, match=r"gru_cell: sizes do not fit: input \[3, 12\], hx \[3, 4\], w_hh \[12, 3\]"):
        recurrent.gru_cell(x, h, w[:, :3], b)


@pytest.mark.parametrize("name", ["LSTMCell", "GRUCell", "RNNCell"])
def test_double_backward_of_a_cell_module_matches_torch(torch, name):
    """A gradient penalty through a cell: d/dW of ||dL/dx||², compared with PyTorch's."""
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(3, H).double()
    ours = getattr(tl.nn, name)(3, H).double()
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    x_np = np.random.default_rng(2).standard_normal((N, 3))
    results = []
    for lib, cell in ((tl, ours), (torch, theirs)):
        x = lib.tensor(x_np, requires_grad=True)
        out = cell(x)
        h = out[0] if isinstance(out, tuple) else out
        (gx,) = lib.autograd.grad((h * h).sum(), x, create_graph=True)
        (gx * gx).sum().backward()
        results.append([cell.weight_hh.grad.numpy(), cell.weight_ih.grad.numpy(), cell.bias_hh.grad.numpy()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def _layer_names(out) -> list:
    """The names of the graph's nodes behind `out`, each once."""
    names, seen, stack = [], set(), [out.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        names.append(n.name())
        stack.extend(e[0] for e in n.next_functions if e[0] is not None)
    return names


def test_an_lstm_layer_records_one_node_per_direction():
    """nn.LSTM runs each layer and direction as one op (LSTMLayer), as cuDNN does: no per-step cells."""
    lstm = tl.nn.LSTM(3, H, bidirectional=True)
    out, _ = lstm(tl.randn(6, 2, 3))
    names = _layer_names(out)
    assert names.count("LSTMLayerBackward") == 2
    assert "LSTMCellBackward" not in names and "SigmoidBackward" not in names


# ---------------------------------------------------------------- whole-sequence layers

L = 5  # time steps

# name -> (fused layer, the same cell's fused step, number of state tensors)
LAYERS = {
    "rnn_tanh": (lambda x, s, w, b, rev: recurrent.rnn_layer(x, *s, w, b, rev, "tanh"),
                 lambda x, s, w, b: (recurrent.rnn_cell(x, *s, w, b, "tanh"),)),
    "rnn_relu": (lambda x, s, w, b, rev: recurrent.rnn_layer(x, *s, w, b, rev, "relu"),
                 lambda x, s, w, b: (recurrent.rnn_cell(x, *s, w, b, "relu"),)),
    "lstm": (lambda x, s, w, b, rev: recurrent.lstm_layer(x, *s, w, b, rev),
             lambda x, s, w, b: recurrent.lstm_cell(x, *s, w, b)),
    "gru": (lambda x, s, w, b, rev: recurrent.gru_layer(x, *s, w, b, rev),
            lambda x, s, w, b: (recurrent.gru_cell(x, *s, w, b),)),
}


def _layer_operands(kind: str, bias: bool = True, seed: int = 0):
    """x_proj (L, N, G·H), the initial state(s) (N, H), W_hh, b_hh: float64 leaves (W_hh scaled so
    that the state neither explodes nor dies over L steps)."""
    _, _, gates, n_states = CELLS[kind]
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((L, N, gates * H)) + (0.3 if kind == "rnn_relu" else 0)
    arrays = [x] + [rng.standard_normal((N, H)) for _ in range(n_states)] + [rng.standard_normal((gates * H, H)) * 0.5]
    if bias:
        arrays.append(rng.standard_normal(gates * H) * 0.5)
    ts = [tl.tensor(a, requires_grad=True) for a in arrays]
    x, states, w = ts[0], tuple(ts[1:1 + n_states]), ts[1 + n_states]
    return x, states, w, ts[2 + n_states] if bias else None


def _flat(kind, reverse):
    """The fused layer as a function of flat tensor arguments (for gradcheck)."""
    fused, n_states = LAYERS[kind][0], CELLS[kind][3]
    return lambda x, *rest: fused(x, rest[:n_states], rest[n_states], rest[n_states + 1], reverse)


def _flat_operands(kind, bias=True):
    x, states, w, b = _layer_operands(kind, bias)
    return [x, *states, w, b]


@pytest.mark.parametrize("kind", LAYERS)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_fused_layer_backward_matches_finite_differences(kind, reverse, bias):
    assert gradcheck(_flat(kind, reverse), _flat_operands(kind, bias), eps=1e-6, atol=1e-7)


@pytest.mark.parametrize("kind", LAYERS)
def test_layer_gradients_of_gradients_match_finite_differences(kind):
    """create_graph=True: the layer's backward falls back to the composed steps, differentiable again."""
    assert gradgradcheck(_flat(kind, True), _flat_operands(kind), eps=1e-6, atol=1e-6)


def _cell_loop(kind, x, states, w, b, reverse):
    """The layer as a Python loop of the fused cell over time (the per-step path, tested above)."""
    step = LAYERS[kind][1]
    outs = [None] * len(x)
    for t in (reversed(range(len(x))) if reverse else range(len(x))):
        states = step(x[t], states, w, b)
        outs[t] = states[0]
    return (tl.stack(outs),) + tuple(states)


@pytest.mark.parametrize("kind", LAYERS)
@pytest.mark.parametrize("reverse", [False, True])
def test_fused_layer_equals_a_loop_of_cells(kind, reverse):
    """Outputs, final states and every gradient (from a loss on all of them) as the per-step cells."""
    results = []
    for fn in (LAYERS[kind][0], lambda *a: _cell_loop(kind, *a)):
        x, states, w, b = _layer_operands(kind)
        outs = fn(x, states, w, b, reverse)
        rng = np.random.default_rng(7)
        loss = sum((o * tl.tensor(rng.standard_normal(o.shape))).sum() for o in outs)
        grads = tl.autograd.grad(loss, [x, *states, w, b])
        results.append([o.detach().numpy() for o in outs] + [g.numpy() for g in grads])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


def test_only_the_wanted_layer_gradients_are_computed():
    x, states, w, b = _layer_operands("lstm")
    for t in (*states, b):
        t.requires_grad_(False)
    out, h, c = recurrent.lstm_layer(x, *states, w, b)
    assert out.grad_fn.needs_input_grad[:5] == (True, False, False, True, False)
    (out.sum() + c.sum()).backward()
    assert x.grad is not None and w.grad is not None and b.grad is None


def test_a_layer_refuses_a_step_shaped_input():
    x, states, w, b = _layer_operands("gru")
    with pytest.raises(RuntimeError, match=r"gru_layer: expected input of shape \(L > 0, N, G·H\), got \[3, 12\]"):
        recurrent.gru_layer(x[0], *states, w, b)
