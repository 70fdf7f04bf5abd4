"""Recurrent cells and layers: one time step of an Elman RNN, an LSTM and a GRU, each one recorded
op, and the same steps looped over a whole sequence, again one recorded op per layer and direction.

    RNNCell    h' = tanh(a) (or relu(a))           a = x_proj + h W_hhᵀ + b_hh
    LSTMCell   (h', c') from gates i, f, g, o      a = x_proj + h W_hhᵀ + b_hh, 4 blocks
    GRUCell    h' from gates r, z, n               x_proj and h W_hhᵀ + b_hh, 3 blocks each

`x_proj` is the input's share of the pre-activations, x W_ihᵀ + b_ih: a layer computes it for all
time steps in one matrix product before its loop over time, so a cell gets it ready-made.

Why one op per step instead of the composition of matmul, chunk, sigmoid, tanh, mul and add
(written out below as `*_cell_composed`, the same formulas with ops): a step of an LSTM records
1 node instead of ~15, and its backward is one page of array arithmetic instead of ~30 small ops.
A word-level language model spends most of its time in these steps (benchmarks/recurrent.py).

    RNNLayer, LSTMLayer, GRULayer    the step looped over time: out (L, N, H) and the final state

The layers (`_Layer`) run the cells' own array math (`_*_forward`, `_*_backward`) in a loop: a
sequence of 28 steps records 1 node instead of 28 cells plus the slicing and joining around them
(pytorch/examples' mnist_rnn: ~500 recorded ops a training step -> ~30), and its backward is
backpropagation through time written out. The cells stay the one-page teaching piece; a loop of
nn.LSTMCell shows the per-step graph.

The backwards are written on arrays, for speed, so they are not differentiable again. When the
gradient must itself be differentiable (`create_graph=True`: grad mode is on while backward runs),
a cell's backward runs the composed step instead and lets the engine differentiate it
(`ops.composed.composed_backward`, shared with batch norm), so gradients of gradients are right either way.
"""
from __future__ import annotations

from ..autograd.grad_mode import state as _grad_state
from . import activation as act
from . import elementwise as ew
from . import movement as mv
from .composed import composed_backward
from .indexing import getitem
from .op import Op, constant

__all__ = ["gru_cell", "gru_layer", "lstm_cell", "lstm_layer", "rnn_cell", "rnn_layer"]


# ---------------------------------------------------------------- one step on arrays
# Each kind of step is written once, on backend arrays, as a forward and a backward. The cells
# below run one step of them; the layers (further down) loop them over a whole sequence.
#
#   *_prepare(xp, x_proj, w_hh_t, b_hh) -> (x_proj as the step reads it, the step's other operands)
#   *_forward(xp, x_proj, state, operands, nonlinearity) -> (new state, what backward needs)
#   *_slopes(xp, saved, state, nonlinearity, da) -> factors
#   *_backward(xp, factors, grads, da) -> (da_h, dh_direct, rest)
#
# `_prepare` runs once per sequence (a cell: per step) on what forward then reads at every step:
# an RNN and an LSTM add b_hh to x_proj there, once for all steps instead of once per step.
# w_hh_t is W_hhᵀ (see _affine). state and grads are tuples of arrays: (h,) or, for an LSTM,
# (h, c); grads are those arriving at the new state. Backward comes in two parts: `_slopes` works
# out, from what forward saved, what does not depend on the gradients (the activations' slopes
# times what they meet): into da, the array that becomes the gradient of x_proj, the factor each
# pre-activation's gradient is the arriving gradient times, and the rest as `factors`;
# `_backward` multiplies the arriving gradients through them, da in place. The slopes are
# elementwise, so a layer computes them for all its time steps at once (arrays with a leading time
# axis) and only `_backward` runs step by step: 6 array calls and a matrix product for an LSTM
# instead of ~20, and the slopes go straight into da, with no temporaries of da's size (big fresh
# arrays cost page faults that outweigh their arithmetic): mnist_rnn's LSTM layer, 28 steps of
# N 8, H 64, backward ~1.05 -> ~0.8 ms.
# `_backward` returns da_h, the gradient of h W_hhᵀ + b_hh (da itself except in a GRU), dh_direct,
# what h gets besides, through no matrix product (or None), and rest, the gradients of the other
# state tensors (an LSTM's c).

