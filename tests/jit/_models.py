"""Models and helpers shared by the jit tests: the same program eagerly and traced."""
from __future__ import annotations

import numpy as np

import tinygrad_lab as tl
from tinygrad_lab import nn
from tinygrad_lab.autograd.tensor_base import TensorBase

F = nn.functional


def mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3))


class CNN(nn.Module):
    """conv + pool + linear, as the lessons' digit classifier."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(4, 6, 3)
        self.fc = nn.Linear(6 * 2 * 2, 5)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = F.avg_pool2d(F.relu(self.conv2(x)), 1)
        return self.fc(x.flatten(1))


class Unrolled(nn.Module):
    """An RNN cell (RNNCell, LSTMCell or GRUCell) unrolled over the time steps of x (T, N, C),
    returning every hidden state stacked, and the last one."""

    def __init__(self, cell: nn.Module):
        super().__init__()
        self.cell = cell

    def forward(self, xs):
        state, outs = None, []
        for t in range(xs.shape[0]):
            state = self.cell(xs[t], state)
            outs.append(state[0] if isinstance(state, tuple) else state)
        return tl.stack(outs), outs[-1]


class Rows(nn.Module):
    """x (N, R, C) taken apart along dim 1 (unbind) and stacked again along a new last dim, reversed."""

    def forward(self, x):
        rows = x.unbind(1)
        return tl.stack([r * (i + 1) for i, r in enumerate(reversed(rows))], -1)


def models() -> dict:
    """name -> (model factory, example input shape)."""
    return {
        "mlp": (mlp, (8, 6)),
        "cnn": (CNN, (3, 1, 8, 8)),
        "rnn_cell": (lambda: Unrolled(nn.RNNCell(4, 5)), (3, 2, 4)),
        "lstm_cell": (lambda: Unrolled(nn.LSTMCell(4, 5)), (3, 2, 4)),
        "gru_cell": (lambda: Unrolled(nn.GRUCell(4, 5)), (3, 2, 4)),
        "lstm_layers": (lambda: nn.LSTM(4, 5, num_layers=2), (3, 2, 4)),  # returns (output, (h, c))
        "unbind_stack": (Rows, (2, 3, 4)),
    }


def as_tuple(out) -> tuple:
    """The tensors of a result, flattened out of its tuples and lists."""
    if isinstance(out, TensorBase):
        return (out,)
    return tuple(t for o in out for t in as_tuple(o))


def host(t) -> np.ndarray:
    return t._device.backend.to_host(t._data)


def assert_same(got, expected) -> None:
    """Results with the same structure of tensors, each with equal shape, dtype, device and values."""
    got, expected = as_tuple(got), as_tuple(expected)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype and g.device == e.device
        np.testing.assert_array_equal(host(g), host(e))
