"""PyTorch's thread and determinism settings: torch.set_num_threads (here the threads of NumPy's and SciPy's
BLAS, set through threadpoolctl; the engine itself runs on the calling thread), the inter-op pool's size (there
is no such pool: accepted and reported), and use_deterministic_algorithms (recorded: every op gives the same
numbers on every run on the CPU; on a GPU, index_add and scatter_add add with atomics, in no fixed order)."""
from __future__ import annotations

_state = {"interop": 1, "deterministic": False, "warn_only": False}


def set_num_threads(num: int) -> None:
    """Compute matrix products (BLAS) with `num` threads, as torch.set_num_threads."""
    if isinstance(num, bool) or not isinstance(num, int) or num < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {num!r}")
    from threadpoolctl import threadpool_limits  # imported on first use, as the bench's (tinygrad-lab doctor)
    threadpool_limits(limits=num, user_api="blas")


def get_num_threads() -> int:
    """The threads BLAS computes with (the fewest among the BLAS libraries loaded), as torch.get_num_threads."""
    from threadpoolctl import threadpool_info
    counts = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    return min(counts) if counts else 1


def set_num_interop_threads(num: int) -> None:
    if isinstance(num, bool) or not isinstance(num, int) or num < 1:
        raise RuntimeError(f"set_num_interop_threads expects a positive integer, got {num!r}")
    _state["interop"] = num


def get_num_interop_threads() -> int:
    return _state["interop"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record the wish for deterministic results (are_deterministic_algorithms_enabled answers it)."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"use_deterministic_algorithms expects a bool, but got {type(mode).__name__}")
    _state["deterministic"], _state["warn_only"] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]
