"""Shared test fixtures.

- `torch`: PyTorch as an independent oracle; tests using it skip cleanly without it.
- `device`: parametrizes a test over the devices: the CPU, the stand-in accelerator
  (tests/standin.py, NumPy underneath, so CI exercises device plumbing) and CUDA
  (skipped, with the reason, where it is unavailable).
- `other_device`: the same without the CPU, for tests of moving data between devices.
- `no_leftover_subscribers`: for modules that subscribe to the event stream.
- Hypothesis runs derandomized, so CI is deterministic.
"""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl

from . import standin  # noqa: F401  (registers the 'standin' device)

try:  # a GPU machine may lack hypothesis (`make gpu-check`): only the property tests need it
    from hypothesis import HealthCheck, settings
except ImportError:
    pass
else:
    settings.register_profile("ci", derandomize=True, deadline=None, max_examples=60,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("ci")


@pytest.fixture
def torch():
    return pytest.importorskip("torch", exc_type=ImportError)


_CUDA = pytest.param("cuda", marks=pytest.mark.skipif(not tl.cuda.is_available(),
                                                       reason=f"CUDA unavailable: {tl.cuda.unavailable_reason()}"))


@pytest.fixture(params=["cpu", "standin", _CUDA])
def device(request) -> str:
    return request.param


@pytest.fixture(params=["standin", _CUDA])
def other_device(request) -> str:
    return request.param


@pytest.fixture
def no_leftover_subscribers():
    """Fails a test that leaves a subscriber on the engine's event stream (it would slow every op after)."""
    from tinygrad_lab.autograd import events
    assert events.subscribers == []
    yield
    leftover = list(events.subscribers)
    events.subscribers.clear()
    assert leftover == [], "a test left a subscriber behind"


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)
