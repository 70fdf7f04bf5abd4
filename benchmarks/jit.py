"""Eager vs traced vs traced + fused on the dispatch-bound workloads, measured in the same run.

Run `python benchmarks/jit.py [repeats]` from the
repository root. Timing uses the benchmark harness's Timer (warm-up, calibrated inner loops,
interleaved samples); BLAS is pinned to one thread. Each row gives the median and the minimum
time per call, and the speed-up of each median over eager mode.
"""
from __future__ import annotations

import sys

import numpy as np
from threadpoolctl import threadpool_limits

import tinygrad_lab as tl
from tinygrad_lab import jit, nn
from tinygrad_lab.bench.timer import Timed, Timer, fmt_time


def chain(a, b, c):
    return (a * b + c).relu().sum()


def row(timer: Timer, name: str, steps: dict) -> None:
    timings = timer.measure([Timed(key, step) for key, step in steps.items()])
    eager = timings["eager"].median_s
    print(f"{name:38s}" + "".join(f"  {key} {fmt_time(t.median_s):>9s} (min {fmt_time(t.min_s):>9s}, "
                                  f"{eager / t.median_s:4.2f}x)" for key, t in timings.items()), flush=True)


def backward_step(fn, leaves):
    def step():
        for t in leaves:
            t.grad = None
        fn(*leaves).backward()
    return step


def main(repeats: int) -> None:
    timer = Timer(repeats=repeats)
    rng = np.random.default_rng(0)
    for n in (4, 1_000_000):
        a, b, c = (tl.from_numpy(rng.standard_normal(n).astype(np.float32)) for _ in range(3))
        traced, fused = jit.trace(chain, (a, b, c), fuse=False), jit.trace(chain, (a, b, c))
        row(timer, f"chain fwd, shape ({n},)", {"eager": lambda: chain(a, b, c), "traced": lambda: traced(a, b, c),
                                                "fused": lambda: fused(a, b, c)})
        leaves = [t.requires_grad_() for t in (a, b, c)]
        row(timer, f"chain fwd+bwd, shape ({n},)", {k: backward_step(f, leaves) for k, f in
                                                    (("eager", chain), ("traced", traced), ("fused", fused))})

    tl.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    x, y = tl.randn(64, 64), tl.randint(0, 10, (64,))
    traced, fused = jit.trace(model, x, fuse=False), jit.trace(model, x)
    with tl.no_grad():
        row(timer, "MLP 64-128-10 fwd, batch 64, no_grad", {"eager": lambda: model(x), "traced": lambda: traced(x),
                                                           "fused": lambda: fused(x)})
    opt = tl.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def train(m):
        def step():
            opt.zero_grad()
            nn.functional.cross_entropy(m(x), y).backward()
            opt.step()
        return step

    row(timer, "MLP training step (SGD, momentum)", {"eager": train(model), "traced": train(traced),
                                                    "fused": train(fused)})


if __name__ == "__main__":
    with threadpool_limits(1):
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 21)
