"""tinygrad_lab.nn.parallel: running one model on several devices (DataParallel, one process)
or in several processes (DistributedDataParallel, over tinygrad_lab.distributed)."""
from .data_parallel import DataParallel, data_parallel, gather, parallel_apply, replicate, scatter, scatter_kwargs
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "gather", "parallel_apply", "replicate", "scatter", "scatter_kwargs"]
