"""Recurrent layers: RNN, LSTM and GRU, as one-step cells and as whole-sequence layers.

Each kind of recurrence is written once, as a step function (`_rnn_step`, `_lstm_step`,
`_gru_step`) that turns (this step's input projection, previous state) into the next state:
one recorded op (ops/recurrent.py) on the whole batch, whose backward is written out by hand.
The cells call it once; a Python loop of cells over time is the define-by-run picture: a
sequence of 5 steps records a graph of 5 steps, one of 50 records 50, and backward walks back
through exactly those (backpropagation through time).

The layers run each layer and direction as ONE recorded op over the whole sequence
(ops.recurrent.RNNLayer / LSTMLayer / GRULayer), as PyTorch's cuDNN kernel does: its forward loops
the same step's array math over time, its backward is backpropagation through time written out.
A sequence of 28 steps then records one node instead of ~3 per step (and pytorch/examples'
mnist_rnn runs 2x faster). A packed batch and an LSTM with proj_size take the per-step loop.

Parameter names, shapes, gate order, initialisation, input/output shapes and `repr` follow
PyTorch, so `load_state_dict` of a PyTorch model's weights gives PyTorch's numbers. The layers
accept a PackedSequence (nn.utils.rnn) as PyTorch's do: the per-step loop runs over the padded
batch, and a sequence that has ended keeps its state (a `where` on each step), so h_n holds
each sequence's state at its own last step and the output is packed like the input.
Deviations: the dropout mask between layers comes from tinygrad_lab's generator, so it differs
from PyTorch's for the same seed; there is no cuDNN kernel (the fused layer op is the same
array loop on every backend).
"""
from __future__ import annotations

import math
import numbers
import warnings

from ... import creation
from ...autograd.tensor_base import TensorBase
from ...ops import elementwise as ew
from ...ops import movement as mv
from ...ops import recurrent
from ...ops.shapes import counts, whole
from .. import functional as F
from .. import init
from ..utils import rnn as rnn_utils
from ..parameter import Parameter
from .module import Module

# ---------------------------------------------------------------- one time step, written once
# Each is one recorded op from ops/recurrent.py, whose docstrings give the formulas and their
# gradients (`ops.recurrent.*_cell_composed` is the same step written with ordinary ops).


def _rnn_step(x_proj, h, w_hh, b_hh, nonlinearity: str = "tanh"):
    """Elman RNN: h' = act(W_ih x + b_ih + W_hh h + b_hh); x_proj is W_ih x + b_ih."""
    return recurrent.rnn_cell(x_proj, h, w_hh, b_hh, nonlinearity)


def _lstm_step(x_proj, state, w_hh, b_hh, w_hr=None):
    """LSTM, gates in PyTorch's order i, f, g, o (the rows of W_ih and W_hh in 4 blocks):
        i = σ(.), f = σ(.), g = tanh(.), o = σ(.)      (each . = W_i* x + b_i* + W_h* h + b_h*)
        c' = f ⊙ c + i ⊙ g
        h' = o ⊙ tanh(c')        (then h' W_hrᵀ when the LSTM has a projection, proj_size > 0)
    """
    h, c = recurrent.lstm_cell(x_proj, state[0], state[1], w_hh, b_hh)
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(x_proj, h, w_hh, b_hh):
    """GRU, gates in PyTorch's order r, z, n (the rows of W_ih and W_hh in 3 blocks):
        r = σ(W_ir x + b_ir + W_hr h + b_hr)
        z = σ(W_iz x + b_iz + W_hz h + b_hz)
        n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))     the reset gate scales W_hn h + b_hn
        h' = (1 - z) ⊙ n + z ⊙ h
    """
    return recurrent.gru_cell(x_proj, h, w_hh, b_hh)


# ---------------------------------------------------------------- cells: one step


