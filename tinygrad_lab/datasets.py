"""Small datasets for lessons. Nothing here touches the network.

Every loader returns tensors ``(inputs, targets)``, not a Dataset: unpack them
(``X, y = moons(200)``), look at them, and wrap them when you want batches:
``DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True)``.
Inputs use the default float dtype (float32), class labels are int64.

Synthetic sets (`spirals`, `moons`, `blobs`, `sine_sequences`) are deterministic
for a `seed` (default 0: the same data every run, whatever else drew random
numbers before); `seed=None` draws from tinygrad_lab's global stream instead
(reproducible under `tl.manual_seed`). Samples come grouped by class: shuffle
them (a DataLoader with `shuffle=True`) before training.

Real sets: `digits()` (scikit-learn ships the 8x8 digits inside its package)
and `mnist(root)`, which reads IDX files you downloaded yourself (`read_idx`).

Text: `char_corpus()`, a 4 KB story shipped inside the package, as character ids
(a tensor) and its vocabulary (a string), for a character-level language model.
"""
from __future__ import annotations

import gzip
import math
import os
import struct
import zlib
from importlib import resources
from pathlib import Path

import numpy as np

from . import dtypes
from . import random as _random
from .autograd.tensor_base import TensorBase
from .backends import CPU
from .creation import from_numpy

__all__ = ["blobs", "char_corpus", "digits", "mnist", "moons", "read_idx", "sine_sequences", "spirals"]


def _rng(seed: int | None) -> np.random.Generator:
    if seed is None:
        return _random.generator(CPU)
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
    return np.random.Generator(np.random.PCG64(int(seed)))


def _floats(arr: np.ndarray) -> TensorBase:
    return from_numpy(np.ascontiguousarray(arr, dtype=dtypes.get_default_dtype().np))


def _labels(arr: np.ndarray) -> TensorBase:
    return from_numpy(np.ascontiguousarray(arr, dtype=np.int64))


def _check_count(name: str, value, minimum: int = 1) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def _check_noise(noise) -> float:
    if not noise >= 0:
        raise ValueError(f"noise must be >= 0, got {noise!r}")
    return float(noise)


# ================================================================ synthetic

def spirals(n_per_class: int = 100, n_classes: int = 3, noise: float = 0.2, seed: int | None = 0):
    """Interleaved spiral arms, one per class (the CS231n toy problem): no straight line separates them.

    Returns X (n_per_class * n_classes, 2) float and y (same length,) int64; class k is rows
    k*n_per_class ... (k+1)*n_per_class - 1. Points lie within radius 1; `noise` jitters the angle."""
    n = _check_count("n_per_class", n_per_class)
    k = _check_count("n_classes", n_classes)
    noise = _check_noise(noise)
    rng = _rng(seed)
    xs, ys = [], []
    r = np.linspace(0.0, 1.0, n)
    for c in range(k):
        t = np.linspace(c * 4.0, (c + 1) * 4.0, n) + rng.standard_normal(n) * noise
        xs.append(np.stack([r * np.sin(t), r * np.cos(t)], axis=1))
        ys.append(np.full(n, c))
    return _floats(np.concatenate(xs)), _labels(np.concatenate(ys))


def moons(n: int = 200, noise: float = 0.1, seed: int | None = 0):
    """Two interleaving half circles (scikit-learn's `make_moons` construction).

    Returns X (n, 2) float and y (n,) int64: the first n // 2 rows are the upper moon
    (class 0), the rest the lower one (class 1). `noise` is the std of Gaussian jitter."""
    n = _check_count("n", n, 2)
    noise = _check_noise(noise)
    rng = _rng(seed)
    n_out, n_in = n // 2, n - n // 2
    a_out, a_in = np.linspace(0, math.pi, n_out), np.linspace(0, math.pi, n_in)
    X = np.concatenate([np.stack([np.cos(a_out), np.sin(a_out)], 1),
                        np.stack([1 - np.cos(a_in), 1 - np.sin(a_in) - 0.5], 1)])
    X = X + rng.standard_normal(X.shape) * noise
    return _floats(X), _labels(np.repeat([0, 1], [n_out, n_in]))


