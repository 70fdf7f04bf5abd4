"""Data loading with PyTorch's API (`torch.utils.data`): datasets, samplers,
`DataLoader`, `default_collate`, `random_split` and a seeded `Generator`.

    from tinygrad_lab.utils.data import DataLoader, TensorDataset
    loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True)
    for xb, yb in loader: ...

Randomness (shuffle, RandomSampler, random_split) comes from `generator=` when
given, else from tinygrad_lab's global seed (`tl.manual_seed`). With `num_workers=N`,
N worker processes make the batches (the same batches, in the same order).
"""
from ...random import Generator
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler
from .worker import WorkerInfo, get_worker_info

__all__ = ["BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "Generator", "IterableDataset",
           "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset",
           "WeightedRandomSampler", "WorkerInfo", "default_collate", "default_convert", "get_worker_info", "random_split"]
