"""Recurrent cells: one time step of an Elman RNN, an LSTM and a GRU, each one recorded op.

    RNNCell    h' = tanh(a) (or relu(a))           a = x_proj + h W_hhᵀ + b_hh
    LSTMCell   (h', c') from gates i, f, g, o      a = x_proj + h W_hhᵀ + b_hh, 4 blocks
    GRUCell    h' from gates r, z, n               x_proj and h W_hhᵀ + b_hh, 3 blocks each

`x_proj` is the input's share of the pre-activations, x W_ihᵀ + b_ih: a layer computes it for all
time steps in one matrix product before its loop over time, so a cell gets it ready-made.

Why one op per step instead of the composition of matmul, chunk, sigmoid, tanh, mul and add
(written out below as `*_cell_composed`, the same formulas with ops): a step of an LSTM records
1 node instead of ~15, and its backward is one page of array arithmetic instead of ~30 small ops.
A word-level language model spends most of its time in these steps (benchmarks/recurrent.py).

The backwards are written on arrays, for speed, so they are not differentiable again. When the
gradient must itself be differentiable (`create_graph=True`: grad mode is on while backward runs),
a cell's backward runs the composed step instead and lets the engine differentiate it
(`_composed_backward`), so gradients of gradients are right either way.
"""
from __future__ import annotations

from ..autograd.api import grad
from ..autograd.grad_mode import state as _grad_state
from . import activation as act
from . import elementwise as ew
from . import movement as mv
from .op import Op, constant

__all__ = ["gru_cell", "lstm_cell", "rnn_cell"]


# ---------------------------------------------------------------- the cells

class RNNCell(Op):
    """One Elman RNN step: h' = tanh(a) (or relu(a)), a = x_proj + h W_hhᵀ + b_hh.

    Backward (ḣ the gradient arriving at h'):
        ā = ḣ ⊙ (1 - h'²)          tanh' = 1 - tanh²    (relu: ā = ḣ where h' > 0, else 0)
        dx_proj = ā,  dh = ā W_hh,  dW_hh = āᵀ h,  db_hh = Σ_batch ā
    """

    @staticmethod
    def forward(ctx, x_proj, h, w_hh, b_hh, nonlinearity):
        xp = ctx.xp
        a = _affine(xp, x_proj, h, w_hh, b_hh)
        out = xp.tanh(a, out=a) if nonlinearity == "tanh" else xp.maximum(a, 0, out=a)
        ctx.save_for_backward(x_proj, h, w_hh, b_hh, out, nonlinearity)
        return out

    @staticmethod
    def backward(ctx, gh):
        x_proj, h, w_hh, b_hh, out, nonlinearity = ctx.saved_tensors
        if _grad_state.enabled:  # create_graph: the gradient must be differentiable too
            return _composed_backward(ctx, rnn_cell_composed, (x_proj, h, w_hh, b_hh), (gh,), nonlinearity)
        g, out = gh._data, out._data  # a saved output comes back as a tensor
        da = g * (1 - out * out) if nonlinearity == "tanh" else g * (out > 0)
        return _input_grads(ctx, da, da, h, w_hh) + (None,)


