"""tinygrad_lab.utils.data: default_collate/default_convert, DataLoader batching
(sizes, order, drop_last, batch_size=None, samplers, collate_fn), shuffling and
its seeds, random_split, the samplers and the dataset wrappers. Where PyTorch has
the same behaviour its DataLoader is the oracle (skipped without torch)."""
from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    Generator,
    IterableDataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    random_split,
)

from .._helpers import dtype_name


def canon(obj):
    """A comparable form of a (nested) batch from either library: tensors become
    ('tensor', dtype name, shape, values); containers keep their type's name."""
    if hasattr(obj, "dtype") and hasattr(obj, "shape") and not isinstance(obj, np.ndarray):
        arr = obj.detach().numpy() if hasattr(obj, "detach") else obj.numpy()
        return ("tensor", dtype_name(obj.dtype), tuple(obj.shape), arr.tolist())
    if isinstance(obj, dict):
        return ("dict", {k: canon(v) for k, v in obj.items()})
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (type(obj).__name__, tuple(canon(v) for v in obj))
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [canon(v) for v in obj])
    return ("value", obj)


def torch_data(torch):
    return torch.utils.data


Point = collections.namedtuple("Point", "x y")

# each case builds a batch (list of samples) for a module `m` (tl or torch): tensors are built
# with that module's factory, everything else is shared Python/NumPy data.
COLLATE_CASES = {
    "ints": lambda m: [1, 2, 3],
    "floats": lambda m: [1.5, 2.0, -3.25],
    "bools": lambda m: [True, False, True],
    "numpy_float32_scalars": lambda m: [np.float32(1.5), np.float32(2.5)],
    "numpy_float64_scalars": lambda m: [np.float64(1.5), np.float64(2.5)],
    "numpy_int32_scalars": lambda m: [np.int32(1), np.int32(-2)],
    "numpy_bool_scalars": lambda m: [np.bool_(True), np.bool_(False)],
    "numpy_arrays_float64": lambda m: [np.arange(3.0), np.arange(3.0) * 2],
    "numpy_arrays_float32": lambda m: [np.ones((2, 2), np.float32), np.zeros((2, 2), np.float32)],
    "numpy_arrays_uint8": lambda m: [np.array([1, 255], np.uint8), np.array([0, 7], np.uint8)],
    "numpy_0d_arrays": lambda m: [np.array(1.0), np.array(2.0)],
    "tensors_float32": lambda m: [m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])],
    "tensors_int64_0d": lambda m: [m.tensor(1), m.tensor(2)],
    "tensors_2d": lambda m: [m.ones(2, 3), m.zeros(2, 3)],
    "tuples_mixed": lambda m: [(m.tensor([1.0]), 1, 0.5), (m.tensor([2.0]), 2, 1.5)],
    "lists": lambda m: [[1, 2.0], [3, 4.0]],
    "dicts": lambda m: [{"a": 1, "b": np.zeros(2, np.float32)}, {"a": 2, "b": np.ones(2, np.float32)}],
    "namedtuples": lambda m: [Point(1, 2.0), Point(3, 4.0)],
    "strings": lambda m: ["cat", "dog"],
    "nested": lambda m: [{"x": (m.tensor([1, 2]), "a"), "y": [0.5]}, {"x": (m.tensor([3, 4]), "b"), "y": [1.5]}],
}


@pytest.mark.parametrize("case", list(COLLATE_CASES))
def test_default_collate_matches_torch(torch, case):
    build = COLLATE_CASES[case]
    assert canon(default_collate(build(tl))) == canon(torch_data(torch).default_collate(build(torch)))


@pytest.mark.parametrize("batch", [
    [np.zeros(2), 1, (np.ones(1),)],
    {"a": np.arange(3), "b": "text", "c": np.float64(2.5)},
    Point(np.ones(2, np.float32), 3),
    np.arange(4, dtype=np.int32),
], ids=["list", "dict", "namedtuple", "array"])
def test_default_convert_matches_torch(torch, batch):
    assert canon(default_convert(batch)) == canon(torch_data(torch).default_convert(batch))


