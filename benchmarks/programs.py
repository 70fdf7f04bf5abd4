"""Real PyTorch programs timed under tinygrad_lab and under PyTorch on the CPU, in one run.

Each file in benchmarks/programs/ is our own version of an official tutorial or example, written
once for both libraries: `run(torch, steps=STEPS) -> float` trains with the framework module it
is given (`run(tinygrad_lab)` or `run(torch)`) and returns its last loss; `STEPS` is small (the
tests run it), `FULL_STEPS` is what is timed here.

    python benchmarks/programs.py                      # every program, FULL_STEPS, 5 repeats
    python benchmarks/programs.py bilstm_crf --repeats 3
    python benchmarks/programs.py --quick              # STEPS instead of FULL_STEPS: a smoke run

How it times (the harness of `tinygrad-lab bench`, tinygrad_lab.bench.timer): both libraries are
imported first (imports are not timed); every BLAS pool is pinned to one thread (threadpoolctl)
and PyTorch to one thread (`torch.set_num_threads(1)`); each program runs once per library at
STEPS untimed (warm-up, and a check that it runs at all); then `repeats` rounds time one whole
`run(lib, FULL_STEPS)` per library, interleaved, the one going first rotating; the table gives
the medians, their ratio, and the geometric mean of the ratios, against the target of issue 20:
geometric mean <= 1.0x PyTorch and no program above 1.5x. A program that fails under either
library is listed with its error and left out of the mean.
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import traceback
import zlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable, Sequence

from tinygrad_lab.bench.timer import ForeignLoad, Timed, Timer, fmt_time

FOLDER = Path(__file__).resolve().parent / "programs"
PACKAGE = "benchmark_programs"  # the name the program files are imported under (they may import each other)
GEOMEAN_TARGET, WORST_TARGET = 1.0, 1.5


@dataclass
class Result:
    """One program's timing: median seconds and the returned value per library, or why it failed."""

    name: str
    steps: int
    seconds: dict
    values: dict
    error: str | None = None

    @property
    def ratio(self) -> float | None:
        if self.error or not self.seconds:
            return None
        return self.seconds["tinygrad_lab"] / self.seconds["torch"]


def discover(folder: Path = FOLDER) -> list[str]:
    """The program names in folder (its .py files, except those starting with '_'), sorted."""
    return sorted(p.stem for p in folder.glob("*.py") if not p.stem.startswith("_"))


def load(name: str, folder: Path = FOLDER) -> ModuleType:
    """Import program `name` from folder, as a module of a package made of that folder. The package's
    name comes from the folder, so two copies of this runner in one process (run with runpy by two
    test files) never give one name to two folders."""
    folder = Path(folder).resolve()
    package = PACKAGE if folder == FOLDER else f"{PACKAGE}_{zlib.crc32(str(folder).encode()):08x}"
    if package not in sys.modules:
        init = folder / "__init__.py"
        spec = importlib.util.spec_from_file_location(package, init, submodule_search_locations=[str(folder)])
        sys.modules[package] = module = importlib.util.module_from_spec(spec)
        if init.exists():
            spec.loader.exec_module(module)
    return importlib.import_module(f"{package}.{name}")


def time_program(program: ModuleType, libs: dict, repeats: int, quick: bool = False,
                 timer: Timer | None = None) -> Result:
    """Warm up (STEPS) then time `run(lib, FULL_STEPS)` per library, interleaved: the medians."""
    name = program.__name__.rsplit(".", 1)[-1]
    steps = program.STEPS if quick else program.FULL_STEPS
    values = {}
    try:
        for key, lib in libs.items():
            program.run(lib, program.STEPS)
    except Exception as e:  # noqa: BLE001 - a failing program is reported, not fatal
        where = traceback.extract_tb(e.__traceback__)[-1]
        return Result(name, steps, {}, {}, f"{key}: {type(e).__name__}: {e} ({Path(where.filename).name}:{where.lineno})")

    def step_of(key: str, lib) -> Callable[[], None]:
        def step() -> None:
            values[key] = program.run(lib, steps)
        return step

    timer = timer or Timer(min_sample_s=0.0, repeats=repeats, warmup=0)
    impls = [Timed(key, step_of(key, lib)) for key, lib in libs.items()]
    timings = timer.interleave(impls, {impl.key: 1 for impl in impls})
    return Result(name, steps, {k: t.median_s for k, t in timings.items()}, values)


def geometric_mean(ratios: Sequence[float]) -> float:
    return math.exp(sum(math.log(r) for r in ratios) / len(ratios))


def table(results: Sequence[Result], foreign: float | None = None) -> list[str]:
    """The printed table: per program the medians, their ratio and the values returned; then the
    geometric mean and the worst ratio against the targets."""
    width = max([len(r.name) for r in results] + [7])
    lines = [f"{'program':{width}s}  {'steps':>5s}  {'tinygrad_lab':>12s}  {'torch':>10s}  {'ratio':>6s}  "
             f"{'value (ours / torch)'}"]
    for r in results:
        if r.error:
            lines.append(f"{r.name:{width}s}  {r.steps:5d}  FAILS: {r.error}")
            continue
        lines.append(f"{r.name:{width}s}  {r.steps:5d}  {fmt_time(r.seconds['tinygrad_lab']):>12s}  "
                     f"{fmt_time(r.seconds['torch']):>10s}  {r.ratio:5.2f}x  "
                     f"{r.values['tinygrad_lab']:.4g} / {r.values['torch']:.4g}")
    ratios = [r.ratio for r in results if r.ratio is not None]
    if ratios:
        mean, worst = geometric_mean(ratios), max(ratios)
        met = mean <= GEOMEAN_TARGET and worst <= WORST_TARGET
        lines.append(f"geometric mean {mean:.2f}x PyTorch (target <= {GEOMEAN_TARGET}), worst {worst:.2f}x "
                     f"(target <= {WORST_TARGET}): {'met' if met else 'MISSED'}; "
                     f"{len(ratios)} of {len(results)} programs timed")
    if foreign is not None:
        lines.append(f"other processes used {foreign:.0%} of the CPUs meanwhile"
                     + (" (noisy)" if foreign > ForeignLoad.NOISY else ""))
    return lines


def one_thread():
    """Pin every BLAS pool and PyTorch to one thread; returns threadpoolctl's limiter (keep it)."""
    import threadpoolctl
    import torch
    torch.set_num_threads(1)
    return threadpoolctl.threadpool_limits(limits=1)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="programs to time (default: all in benchmarks/programs)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per library (default 5)")
    parser.add_argument("--quick", action="store_true", help="time STEPS instead of FULL_STEPS")
    args = parser.parse_args(argv)
    import torch

    import tinygrad_lab
    libs = {"tinygrad_lab": tinygrad_lab, "torch": torch}
    limiter = one_thread()  # noqa: F841 - the limits hold while it lives
    names = args.names or discover()
    load_meter = ForeignLoad()
    results = []
    for name in names:
        results.append(time_program(load(name), libs, args.repeats, args.quick))
        print(f"  {name}: done", file=sys.stderr, flush=True)
    print(f"tinygrad_lab {tinygrad_lab.__version__} vs torch {torch.__version__}, CPU, 1 thread, "
          f"median of {args.repeats} interleaved runs, imports excluded")
    print("\n".join(table(results, load_meter.share())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