def blobs(n: int = 300, centers=3, std=1.0, seed: int | None = 0, n_features: int = 2,
          center_box: tuple = (-10.0, 10.0)):
    """Gaussian clusters, one per class (scikit-learn's `make_blobs` construction).

    `centers`: a count (centers drawn uniformly in `center_box`, `n_features` dims) or a
    (k, d) array of centers. `std`: one value or one per center. Samples are split as
    evenly as possible (the first n % k classes get one more). Returns X (n, d) float, y (n,) int64."""
    n = _check_count("n", n)
    rng = _rng(seed)
    if isinstance(centers, (int, np.integer)) and not isinstance(centers, bool):
        k = _check_count("centers", centers)
        d = _check_count("n_features", n_features)
        lo, hi = center_box
        C = rng.uniform(lo, hi, size=(k, d))
    else:
        C = np.asarray(centers.tolist() if isinstance(centers, TensorBase) else centers, dtype=np.float64)
        if C.ndim != 2 or len(C) == 0:
            raise ValueError(f"centers must be an int or a (k, n_features) array, got shape {list(C.shape)}")
        k, d = C.shape
    stds = np.broadcast_to(np.asarray(std, dtype=np.float64), (k,)) if np.ndim(std) <= 1 else None
    if stds is None or np.any(stds < 0):
        raise ValueError(f"std must be >= 0, one value or one per center ({k}), got {std!r}")
    counts = [n // k + (1 if c < n % k else 0) for c in range(k)]
    X = np.concatenate([C[c] + stds[c] * rng.standard_normal((counts[c], d)) for c in range(k)])
    return _floats(X), _labels(np.repeat(np.arange(k), counts))


def sine_sequences(n: int = 256, length: int = 50, noise: float = 0.0, seed: int | None = 0):
    """Sine waves for next-step prediction: inputs[i, t] is one wave at step t and
    targets[i, t] the same wave at step t + 1 (so targets[:, :-1] == inputs[:, 1:]).

    Each wave is A * sin(w * t + phase) with A ~ U(0.5, 1), w ~ U(0.1, 0.6) rad/step,
    phase ~ U(0, 2 pi), plus Gaussian `noise`. Returns inputs and targets, each
    (n, length, 1) float: batch first, one feature (an RNN's `batch_first=True` layout)."""
    n = _check_count("n", n)
    length = _check_count("length", length)
    noise = _check_noise(noise)
    rng = _rng(seed)
    amp = rng.uniform(0.5, 1.0, size=(n, 1))
    omega = rng.uniform(0.1, 0.6, size=(n, 1))
    phase = rng.uniform(0.0, 2 * math.pi, size=(n, 1))
    t = np.arange(length + 1)[None, :]
    s = amp * np.sin(omega * t + phase)
    if noise:
        s = s + rng.standard_normal(s.shape) * noise
    return _floats(s[:, :-1, None]), _floats(s[:, 1:, None])


# ================================================================ digits (scikit-learn)

def digits(flatten: bool = True):
    """The 8x8 handwritten digits (1797 images, 10 classes; UCI via scikit-learn, no network).

    Returns X and y (1797,) int64. X is (1797, 64) float with pixel values 0..16 (divide by
    16 to scale to [0, 1]); with `flatten=False` it is (1797, 1, 8, 8), channels first for conv layers."""
    try:
        from sklearn.datasets import load_digits
    except ImportError as e:
        raise ImportError("digits() needs scikit-learn (it ships the digits data): pip install scikit-learn") from e
    bunch = load_digits()
    X = np.asarray(bunch.data, dtype=np.float64)
    if not flatten:
        X = X.reshape(-1, 1, 8, 8)
    return _floats(X), _labels(bunch.target)


# ================================================================ a small text (shipped with the package)

def char_corpus():
    """A short story written for tinygrad_lab (tinygrad_lab/data/little_harbour.txt, about 4 KB,
    free to use), for character-level language models.

    Returns ``ids`` (N,) int64, one id per character of the text, and ``vocab``, a string of the
    distinct characters in sorted order: character ``vocab[i]`` has id ``i``, so the text is
    ``"".join(vocab[i] for i in ids.tolist())``."""
    text = resources.files(__package__).joinpath("data", "little_harbour.txt").read_text(encoding="utf-8")
    vocab = "".join(sorted(set(text)))
    index = {ch: i for i, ch in enumerate(vocab)}
    return _labels(np.fromiter((index[ch] for ch in text), dtype=np.int64, count=len(text))), vocab


# ================================================================ IDX files and MNIST

# IDX type code -> (big-endian dtype on disk, dtype of the tensor)
_IDX_TYPES = {
    0x08: (np.dtype(">u1"), np.uint8),
    0x09: (np.dtype(">i1"), np.int8),
    0x0B: (np.dtype(">i2"), np.int16),
    0x0C: (np.dtype(">i4"), np.int32),
    0x0D: (np.dtype(">f4"), np.float32),
    0x0E: (np.dtype(">f8"), np.float64),
}
_IDX_NAMES = "0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64"


def _read_bytes(path: Path) -> bytes:
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] != b"\x1f\x8b":  # gzip's magic bytes: decided by content, not by the file name
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as e:
        raise ValueError(f"{path}: corrupted or truncated gzip file ({e}); download it again") from None


