"""Seeded random numbers: one generator per device, all reseeded by `manual_seed`, and
`Generator` objects that keep streams of their own.

Like PyTorch, the default seed is fixed, so a fresh process draws the same
numbers every run. The streams are NumPy's (PCG64) on the CPU, not PyTorch's:
seeds give reproducible but different numbers than PyTorch.

Where a `generator=` argument is taken (the random factories, the samplers,
random_split), it may be:

- ``None`` (default): the device's stream, from tinygrad_lab's global seed, so
  ``tl.manual_seed(s)`` makes the whole run, shuffled epochs included, repeat;
- a ``tinygrad_lab.Generator`` (``Generator().manual_seed(0)``), which keeps its
  own stream, so shuffling does not disturb weight initialisation;
- a ``numpy.random.Generator``: used directly;
- any other object with ``manual_seed`` and ``initial_seed`` (e.g. a
  ``torch.Generator``): a NumPy stream seeded from its ``initial_seed()``; the
  stream restarts whenever that seed changes. Objects that expose a NumPy
  Generator as ``.numpy_generator`` are used through it.

``get_rng_state()`` / ``set_rng_state(state)`` (and ``Generator.get_state``/``set_state``) snapshot
and restore a stream as a uint8 tensor, as in PyTorch; ours holds NumPy's PCG64 state (48 bytes),
not PyTorch's Mersenne Twister (5056 bytes), so states do not move between the two libraries.
"""
from __future__ import annotations

import numbers
import secrets
import weakref

import numpy as np

from . import dtypes
from .autograd.tensor_base import TensorBase, make
from .backends import CPU

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


# ---------------------------------------------------------------- the state of a stream, as a uint8 tensor

_STATE_FIELDS = (("state", 16), ("inc", 16), ("has_uint32", 8), ("uinteger", 8))  # PCG64's state, in bytes
STATE_BYTES = sum(n for _, n in _STATE_FIELDS)


def _state_tensor(rng: np.random.Generator):
    """rng's PCG64 state as a uint8 CPU tensor of STATE_BYTES bytes (little-endian fields).
    Deviation: PyTorch's CPU state is its Mersenne Twister's 5056 bytes; the two do not mix."""
    st = rng.bit_generator.state
    if st["bit_generator"] != "PCG64":
        raise RuntimeError(f"get_rng_state: only PCG64 streams have a state snapshot, not {st['bit_generator']}")
    values = {**st["state"], "has_uint32": st["has_uint32"], "uinteger": st["uinteger"]}
    raw = b"".join(int(values[k]).to_bytes(n, "little") for k, n in _STATE_FIELDS)
    return make(np.frombuffer(raw, dtype=np.uint8).copy(), CPU)


def _restore(rng: np.random.Generator, new_state, op: str) -> None:
    """Set rng's PCG64 state from a tensor of `_state_tensor`, checked as PyTorch checks it."""
    if not isinstance(new_state, TensorBase):
        raise TypeError(f"{op}: expected a uint8 tensor (from get_rng_state()), but got {type(new_state).__name__}")
    if new_state.dtype is not dtypes.uint8:
        raise TypeError(f"{op}: the RNG state must be a uint8 tensor (from get_rng_state()), got {new_state.dtype}")
    raw = new_state._device.backend.to_host(new_state._data).reshape(-1).tobytes()
    if len(raw) != STATE_BYTES:
        raise RuntimeError(f"{op}: expected an RNG state of {STATE_BYTES} bytes (from get_rng_state()), "
                           f"but got {len(raw)}")
    values, at = {}, 0
    for key, n in _STATE_FIELDS:
        values[key], at = int.from_bytes(raw[at:at + n], "little"), at + n
    rng.bit_generator.state = {"bit_generator": "PCG64", "state": {"state": values["state"], "inc": values["inc"]},
                               "has_uint32": values["has_uint32"], "uinteger": values["uinteger"]}


def get_rng_state():
    """A snapshot of the CPU stream (tinygrad_lab's global one) as a uint8 tensor, as torch.get_rng_state:
    set_rng_state(it) later makes the stream draw the same numbers again."""
    return _state_tensor(generator(CPU))


def set_rng_state(new_state) -> None:
    """Restore the CPU stream to a snapshot from get_rng_state, as torch.set_rng_state."""
    _restore(generator(CPU), new_state, "set_rng_state")


class Generator:
    """A seeded stream of random numbers of its own, as `torch.Generator`: ``g = Generator().manual_seed(0)``,
    then ``generator=g`` to the random factories (rand, randn, randint, randperm, normal, multinomial,
    bernoulli, the in-place fills), the samplers and random_split. Host (NumPy PCG64) only."""

    def __init__(self, device="cpu") -> None:
        if str(device) != "cpu":
            raise RuntimeError(f"Generator(device={str(device)!r}): a Generator draws on the host; only 'cpu' is "
                               f"supported")
        self.device = CPU
        self.manual_seed(_DEFAULT_SEED)  # a fresh torch.Generator starts from the same default seed

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

    def get_state(self):
        """A snapshot of the stream for `set_state`: a uint8 tensor, as torch.Generator.get_state."""
        return _state_tensor(self._rng)

    def set_state(self, new_state) -> "Generator":
        """Restore a snapshot from `get_state`."""
        _restore(self._rng, new_state, "Generator.set_state")
        return self

    @property
    def numpy_generator(self) -> np.random.Generator:
        """The NumPy Generator that draws the numbers."""
        return self._rng

    def __repr__(self) -> str:
        return f"<tinygrad_lab.Generator seed={self._seed}>"


# foreign generators (e.g. torch.Generator) -> (seed it was seen with, our NumPy stream)
_foreign: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def numpy_generator(source=None) -> np.random.Generator:
    """The NumPy Generator to draw from for `generator=source` (see the module docstring)."""
    if source is None:
        return generator(CPU)  # looked up each time: manual_seed replaces it
    if isinstance(source, np.random.Generator):
        return source
    rng = getattr(source, "numpy_generator", None)
    if isinstance(rng, np.random.Generator):
        return rng
    if callable(getattr(source, "manual_seed", None)) and callable(getattr(source, "initial_seed", None)):
        seed = int(source.initial_seed())
        try:
            entry = _foreign.get(source)
        except TypeError:  # not weak-referenceable: a fresh stream each time (still seeded)
            return np.random.Generator(np.random.PCG64(seed))
        if entry is None or entry[0] != seed:
            entry = (seed, np.random.Generator(np.random.PCG64(seed)))
            _foreign[source] = entry
        return entry[1]
    raise TypeError(f"generator must be None, a tinygrad_lab.Generator, a numpy.random.Generator or an "
                    f"object with manual_seed()/initial_seed(), got {type(source).__name__}")
