"""Common ops on small tensors, tinygrad_lab beside PyTorch in one run: what each op costs around its
array work (argument checks, dispatch, the record), op by op.

Run `python benchmarks/ops.py [--grad] [op ...]` from the repository root. Each op runs on (4, 8)
float32 tensors (inputs that require grad with --grad, so that every op records a node); samples
alternate between the two libraries (so load on a shared machine hits both alike); the table gives
the median per call and the ratio, worst first. `benchmarks/forward.py` isolates the record of one
elementwise chain; this one finds the ops whose own code costs more than the engine's.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import timeit

import numpy as np

import tinygrad_lab


def cases(lib, grad: bool) -> dict:
    """name -> a call of one op with `lib` (tinygrad_lab or torch), on inputs made the same way."""
    rng = np.random.default_rng(0)
    a, v, x3 = (lib.tensor(rng.standard_normal(shape, dtype=np.float32), requires_grad=grad)
                for shape in ((4, 8), (8,), (2, 3, 4)))
    a, v, idx = a * 1, v * 1, lib.tensor([0, 2])  # * 1: non-leaves, as a model's activations are
    return {
        "add": lambda: a + a, "add scalar": lambda: a + 1.0, "mul": lambda: a * a, "pow 2": lambda: a ** 2,
        "exp": lambda: a.exp(), "tanh": lambda: a.tanh(), "sigmoid": lambda: a.sigmoid(), "relu": lambda: a.relu(),
        "where": lambda: lib.where(a > 0, a, 0.0), "clamp": lambda: a.clamp(0, 1),
        "sum": lambda: a.sum(), "sum dim": lambda: a.sum(1), "mean": lambda: a.mean(), "amax": lambda: a.max(),
        "max dim": lambda: lib.max(a, 1), "softmax": lambda: lib.softmax(a, 1),
        "log_softmax": lambda: lib.log_softmax(a, 1), "matmul": lambda: a @ v, "mm": lambda: a.mm(a.t()),
        "view": lambda: a.view(8, 4), "reshape": lambda: a.reshape(2, 16), "transpose": lambda: a.transpose(0, 1),
        "permute": lambda: a.permute(1, 0), "unsqueeze": lambda: a.unsqueeze(0), "expand": lambda: v.expand(4, 8),
        "index int": lambda: a[1], "index slice": lambda: a[:, 1:3], "index tensor": lambda: a[idx],
        "cat": lambda: lib.cat([a, a]), "stack": lambda: lib.stack([v, v]), "split": lambda: a.split(2, 0),
        "chunk": lambda: a.chunk(2, 1), "unbind": lambda: x3.unbind(0), "zeros": lambda: lib.zeros(4, 8),
        "ones": lambda: lib.ones(4, 8), "zeros_like": lambda: lib.zeros_like(a), "full": lambda: lib.full((4, 8), 2.0),
        "tensor": lambda: lib.tensor([1, 2, 3]), "randn": lambda: lib.randn(4, 8), "clone": lambda: a.clone(),
    }


def survey(libs: dict, grad: bool, names=None, samples: int = 7, number: int = 2000) -> list:
    """[(name, microseconds per call for each library, in libs' order)], the samples of the libraries
    alternating op by op."""
    made = {label: cases(lib, grad) for label, lib in libs.items()}
    rows = []
    for name in names or made["tinygrad_lab"]:
        times = {label: [] for label in libs}
        for _ in range(samples):
            for label in libs:
                times[label].append(timeit.timeit(made[label][name], number=number) / number * 1e6)
        rows.append((name, *(statistics.median(times[label]) for label in libs)))
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("ops", nargs="*", help="op names (default: all)")
    parser.add_argument("--grad", action="store_true", help="inputs that require grad: every op records a node")
    parser.add_argument("--samples", type=int, default=7)
    parser.add_argument("--number", type=int, default=2000, help="calls per sample")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        sys.exit("PyTorch is not installed: this benchmark compares with it (pip install 'tinygrad-lab[oracle]')")
    torch.set_num_threads(1)
    rows = survey({"tinygrad_lab": tinygrad_lab, "torch": torch}, args.grad, args.ops, args.samples, args.number)
    print(f"(4, 8) float32, {'requires grad' if args.grad else 'no grad'}, medians of {args.samples} samples")
    print(f"{'op':14} {'tinygrad_lab':>12} {'torch':>8} {'ratio':>7}")
    for name, ours, theirs in sorted(rows, key=lambda r: r[1] / r[2], reverse=True):
        print(f"{name:14} {ours:9.2f} us {theirs:5.2f} us {ours / theirs:6.2f}x")


if __name__ == "__main__":
    main()