class RNNCellBase(Module):
    """What the cells share: weight_ih (G·H, input_size), weight_hh (G·H, H) and, with bias,
    bias_ih and bias_hh (G·H,), where G is the number of gates; all ~ U(-1/√H, 1/√H)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        super().__init__()
        input_size, hidden_size = counts(type(self).__name__, input_size=input_size, hidden_size=hidden_size)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gates = num_chunks * hidden_size
        self.weight_ih = Parameter(creation.empty((gates, input_size), dtype=dtype, device=device))
        self.weight_hh = Parameter(creation.empty((gates, hidden_size), dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(creation.empty(gates, dtype=dtype, device=device))
            self.bias_hh = Parameter(creation.empty(gates, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _batch(self, input, states: list, names: list[str]):
        """Check shapes as PyTorch does; return (input, states) with a batch dim, and whether the
        caller passed one. Missing states (None) become zeros."""
        kind = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{kind}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for name, s in zip(names, states):
            if s is not None and s.dim() not in (1, 2):
                raise ValueError(f"{kind}: Expected {name} to be 1D or 2D, got {s.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            states = [None if s is None else s.unsqueeze(0) for s in states]
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {self.input_size}")
        out = []
        for k, s in enumerate(states):
            if s is None:
                s = input.new_zeros(input.shape[0], self.hidden_size)
            elif s.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{k} batch size {s.shape[0]}")
            elif s.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {s.shape[1]}, "
                                   f"expected {self.hidden_size}")
            out.append(s)
        return input, out, batched


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh) (or relu).
    input (N, input_size) or (input_size,); hx like it with hidden_size (zeros when omitted)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: TensorBase, hx: TensorBase | None = None) -> TensorBase:
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        x, (h,), batched = self._batch(input, [hx], ["hidden"])
        h = _rnn_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh, self.nonlinearity)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step (gates i, f, g, o): returns (h', c'). hx = (h, c), zeros when omitted."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: TensorBase, hx: tuple | None = None) -> tuple:
        if hx is not None and len(hx) != 2:
            raise RuntimeError("lstm_cell expects two hidden states")
        states = [None, None] if hx is None else list(hx)
        x, (h, c), batched = self._batch(input, states, ["hx[0]", "hx[1]"])
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), (h, c), self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step (gates r, z, n): returns h'. hx zeros when omitted."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: TensorBase, hx: TensorBase | None = None) -> TensorBase:
        x, (h,), batched = self._batch(input, [hx], ["hidden"])
        h = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)


# ---------------------------------------------------------------- layers: whole sequences


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters of every layer and direction, and the
    forward pass (layers one after another; in each, one loop over time per direction).

    Parameters, per layer k and direction ("" forward, "_reverse" backward):
    weight_ih_l{k} (G·H, in_k), weight_hh_l{k} (G·H, H), bias_ih_l{k}, bias_hh_l{k} (G·H,),
    with in_0 = input_size and in_k = D·H after (D = 2 if bidirectional); all ~ U(-1/√H, 1/√H)."""

    _num_gates = 1  # G: the number of row blocks of W_ih and W_hh

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None) -> None:
        super().__init__()
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=3)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int), ("hidden_size", hidden_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        num_layers, proj_size = whole(num_layers, "num_layers", type(self).__name__), \
            whole(proj_size, "proj_size", type(self).__name__)
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size

        gate_size = self._num_gates * hidden_size
        out_size = proj_size if proj_size > 0 else hidden_size  # the size of h
        self._all_weights = []  # parameter names per (layer, direction), as PyTorch's all_weights

        def param(*shape):
            return Parameter(creation.empty(shape, dtype=dtype, device=device))

        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else out_size * self.num_directions
            for direction in range(self.num_directions):
                suffix = "_reverse" if direction == 1 else ""
                names = [f"weight_ih_l{layer}{suffix}", f"weight_hh_l{layer}{suffix}"]
                setattr(self, names[0], param(gate_size, layer_input_size))
                setattr(self, names[1], param(gate_size, out_size))
                if bias:
                    names += [f"bias_ih_l{layer}{suffix}", f"bias_hh_l{layer}{suffix}"]
                    setattr(self, names[2], param(gate_size))
                    setattr(self, names[3], param(gate_size))
                if proj_size > 0:
                    names.append(f"weight_hr_l{layer}{suffix}")
                    setattr(self, names[-1], param(proj_size, hidden_size))
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def num_directions(self) -> int:
        return 2 if self.bidirectional else 1

    @property
    def all_weights(self) -> list:
        """The parameters of each (layer, direction), in PyTorch's order."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """A no-op: PyTorch packs the weights for cuDNN here; there is nothing to pack."""

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ------------------------------------------------------------ what RNN, LSTM and GRU fill in
    def _step(self, x_proj, state, w_hh, b_hh, w_hr):
        """One time step of one layer and direction: the next state (see the _*_step functions)."""
        raise NotImplementedError

    def _hidden(self, state):
        """The part of the state that is the layer's output at this step (h)."""
        return state

    def _layer(self, x_proj, state, w_hh, b_hh, reverse: bool):
        """One layer in one direction over the whole sequence as one op: (output, final state)."""
        raise NotImplementedError

    def _initial_state(self, hx, x, batched: bool):
        """hx as given (checked) or zeros, shaped (num_layers·D, N, H), with batch dim N."""
        if hx is not None and hx.dim() != (3 if batched else 2):
            raise RuntimeError(f"For {'batched 3-D' if batched else 'unbatched 2-D'} input, hx should also be "
                               f"{3 if batched else 2}-D but got {hx.dim()}-D tensor")
        expected = (self.num_layers * self.num_directions, x.shape[1], self.hidden_size)
        if hx is None:
            return x.new_zeros(expected)
        hx = hx if batched else hx.unsqueeze(1)
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"Expected hidden size {expected}, got {list(hx.shape)}")
        return hx

    def _split_state(self, hx) -> list:
        """The initial state of each (layer, direction), in order l0, l0_reverse, l1, ..."""
        return list(hx.unbind(0))

    def _join_state(self, states: list, batched: bool):
        """The final states of all (layer, direction)s as h_n (num_layers·D, N, H)."""
        h_n = mv.stack(states, 0)
        return h_n if batched else h_n.squeeze(1)

    # ------------------------------------------------------------ the forward pass
    def _weights(self, layer: int, direction: int):
        """(w_ih, w_hh, b_ih, b_hh, w_hr) of one layer and direction; None where absent."""
        suffix = "_reverse" if direction == 1 else ""
        return tuple(self._parameters.get(f"{kind}_l{layer}{suffix}")
                     for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))

    def _run_direction(self, x, state, layer: int, direction: int, lengths=None):
        """One layer in one direction over the whole sequence x (L, N, in): returns the output
        at every step (L, N, H) and the final state. With `lengths` (a packed batch), sequence n
        only changes its state while t < lengths[n]."""
        w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, direction)
        x_proj = F.linear(x, w_ih, b_ih)  # the input's share of every gate, all steps in one matmul
        if lengths is None and w_hr is None:  # the whole sequence as one recorded op (ops.recurrent.*Layer)
            return self._layer(x_proj, state, w_hh, b_hh, direction == 1)
        x_proj = x_proj.unbind(0)
        steps = range(len(x_proj))
        if direction == 1:
            steps = reversed(steps)  # the reverse direction reads the sequence from its end
        outputs = [None] * len(x_proj)
        for t in steps:  # the Python loop over time: one graph step per sequence element
            new = self._step(x_proj[t], state, w_hh, b_hh, w_hr)
            state = new if lengths is None else _where_running(lengths, t, new, state)
            outputs[t] = self._hidden(state)
        return mv.stack(outputs, 0), state

    def forward(self, input, hx=None):
        """input (L, N, input_size), or (N, L, input_size) with batch_first, or unbatched
        (L, input_size), or a PackedSequence. Returns (output, h_n): output (L, N, D·H)
        (batch_first: (N, L, D·H); packed like the input for a PackedSequence), h_n
        (num_layers·D, N, H); unbatched, without the N dims."""
        if isinstance(input, rnn_utils.PackedSequence):
            return self._forward_packed(input, hx)
        name = type(self).__name__
        if input.dim() not in (2, 3):
            tensor = " tensor" if name == "RNN" else ""
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tensor} instead")
        self._check_features(input)
        batched = input.dim() == 3
        # work time-major: x is (L, N, input_size)
        if not batched:
            x = input.unsqueeze(1)
        elif self.batch_first:
            x = input.transpose(0, 1)
        else:
            x = input
        if x.shape[0] == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        states = self._split_state(self._initial_state(hx, x, batched))
        x, final_states = self._run_layers(x, states)
        if not batched:
            output = x.squeeze(1)
        elif self.batch_first:
            output = x.transpose(0, 1)
        else:
            output = x
        return output, self._join_state(final_states, batched)

    def _check_features(self, input) -> None:
        """input's dtype is the weights' and its last dim is input_size (PyTorch's errors)."""
        w = self.weight_ih_l0
        if input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). "
                             f"Convert input: input.to({w.dtype}), or convert model: model.to({input.dtype})")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.shape[-1]}")

    def _run_layers(self, x, states: list, lengths=None):
        """Every layer over time-major x (L, N, input_size): the last layer's output (L, N, D·H)
        and the final state of each (layer, direction)."""
        final_states = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(self.num_directions):
                k = layer * self.num_directions + direction
                out, final = self._run_direction(x, states[k], layer, direction, lengths)
                outputs.append(out)
                final_states.append(final)
            x = mv.cat(outputs, -1) if len(outputs) > 1 else outputs[0]  # (L, N, D·H): the next layer's input
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, self.training)
        return x, final_states

    def _forward_packed(self, packed, hx):
        """A PackedSequence: run on its padded form (original batch order), freezing each sequence's
        state after its last step; the output is packed like the input, h_n is in the original order."""
        if packed.data.dim() != 2:
            raise ValueError(f"{type(self).__name__}: Expected packed data to be 2D (steps, input_size), got "
                             f"{packed.data.dim()}D instead")
        self._check_features(packed.data)
        x, lengths = rnn_utils.pad_packed_sequence(packed)
        states = self._split_state(self._initial_state(hx, x, True))
        x, final_states = self._run_layers(x, states, lengths.to(x.device))
        return rnn_utils._like(packed, x), self._join_state(final_states, True)