class LSTMCell(Op):
    """One LSTM step: (h', c') from the state (h, c), gates in PyTorch's order i, f, g, o:

        a = x_proj + h W_hhᵀ + b_hh                 the pre-activations, 4 blocks a_i | a_f | a_g | a_o
        i = σ(a_i)   f = σ(a_f)   g = tanh(a_g)   o = σ(a_o)
        c' = f ⊙ c + i ⊙ g
        h' = o ⊙ tanh(c')

    Backward, gate by gate (ḣ, ċ the gradients arriving at h' and c'; σ' = σ(1 - σ), tanh' = 1 - tanh²):

        ċ_all = ċ + ḣ ⊙ o ⊙ (1 - tanh²(c'))         c' reaches the loss directly and through h'
        ō = ḣ ⊙ tanh(c')          ā_o = ō ⊙ o(1 - o)
        ī = ċ_all ⊙ g             ā_i = ī ⊙ i(1 - i)
        f̄ = ċ_all ⊙ c             ā_f = f̄ ⊙ f(1 - f)
        ḡ = ċ_all ⊙ i             ā_g = ḡ ⊙ (1 - g²)
        dc = ċ_all ⊙ f                               to the previous cell state
        dx_proj = ā,  dh = ā W_hh,  dW_hh = āᵀ h,  db_hh = Σ_batch ā
    """

    @staticmethod
    def forward(ctx, x_proj, h, c, w_hh, b_hh):
        xp = ctx.xp
        gates = _affine(xp, x_proj, h, w_hh, b_hh)  # becomes i | f | g | o in place
        H = c._data.shape[1]
        _sigmoid_(xp, gates[:, :2 * H])
        xp.tanh(gates[:, 2 * H:3 * H], out=gates[:, 2 * H:3 * H])
        _sigmoid_(xp, gates[:, 3 * H:])
        i, f, g, o = (gates[:, k * H:(k + 1) * H] for k in range(4))
        c_new = f * c._data + i * g
        tanh_c = xp.tanh(c_new)
        ctx.save_for_backward(x_proj, h, c, w_hh, b_hh, gates, tanh_c)
        return o * tanh_c, c_new

    @staticmethod
    def backward(ctx, gh, gc):
        x_proj, h, c, w_hh, b_hh, gates, tanh_c = ctx.saved_tensors
        if _grad_state.enabled:  # create_graph: the gradient must be differentiable too
            return _composed_backward(ctx, lstm_cell_composed, (x_proj, h, c, w_hh, b_hh), (gh, gc))
        H = tanh_c.shape[1]
        i, f, g, o = (gates[:, k * H:(k + 1) * H] for k in range(4))
        gh, gc = gh._data, gc._data
        dc_all = gc + gh * o * (1 - tanh_c * tanh_c)
        da = ctx.xp.empty_like(gates)
        da[:, :H] = dc_all * g * i * (1 - i)             # input gate
        da[:, H:2 * H] = dc_all * c._data * f * (1 - f)  # forget gate
        da[:, 2 * H:3 * H] = dc_all * i * (1 - g * g)    # cell candidate
        da[:, 3 * H:] = gh * tanh_c * o * (1 - o)        # output gate
        dx, dh, dw, db = _input_grads(ctx, da, da, h, w_hh, skip=1)
        dc = constant(ctx, dc_all * f) if ctx.needs_input_grad[2] else None
        return dx, dh, dc, dw, db