def read_idx(path) -> TensorBase:
    """The array in an IDX file (the MNIST format), raw or gzipped, as a CPU tensor.

    IDX: 2 zero bytes, a type code, the number of dimensions, each dimension as a
    big-endian uint32, then the data (big-endian), read into a tensor of the same type.
    Malformed files raise ValueError naming the file and what is wrong."""
    path = Path(path)
    data = _read_bytes(path)
    if len(data) < 4:
        raise ValueError(f"{path}: not an IDX file: only {len(data)} bytes (the header alone needs at least 8)")
    zero, code, ndim = struct.unpack(">HBB", data[:4])
    magic = int.from_bytes(data[:4], "big")
    if zero != 0:
        raise ValueError(f"{path}: not an IDX file: magic number 0x{magic:08X}; an IDX file starts with two zero "
                         f"bytes, a type code and the number of dimensions (e.g. 0x00000803 for uint8 images)")
    if code not in _IDX_TYPES:
        raise ValueError(f"{path}: unknown IDX element type 0x{code:02X} in magic number 0x{magic:08X} "
                         f"(known: {_IDX_NAMES})")
    if ndim == 0:
        raise ValueError(f"{path}: IDX header declares 0 dimensions (magic number 0x{magic:08X})")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise ValueError(f"{path}: truncated IDX header: {ndim} dimensions need {header} header bytes, "
                         f"the file has {len(data)}")
    shape = struct.unpack(f">{ndim}I", data[4:header])
    disk, out = _IDX_TYPES[code]
    expected = math.prod(shape) * disk.itemsize
    got = len(data) - header
    if got < expected:
        raise ValueError(f"{path}: truncated IDX file: the header declares shape {list(shape)} of {disk.name} "
                         f"({expected} bytes of data) but only {got} bytes follow; download it again")
    if got > expected:
        raise ValueError(f"{path}: malformed IDX file: {got - expected} unexpected bytes after the {expected} "
                         f"bytes of data declared by its header (shape {list(shape)} of {disk.name})")
    arr = np.frombuffer(data, dtype=disk, count=math.prod(shape), offset=header).reshape(shape)
    return from_numpy(arr.astype(out))  # native byte order, and a writable copy


_MNIST_FILES = {True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
                False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}
_MNIST_MIRROR = "https://ossci-datasets.s3.amazonaws.com/mnist/"
_MNIST_ORIGIN = "http://yann.lecun.com/exdb/mnist/"


def _find(root: Path, name: str) -> Path | None:
    dotted = name.replace("-idx", ".idx")  # some copies are named train-images.idx3-ubyte
    for folder in (root, root / "MNIST" / "raw"):  # root itself, or torchvision's layout
        for candidate in (name, name + ".gz", dotted, dotted + ".gz"):
            p = folder / candidate
            if p.is_file():
                return p
    return None


def mnist(root, train: bool = True):
    """MNIST from IDX files already on disk under `root` (this never downloads).

    Looks in `root` and in `root/MNIST/raw` (torchvision's layout) for the four
    standard files, gzipped or not. Returns images (N, 28, 28) uint8 (0..255; use
    ``images.float() / 255``) and labels (N,) int64: N = 60000 for train, 10000 for test."""
    root = Path(os.path.expanduser(os.fspath(root)))
    names = _MNIST_FILES[bool(train)]
    paths = [_find(root, name) for name in names]
    missing = [name for name, p in zip(names, paths) if p is None]
    if missing:
        split = "training" if train else "test"
        urls = "\n".join(f"    {_MNIST_MIRROR}{m}.gz" for m in missing)
        raise FileNotFoundError(
            f"MNIST {split} files not found under {root}: missing {', '.join(m + '.gz' for m in missing)}.\n"
            f"tinygrad_lab never downloads anything. Download them from {_MNIST_MIRROR} "
            f"(a mirror of {_MNIST_ORIGIN}):\n{urls}\n"
            f"and put them in {root.resolve()} (gzipped or unpacked; {root.resolve() / 'MNIST' / 'raw'} also works), "
            f"e.g.\n    mkdir -p {root.resolve()} && cd {root.resolve()} && "
            + " && ".join(f"curl -O {_MNIST_MIRROR}{m}.gz" for m in missing))
    images_path, labels_path = paths
    images, labels = read_idx(images_path), read_idx(labels_path)
    if images.dtype != dtypes.uint8 or images.ndim != 3:
        raise ValueError(f"{images_path}: expected MNIST images, a 3-d uint8 IDX array (N, rows, cols), "
                         f"got shape {list(images.shape)} of {images.dtype}")
    if labels.dtype != dtypes.uint8 or labels.ndim != 1:
        raise ValueError(f"{labels_path}: expected MNIST labels, a 1-d uint8 IDX array (N,), "
                         f"got shape {list(labels.shape)} of {labels.dtype}")
    if images.shape[0] != labels.shape[0]:
        raise ValueError(f"MNIST files disagree: {images_path} has {images.shape[0]} images but {labels_path} has "
                         f"{labels.shape[0]} labels")
    lab = labels.numpy()
    if lab.size and lab.max() > 9:
        raise ValueError(f"{labels_path}: MNIST labels must be 0..9, found {int(lab.max())}")
    return images, from_numpy(lab.astype(np.int64))
