"""Python bytecodes and calls per step of the dispatch-bound workloads: a measure of engine overhead
that, unlike wall time on a shared machine, is the same on every run.

Run `python benchmarks/bytecodes.py [workload:size ...]` from the repository root (default: the
elementwise chain on 4 elements, lsq at d=64, the MLP step at batch 64). Each step is the one
`tinygrad-lab bench` times, built from the same data. The table lists, per workload, the total and
the functions that run the most bytecodes, then every function of the engine's core (Function.apply,
the backward engine, the tensor record) that ran; NumPy's own C work is not counted, so this shows the
cost of the Python layers only.
"""
from __future__ import annotations

import sys
from collections import Counter

import numpy as np

from tinygrad_lab.bench.runtimes import TINYGRAD, get_runtime
from tinygrad_lab.bench.workloads import WORKLOADS

DEFAULT = ("elementwise:4", "lsq:64", "mlp:64")
ENGINE = ("function.py:", "engine.py:", "tensor_base.py:")  # autograd's Function.apply, backward engine, tensor record


def count(step) -> tuple[Counter, Counter]:
    """Bytecodes and calls per function (file:line:name) during one call of `step`."""
    ops: Counter = Counter()
    calls: Counter = Counter()

    def tracer(frame, event, arg):
        frame.f_trace_opcodes = True
        code = frame.f_code
        key = f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}:{code.co_name}"
        if event == "opcode":
            ops[key] += 1
        elif event == "call":
            calls[key] += 1
        return tracer

    previous = sys.gettrace()  # a debugger's or coverage's tracer comes back afterwards
    sys.settrace(tracer)
    try:
        step()
    finally:
        sys.settrace(previous)
    return ops, calls


def _short(key: str) -> str:
    """file.py:line:name -> file:name"""
    file, _, name = key.split(":")
    return f"{file[:-3]}:{name}"


def main(specs: list[str]) -> None:
    rt = get_runtime(TINYGRAD, "cpu")
    for spec in specs:
        name, size = spec.split(":")
        workload = WORKLOADS[name]
        host = workload.data(int(size), np.dtype(workload.dtypes[0]), np.random.default_rng(0))
        step = workload.build(rt, host, workload.variants[0])
        step()  # warm: first-use caches, lazy imports
        ops, calls = count(step)
        print(f"{spec}: {sum(ops.values())} bytecodes, {sum(calls.values())} Python calls per step")
        for key, n in ops.most_common(8):
            print(f"  {n:6d} {calls[key]:4d} calls  {key}")
        engine = [(key, n) for key, n in ops.most_common() if key.startswith(ENGINE)]
        print("  the engine's own functions: " + ", ".join(f"{_short(key)} {n}" for key, n in engine))


if __name__ == "__main__":
    main(sys.argv[1:] or list(DEFAULT))
