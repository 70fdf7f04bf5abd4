"""DataLoader with worker processes: the same batches in the same order as num_workers=0,
seeds as PyTorch derives them, batches through shared memory, a worker's error raised here
with its traceback, and no process left behind however the loop ends."""
from __future__ import annotations

import multiprocessing
import os
import time

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.utils.data import DataLoader, Dataset, Generator, IterableDataset, TensorDataset, get_worker_info


class Squares(Dataset):
    """A map-style dataset of dict samples made by Python code (so each sample is fetched alone)."""

    def __init__(self, n: int, fail_at: int | None = None, exit_at: int | None = None, sleep: float = 0.0):
        self.n, self.fail_at, self.exit_at, self.sleep = n, fail_at, exit_at, sleep

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> dict:
        if i == self.fail_at:
            raise ValueError(f"sample {i} is broken")
        if i == self.exit_at:
            os._exit(7)
        time.sleep(self.sleep)
        return {"x": np.full(3, i, dtype=np.float32), "y": i * i}


class Split(IterableDataset):
    """range(n), each worker taking its own contiguous share (PyTorch's documented pattern)."""

    def __init__(self, n: int):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        per = -(-self.n // info.num_workers)
        return iter(range(info.id * per, min(self.n, (info.id + 1) * per)))


class WhoAmI(Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int):
        info = get_worker_info()
        return [info.id, info.num_workers, info.seed, os.getpid(), float(tl.rand(1).item())]


def _children() -> list:
    return multiprocessing.active_children()


@pytest.fixture(autouse=True)
def no_workers_left_behind():
    assert _children() == []
    yield
    deadline = time.monotonic() + 10
    while _children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _children() == [], "DataLoader workers outlived their loop"


def _plain(b):
    if isinstance(b, dict):
        return {k: _plain(v) for k, v in b.items()}
    if isinstance(b, list):
        return [_plain(v) for v in b]
    return b.tolist() if hasattr(b, "tolist") else b


def _as_lists(loader) -> list:
    return [_plain(b) for b in loader]


@pytest.mark.parametrize("num_workers", [1, 2])
def test_batches_are_those_of_num_workers_0_in_the_same_order(num_workers):
    ds = Squares(23)
    for options in (lambda: dict(batch_size=4, shuffle=True, generator=Generator().manual_seed(3)),
                    lambda: dict(batch_size=5, shuffle=True, drop_last=True), lambda: dict(batch_size=None)):
        tl.manual_seed(1)
        loader = DataLoader(ds, **options())
        expected = [_as_lists(loader) for _ in range(2)]  # two epochs
        tl.manual_seed(1)
        loader = DataLoader(ds, num_workers=num_workers, **options())
        assert [_as_lists(loader) for _ in range(2)] == expected
        assert expected[0] != expected[1] or "shuffle" not in options()


def test_a_tensor_dataset_through_spawned_workers_gives_the_same_batches():
    ds = TensorDataset(tl.arange(60.0).reshape(30, 2), tl.arange(30))
    expected = _as_lists(DataLoader(ds, batch_size=7, shuffle=True, generator=Generator().manual_seed(0)))
    loader = DataLoader(ds, batch_size=7, shuffle=True, generator=Generator().manual_seed(0), num_workers=2,
                        multiprocessing_context="spawn")
    assert _as_lists(loader) == expected


def test_large_batches_arrive_in_shared_memory_not_as_pickled_copies():
    ds = TensorDataset(tl.randn(64, 256, 256))
    (x,) = next(iter(DataLoader(ds, batch_size=16, num_workers=1)))
    assert x.is_shared() and x.shape == (16, 256, 256)
    np.testing.assert_array_equal(x.numpy(), ds.tensors[0].numpy()[:16])


def test_an_iterable_dataset_is_read_round_robin_from_the_workers():
    loader = DataLoader(Split(10), batch_size=2, num_workers=2)
    assert _as_lists(loader) == [[0, 1], [5, 6], [2, 3], [7, 8], [4], [9]]
    assert _as_lists(DataLoader(Split(10), batch_size=4, num_workers=0)) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_workers_are_seeded_base_seed_plus_id_reproducibly_and_anew_each_epoch():
    def run():
        tl.manual_seed(5)
        loader = DataLoader(WhoAmI(), batch_size=None, num_workers=2, collate_fn=lambda s: s)
        return list(loader), list(loader)

    (first, second), (again, _) = run(), run()
    ids = [r[0] for r in first]
    assert ids == [0, 1, 0, 1] and all(r[1] == 2 for r in first)
    seeds = {r[0]: r[2] for r in first}
    assert seeds[1] == seeds[0] + 1  # base_seed + worker_id
    assert [r[2] for r in again] == [r[2] for r in first] and [r[4] for r in again] == [r[4] for r in first]
    assert {r[2] for r in second}.isdisjoint({r[2] for r in first})  # a new base seed per epoch
    assert len({r[4] for r in first}) == 4  # each worker draws its own random numbers


def test_worker_init_fn_runs_in_each_worker_and_persistent_workers_are_reused():
    loader = DataLoader(WhoAmI(), batch_size=None, num_workers=2, persistent_workers=True, collate_fn=lambda s: s,
                        worker_init_fn=lambda i: tl.manual_seed(100 + i))
    first, second = list(loader), list(loader)
    assert {r[3] for r in first} == {r[3] for r in second} and len({r[3] for r in first}) == 2
    tl.manual_seed(100)
    assert first[0][4] == pytest.approx(tl.rand(1).item())  # worker 0 was seeded by worker_init_fn
    del loader, first, second


def test_a_workers_exception_is_raised_here_with_its_traceback():
    loader = DataLoader(Squares(12, fail_at=5), batch_size=2, num_workers=2)
    got = []
    with pytest.raises(ValueError) as e:
        for b in loader:
            got.append(b["y"].tolist())
    assert got == [[0, 1], [4, 9]]
    msg = str(e.value)
    assert "Caught ValueError in DataLoader worker process 0" in msg
    assert "sample 5 is broken" in msg and 'raise ValueError(f"sample {i} is broken")' in msg


def test_a_worker_that_dies_is_an_error_not_a_hang():
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(DataLoader(Squares(8, exit_at=3), batch_size=1, num_workers=2))
    assert time.monotonic() - t0 < 30


def test_timeout_bounds_the_wait_for_a_batch():
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.3 seconds"):
        list(DataLoader(Squares(4, sleep=1.5), batch_size=1, num_workers=1, timeout=0.3))


@pytest.mark.parametrize("how", ["break", "exception", "interrupt"])
def test_leaving_the_loop_early_stops_the_workers(how):
    loader = DataLoader(Squares(100), batch_size=2, num_workers=2)

    def loop():
        for i, _ in enumerate(loader):
            if i == 2:
                if how == "break":
                    break
                raise KeyboardInterrupt if how == "interrupt" else ValueError("stop")

    if how == "break":
        loop()
    else:
        with pytest.raises((KeyboardInterrupt, ValueError)):
            loop()
    # the fixture checks that no worker is left