def _where_running(lengths, t: int, new, old):
    """`new` for the sequences still running at step t (t < their length), `old` for those that
    have ended (or, going backwards, not yet begun); an LSTM's state is a (h, c) pair."""
    if isinstance(new, tuple):
        return tuple(_where_running(lengths, t, n, o) for n, o in zip(new, old))
    return ew.where(mv.unsqueeze(ew.gt(lengths, t), 1), new, old)


class RNN(RNNBase):
    """A multi-layer Elman RNN: h_t = tanh(x_t W_ihᵀ + b_ih + h_{t-1} W_hhᵀ + b_hh) (or relu).
    Returns (output, h_n)."""

    _num_gates = 1

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def _step(self, x_proj, h, w_hh, b_hh, w_hr):
        return _rnn_step(x_proj, h, w_hh, b_hh, self.nonlinearity)

    def _layer(self, x_proj, h, w_hh, b_hh, reverse: bool):
        return recurrent.rnn_layer(x_proj, h, w_hh, b_hh, reverse, self.nonlinearity)


class GRU(RNNBase):
    """A multi-layer GRU (gates r, z, n; see _gru_step). Returns (output, h_n)."""

    _num_gates = 3

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)

    def _step(self, x_proj, h, w_hh, b_hh, w_hr):
        return _gru_step(x_proj, h, w_hh, b_hh)

    def _layer(self, x_proj, h, w_hh, b_hh, reverse: bool):
        return recurrent.gru_layer(x_proj, h, w_hh, b_hh, reverse)


