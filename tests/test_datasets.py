"""tinygrad_lab.datasets: the synthetic lesson sets (shapes, dtypes, determinism,
class balance), the scikit-learn digits, and the IDX/MNIST reader on small IDX
files written here (raw and gzipped), including the errors for broken files."""
from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import datasets
from tinygrad_lab.utils.data import DataLoader, TensorDataset

SYNTHETIC = {
    "spirals": lambda seed: datasets.spirals(50, n_classes=3, noise=0.2, seed=seed),
    "moons": lambda seed: datasets.moons(101, noise=0.1, seed=seed),
    "blobs": lambda seed: datasets.blobs(100, centers=3, std=1.0, seed=seed),
    "sine_sequences": lambda seed: datasets.sine_sequences(8, length=20, noise=0.05, seed=seed),
}


@pytest.mark.parametrize("name", list(SYNTHETIC))
def test_synthetic_deterministic_for_a_seed(name):
    make = SYNTHETIC[name]
    a, b, c = make(0), make(0), make(1)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    assert not np.array_equal(a[0].numpy(), c[0].numpy())


@pytest.mark.parametrize("name", list(SYNTHETIC))
def test_seed_none_follows_manual_seed(name):
    make = SYNTHETIC[name]
    tl.manual_seed(5)
    a = make(None)
    tl.manual_seed(5)
    b = make(None)
    np.testing.assert_array_equal(a[0].numpy(), b[0].numpy())


@pytest.mark.parametrize("make, n, k, counts", [
    (lambda: datasets.spirals(50, n_classes=4), 200, 4, [50] * 4),
    (lambda: datasets.moons(101), 101, 2, [50, 51]),
    (lambda: datasets.blobs(100, centers=3), 100, 3, [34, 33, 33]),
], ids=["spirals", "moons", "blobs"])
def test_classification_shapes_dtypes_and_balance(make, n, k, counts):
    X, y = make()
    assert tuple(X.shape) == (n, 2) and X.dtype == tl.float32
    assert tuple(y.shape) == (n,) and y.dtype == tl.int64
    assert np.bincount(y.numpy(), minlength=k).tolist() == counts


def test_float_dtype_follows_default():
    tl.set_default_dtype(tl.float64)
    try:
        assert datasets.moons(10)[0].dtype == tl.float64
    finally:
        tl.set_default_dtype(tl.float32)


def test_spirals_geometry():
    X, y = datasets.spirals(100, n_classes=3, noise=0.0)
    r = np.linalg.norm(X.numpy(), axis=1)
    assert r.max() <= 1.0 + 1e-6 and r.min() == 0.0
    # no noise: each arm's angle increases along the arm
    angle = np.unwrap(np.arctan2(X.numpy()[1:100, 0], X.numpy()[1:100, 1]))
    assert np.all(np.diff(angle) > 0)


def test_moons_without_noise_lie_on_the_half_circles():
    X, y = datasets.moons(40, noise=0.0)
    x = X.numpy().astype(np.float64)
    upper, lower = x[y.numpy() == 0], x[y.numpy() == 1]
    np.testing.assert_allclose(np.hypot(upper[:, 0], upper[:, 1]), 1.0, atol=1e-6)
    np.testing.assert_allclose(np.hypot(lower[:, 0] - 1, lower[:, 1] - 0.5), 1.0, atol=1e-6)


def test_blobs_explicit_centers_and_stds():
    centers = [[0.0, 0.0, 0.0], [20.0, 20.0, 20.0]]
    X, y = datasets.blobs(2000, centers=centers, std=[0.5, 2.0], seed=3)
    assert tuple(X.shape) == (2000, 3)
    for c in range(2):
        pts = X.numpy()[y.numpy() == c]
        np.testing.assert_allclose(pts.mean(0), centers[c], atol=0.3)
        np.testing.assert_allclose(pts.std(0), [0.5, 2.0][c], rtol=0.15)
    X5, _ = datasets.blobs(10, centers=2, n_features=5)
    assert tuple(X5.shape) == (10, 5)


def test_sine_sequences_targets_are_the_next_step():
    inputs, targets = datasets.sine_sequences(16, length=30, noise=0.1, seed=2)
    assert tuple(inputs.shape) == tuple(targets.shape) == (16, 30, 1)
    assert inputs.dtype == targets.dtype == tl.float32
    np.testing.assert_array_equal(targets.numpy()[:, :-1], inputs.numpy()[:, 1:])
    clean, _ = datasets.sine_sequences(16, length=30, seed=2)
    assert np.abs(clean.numpy()).max() <= 1.0


