"""What several programs share: weights and data drawn by NumPy, so that tinygrad_lab and PyTorch
start from the same point (each library's own random generator draws different numbers)."""
import numpy as np


def same_start(torch, model, seed: int = 0):
    """Overwrite every parameter of model with NumPy draws, uniform in +-1/sqrt(fan_in) (the
    scale of PyTorch's default init); returns model. Buffers (BatchNorm's statistics) are kept."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
            fan_in = int(np.prod(p.shape[1:])) if p.dim() > 1 else p.shape[0]
            bound = 1.0 / np.sqrt(max(fan_in, 1))
            values = rng.uniform(-bound, bound, size=tuple(p.shape))
            p.copy_(torch.tensor(values, dtype=p.dtype))
    return model


def blobs(n: int, shape: tuple, n_classes: int, seed: int = 0, noise: float = 1.0):
    """n float32 samples of `shape` in n_classes classes: a fixed random pattern per class plus
    Gaussian noise; returns (x, y) as NumPy arrays (a stand-in for MNIST/CIFAR-10)."""
    rng = np.random.default_rng(seed)
    patterns = rng.standard_normal((n_classes,) + tuple(shape))
    y = rng.integers(0, n_classes, size=n)
    x = patterns[y] + noise * rng.standard_normal((n,) + tuple(shape))
    return x.astype(np.float32), y.astype(np.int64)
