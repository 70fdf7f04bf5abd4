"""Start N copies of a script as one MPI job on this machine (the role torchrun plays for PyTorch):

    python -m tinygrad_lab.distributed.run --nproc-per-node 2 train.py [args...]

It runs `mpirun -n N python train.py ...` with what a single machine needs: with OpenMPI,
more processes than cores allowed (--oversubscribe), traffic kept on this machine (shared
memory between the ranks, the launcher on the loopback interface) and, as root, the
permission OpenMPI otherwise refuses. The exit status is the job's.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

from . import INSTALL_HINT

_OPENMPI_LOCAL = ["--oversubscribe", "--mca", "btl", "self,vader", "--mca", "oob_tcp_if_include", "lo"]


def mpirun_command(script_args: list, nproc: int = 2) -> tuple[list, dict]:
    """(command line, environment) to run `python *script_args` as `nproc` MPI ranks here."""
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        raise RuntimeError(f"mpirun was not found on PATH. {INSTALL_HINT}")
    version = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=60).stdout
    openmpi = "Open MPI" in version or "OpenRTE" in version
    env = dict(os.environ)
    if openmpi and hasattr(os, "geteuid") and os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [mpirun, "-n", str(nproc), *(_OPENMPI_LOCAL if openmpi else []), sys.executable, *script_args]
    return cmd, env


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tinygrad_lab.distributed.run", description=__doc__.splitlines()[0])
    ap.add_argument("--nproc-per-node", "--nproc_per_node", "-n", type=int, default=2, dest="nproc",
                    help="how many ranks to start (default 2)")
    ap.add_argument("script", help="the Python script every rank runs")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    ns = ap.parse_args(argv)
    cmd, env = mpirun_command([ns.script, *ns.args], ns.nproc)
    return subprocess.run(cmd, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
