"""tinygrad_lab.distributed on a 2-rank MPI job on this machine (skipped without MPI), and the
messages a machine without MPI gets."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tinygrad_lab as tl
import tinygrad_lab.distributed as dist
from tinygrad_lab.distributed.run import main as run_main
from tinygrad_lab.distributed.run import mpirun_command

HERE = Path(__file__).resolve().parent


def _mpi_missing() -> str | None:
    if not dist.is_available():
        return "mpi4py is not installed (pip install 'tinygrad-lab[distributed]')"
    if shutil.which("mpirun") is None:
        return "mpirun is not installed (apt-get install openmpi-bin)"
    return None


needs_mpi = pytest.mark.skipif(_mpi_missing() is not None, reason=f"no MPI: {_mpi_missing()}")


@needs_mpi
def test_collectives_and_ddp_on_two_ranks():
    cmd, env = mpirun_command([str(HERE / "_ranks.py")], nproc=2)
    env["PYTHONPATH"] = str(HERE.parents[1])
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    # searched, not split into lines: mpirun forwards the ranks' output as it comes, and two ranks' writes
    # can land on one line ("rank 1 of 2: okrank 0 of 2: ok" in one run)
    assert sorted(re.findall(r"rank \d of \d: ok", run.stdout)) == ["rank 0 of 2: ok", "rank 1 of 2: ok"], out[-4000:]


@needs_mpi
def test_the_launcher_passes_the_jobs_exit_status(tmp_path, monkeypatch):
    script = tmp_path / "fail.py"
    script.write_text("import sys\nsys.exit(3)\n")
    assert run_main(["--nproc-per-node", "2", str(script)]) != 0


def test_without_a_process_group_the_calls_say_so():
    assert not dist.is_initialized()
    for call in (dist.get_rank, dist.get_world_size, lambda: dist.all_reduce(tl.ones(1)), dist.barrier,
                 lambda: tl.nn.parallel.DistributedDataParallel(tl.nn.Linear(1, 1))):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            call()
    with pytest.raises(ValueError, match="only 'mpi' is"):
        dist.init_process_group(backend="nccl")


def test_without_mpi4py_the_error_names_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # import mpi4py now raises ImportError
    with pytest.raises(RuntimeError, match=r"install mpi4py \(pip install 'tinygrad-lab\[distributed\]'\).*"
                                           r"apt-get install openmpi-bin"):
        dist.init_process_group(backend="mpi")
    assert not dist.is_initialized()


def test_without_mpirun_the_launcher_names_what_to_install(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(RuntimeError, match="mpirun was not found.*openmpi-bin"):
        mpirun_command(["x.py"])
