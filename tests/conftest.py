"""Shared test fixtures.

- `torch`: PyTorch as an independent oracle; tests using it skip cleanly without it.
- `device`: parametrizes a test over the available devices (GPU cases skip without one).
- Hypothesis runs derandomized, so CI is deterministic.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import tinygrad_lab as tl

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=60,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")


@pytest.fixture
def torch():
    return pytest.importorskip("torch", exc_type=ImportError)


def _available_devices() -> list:
    devices = ["cpu"]
    try:
        tl.device("cuda")
        devices.append("cuda")
    except RuntimeError:
        pass
    return devices


@pytest.fixture(params=_available_devices())
def device(request) -> str:
    return request.param


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)
