"""Seeded random numbers: one generator per device, all reseeded by `manual_seed`.

Like PyTorch, the default seed is fixed, so a fresh process draws the same
numbers every run. The streams are NumPy's (PCG64) on the CPU, not PyTorch's:
seeds give reproducible but different numbers than PyTorch.
"""
from __future__ import annotations

_DEFAULT_SEED = 67280421310721  # PyTorch's default seed
_seed = [_DEFAULT_SEED]
_type_seeds: dict[str, int] = {}  # device types reseeded on their own (tinygrad_lab.cuda.manual_seed)
_generators: dict = {}


def _checked(seed) -> int:
    seed = int(seed)
    if seed < 0:
        raise RuntimeError(f"manual_seed expected a non-negative seed, got {seed}")
    return seed


def manual_seed(seed: int) -> None:
    """Reseed the generators of every device."""
    _seed[0] = _checked(seed)
    _type_seeds.clear()
    _generators.clear()


def manual_seed_device_type(device_type: str, seed: int) -> None:
    """Reseed the generators of one device type only (e.g. every 'cuda' device)."""
    _type_seeds[device_type] = _checked(seed)
    for dev in [d for d in _generators if d.type == device_type]:
        del _generators[dev]


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
        seed = _type_seeds.get(device.type, _seed[0])
        gen = _generators[device] = device.backend.generator(seed, device.index or 0)
    return gen
