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


def test_an_lstm_layer_records_one_node_per_step():
    lstm = tl.nn.LSTM(3, H)
    out, _ = lstm(tl.randn(6, 2, 3))
    names = []
    node = out.grad_fn
    seen, stack = set(), [node]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        names.append(n.name())
        stack.extend(e[0] for e in n.next_functions if e[0] is not None)
    assert names.count("LSTMCellBackward") == 6
    assert "SigmoidBackward" not in names and "TanhBackward" not in names