class GRUCell(Op):
    """One GRU step, gates in PyTorch's order r, z, n (x_proj and hh = h W_hhᵀ + b_hh in 3 blocks each):

        r = σ(x_r + hh_r)   z = σ(x_z + hh_z)   n = tanh(x_n + r ⊙ hh_n)
        h' = (1 - z) ⊙ n + z ⊙ h

    Backward (ḣ the gradient arriving at h'):

        n̄ = ḣ ⊙ (1 - z)      ā_n = n̄ ⊙ (1 - n²)         the pre-activation of n
        z̄ = ḣ ⊙ (h - n)      ā_z = z̄ ⊙ z(1 - z)
        r̄ = ā_n ⊙ hh_n       ā_r = r̄ ⊙ r(1 - r)
        dx_proj = ā_r | ā_z | ā_n          d(hh) = ā_r | ā_z | ā_n ⊙ r     (the reset gate scales hh_n)
        dh = ḣ ⊙ z + d(hh) W_hh,  dW_hh = d(hh)ᵀ h,  db_hh = Σ_batch d(hh)
    """

    @staticmethod
    def forward(ctx, x_proj, h, w_hh, b_hh):
        xp = ctx.xp
        hh = _affine(xp, None, h, w_hh, b_hh)
        x = x_proj._data
        H = h._data.shape[1]
        rz = _sigmoid_(xp, x[:, :2 * H] + hh[:, :2 * H])
        r, z = rz[:, :H], rz[:, H:]
        n = xp.tanh(x[:, 2 * H:] + r * hh[:, 2 * H:])
        ctx.save_for_backward(x_proj, h, w_hh, b_hh, rz, n, hh[:, 2 * H:])
        return (1 - z) * n + z * h._data

    @staticmethod
    def backward(ctx, gh):
        x_proj, h, w_hh, b_hh, rz, n, hh_n = ctx.saved_tensors
        if _grad_state.enabled:  # create_graph: the gradient must be differentiable too
            return _composed_backward(ctx, gru_cell_composed, (x_proj, h, w_hh, b_hh), (gh,))
        H = n.shape[1]
        r, z = rz[:, :H], rz[:, H:]
        g = gh._data
        da = ctx.xp.empty((n.shape[0], 3 * H), dtype=n.dtype)
        da[:, 2 * H:] = g * (1 - z) * (1 - n * n)                    # n's pre-activation
        da[:, H:2 * H] = g * (h._data - n) * z * (1 - z)             # update gate
        da[:, :H] = da[:, 2 * H:] * hh_n * r * (1 - r)               # reset gate
        dhh = da.copy()
        dhh[:, 2 * H:] *= r                                          # the reset gate scales hh_n
        return _input_grads(ctx, da, dhh, h, w_hh, dh_direct=g * z)  # h' = ... + z ⊙ h directly


# ---------------------------------------------------------------- what the cells share

def _affine(xp, x_proj, h, w_hh, b_hh):
    """h W_hhᵀ + b_hh (+ x_proj): a new array, which the caller may overwrite. The product is
    computed as (W_hh hᵀ)ᵀ: BLAS multiplies a few rows h by a transposed W_hh at half the speed
    (measured: (20, 200) x (200, 800) float32, 206 -> 121 us)."""
    out = (w_hh._data @ h._data.T).T
    if b_hh is not None:
        out += b_hh._data
    if x_proj is not None:
        out += x_proj._data
    return out


def _sigmoid_(xp, a):
    """a ← σ(a) = 1 / (1 + e^-a), in place (and returned). Where a is very negative e^-a overflows
    to inf and 1 / inf = 0, σ's limit: no nan, and accurate everywhere (1 - σ is not formed)."""
    xp.negative(a, out=a)
    xp.exp(a, out=a)
    a += 1
    return xp.reciprocal(a, out=a)


def _input_grads(ctx, da_x, da_h, h, w_hh, skip: int = 0, dh_direct=None) -> tuple:
    """The gradients of a cell's arguments x_proj, h, (skip: arguments in between), W_hh and b_hh,
    from those of the pre-activations: da_x of x_proj's share, da_h of h W_hhᵀ + b_hh's share
    (the same array except in a GRU); dh_direct is what h gets besides, through no matrix product.
    Each None where no gradient is wanted."""
    n = ctx.needs_input_grad
    dx = constant(ctx, da_x) if n[0] else None
    dh = None
    if n[1]:
        dh = da_h @ w_hh._data
        dh = constant(ctx, dh if dh_direct is None else dh + dh_direct)
    dw = constant(ctx, da_h.T @ h._data) if n[2 + skip] else None
    db = constant(ctx, da_h.sum(axis=0)) if n[3 + skip] else None
    return dx, dh, dw, db


def _composed_backward(ctx, composed, inputs: tuple, grads: tuple, *args) -> tuple:
    """A cell's gradients as differentiable tensors (create_graph): the step is run again as a
    composition of ops on aliases of its inputs (clones: fresh nodes, so the engine stops there
    and does not walk on into earlier steps) and differentiated by the engine."""
    wanted = [k for k, t in enumerate(inputs) if t is not None and ctx.needs_input_grad[k]]
    aliases = [None if t is None else ew.Clone.apply(t) for t in inputs]
    outs = composed(*aliases, *args)
    found = grad(outs, [aliases[k] for k in wanted], grad_outputs=grads, create_graph=True, allow_unused=True)
    out = [None] * (len(inputs) + len(args))
    for k, g in zip(wanted, found):
        out[k] = g
    return tuple(out)


