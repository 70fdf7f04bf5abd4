"""Where the loaders' randomness comes from: a `Generator` object (PyTorch's
`torch.Generator` shape) or tinygrad_lab's global seed.

Every sampler and `random_split` takes `generator=`:

- ``None`` (default): draw from tinygrad_lab's global CPU stream, so
  ``tl.manual_seed(s)`` makes the whole run, shuffled epochs included, repeat.
- a ``tinygrad_lab.utils.data.Generator`` (``Generator().manual_seed(0)``), which
  keeps its own stream, so shuffling does not disturb weight initialisation.
- a ``numpy.random.Generator``: used directly.
- any other object with ``manual_seed`` and ``initial_seed`` (e.g. a
  ``torch.Generator``): a NumPy stream seeded from its ``initial_seed()``; the
  stream restarts whenever that seed changes. Objects that expose a NumPy
  Generator as ``.numpy_generator`` are used through it.

The streams are NumPy's PCG64, not PyTorch's Philox/MT: the same seed gives a
reproducible, but different, order than PyTorch.
"""
from __future__ import annotations

import numbers
import secrets
import weakref

import numpy as np

from ... import random as _random
from ...backends import CPU


class Generator:
    """A seeded stream of random numbers for samplers and `random_split`, as
    `torch.Generator`: ``g = Generator(); g.manual_seed(0)``. Host (NumPy PCG64) only."""

    def __init__(self, device="cpu") -> None:
        if str(device) != "cpu":
            raise RuntimeError(f"Generator(device={str(device)!r}): samplers draw on the host; only 'cpu' is supported")
        self.device = CPU
        self.manual_seed(_random._DEFAULT_SEED)  # a fresh torch.Generator starts from the same default seed

    def manual_seed(self, seed: int) -> "Generator":
        """Reseed (restart) the stream; returns self so `Generator().manual_seed(0)` chains."""
        if not isinstance(seed, numbers.Integral) or isinstance(seed, bool):
            raise TypeError(f"manual_seed expected an int seed, got {type(seed).__name__}")
        seed = int(seed)
        if seed < 0:
            raise RuntimeError(f"manual_seed expected a non-negative seed, got {seed}")
        self._seed = seed
        self._rng = np.random.Generator(np.random.PCG64(seed))
        return self

    def seed(self) -> int:
        """Reseed from OS entropy (non-deterministic) and return the new seed."""
        s = secrets.randbits(63)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> dict:
        """A snapshot of the stream (NumPy's bit-generator state dict) for `set_state`."""
        return self._rng.bit_generator.state

    def set_state(self, state: dict) -> "Generator":
        self._rng.bit_generator.state = state
        return self

    @property
    def numpy_generator(self) -> np.random.Generator:
        """The NumPy Generator that draws the numbers."""
        return self._rng

    def __repr__(self) -> str:
        return f"<tinygrad_lab.utils.data.Generator seed={self._seed}>"


# foreign generators (e.g. torch.Generator) -> (seed it was seen with, our NumPy stream)
_foreign: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def numpy_generator(generator=None) -> np.random.Generator:
    """The NumPy Generator to draw from for `generator=` (see the module docstring)."""
    if generator is None:
        return _random.generator(CPU)  # looked up each time: manual_seed replaces it
    if isinstance(generator, np.random.Generator):
        return generator
    rng = getattr(generator, "numpy_generator", None)
    if isinstance(rng, np.random.Generator):
        return rng
    if callable(getattr(generator, "manual_seed", None)) and callable(getattr(generator, "initial_seed", None)):
        seed = int(generator.initial_seed())
        try:
            entry = _foreign.get(generator)
        except TypeError:  # not weak-referenceable: a fresh stream each time (still seeded)
            return np.random.Generator(np.random.PCG64(seed))
        if entry is None or entry[0] != seed:
            entry = (seed, np.random.Generator(np.random.PCG64(seed)))
            _foreign[generator] = entry
        return entry[1]
    raise TypeError(f"generator must be None, a tinygrad_lab.utils.data.Generator, a numpy.random.Generator or an "
                    f"object with manual_seed()/initial_seed(), got {type(generator).__name__}")