def test_default_collate_python_number_dtypes():
    # PyTorch's rules: Python floats -> float64 (not the default float32), ints -> int64, bools -> bool
    assert default_collate([1.0, 2.0]).dtype == tl.float64
    assert default_collate([1, 2]).dtype == tl.int64
    assert default_collate([True, False]).dtype == tl.bool
    assert default_collate([np.float32(1)]).dtype == tl.float32


@pytest.mark.parametrize("batch, exc, match", [
    ([[1, 2], [1]], RuntimeError, "equal size"),
    ([object(), object()], TypeError, "batch must contain tensors"),
    ([np.array(["a"]), np.array(["b"])], TypeError, "batch must contain tensors"),
], ids=["ragged", "object", "string_arrays"])
def test_default_collate_errors_like_torch(torch, batch, exc, match):
    with pytest.raises(exc, match=match):
        default_collate(batch)
    with pytest.raises(exc, match=match):
        torch_data(torch).default_collate(batch)


def test_default_collate_unequal_tensors_raise():
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size.*\[2\].*\[3\]"):
        default_collate([tl.zeros(2), tl.zeros(3)])


# ================================================================ DataLoader vs PyTorch, shuffle=False

def _xy(n: int):
    x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    y = np.arange(n, dtype=np.int64) % 4
    return x, y


