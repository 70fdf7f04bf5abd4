"""Seeded random numbers: one generator per device, all reseeded by `manual_seed`.

Like PyTorch, the default seed is fixed, so a fresh process draws the same
numbers every run. The streams are NumPy's (PCG64) on the CPU, not PyTorch's:
seeds give reproducible but different numbers than PyTorch.
"""
from __future__ import annotations

_DEFAULT_SEED = 67280421310721  # PyTorch's default seed
_seed = [_DEFAULT_SEED]
_generators: dict = {}


def manual_seed(seed: int) -> None:
    """Reseed the generators of every device."""
    seed = int(seed)
    if seed < 0:
        raise RuntimeError(f"manual_seed expected a non-negative seed, got {seed}")
    _seed[0] = seed
    _generators.clear()


def seed() -> int:
    """Reseed from OS entropy (non-deterministic) and return the new seed."""
    import secrets
    s = secrets.randbits(63)
    manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed the generators were last seeded with (PyTorch's default until manual_seed/seed)."""
    return _seed[0]


def generator(device):
    """The current generator of `device` (created from the seed on first use)."""
    gen = _generators.get(device)
    if gen is None:
        gen = _generators[device] = device.backend.generator(_seed[0], device.index or 0)
    return gen