@pytest.mark.parametrize("call, match", [
    (lambda: datasets.spirals(0), "n_per_class"),
    (lambda: datasets.moons(10, noise=-1), "noise"),
    (lambda: datasets.blobs(10, centers=[1.0, 2.0]), "centers"),
    (lambda: datasets.blobs(10, std=-1.0), "std"),
    (lambda: datasets.sine_sequences(4, length=0), "length"),
    (lambda: datasets.moons(10, seed=-3), "seed"),
])
def test_synthetic_argument_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_synthetic_sets_feed_a_dataloader():
    X, y = datasets.spirals(20)
    batches = list(DataLoader(TensorDataset(X, y), batch_size=16, shuffle=True))
    assert [tuple(b[0].shape) for b in batches] == [(16, 2), (16, 2), (16, 2), (12, 2)]


# ================================================================ digits (scikit-learn's copy; no network)

def test_digits():
    X, y = datasets.digits()
    assert tuple(X.shape) == (1797, 64) and X.dtype == tl.float32
    assert tuple(y.shape) == (1797,) and y.dtype == tl.int64
    assert X.numpy().min() == 0 and X.numpy().max() == 16
    counts = np.bincount(y.numpy())
    assert len(counts) == 10 and counts.min() >= 170
    images, _ = datasets.digits(flatten=False)
    assert tuple(images.shape) == (1797, 1, 8, 8)
    np.testing.assert_array_equal(images.numpy().reshape(1797, 64), X.numpy())


# ================================================================ IDX files and MNIST

_CODES = {np.dtype(np.uint8): 0x08, np.dtype(np.int8): 0x09, np.dtype(np.int16): 0x0B,
          np.dtype(np.int32): 0x0C, np.dtype(np.float32): 0x0D, np.dtype(np.float64): 0x0E}


def idx_bytes(arr: np.ndarray) -> bytes:
    """The IDX encoding of arr (written independently of the reader under test)."""
    header = struct.pack(">HBB", 0, _CODES[arr.dtype], arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape)
    return header + arr.astype(arr.dtype.newbyteorder(">")).tobytes()


def write(path, data: bytes, gz: bool = False):
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.fixture
def images_labels():
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, size=(5, 28, 28), dtype=np.uint8), rng.integers(0, 10, size=5).astype(np.uint8)


@pytest.mark.parametrize("gz", [False, True], ids=["raw", "gz"])
def test_read_idx_uint8_images_and_labels(tmp_path, images_labels, gz):
    images, labels = images_labels
    suffix = ".gz" if gz else ""
    ti = datasets.read_idx(write(tmp_path / f"img{suffix}", idx_bytes(images), gz))
    tlab = datasets.read_idx(write(tmp_path / f"lab{suffix}", idx_bytes(labels), gz))
    assert ti.dtype == tl.uint8 and tuple(ti.shape) == (5, 28, 28)
    np.testing.assert_array_equal(ti.numpy(), images)
    np.testing.assert_array_equal(tlab.numpy(), labels)
    ti[0, 0, 0] = 1  # a writable copy, not a view of the file's bytes


@pytest.mark.parametrize("dtype, expect", [(np.int8, tl.int8), (np.int16, tl.int16), (np.int32, tl.int32),
                                           (np.float32, tl.float32), (np.float64, tl.float64)])
def test_read_idx_other_element_types(tmp_path, dtype, expect):
    arr = (np.arange(24).reshape(2, 3, 4) - 12).astype(dtype)
    t = datasets.read_idx(write(tmp_path / "a.idx", idx_bytes(arr)))
    assert t.dtype == expect
    np.testing.assert_array_equal(t.numpy(), arr)


def _corrupt_cases(images):
    good = idx_bytes(images)
    return {
        "bad_magic": (b"\x12\x34" + good[2:], "not an IDX file: magic number 0x12340803"),
        "unknown_type": (good[:2] + b"\x07" + good[3:], "unknown IDX element type 0x07"),
        "zero_dims": (b"\x00\x00\x08\x00", "0 dimensions"),
        "tiny": (b"\x00\x00", "not an IDX file: only 2 bytes"),
        "truncated_header": (good[:10], "truncated IDX header"),
        "truncated_data": (good[:-100], r"truncated IDX file: .*\[5, 28, 28\].*3920 bytes.*3820"),
        "trailing_bytes": (good + b"\x00" * 7, "7 unexpected bytes"),
    }


@pytest.mark.parametrize("case", ["bad_magic", "unknown_type", "zero_dims", "tiny", "truncated_header",
                                  "truncated_data", "trailing_bytes"])
@pytest.mark.parametrize("gz", [False, True], ids=["raw", "gz"])
def test_broken_idx_files_give_clear_errors(tmp_path, images_labels, case, gz):
    data, match = _corrupt_cases(images_labels[0])[case]
    path = write(tmp_path / f"broken-{case}", data, gz)
    with pytest.raises(ValueError, match=match) as info:
        datasets.read_idx(path)
    assert str(path) in str(info.value)


