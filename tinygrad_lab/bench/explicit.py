"""Hand-written networks for the training-step workloads: the floor the engine is measured against.

A network is described once as a list of layer specs (`MLP`, `CNN`); `explicit_net` turns the
spec into layers with hand-derived backward passes written against an array module `xp` (NumPy
or CuPy, like the engine's own ops), and `module_net` turns the same spec into an `nn.Sequential`
of tinygrad_lab or PyTorch. `init_weights` draws the weights both start from, in parameter order.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

LayerSpec = tuple  # ("linear", in, out) | ("conv3x3", in, out) | ("relu",) | ("maxpool2",) | ("flatten",)

MLP: tuple[LayerSpec, ...] = (("linear", 64, 128), ("relu",), ("linear", 128, 10))
CNN: tuple[LayerSpec, ...] = (("conv3x3", 1, 8), ("relu",), ("maxpool2",), ("conv3x3", 8, 16), ("relu",),
                              ("maxpool2",), ("flatten",), ("linear", 16 * 2 * 2, 10))


def init_weights(spec: Sequence[LayerSpec], rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    """Weights and biases in parameter order, uniform in +-1/sqrt(fan_in) (PyTorch's default range)."""
    weights = []
    for kind, *dims in spec:
        if kind in ("linear", "conv3x3"):
            fan_in, out = dims
            shape = (out, fan_in) if kind == "linear" else (out, fan_in, 3, 3)
            bound = 1.0 / math.sqrt(fan_in * (1 if kind == "linear" else 9))
            weights += [rng.uniform(-bound, bound, shape).astype(dtype), rng.uniform(-bound, bound, out).astype(dtype)]
    return weights


def module_net(nn: Any, spec: Sequence[LayerSpec]) -> Any:
    """The spec as `nn.Sequential` of tinygrad_lab or PyTorch (same code for both)."""
    make = {"linear": lambda i, o: nn.Linear(i, o), "conv3x3": lambda i, o: nn.Conv2d(i, o, 3, padding=1),
            "relu": nn.ReLU, "maxpool2": lambda: nn.MaxPool2d(2), "flatten": nn.Flatten}
    return nn.Sequential(*(make[kind](*dims) for kind, *dims in spec))


class Linear:
    def __init__(self, xp: Any, w: Any, b: Any) -> None:
        self.params = [w, b]

    def forward(self, x: Any) -> Any:
        self.x = x
        w, b = self.params
        return x @ w.T + b

    def backward(self, g: Any) -> tuple[Any, list[Any]]:
        w = self.params[0]
        return g @ w, [g.T @ self.x, g.sum(axis=0)]


class ReLU:
    params: list[Any] = []

    def __init__(self, xp: Any) -> None:
        self.xp = xp

    def forward(self, x: Any) -> Any:
        self.mask = x > 0
        return self.xp.maximum(x, 0)

    def backward(self, g: Any) -> tuple[Any, list[Any]]:
        return g * self.mask, []


class Conv3x3:
    """3x3 convolution, stride 1, zero padding 1, by im2col: nine shifted views, one matmul."""

    def __init__(self, xp: Any, w: Any, b: Any) -> None:
        self.xp, self.params = xp, [w, b]

    def forward(self, x: Any) -> Any:
        xp, (w, b) = self.xp, self.params
        n, c, h, wd = self.in_shape = x.shape
        padded = xp.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        cols = xp.stack([padded[:, :, i:i + h, j:j + wd] for i in range(3) for j in range(3)], axis=2)
        self.cols = cols.reshape(n, c * 9, h * wd)
        out = w.reshape(w.shape[0], -1) @ self.cols
        return out.reshape(n, w.shape[0], h, wd) + b[:, None, None]

    def backward(self, g: Any) -> tuple[Any, list[Any]]:
        xp, (w, _) = self.xp, self.params
        n, c, h, wd = self.in_shape
        g2 = g.reshape(n, w.shape[0], h * wd)
        dw = (g2 @ self.cols.transpose(0, 2, 1)).sum(axis=0).reshape(w.shape)
        dcols = (w.reshape(w.shape[0], -1).T @ g2).reshape(n, c, 9, h, wd)
        dpadded = xp.zeros((n, c, h + 2, wd + 2), dtype=g.dtype)
        for k in range(9):
            i, j = divmod(k, 3)
            dpadded[:, :, i:i + h, j:j + wd] += dcols[:, :, k]
        return dpadded[:, :, 1:-1, 1:-1], [dw, g.sum(axis=(0, 2, 3))]


class MaxPool2:
    """2x2 max pooling, stride 2. The gradient goes to every maximum of a window: ties happen only
    between zeros after a ReLU, whose backward then zeroes them, so the result matches PyTorch's."""

    params: list[Any] = []

    def __init__(self, xp: Any) -> None:
        pass

    def forward(self, x: Any) -> Any:
        n, c, h, w = x.shape
        windows = x.reshape(n, c, h // 2, 2, w // 2, 2)
        out = windows.max(axis=(3, 5))
        self.mask = windows == out[:, :, :, None, :, None]
        return out

    def backward(self, g: Any) -> tuple[Any, list[Any]]:
        n, c, h2, _, w2, _ = self.mask.shape
        return (self.mask * g[:, :, :, None, :, None]).reshape(n, c, h2 * 2, w2 * 2), []


class Flatten:
    params: list[Any] = []

    def __init__(self, xp: Any) -> None:
        pass

    def forward(self, x: Any) -> Any:
        self.shape = x.shape
        return x.reshape(x.shape[0], -1)

    def backward(self, g: Any) -> tuple[Any, list[Any]]:
        return g.reshape(self.shape), []


_LAYERS = {"linear": Linear, "conv3x3": Conv3x3, "relu": ReLU, "maxpool2": MaxPool2, "flatten": Flatten}


class ExplicitNet:
    """A chain of hand-written layers, trained with cross-entropy and SGD with momentum."""

    def __init__(self, xp: Any, spec: Sequence[LayerSpec], weights: Sequence[Any]) -> None:
        self.xp, self.layers = xp, []
        it = iter(weights)
        for kind, *_ in spec:
            args = (next(it), next(it)) if kind in ("linear", "conv3x3") else ()
            self.layers.append(_LAYERS[kind](xp, *args))
        self.params = [p for layer in self.layers for p in layer.params]
        self.momentum = [xp.zeros_like(p) for p in self.params]

    def sgd_step(self, x: Any, y: Any, lr: float, momentum: float) -> tuple[Any, list[Any]]:
        """Forward, cross-entropy, backward and an in-place update (PyTorch's SGD rule: buf = m*buf + g,
        p -= lr*buf); returns the loss and the gradients."""
        for layer in self.layers:
            x = layer.forward(x)
        loss, g = cross_entropy(self.xp, x, y)
        grads: list[Any] = []
        for layer in reversed(self.layers):
            g, layer_grads = layer.backward(g)
            grads = layer_grads + grads
        for p, buf, grad in zip(self.params, self.momentum, grads):
            buf *= momentum
            buf += grad
            p -= lr * buf
        return loss, grads


def cross_entropy(xp: Any, logits: Any, y: Any) -> tuple[Any, Any]:
    """Mean cross-entropy of integer labels `y`, and its gradient with respect to the logits."""
    n = logits.shape[0]
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))
    rows = xp.arange(n)
    loss = -log_p[rows, y].mean()
    grad = xp.exp(log_p)
    grad[rows, y] -= 1
    return loss, grad / n
