"""Thread and determinism settings under PyTorch's names: set_num_threads sets BLAS's threads (read back by
get_num_threads, as PyTorch's), the inter-op size and the deterministic flag are kept and answered."""
from __future__ import annotations

import pytest

import tinygrad_lab as tl


def test_num_threads_round_trip():
    before = tl.get_num_threads()
    try:
        for n in (1, 2):
            tl.set_num_threads(n)
            assert tl.get_num_threads() == n
    finally:
        tl.set_num_threads(before)
    with pytest.raises(RuntimeError, match="positive integer"):
        tl.set_num_threads(0)


def test_interop_threads_and_determinism_flags():
    tl.set_num_interop_threads(3)
    assert tl.get_num_interop_threads() == 3
    tl.use_deterministic_algorithms(True, warn_only=True)
    assert tl.are_deterministic_algorithms_enabled() and tl.is_deterministic_algorithms_warn_only_enabled()
    tl.use_deterministic_algorithms(False)
    assert not tl.are_deterministic_algorithms_enabled()


def test_small_top_level_names_as_pytorch(torch):
    for lib in (tl, torch):
        assert lib.scalar_tensor(3).tolist() == 3.0 and str(lib.scalar_tensor(3).dtype).endswith("float32")
        assert lib.typename(lib.ones(2)).endswith(".FloatTensor") and lib.typename(3) == "int"
        assert not lib.is_storage(lib.ones(1)) and not lib.detach(lib.ones(1, requires_grad=True)).requires_grad
        assert lib.dropout(lib.ones(4), 0.5, False).tolist() == [1.0] * 4
