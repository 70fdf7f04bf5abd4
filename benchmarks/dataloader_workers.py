"""DataLoader speed-up with worker processes on a transform-heavy and an I/O-bound dataset.

    python benchmarks/dataloader_workers.py [--items 64] [--repeats 3]

Each epoch's wall time is the median of `repeats` epochs (workers started anew each epoch,
as without persistent_workers); the speed-up is against num_workers=0 in the same run.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from tinygrad_lab.utils.data import DataLoader, Dataset


class Transforms(Dataset):
    """CPU work per sample: a 64x64 'image' blurred and normalised by NumPy (about 3 ms)."""

    def __init__(self, n: int):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = np.random.default_rng(i).random((64, 64), dtype=np.float32)
        for _ in range(40):
            img = (img + np.roll(img, 1, 0) + np.roll(img, 1, 1)) / 3
        return (img - img.mean()) / (img.std() + 1e-6), i % 10


class SlowDisk(Dataset):
    """I/O per sample, simulated by sleeping 5 ms (the core is free meanwhile)."""

    def __init__(self, n: int):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        time.sleep(0.005)
        return np.full((3, 32, 32), i, dtype=np.float32), i % 10


def epoch_seconds(dataset, workers: int, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _batch in DataLoader(dataset, batch_size=8, num_workers=workers):
            pass
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(f"{'dataset':<12}{'workers':>8}{'epoch s':>10}{'speed-up':>10}")
    for name, ds in (("transforms", Transforms(args.items)), ("slow disk", SlowDisk(args.items))):
        base = None
        for workers in (0, 1, 2, 4):
            s = epoch_seconds(ds, workers, args.repeats)
            base = base or s
            print(f"{name:<12}{workers:>8}{s:>10.3f}{base / s:>9.2f}x")


if __name__ == "__main__":
    main()
