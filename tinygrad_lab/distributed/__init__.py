"""`tinygrad_lab.distributed`: processes that train together, on MPI (torch.distributed's API).

Start the processes with MPI's launcher; each runs the same script and learns its rank:

    mpirun -n 2 python train.py          # as root, OpenMPI also wants --allow-run-as-root

    import tinygrad_lab.distributed as dist
    dist.init_process_group(backend="mpi")
    x = tl.tensor([float(dist.get_rank())])
    dist.all_reduce(x)                   # in place, on every rank: 0 + 1 = 1
    dist.destroy_process_group()

The collectives work on CPU tensors in place (tensors on other devices go through host
memory) and are blocking; `async_op=True` returns a Work that is already complete. MPI comes
from mpi4py (`pip install 'tinygrad-lab[distributed]'`) and an MPI library such as OpenMPI
(`apt-get install openmpi-bin`); without them `is_available()` is False and
`init_process_group` says what to install. Only the "mpi" backend exists (no gloo, no NCCL);
rank and world size come from mpirun.
"""
from __future__ import annotations

import enum
import importlib.util

import numpy as np

from ..autograd.grad_mode import no_grad
from ..autograd.tensor_base import TensorBase
from ..creation import from_numpy

INSTALL_HINT = ("tinygrad_lab.distributed runs on MPI: install mpi4py (pip install 'tinygrad-lab[distributed]') and "
                "an MPI library, e.g. OpenMPI (Debian/Ubuntu: apt-get install openmpi-bin; macOS: brew install "
                "open-mpi); `make setup` installs both")


class ReduceOp(enum.Enum):
    """How all_reduce combines the ranks' values. AVG is SUM divided by the world size."""

    SUM = "SUM"
    PRODUCT = "PRODUCT"
    MIN = "MIN"
    MAX = "MAX"
    AVG = "AVG"
    BAND = "BAND"
    BOR = "BOR"
    BXOR = "BXOR"


_MPI_OPS = {"SUM": "SUM", "AVG": "SUM", "PRODUCT": "PROD", "MIN": "MIN", "MAX": "MAX", "BAND": "BAND",
            "BOR": "BOR", "BXOR": "BXOR"}


class Backend:
    MPI = "mpi"


class ProcessGroup:
    """The processes of a job: an MPI communicator of its own (a duplicate of COMM_WORLD)."""

    def __init__(self, comm, mpi) -> None:
        self.comm, self.mpi = comm, mpi

    def rank(self) -> int:
        return self.comm.Get_rank()

    def size(self) -> int:
        return self.comm.Get_size()


