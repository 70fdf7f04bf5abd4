"""Data loading with PyTorch's API (`torch.utils.data`): datasets, samplers,
`DataLoader`, `default_collate`, `random_split` and a seeded `Generator`.

    from tinygrad_lab.utils.data import DataLoader, TensorDataset
    loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True)
    for xb, yb in loader: ...

Randomness (shuffle, RandomSampler, random_split) comes from `generator=` when
given, else from tinygrad_lab's global seed (`tl.manual_seed`). Everything runs
in the main process: `num_workers` must be 0.
"""
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .generator import Generator
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler

__all__ = ["BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "Generator", "IterableDataset",
           "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset",
           "WeightedRandomSampler", "default_collate", "default_convert", "random_split"]