def test_truncated_gzip_is_reported(tmp_path, images_labels):
    packed = gzip.compress(idx_bytes(images_labels[0]))
    path = write(tmp_path / "cut.gz", packed[: len(packed) // 2])
    with pytest.raises(ValueError, match="corrupted or truncated gzip") as info:
        datasets.read_idx(path)
    assert str(path) in str(info.value)


def _mnist_dir(folder, images, labels, prefix="train", gz=True):
    folder.mkdir(parents=True, exist_ok=True)
    suffix = ".gz" if gz else ""
    write(folder / f"{prefix}-images-idx3-ubyte{suffix}", idx_bytes(images), gz)
    write(folder / f"{prefix}-labels-idx1-ubyte{suffix}", idx_bytes(labels), gz)


@pytest.mark.parametrize("gz", [False, True], ids=["raw", "gz"])
def test_mnist_reads_train_and_test(tmp_path, images_labels, gz):
    images, labels = images_labels
    _mnist_dir(tmp_path, images, labels, "train", gz)
    _mnist_dir(tmp_path, images[:2], labels[:2], "t10k", gz)
    X, y = datasets.mnist(tmp_path)
    assert X.dtype == tl.uint8 and tuple(X.shape) == (5, 28, 28)
    assert y.dtype == tl.int64 and y.numpy().tolist() == labels.tolist()
    Xt, yt = datasets.mnist(str(tmp_path), train=False)
    assert tuple(Xt.shape) == (2, 28, 28) and tuple(yt.shape) == (2,)
    loader = DataLoader(TensorDataset(X.float() / 255, y), batch_size=2)
    assert [tuple(b[0].shape) for b in loader] == [(2, 28, 28), (2, 28, 28), (1, 28, 28)]


def test_mnist_torchvision_layout(tmp_path, images_labels):
    _mnist_dir(tmp_path / "MNIST" / "raw", *images_labels, gz=False)
    assert tuple(datasets.mnist(tmp_path)[0].shape) == (5, 28, 28)


def test_mnist_missing_files_say_what_to_download_and_where(tmp_path, images_labels):
    with pytest.raises(FileNotFoundError) as info:
        datasets.mnist(tmp_path / "data")
    msg = str(info.value)
    for name in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"):
        assert name in msg and f"https://ossci-datasets.s3.amazonaws.com/mnist/{name}" in msg
    assert str((tmp_path / "data").resolve()) in msg and "never downloads" in msg
    # only the missing file is named
    write(tmp_path / "t10k-images-idx3-ubyte.gz", idx_bytes(images_labels[0]), gz=True)
    with pytest.raises(FileNotFoundError, match="missing t10k-labels-idx1-ubyte.gz\\.") as info:
        datasets.mnist(tmp_path, train=False)
    assert "t10k-images" not in str(info.value)


def test_mnist_inconsistent_files(tmp_path, images_labels):
    images, labels = images_labels
    _mnist_dir(tmp_path, images, labels[:4])
    with pytest.raises(ValueError, match="5 images but .* has 4 labels"):
        datasets.mnist(tmp_path)
    _mnist_dir(tmp_path, images[0], labels)  # 2-d "images"
    with pytest.raises(ValueError, match="train-images-idx3-ubyte.gz: expected MNIST images"):
        datasets.mnist(tmp_path)
    bad = labels.copy()
    bad[0] = 42
    _mnist_dir(tmp_path, images, bad)
    with pytest.raises(ValueError, match="labels must be 0..9"):
        datasets.mnist(tmp_path)


# ---------------------------------------------------------------- the text shipped with the package

def test_char_corpus_round_trips_the_shipped_text():
    ids, vocab = datasets.char_corpus()
    path = Path(datasets.__file__).parent / "data" / "little_harbour.txt"
    text = path.read_bytes().decode("utf-8")   # read independently of the loader (bytes, no newline translation)
    assert ids.dtype == tl.int64 and ids.shape == (len(text),)
    assert vocab == "".join(sorted(set(text))) and len(set(vocab)) == len(vocab)
    assert "".join(vocab[i] for i in ids.tolist()) == text
    assert 2_000 < len(text) < 20_000   # a few KB: a lesson trains on it in seconds


def test_char_corpus_is_the_same_every_call_and_feeds_a_language_model():
    a, vocab_a = datasets.char_corpus()
    b, vocab_b = datasets.char_corpus()
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert vocab_a == vocab_b
    emb = tl.nn.Embedding(len(vocab_a), 4)
    assert emb(a[:10]).shape == (10, 4)   # every id is a valid row of an embedding of len(vocab)