class _ListDataset(Dataset):
    """A plain map-style dataset of NumPy rows (the generic, per-sample path)."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], int(self.y[i])


class _TorchListDataset(_ListDataset):
    pass


@pytest.mark.parametrize("n", [0, 1, 7, 10])
@pytest.mark.parametrize("batch_size", [1, 3, 4, 10, 12])
@pytest.mark.parametrize("drop_last", [False, True])
def test_tensor_dataset_batches_match_torch(torch, n, batch_size, drop_last):
    x, y = _xy(n)
    ours = DataLoader(TensorDataset(tl.tensor(x), tl.tensor(y)), batch_size=batch_size, drop_last=drop_last)
    theirs = torch_data(torch).DataLoader(torch_data(torch).TensorDataset(torch.tensor(x), torch.tensor(y)),
                                          batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    assert [canon(b) for b in ours] == [canon(b) for b in theirs]


@pytest.mark.parametrize("batch_size", [1, 4, 7])
@pytest.mark.parametrize("drop_last", [False, True])
def test_generic_dataset_batches_match_torch(torch, batch_size, drop_last):
    x, y = _xy(10)
    ours = DataLoader(_ListDataset(x, y), batch_size=batch_size, drop_last=drop_last)
    theirs = torch_data(torch).DataLoader(_TorchListDataset(x, y), batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    assert [canon(b) for b in ours] == [canon(b) for b in theirs]


def test_batch_size_none_matches_torch(torch):
    x, y = _xy(5)
    ours = DataLoader(_ListDataset(x, y), batch_size=None)
    theirs = torch_data(torch).DataLoader(_TorchListDataset(x, y), batch_size=None)
    assert len(ours) == len(theirs) == 5
    assert [canon(b) for b in ours] == [canon(b) for b in theirs]


def test_list_dataset_and_dict_samples_match_torch(torch):
    data = [{"id": i, "feat": np.full(2, i, np.float32), "name": f"s{i}"} for i in range(5)]
    ours = [canon(b) for b in DataLoader(data, batch_size=2)]
    theirs = [canon(b) for b in torch_data(torch).DataLoader(data, batch_size=2)]
    assert ours == theirs


def test_fast_tensor_path_equals_per_sample_path():
    x, y = _xy(9)
    X, Y = tl.tensor(x), tl.tensor(y)

    class Plain(TensorDataset):  # a subclass takes the per-sample path (index each row, then stack)
        pass

    for ds_fast, ds_slow in [(TensorDataset(X, Y), Plain(X, Y)),
                             (Subset(TensorDataset(X, Y), [8, 0, 3, 3, 5]), Subset(Plain(X, Y), [8, 0, 3, 3, 5]))]:
        fast = [canon(b) for b in DataLoader(ds_fast, batch_size=2)]
        slow = [canon(b) for b in DataLoader(ds_slow, batch_size=2)]
        assert fast == slow


def test_dataset_tensors_requiring_grad_keep_their_graph():
    w = tl.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    (xb,) = next(iter(DataLoader(TensorDataset(w), batch_size=2)))
    assert xb.requires_grad
    xb.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[1, 1], [1, 1], [0, 0]])


def test_custom_collate_fn_and_len_of_iterator():
    loader = DataLoader(list(range(10)), batch_size=4, collate_fn=lambda batch: sum(batch))
    it = iter(loader)
    assert len(it) == len(loader) == 3
    assert list(it) == [0 + 1 + 2 + 3, 4 + 5 + 6 + 7, 8 + 9]


def test_batch_sampler_and_sampler_arguments():
    data = list(range(10))
    bs = BatchSampler(SequentialSampler(data), 3, drop_last=True)
    loader = DataLoader(data, batch_sampler=bs)
    assert len(loader) == 3
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    loader = DataLoader(data, batch_size=4, sampler=[9, 8, 7, 1, 0])
    assert [b.tolist() for b in loader] == [[9, 8, 7, 1], [0]]


@pytest.mark.parametrize("kwargs, match", [
    (dict(sampler=[0, 1], shuffle=True), "mutually exclusive with shuffle"),
    (dict(batch_sampler=[[0, 1]], batch_size=2), "batch_sampler option is mutually exclusive"),
    (dict(batch_sampler=[[0, 1]], drop_last=True), "batch_sampler option is mutually exclusive"),
    (dict(batch_size=None, drop_last=True), "mutually exclusive with drop_last"),
    (dict(batch_size=0), "batch_size should be a positive integer"),
    (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
], ids=["sampler+shuffle", "batch_sampler+batch_size", "batch_sampler+drop_last", "None+drop_last",
        "batch_size0", "persistent"])
def test_argument_errors_like_torch(torch, kwargs, match):
    with pytest.raises(ValueError, match=match):
        DataLoader(list(range(4)), **kwargs)
    with pytest.raises(ValueError, match=match):
        torch_data(torch).DataLoader(list(range(4)), **kwargs)


def test_worker_options_are_checked():
    DataLoader([1, 2], num_workers=0)
    with pytest.raises(ValueError, match="non-negative"):
        DataLoader([1, 2], num_workers=-1)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified in multiprocessing"):
        DataLoader([1, 2], prefetch_factor=2)
    with pytest.raises(ValueError, match="multiprocessing_context can only be used with multi-process loading"):
        DataLoader([1, 2], multiprocessing_context="fork")
    with pytest.raises(ValueError, match="valid start method"):
        DataLoader([1, 2], num_workers=1, multiprocessing_context="teleport")


def test_pin_memory_is_accepted():
    assert [b.tolist() for b in DataLoader([1, 2, 3], batch_size=2, pin_memory=True)] == [[1, 2], [3]]


# ================================================================ shuffling and seeds

def _epoch(loader):
    return np.concatenate([b.numpy() for b in loader]).tolist()


def test_shuffle_gives_a_new_permutation_each_epoch():
    tl.manual_seed(0)
    loader = DataLoader(tl.arange(50), batch_size=8, shuffle=True)
    a, b = _epoch(loader), _epoch(loader)
    assert sorted(a) == sorted(b) == list(range(50))
    assert a != b and a != list(range(50))


def test_manual_seed_makes_epochs_reproducible():
    def two_epochs():
        tl.manual_seed(123)
        loader = DataLoader(tl.arange(30), batch_size=4, shuffle=True)
        return _epoch(loader), _epoch(loader)

    assert two_epochs() == two_epochs()


@pytest.mark.parametrize("make", [lambda s: Generator().manual_seed(s), lambda s: np.random.default_rng(s)],
                         ids=["tl_Generator", "numpy_Generator"])
def test_generator_argument_is_reproducible_and_leaves_global_stream_alone(make):
    def run(seed):
        tl.manual_seed(7)
        loader = DataLoader(tl.arange(20), batch_size=5, shuffle=True, generator=make(seed))
        epochs = _epoch(loader), _epoch(loader)
        return epochs, tl.rand(3).tolist()

    (e1, r1), (e2, r2), (e3, r3) = run(0), run(0), run(1)
    assert e1 == e2 and e1[0] != e1[1]
    assert e1 != e3
    tl.manual_seed(7)
    assert r1 == r2 == r3 == tl.rand(3).tolist()  # shuffling with a generator drew nothing from the global seed


def test_generator_object_api():
    g = Generator()
    assert g.initial_seed() == 67280421310721  # torch.Generator()'s default seed
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    state = g.get_state()
    a = list(RandomSampler(range(10), generator=g))
    g.set_state(state)
    assert list(RandomSampler(range(10), generator=g)) == a
    with pytest.raises(RuntimeError, match="non-negative"):
        g.manual_seed(-1)
    with pytest.raises(TypeError, match="generator must be"):
        list(RandomSampler(range(3), generator="seed"))


def test_foreign_generator_with_manual_seed(torch):
    g = torch.Generator().manual_seed(3)
    a = list(RandomSampler(range(10), generator=g))
    b = list(RandomSampler(range(10), generator=g))
    assert sorted(a) == sorted(b) == list(range(10)) and a != b  # the stream advances across epochs
    g.manual_seed(4)
    g2 = torch.Generator().manual_seed(4)
    assert list(RandomSampler(range(10), generator=g)) == list(RandomSampler(range(10), generator=g2))


def test_torch_shuffle_semantics_sizes(torch):
    # orders differ from PyTorch's (other RNG), but the batch sizes and the coverage agree
    x, y = _xy(11)
    ours = DataLoader(TensorDataset(tl.tensor(x), tl.tensor(y)), batch_size=4, shuffle=True, drop_last=True)
    theirs = torch_data(torch).DataLoader(torch_data(torch).TensorDataset(torch.tensor(x), torch.tensor(y)),
                                          batch_size=4, shuffle=True, drop_last=True)
    assert len(ours) == len(theirs) == 2
    assert [tuple(b[0].shape) for b in ours] == [tuple(b[0].shape) for b in theirs]


# ================================================================ samplers

def test_sequential_sampler():
    assert list(SequentialSampler(range(5))) == [0, 1, 2, 3, 4]
    assert len(SequentialSampler([7, 8])) == 2


def test_random_sampler_variants():
    g = Generator().manual_seed(0)
    assert sorted(RandomSampler(range(8), generator=g)) == list(range(8))
    more = list(RandomSampler(range(4), num_samples=10, generator=g))  # two full permutations + 2
    assert len(more) == 10 and sorted(more[:4]) == sorted(more[4:8]) == [0, 1, 2, 3] and len(set(more[8:])) == 2
    rep = RandomSampler(range(3), replacement=True, num_samples=50, generator=g)
    draws = list(rep)
    assert len(rep) == len(draws) == 50 and set(draws) <= {0, 1, 2} and len(set(draws)) == 3


@pytest.mark.parametrize("make, exc", [
    (lambda m: m.RandomSampler(range(3), replacement=1), TypeError),
    (lambda m: m.RandomSampler(range(3), num_samples=0), ValueError),
    (lambda m: m.RandomSampler([]), ValueError),
    (lambda m: m.BatchSampler(range(3), 0, False), ValueError),
    (lambda m: m.BatchSampler(range(3), True, False), ValueError),
    (lambda m: m.BatchSampler(range(3), 2, 1), ValueError),
], ids=["replacement", "num_samples", "empty", "bs0", "bs_bool", "drop_last"])
def test_sampler_validation_like_torch(torch, make, exc):
    import tinygrad_lab.utils.data as ours
    with pytest.raises(exc):
        make(ours)
    with pytest.raises(exc):
        make(torch_data(torch))


@pytest.mark.parametrize("n", [0, 5, 9])
@pytest.mark.parametrize("bs", [1, 2, 5])
@pytest.mark.parametrize("drop_last", [False, True])
def test_batch_sampler_matches_torch(torch, n, bs, drop_last):
    ours = BatchSampler(list(range(n)), bs, drop_last)
    theirs = torch_data(torch).BatchSampler(list(range(n)), bs, drop_last)
    assert len(ours) == len(theirs)
    assert list(ours) == list(theirs)


def test_subset_and_weighted_samplers():
    g = Generator().manual_seed(1)
    assert sorted(SubsetRandomSampler([3, 5, 9], generator=g)) == [3, 5, 9]
    w = WeightedRandomSampler([0.0, 1.0, 3.0], num_samples=400, generator=g)
    draws = np.array(list(w))
    assert len(w) == 400 and 0 not in draws
    assert 0.65 < (draws == 2).mean() < 0.85
    distinct = list(WeightedRandomSampler(tl.tensor([1.0, 1.0, 1.0, 0.0]), 3, replacement=False, generator=g))
    assert sorted(distinct) == [0, 1, 2]
    with pytest.raises(RuntimeError, match="without replacement"):
        WeightedRandomSampler([1.0, 0.0], 2, replacement=False)


def test_custom_sampler_subclass():
    class Evens(Sampler):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(0, self.n, 2))

        def __len__(self):
            return (self.n + 1) // 2

    loader = DataLoader(list(range(10)), batch_size=2, sampler=Evens(10))
    assert len(loader) == 3 and [b.tolist() for b in loader] == [[0, 2], [4, 6], [8]]


# ================================================================ random_split and dataset wrappers

@pytest.mark.parametrize("n, lengths", [
    (10, [3, 7]), (10, [0.3, 0.3, 0.4]), (7, [0.5, 0.5]), (11, [0.1, 0.2, 0.7]),
    (5, [0.25, 0.25, 0.25, 0.25]), (100, [0.8, 0.2]), (3, [1 / 3] * 3), (4, [4]),
])
def test_random_split_sizes_match_torch_and_are_disjoint(torch, n, lengths):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = random_split(range(n), lengths, generator=Generator().manual_seed(0))
        theirs = torch_data(torch).random_split(range(n), lengths)
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    seen = [i for s in ours for i in (s[j] for j in range(len(s)))]
    assert sorted(seen) == list(range(n))  # disjoint and covering


def test_random_split_reproducible_and_errors(torch):
    def split(seed=None, **kw):
        return [s.indices for s in random_split(range(20), [5, 15], **kw)]

    assert split(generator=Generator().manual_seed(1)) == split(generator=Generator().manual_seed(1))
    assert split(generator=Generator().manual_seed(1)) != split(generator=Generator().manual_seed(2))
    tl.manual_seed(3)
    a = split()
    tl.manual_seed(3)
    assert split() == a
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        torch_data(torch).random_split(range(10), [3, 3])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(range(2), [0.9, 0.1])


def test_subset_concat_and_base_dataset():
    X, y = tl.arange(10).reshape(5, 2), tl.tensor([0, 1, 0, 1, 1])
    ds = TensorDataset(X, y)
    assert len(ds) == 5 and [t.tolist() for t in ds[2]] == [[4, 5], 0]
    sub = Subset(ds, [4, 1])
    assert len(sub) == 2 and sub[0][0].tolist() == [8, 9]
    assert [s[1].item() for s in sub.__getitems__([1, 0])] == [1, 1]
    both = ds + sub
    assert isinstance(both, ConcatDataset) and len(both) == 7
    assert both[5][0].tolist() == [8, 9] and both[-1][0].tolist() == [2, 3]
    with pytest.raises(IndexError):
        both[7]
    with pytest.raises(NotImplementedError):
        Dataset()[0]
    with pytest.raises(ValueError, match=r"Size mismatch.*\[5, 2\].*\[4\]"):
        TensorDataset(X, tl.zeros(4))
    with pytest.raises(ValueError, match="at least one tensor"):
        TensorDataset()


class _Stream(IterableDataset):
    def __init__(self, n, with_len=True):
        self.n, self.with_len = n, with_len

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        if not self.with_len:
            raise TypeError("no length")
        return self.n


def test_iterable_dataset_matches_torch(torch):
    class TorchStream(torch_data(torch).IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    for kw in (dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None)):
        ours, theirs = DataLoader(_Stream(7), **kw), torch_data(torch).DataLoader(TorchStream(), **kw)
        assert len(ours) == len(theirs)
        assert [canon(b) for b in ours] == [canon(b) for b in theirs]
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(_Stream(3), shuffle=True)
    with pytest.raises(TypeError):
        len(DataLoader(_Stream(3, with_len=False)))