class LSTM(RNNBase):
    """A multi-layer LSTM (gates i, f, g, o; see _lstm_step). hx = (h_0, c_0); returns
    (output, (h_n, c_n)). With proj_size > 0, h (and output) are projected to proj_size by
    weight_hr_l{k} (proj_size, H) while c keeps hidden_size."""

    _num_gates = 4

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)

    def _step(self, x_proj, state, w_hh, b_hh, w_hr):
        return _lstm_step(x_proj, state, w_hh, b_hh, w_hr)

    def _hidden(self, state):
        return state[0]

    def _layer(self, x_proj, state, w_hh, b_hh, reverse: bool):
        out, h, c = recurrent.lstm_layer(x_proj, state[0], state[1], w_hh, b_hh, reverse)
        return out, (h, c)

    def _initial_state(self, hx, x, batched: bool):
        h_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        expected_h = (self.num_layers * self.num_directions, x.shape[1], h_size)
        expected_c = (self.num_layers * self.num_directions, x.shape[1], self.hidden_size)
        if hx is None:  # h_0 = c_0 = 0: one zeros tensor serves both when they have one shape (nothing writes them)
            zeros = x.new_zeros(expected_c)
            return (zeros if expected_h == expected_c else x.new_zeros(expected_h)), zeros
        h, c = hx
        if h.dim() != (3 if batched else 2) or c.dim() != (3 if batched else 2):
            kind, d = ("batched 3-D", 3) if batched else ("unbatched 2-D", 2)
            raise RuntimeError(f"For {kind} input, hx and cx should also be {d}-D but got "
                               f"({h.dim()}-D, {c.dim()}-D) tensors")
        if not batched:
            h, c = h.unsqueeze(1), c.unsqueeze(1)
        if tuple(h.shape) != expected_h:
            raise RuntimeError(f"Expected hidden[0] size {expected_h}, got {list(h.shape)}")
        if tuple(c.shape) != expected_c:
            raise RuntimeError(f"Expected hidden[1] size {expected_c}, got {list(c.shape)}")
        return h, c

    def _split_state(self, hx) -> list:
        h, c = hx
        return list(zip(h.unbind(0), c.unbind(0)))

    def _join_state(self, states: list, batched: bool):
        h_n = mv.stack([h for h, _ in states], 0)
        c_n = mv.stack([c for _, c in states], 0)
        return (h_n, c_n) if batched else (h_n.squeeze(1), c_n.squeeze(1))
