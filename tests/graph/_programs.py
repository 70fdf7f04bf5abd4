"""Programs shared by the graph tests, and the golden DOT drawings made from them.

`golden_dots()` is also run in fresh processes (after unrelated work) to check
that the drawings are byte-identical whatever ran before.
"""
from __future__ import annotations

import numpy as np

import tinygrad_lab as tl
from tinygrad_lab import graph, nn
from tinygrad_lab.nn import functional as F


class Tiny(nn.Module):
    """One Linear(3 -> 2) layer with hand-picked weights."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        with tl.no_grad():
            self.fc.weight.copy_(tl.tensor([[0.1, 0.2, 0.3], [-0.1, 0.0, 0.1]]))
            self.fc.bias.copy_(tl.tensor([0.5, -0.5]))

    def forward(self, x):
        return self.fc(x)


def tiny_program():
    """x = [[1, 2, 3]]; h = fc(x) = [[1.9, -0.3]]; r = relu(h) = [[1.9, 0]]; loss = sum(r * r) = 3.61.
    Returns (model, x, loss)."""
    model = Tiny()
    x = tl.tensor([[1.0, 2.0, 3.0]])
    r = model(x).relu()
    return model, x, (r * r).sum()


def mlp(seed: int = 0):
    """Sequential(Linear(4, 8), ReLU, Linear(8, 3)), a batch of 5 and its cross-entropy loss."""
    tl.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    x = tl.randn(5, 4)
    y = tl.tensor([0, 1, 2, 0, 1])
    return model, x, F.cross_entropy(model(x), y)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(8 * 2 * 2, 10))

    def forward(self, x):
        return self.head(self.features(x))


def cnn(seed: int = 0):
    """A two-conv CNN on a batch of two 8x8 images, and its cross-entropy loss."""
    tl.manual_seed(seed)
    model = CNN()
    x = tl.randn(2, 1, 8, 8)
    y = tl.tensor([1, 3])
    return model, x, F.cross_entropy(model(x), y)


def chain(n: int = 10_000):
    """A chain of n elementwise ops (alternately + 0.5 and * 1.0001) on a leaf, summed."""
    x = tl.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x
    for i in range(n):
        y = y * 1.0001 if i % 2 else y + 0.5
    return x, y.sum()


def golden_dots() -> dict:
    """name -> DOT source of each golden drawing."""
    model, _, loss = tiny_program()
    params = dict(model.named_parameters())
    out = {"tiny_forward": graph.capture(loss, params=params).to_dot(show_values=True)}
    loss.backward()
    out["tiny_backward"] = graph.capture(loss, params=params).to_dot(show_values=True, show_grads=True,
                                                                      cluster_modules=True)
    model, _, loss = mlp()
    out["mlp_clustered"] = graph.capture(loss, params=dict(model.named_parameters())).to_dot(cluster_modules=True)
    model, _, loss = cnn()
    out["cnn_collapsed"] = graph.capture(loss, params=dict(model.named_parameters())).to_dot(
        cluster_modules=True, collapse=["features"])
    _, loss = chain()
    out["chain_10000"] = graph.capture(loss).to_dot()
    return out


def unrelated_work() -> None:
    """Ops, graphs and module calls that move the engine's global counters."""
    a = tl.randn(7, requires_grad=True)
    (a.exp() * a).sum().backward()
    nn.Linear(2, 2)(tl.randn(1, 2)).sum().backward()
    np.random.default_rng(1).standard_normal(3)
