"""The recorded forward on tiny tensors: `(a*b + c).relu().sum()` with inputs that require grad,
forward only (four ops, each recording a graph node), tinygrad_lab beside PyTorch in one run.

Run `python benchmarks/forward.py [elements]` from the repository root. Samples alternate between the
two libraries (so load on a shared machine hits both alike); the medians per op and their ratio are
printed. `tinygrad-lab bench`'s elementwise workload times forward and backward together; this one
isolates what recording a node costs.
"""
from __future__ import annotations

import statistics
import sys
import timeit

import numpy as np

import tinygrad_lab


def chain(lib, n: int):
    """A step running the recorded forward with `lib` (tinygrad_lab or torch) on n float32 elements."""
    rng = np.random.default_rng(0)
    a, b, c = (lib.tensor(rng.standard_normal(n, dtype=np.float32), requires_grad=True) for _ in range(3))
    return lambda: (a * b + c).relu().sum()


def main(n: int = 4, samples: int = 21, number: int = 2000) -> None:
    libs = {"tinygrad_lab": tinygrad_lab}
    try:
        import torch
        torch.set_num_threads(1)
        libs["torch"] = torch
    except ImportError:
        pass
    steps = {name: chain(lib, n) for name, lib in libs.items()}
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(samples):
        for name, step in steps.items():
            times[name].append(timeit.timeit(step, number=number) / number / 4)
    medians = {name: statistics.median(t) for name, t in times.items()}
    for name, m in medians.items():
        print(f"{name:13s} {m * 1e6:6.2f} µs per op (median of {samples} x {number} forwards of 4 ops, n={n})")
    if "torch" in medians:
        print(f"ratio         {medians['tinygrad_lab'] / medians['torch']:.2f}x PyTorch")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4)