# ---------------------------------------------------------------- the same steps, composed of ops

def rnn_cell_composed(x_proj, h, w_hh, b_hh, nonlinearity: str = "tanh"):
    """RNNCell's step written with ops (its reference, and its differentiable backward)."""
    a = ew.add(x_proj, act.linear(h, w_hh, b_hh))
    return ew.tanh(a) if nonlinearity == "tanh" else ew.relu(a)


def lstm_cell_composed(x_proj, h, c, w_hh, b_hh):
    """LSTMCell's step written with ops: returns (h', c')."""
    i, f, g, o = mv.chunk(ew.add(x_proj, act.linear(h, w_hh, b_hh)), 4, 1)
    i, f, g, o = ew.sigmoid(i), ew.sigmoid(f), ew.tanh(g), ew.sigmoid(o)
    c = ew.add(ew.mul(f, c), ew.mul(i, g))
    return ew.mul(o, ew.tanh(c)), c


def gru_cell_composed(x_proj, h, w_hh, b_hh):
    """GRUCell's step written with ops: returns h'."""
    x_r, x_z, x_n = mv.chunk(x_proj, 3, 1)
    h_r, h_z, h_n = mv.chunk(act.linear(h, w_hh, b_hh), 3, 1)
    r = ew.sigmoid(ew.add(x_r, h_r))
    z = ew.sigmoid(ew.add(x_z, h_z))
    n = ew.tanh(ew.add(x_n, ew.mul(r, h_n)))
    return ew.add(ew.mul(ew.sub(1, z), n), ew.mul(z, h))


# ---------------------------------------------------------------- entry points

def rnn_cell(x_proj, h, w_hh, b_hh=None, nonlinearity: str = "tanh"):
    """One Elman RNN step (RNNCell) on x_proj (N, H) and h (N, H)."""
    _check_cell("rnn_cell", x_proj, h, w_hh, b_hh)
    return RNNCell.apply(x_proj, h, w_hh, b_hh, nonlinearity)


def lstm_cell(x_proj, h, c, w_hh, b_hh=None) -> tuple:
    """One LSTM step (LSTMCell) on x_proj (N, 4H), h (N, H or proj_size) and c (N, H): (h', c')."""
    _check_cell("lstm_cell", x_proj, h, w_hh, b_hh, c)
    return LSTMCell.apply(x_proj, h, c, w_hh, b_hh)


def gru_cell(x_proj, h, w_hh, b_hh=None):
    """One GRU step (GRUCell) on x_proj (N, 3H) and h (N, H)."""
    _check_cell("gru_cell", x_proj, h, w_hh, b_hh)
    return GRUCell.apply(x_proj, h, w_hh, b_hh)


def _check_cell(op: str, x_proj, h, w_hh, b_hh, c=None) -> None:
    """One floating dtype for every operand (PyTorch's error otherwise); matrices of matching sizes."""
    operands = [("input", x_proj), ("hx", h), ("cx", c), ("w_hh", w_hh), ("b_hh", b_hh)]
    dt = x_proj._data.dtype
    for name, t in operands:
        if t is not None and t._data.dtype != dt:
            raise RuntimeError(f"{op}: expected all operands to have one dtype, but input is {x_proj.dtype} "
                               f"and {name} is {t.dtype}")
    if dt.kind != "f":
        raise RuntimeError(f"{op}: expected a floating point input, got {x_proj.dtype}")
    n, gates = x_proj._data.shape
    if h._data.shape[0] != n or w_hh._data.shape != (gates, h._data.shape[1]):
        raise RuntimeError(f"{op}: sizes do not fit: input {list(x_proj._data.shape)}, hx {list(h._data.shape)}, "
                           f"w_hh {list(w_hh._data.shape)} (expected [{gates}, {h._data.shape[1]}])")