def _rnn_prepare(xp, x_proj, w_hh_t, b_hh):
    return x_proj if b_hh is None else x_proj + b_hh, (w_hh_t,)


def _rnn_forward(xp, x_proj, state, operands, nonlinearity):
    a = _affine(x_proj, state[0], operands[0])
    h = xp.tanh(a, out=a) if nonlinearity == "tanh" else xp.maximum(a, 0, out=a)
    return (h,), (h,)


def _rnn_slopes(xp, saved, state, nonlinearity, da):
    out = saved[0]
    if nonlinearity == "tanh":
        xp.multiply(out, out, out=da)
        xp.subtract(1, da, out=da)  # tanh' = 1 - tanh²
    else:
        da[...] = out > 0  # relu' = [h' > 0]
    return ()


def _rnn_backward(xp, factors, grads, da):
    da *= grads[0]
    return da, None, ()


def _lstm_prepare(xp, x_proj, w_hh_t, b_hh):
    """x_proj + b_hh, both halved in the columns of i, f and o (exact: a power of 2), so the step's
    pre-activations are a/2 there and a for g: one tanh then gives all four gates, with
    σ(a) = (1 + tanh(a/2)) / 2 = tanh(a/2) · ½ + ½. W_hhᵀ is halved too, once, for a layer (x_proj
    (L, N, 4H)); a cell's single step halves its h W_hhᵀ instead (one (N, 4H) product, not a copy
    of W_hh: 5 us less)."""
    scale, shift = _gate_scale(xp, w_hh_t.dtype, w_hh_t.shape[1] // 4, getattr(x_proj, "device", None))
    x = x_proj.copy() if b_hh is None else x_proj + b_hh
    x *= scale  # in place: one (L, N, 4H) temporary less, 36 -> 24 us for mnist_rnn's sequence
    if x_proj.ndim == 3:
        return x, (w_hh_t * scale, None, scale, shift)
    return x, (w_hh_t, scale, scale, shift)


def _lstm_forward(xp, x_proj, state, operands, nonlinearity=None):
    h, c = state
    w_hh_t, hh_scale, scale, shift = operands
    hh = _affine(None, h, w_hh_t)
    if hh_scale is not None:  # a cell's: W_hh is not halved (see _lstm_prepare)
        hh *= hh_scale
    gates = xp.add(hh, x_proj, out=hh)  # becomes i | f | g | o in place: 3 ufunc calls, not 6 with σ as
    xp.tanh(gates, out=gates)           # 1 / (1 + e^-a) and g's tanh apart (and b_hh added once per sequence:
    gates *= scale                      # a step of N 8, H 64 from 20 to 14 us)
    gates += shift
    H = c.shape[1]
    i, f, g, o = gates[:, :H], gates[:, H:2 * H], gates[:, 2 * H:3 * H], gates[:, 3 * H:]
    c_new = f * c
    c_new += i * g
    tanh_c = xp.tanh(c_new)
    return (o * tanh_c, c_new), (gates, tanh_c)


_GATE_SCALES: dict = {}  # (array module, dtype, H, device) -> (scale, shift)


def _gate_scale(xp, dtype, H: int, device) -> tuple:
    """The LSTM's gate-wise scale ½ | ½ | 1 | ½ and shift ½ | ½ | 0 | ½ (4H each), made once per
    array module, dtype, size and device (making them costs a cell step 3 us)."""
    key = (xp, dtype, H, str(device))
    if key not in _GATE_SCALES:
        scale = xp.repeat(xp.asarray([0.5, 0.5, 1, 0.5], dtype=dtype), H)
        _GATE_SCALES[key] = scale, scale * (scale != 1)
    return _GATE_SCALES[key]


def _lstm_slopes(xp, saved, state, nonlinearity, da):
    """da ← g·σ'(a_i) | c·σ'(a_f) | i·tanh'(a_g) | tanh(c')·σ'(a_o); factors A = o ⊙ (1 - tanh²(c')), f:
    ċ_all = ċ + ḣ ⊙ A,  ā_i | ā_f | ā_g = ċ_all ⊙ da (3 blocks),  ā_o = ḣ ⊙ da's 4th,
    dc = ċ_all ⊙ f."""
    gates, tanh_c = saved
    H = tanh_c.shape[-1]
    i, f, g, o = (gates[..., k * H:(k + 1) * H] for k in range(4))
    for k, gate, meets in ((0, i, g), (1, f, state[1]), (3, o, tanh_c)):  # σ' = σ(1 - σ), times what σ meets
        block = xp.subtract(1, gate, out=da[..., k * H:(k + 1) * H])
        block *= gate
        block *= meets
    block = xp.multiply(g, g, out=da[..., 2 * H:3 * H])  # tanh' = 1 - tanh², times i for g
    xp.subtract(1, block, out=block)
    block *= i
    A = tanh_c * tanh_c
    xp.subtract(1, A, out=A)
    A *= o
    # f copied to its own array: the step's dc ⊙ f on a contiguous row is ~0.7 us faster than on a view
    return A, xp.ascontiguousarray(f)


def _lstm_backward(xp, factors, grads, da):
    A, f = factors
    gh, gc = grads
    dc_all = gh * A
    dc_all += gc
    N, H = dc_all.shape
    da4 = da.reshape(N, 4, H)  # a view: the 4 gate blocks of each row
    xp.multiply(da4[:, :3], dc_all[:, None], out=da4[:, :3])
    xp.multiply(da4[:, 3], gh, out=da4[:, 3])
    return da, None, (dc_all * f,)


def _gru_prepare(xp, x_proj, w_hh_t, b_hh):
    return x_proj, (w_hh_t, b_hh)  # b_hh stays in the step: the reset gate scales h W_hhᵀ + b_hh's n block


def _gru_forward(xp, x_proj, state, operands, nonlinearity=None):
    h = state[0]
    hh = _affine(None, h, *operands)
    H = h.shape[1]
    rz = x_proj[:, :2 * H] + hh[:, :2 * H]
    ew.sigmoid_into(xp, rz, rz)
    r, z = rz[:, :H], rz[:, H:]
    n = xp.tanh(x_proj[:, 2 * H:] + r * hh[:, 2 * H:])
    return ((1 - z) * n + z * h,), (rz, n, hh[:, 2 * H:])


def _gru_slopes(xp, saved, state, nonlinearity, da):
    """da ← K_r | K_z | K_n and factors r, z: ā_n = ḣ ⊙ K_n, ā_z = ḣ ⊙ K_z,
    ā_r = ā_n ⊙ hh_n ⊙ r(1 - r) = ḣ ⊙ K_r."""
    rz, n, hh_n = saved
    H = n.shape[-1]
    r, z = rz[..., :H], rz[..., H:]
    k_n = xp.multiply(n, n, out=da[..., 2 * H:])
    xp.subtract(1, k_n, out=k_n)
    k_n *= 1 - z                                                 # n's pre-activation
    xp.multiply(state[0] - n, z * (1 - z), out=da[..., H:2 * H])  # update gate
    xp.multiply(k_n, hh_n * r * (1 - r), out=da[..., :H])        # reset gate
    return r, z


def _gru_backward(xp, factors, grads, da):
    r, z = factors
    g = grads[0]
    N, H = g.shape
    da3 = da.reshape(N, 3, H)  # a view: the 3 gate blocks of each row
    xp.multiply(da3, g[:, None], out=da3)
    dhh = da.copy()
    dhh[:, 2 * H:] *= r                                          # the reset gate scales hh_n
    return dhh, g * z, ()                                        # h' = ... + z ⊙ h directly


# ---------------------------------------------------------------- the cells: one step, one op

class RNNCell(Op):
    """One Elman RNN step: h' = tanh(a) (or relu(a)), a = x_proj + h W_hhᵀ + b_hh.

    Backward (ḣ the gradient arriving at h'):
        ā = ḣ ⊙ (1 - h'²)          tanh' = 1 - tanh²    (relu: ā = ḣ where h' > 0, else 0)
        dx_proj = ā,  dh = ā W_hh,  dW_hh = āᵀ h,  db_hh = Σ_batch ā
    """

    @staticmethod
    def forward(ctx, x_proj, h, w_hh, b_hh, nonlinearity):
        x, operands = _rnn_prepare(ctx.xp, x_proj._data, w_hh._data.T, _array(b_hh))
        (out,), _ = _rnn_forward(ctx.xp, x, (h._data,), operands, nonlinearity)
        ctx.save_for_backward(x_proj, h, w_hh, b_hh, out, nonlinearity)
        return out

    @staticmethod
    def backward(ctx, gh):
        x_proj, h, w_hh, b_hh, out, nonlinearity = ctx.saved_tensors
        if _grad_state.enabled:  # create_graph: the gradient must be differentiable too
            return composed_backward(ctx, rnn_cell_composed, (x_proj, h, w_hh, b_hh), (gh,), nonlinearity)
        # a saved output comes back as a tensor
        xp, out = ctx.xp, out._data
        da = xp.empty_like(out)
        _rnn_backward(xp, _rnn_slopes(xp, (out,), None, nonlinearity, da), (gh._data,), da)
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
    (on arrays in `_lstm_prepare`, `_lstm_forward`, `_lstm_slopes` and `_lstm_backward`)
    """

    @staticmethod
    def forward(ctx, x_proj, h, c, w_hh, b_hh):
        x, operands = _lstm_prepare(ctx.xp, x_proj._data, w_hh._data.T, _array(b_hh))
        state, saved = _lstm_forward(ctx.xp, x, (h._data, c._data), operands)
        ctx.save_for_backward(x_proj, h, c, w_hh, b_hh, *saved)
        return state

    @staticmethod
    def backward(ctx, gh, gc):
        x_proj, h, c, w_hh, b_hh, gates, tanh_c = ctx.saved_tensors
        if _grad_state.enabled:  # create_graph: the gradient must be differentiable too
            return composed_backward(ctx, lstm_cell_composed, (x_proj, h, c, w_hh, b_hh), (gh, gc))
        xp = ctx.xp
        da = xp.empty(gates.shape, dtype=gates.dtype)  # C order: backward views its rows as (N, 4, H)
        factors = _lstm_slopes(xp, (gates, tanh_c), (h._data, c._data), None, da)
        _, _, (dc,) = _lstm_backward(xp, factors, (gh._data, gc._data), da)
        dx, dh, dw, db = _input_grads(ctx, da, da, h, w_hh, skip=1)
        return dx, dh, constant(ctx, dc) if ctx.needs_input_grad[2] else None, dw, db


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
    (on arrays in `_gru_prepare`, `_gru_forward`, `_gru_slopes` and `_gru_backward`)
    """

    @staticmethod
    def forward(ctx, x_proj, h, w_hh, b_hh):
        x, operands = _gru_prepare(ctx.xp, x_proj._data, w_hh._data.T, _array(b_hh))
        (out,), saved = _gru_forward(ctx.xp, x, (h._data,), operands)
        ctx.save_for_backward(x_proj, h, w_hh, b_hh, *saved)
        return out

    @staticmethod
    def backward(ctx, gh):
        x_proj, h, w_hh, b_hh, *saved = ctx.saved_tensors
        if _grad_state.enabled:  # create_graph: the gradient must be differentiable too
            return composed_backward(ctx, gru_cell_composed, (x_proj, h, w_hh, b_hh), (gh,))
        xp = ctx.xp
        da = xp.empty(x_proj._data.shape, dtype=x_proj._data.dtype)  # C order: backward views its rows as (N, 3, H)
        dhh, dh_direct, _ = _gru_backward(xp, _gru_slopes(xp, saved, (h._data,), None, da), (gh._data,), da)
        return _input_grads(ctx, da, dhh, h, w_hh, dh_direct=dh_direct)


# ---------------------------------------------------------------- the layers: a whole sequence, one op

class _Layer(Op):
    """One layer in one direction over a whole sequence as ONE recorded op (as cuDNN runs a layer):
    forward loops the cell's step over time on arrays; backward is backpropagation through time
    written out, the same step's backward looped the other way:

        forward   for t = 0 .. L-1:  state_t+1 = step(x_proj[t], state_t);  out[t] = h_t+1
        backward  ḡ = the gradients arriving at the final state
                  for t = L-1 .. 0:  ḡ_h += ġ_out[t]                  the output at t is h_t+1 too
                                     ā_t, ḡ = step's backward(ḡ)     ḡ: now the gradients of state_t
                  dx_proj[t] = ā_t,  dW_hh = Σ_t ā_tᵀ h_t,  db_hh = Σ_t Σ_batch ā_t,  dstate_0 = ḡ

    (reverse=True: the sequence is read from its end, and time runs the other way in both.)
    Arguments: x_proj (L, N, G·H), h0 (N, H), c0 (N, H) or None (no cell state), w_hh, b_hh or
    None, reverse, the nonlinearity (an Elman RNN's); outputs: out (L, N, H) and the final state.
    The step math is the cell's (`_*_prepare`, `_*_forward`, `_*_slopes`, `_*_backward` above), not
    a copy of it; backward computes the slopes of all time steps at once. When the gradient must
    itself be differentiable (create_graph), backward runs the composed step per time step instead
    (`composed_backward`, as the cells do), so double backward works too.
    """

    step_prepare = step_forward = step_slopes = step_backward = step_composed = None  # the kind's, per subclass
    own_da_h = False  # whether the gradient of h W_hhᵀ + b_hh is an array of its own (a GRU's) or da_x

    @classmethod
    def forward(cls, ctx, x_proj, h0, c0, w_hh, b_hh, reverse, nonlinearity):
        xp = ctx.xp
        w_t = xp.ascontiguousarray(w_hh._data.T)  # W_hhᵀ laid out for BLAS once per sequence (see _affine)
        x, operands = cls.step_prepare(xp, x_proj._data, w_t, _array(b_hh))
        state = (h0._data,) if c0 is None else (h0._data, c0._data)
        out = xp.empty(x.shape[:2] + state[0].shape[1:], dtype=x.dtype)
        record = any(ctx.needs_input_grad[k] for k in range(5))  # else backward never runs: nothing is kept
        states = saved = None  # per field, (L, ·): the state each step began from, what its backward needs
        for t in _time(len(x), reverse):
            new_state, step_saved = cls.step_forward(xp, x[t], state, operands, nonlinearity)
            if record:
                states, saved = _keep(xp, states, t, state, len(x)), _keep(xp, saved, t, step_saved, len(x))
            state = new_state
            out[t] = state[0]
        ctx.save_for_backward(x_proj, h0, c0, w_hh, b_hh, reverse, nonlinearity, states, saved)
        return (out,) + tuple(s.copy() for s in state)  # copies: the arrays backward keeps stay private

    @classmethod
    def backward(cls, ctx, g_out, *g_state):
        x_proj, h0, c0, w_hh, b_hh, reverse, nonlinearity, states, saved = ctx.saved_tensors
        if _grad_state.enabled:  # create_graph: the gradient must be differentiable too
            return composed_backward(ctx, cls._composed, (x_proj, h0, c0, w_hh, b_hh), (g_out, *g_state),
                                      reverse, nonlinearity)
        xp, w, go = ctx.xp, w_hh._data, g_out._data
        da_x = xp.empty(x_proj._data.shape, dtype=x_proj._data.dtype)  # C order: steps view its rows by gate
        factors = cls.step_slopes(xp, saved, states, nonlinearity, da_x)  # all steps at once
        factors = list(zip(*factors)) if factors else [()] * len(go)  # per step
        da_h = xp.empty_like(da_x) if cls.own_da_h else da_x
        grads = tuple(g._data for g in g_state)
        for t in _time(len(go), not reverse):  # backward runs through time the other way
            grads = (grads[0] + go[t],) + grads[1:]
            da, dh_direct, rest = cls.step_backward(xp, factors[t], grads, da_x[t])
            if da_h is not da_x:
                da_h[t] = da
            dh = da @ w
            grads = (dh if dh_direct is None else dh + dh_direct,) + rest
        return _layer_grads(ctx, da_x, da_h, states[0], grads)

    @classmethod
    def _composed(cls, x_proj, h0, c0, w_hh, b_hh, reverse, nonlinearity):
        """The layer written with ops: the composed step looped over time (backward's create_graph path)."""
        state = (h0,) if c0 is None else (h0, c0)
        outs = [None] * x_proj._data.shape[0]
        for t in _time(len(outs), reverse):
            state = cls.step_composed(getitem(x_proj, t), state, w_hh, b_hh, nonlinearity)
            outs[t] = state[0]
        return (mv.stack(outs, 0),) + state


def _time(length: int, reverse: bool) -> range:
    """The time steps in the order a layer visits them."""
    return range(length - 1, -1, -1) if reverse else range(length)


def _keep(xp, buffers: tuple | None, t: int, arrays: tuple, length: int) -> tuple:
    """arrays copied in at step t of one whole-sequence array per field (`length` steps, made at the
    first step): backward reads all steps at once, and each step's own arrays are freed and their memory
    reused, still in cache (a (35, 20, 200) LSTM layer's forward and backward: 7% faster than keeping
    them and stacking them in backward)."""
    if buffers is None:
        buffers = tuple(xp.empty((length,) + a.shape, dtype=a.dtype) for a in arrays)
    for buf, a in zip(buffers, arrays):
        buf[t] = a
    return buffers


def _layer_grads(ctx, da_x, da_h, h_in, d_state) -> tuple:
    """A layer's gradients from those of every step's pre-activations (L, N, G·H): the weights'
    sums over time as one matrix product each; h_in (L, N, H) holds the h every step began from."""
    n = ctx.needs_input_grad
    gates, hidden = da_h.shape[-1], h_in.shape[-1]
    da_h = da_h.reshape(-1, gates)
    dx = constant(ctx, da_x) if n[0] else None
    dh0 = constant(ctx, d_state[0]) if n[1] else None
    dc0 = constant(ctx, d_state[1]) if n[2] else None
    dw = constant(ctx, da_h.T @ h_in.reshape(-1, hidden)) if n[3] else None
    db = constant(ctx, da_h.sum(axis=0)) if n[4] else None
    return dx, dh0, dc0, dw, db, None, None


class RNNLayer(_Layer):
    """An Elman RNN layer over a whole sequence (RNNCell's step looped over time): one op."""

    step_prepare, step_forward = staticmethod(_rnn_prepare), staticmethod(_rnn_forward)
    step_slopes = staticmethod(_rnn_slopes)
    step_backward = staticmethod(_rnn_backward)

    @staticmethod
    def step_composed(x, state, w_hh, b_hh, nonlinearity):
        return (rnn_cell_composed(x, state[0], w_hh, b_hh, nonlinearity),)


class LSTMLayer(_Layer):
    """An LSTM layer over a whole sequence (LSTMCell's step looped over time): one op."""

    step_prepare, step_forward = staticmethod(_lstm_prepare), staticmethod(_lstm_forward)
    step_slopes = staticmethod(_lstm_slopes)
    step_backward = staticmethod(_lstm_backward)

    @staticmethod
    def step_composed(x, state, w_hh, b_hh, nonlinearity):
        return lstm_cell_composed(x, state[0], state[1], w_hh, b_hh)


class GRULayer(_Layer):
    """A GRU layer over a whole sequence (GRUCell's step looped over time): one op."""

    step_prepare, step_forward = staticmethod(_gru_prepare), staticmethod(_gru_forward)
    step_slopes = staticmethod(_gru_slopes)
    step_backward = staticmethod(_gru_backward)
    own_da_h = True

    @staticmethod
    def step_composed(x, state, w_hh, b_hh, nonlinearity):
        return (gru_cell_composed(x, state[0], w_hh, b_hh),)


# ---------------------------------------------------------------- what the cells share

def _array(t):
    """A tensor's array, or None for an absent bias."""
    return None if t is None else t._data


def _affine(x_proj, h, w_hh_t, b_hh=None):
    """h W_hhᵀ + b_hh (+ x_proj), on arrays, given w_hh_t = W_hhᵀ (H, G): a new array, which the caller
    may overwrite. BLAS multiplies a few rows h fastest by a C-ordered W_hhᵀ, which a layer copies
    once per sequence; a cell gets W_hh.T, a view of W_hh, and computes (W_hh hᵀ)ᵀ instead of
    h @ W_hh.T (float32, one thread, h (8, 64) and (20, 200) with 4 gates: 5.1 and 87 us with the
    copy, 11 and 117 us as (W_hh hᵀ)ᵀ, 13 and 144 us as h @ W_hh.T)."""
    out = h @ w_hh_t if w_hh_t.flags.c_contiguous else (w_hh_t.T @ h.T).T
    if b_hh is not None:
        out += b_hh
    if x_proj is not None:
        out += x_proj
    return out


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


def rnn_layer(x_proj, h0, w_hh, b_hh=None, reverse: bool = False, nonlinearity: str = "tanh") -> tuple:
    """An Elman RNN layer (RNNLayer) over x_proj (L, N, H) from h0 (N, H): (output (L, N, H), h_n)."""
    _check_cell("rnn_layer", x_proj, h0, w_hh, b_hh, layer=True)
    return RNNLayer.apply(x_proj, h0, None, w_hh, b_hh, reverse, nonlinearity)


def lstm_layer(x_proj, h0, c0, w_hh, b_hh=None, reverse: bool = False) -> tuple:
    """An LSTM layer (LSTMLayer) over x_proj (L, N, 4H) from (h0, c0): (output (L, N, H), h_n, c_n)."""
    _check_cell("lstm_layer", x_proj, h0, w_hh, b_hh, c0, layer=True)
    return LSTMLayer.apply(x_proj, h0, c0, w_hh, b_hh, reverse, None)


def gru_layer(x_proj, h0, w_hh, b_hh=None, reverse: bool = False) -> tuple:
    """A GRU layer (GRULayer) over x_proj (L, N, 3H) from h0 (N, H): (output (L, N, H), h_n)."""
    _check_cell("gru_layer", x_proj, h0, w_hh, b_hh, layer=True)
    return GRULayer.apply(x_proj, h0, None, w_hh, b_hh, reverse, None)


def _check_cell(op: str, x_proj, h, w_hh, b_hh, c=None, layer: bool = False) -> None:
    """One floating dtype for every operand (PyTorch's error otherwise); matrices of matching sizes."""
    operands = [("input", x_proj), ("hx", h), ("cx", c), ("w_hh", w_hh), ("b_hh", b_hh)]
    dt = x_proj._data.dtype
    for name, t in operands:
        if t is not None and t._data.dtype != dt:
            raise RuntimeError(f"{op}: expected all operands to have one dtype, but input is {x_proj.dtype} "
                               f"and {name} is {t.dtype}")
    if dt.kind != "f":
        raise RuntimeError(f"{op}: expected a floating point input, got {x_proj.dtype}")
    if x_proj._data.ndim != (3 if layer else 2) or (layer and not x_proj._data.shape[0]):
        raise RuntimeError(f"{op}: expected input of shape {'(L > 0, N, G·H)' if layer else '(N, G·H)'}, "
                           f"got {list(x_proj._data.shape)}")
    n, gates = x_proj._data.shape[-2:]
    if h._data.shape[0] != n or w_hh._data.shape != (gates, h._data.shape[1]):
        raise RuntimeError(f"{op}: sizes do not fit: input {list(x_proj._data.shape)}, hx {list(h._data.shape)}, "
                           f"w_hh {list(w_hh._data.shape)} (expected [{gates}, {h._data.shape[1]}])")