class Work:
    """The handle an `async_op=True` collective returns; ours are complete when they return."""

    def wait(self, timeout=None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True


_default: list = [None]


def is_available() -> bool:
    """True when mpi4py is installed (whether an MPI library loads is found out by init_process_group)."""
    return importlib.util.find_spec("mpi4py") is not None


is_mpi_available = is_available


def _load_mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError(f"{INSTALL_HINT} ({type(e).__name__}: {e})") from None
    except RuntimeError as e:  # mpi4py is there, the MPI library it needs is not
        raise RuntimeError(f"mpi4py could not load an MPI library: {e}. {INSTALL_HINT}") from None
    return MPI


def init_process_group(backend: str | None = "mpi", init_method: str | None = None, timeout=None,
                       world_size: int = -1, rank: int = -1, store=None, group_name: str = "",
                       pg_options=None, device_id=None) -> None:
    """Join the job this process was started in by mpirun (a single process outside mpirun)."""
    name = (backend or "mpi").lower()
    if name != "mpi":
        raise ValueError(f"backend {backend!r} is not available in tinygrad_lab: only 'mpi' is (through mpi4py); "
                         f"start the processes with mpirun -n N and call init_process_group(backend='mpi')")
    if _default[0] is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    mpi = _load_mpi()
    comm = mpi.COMM_WORLD
    if world_size not in (-1, comm.Get_size()) or rank not in (-1, comm.Get_rank()):
        raise ValueError(f"with MPI, mpirun sets the ranks: this process is rank {comm.Get_rank()} of "
                         f"{comm.Get_size()}, not rank={rank} of world_size={world_size}")
    _default[0] = ProcessGroup(comm.Dup(), mpi)


def is_initialized() -> bool:
    return _default[0] is not None


def _group(group=None) -> ProcessGroup:
    g = group if group is not None else _default[0]
    if g is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return g


def destroy_process_group(group=None) -> None:
    """Leave the job's process group (MPI itself stays up until the process exits)."""
    g = _group(group)
    g.comm.Free()
    if g is _default[0]:
        _default[0] = None


def get_rank(group=None) -> int:
    return _group(group).rank()


def get_world_size(group=None) -> int:
    return _group(group).size()


def get_backend(group=None) -> str:
    _group(group)
    return Backend.MPI


def _host(tensor: TensorBase, what: str) -> np.ndarray:
    if not isinstance(tensor, TensorBase):
        raise TypeError(f"{what} expects a tinygrad_lab Tensor, got {type(tensor).__name__}")
    return np.ascontiguousarray(tensor._device.backend.to_host(tensor._data))


def _write(tensor: TensorBase, values: np.ndarray) -> None:
    with no_grad():
        tensor.copy_(from_numpy(values))


def _done(async_op: bool):
    return Work() if async_op else None


def all_reduce(tensor: TensorBase, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False):
    """Combine `tensor` across all ranks with `op`; every rank gets the result, in place."""
    g = _group(group)
    op = ReduceOp(op.value if isinstance(op, ReduceOp) else op)
    send = _host(tensor, "all_reduce")
    if op is ReduceOp.AVG and send.dtype.kind != "f":
        raise RuntimeError(f"all_reduce with ReduceOp.AVG needs a floating point tensor, got {tensor.dtype}")
    recv = np.empty_like(send)
    g.comm.Allreduce(send, recv, op=getattr(g.mpi, _MPI_OPS[op.value]))
    if op is ReduceOp.AVG:
        recv /= g.size()
    _write(tensor, recv)
    return _done(async_op)


def broadcast(tensor: TensorBase, src: int, group=None, async_op: bool = False):
    """Rank `src`'s `tensor` copied into `tensor` on every rank."""
    g = _group(group)
    if not 0 <= src < g.size():
        raise ValueError(f"broadcast: src={src} is not a rank of this group (0 to {g.size() - 1})")
    buf = _host(tensor, "broadcast")
    g.comm.Bcast(buf, root=src)
    if g.rank() != src:
        _write(tensor, buf)
    return _done(async_op)


def all_gather(tensor_list: list, tensor: TensorBase, group=None, async_op: bool = False):
    """Every rank's `tensor` into `tensor_list[rank]` on every rank (the list holds world-size tensors of
    its shape and dtype, written in place)."""
    g = _group(group)
    if len(tensor_list) != g.size():
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors but the group has "
                         f"{g.size()} ranks")
    send = _host(tensor, "all_gather")
    for t in tensor_list:
        if tuple(t.shape) != send.shape or t.dtype != tensor.dtype:
            raise ValueError(f"all_gather: every tensor in tensor_list must have the input's shape "
                             f"{list(send.shape)} and dtype {tensor.dtype}, got {list(t.shape)} {t.dtype}")
    recv = np.empty((g.size(), *send.shape), send.dtype)
    g.comm.Allgather(send, recv)
    for t, values in zip(tensor_list, recv):
        _write(t, values)
    return _done(async_op)


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Wait until every rank has reached this call."""
    _group(group).comm.Barrier()
    return _done(async_op)


__all__ = ["ReduceOp", "Backend", "ProcessGroup", "Work", "is_available", "is_mpi_available", "init_process_group",
           "is_initialized", "destroy_process_group", "get_rank", "get_world_size", "get_backend", "all_reduce",
           "broadcast", "all_gather", "barrier"]
