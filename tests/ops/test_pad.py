"""F.pad in its four modes (constant, reflect, replicate, circular): values and gradients against
PyTorch (float32 and float64) on 1-, 2- and 3-dim padding with and without a batch dim, negative
widths, gradients against finite differences, the gradient adding up where an element is read twice
(by hand), every width of a small grid against PyTorch, and the errors for bad input."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.autograd import gradcheck

from ..nn._pairs import compare, randn
from .op_table import error_of

F = tl.nn.functional

CASES = {  # name: (mode, input shape, pad, value)
    "constant 1-d": ("constant", (5,), (2, 1), None),
    "constant value, last dim": ("constant", (3, 4), (1, 2), 2.5),
    "constant 2 dims": ("constant", (2, 3, 4), (1, 0, 2, 1), -1.0),
    "constant 3 dims": ("constant", (2, 3, 4, 5), (1, 1, 2, 0, 0, 3), None),
    "constant every dim": ("constant", (2, 3), (1, 1, 2, 2), None),
    "constant crops": ("constant", (5, 6), (-1, -2, 1, 1), 1.0),
    "constant crops and pads": ("constant", (2, 3, 4, 5), (-1, 2, -2, 1, 1, -1), None),
    "constant crops to empty": ("constant", (2, 5), (-3, -2), None),
    "reflect 1-d, unbatched": ("reflect", (3, 5), (2, 3), None),
    "reflect 1-d, batched": ("reflect", (2, 3, 5), (4, 1), None),
    "reflect 2-d, unbatched": ("reflect", (3, 4, 5), (1, 2, 3, 0), None),
    "reflect 2-d, batched": ("reflect", (2, 3, 4, 5), (3, 3, 1, 2), None),
    "reflect 3-d, unbatched": ("reflect", (2, 3, 4, 5), (1, 1, 2, 0, 1, 2), None),
    "reflect 3-d, batched": ("reflect", (2, 2, 3, 4, 5), (4, 0, 3, 1, 0, 2), None),
    "reflect negative": ("reflect", (2, 3, 5), (-2, 4), None),
    "reflect negative 2-d": ("reflect", (1, 3, 4, 4), (-1, 1, -2, 1), None),
    "reflect crops past the other side": ("reflect", (2, 5), (-8, 4), None),
    "reflect value 0 is allowed": ("reflect", (2, 5), (1, 1), 0.0),
    "replicate 1-d, unbatched": ("replicate", (3, 3), (5, 7), None),
    "replicate 1-d, batched": ("replicate", (2, 3, 4), (1, 2), None),
    "replicate 2-d, unbatched": ("replicate", (3, 4, 5), (2, 0, 1, 3), None),
    "replicate 2-d, batched": ("replicate", (2, 3, 4, 5), (6, 1, 0, 2), None),
    "replicate 3-d, unbatched": ("replicate", (2, 3, 4, 5), (1, 1, 2, 0, 3, 2), None),
    "replicate 3-d, batched": ("replicate", (2, 1, 3, 2, 4), (2, 2, 1, 1, 1, 1), None),
    "replicate negative": ("replicate", (5, 3, 4, 4), (-4, 5, 0, 0), None),
    "replicate crops past the other side": ("replicate", (2, 5), (-6, 3), None),
    "circular 1-d, unbatched": ("circular", (3, 5), (2, 3), None),
    "circular 1-d, batched": ("circular", (2, 3, 5), (5, 5), None),
    "circular 2-d, unbatched": ("circular", (3, 4, 5), (1, 2, 4, 0), None),
    "circular 2-d, batched": ("circular", (2, 3, 4, 5), (3, 3, 1, 2), None),
    "circular 3-d, unbatched": ("circular", (2, 3, 4, 5), (1, 1, 2, 0, 3, 2), None),
    "circular 3-d, batched": ("circular", (2, 2, 3, 4, 5), (4, 0, 3, 1, 0, 2), None),
    "circular negative left": ("circular", (2, 5), (-1, 2), None),
    "circular negative right": ("circular", (2, 5), (2, -1), None),
    "circular negative 2-d": ("circular", (1, 3, 4, 4), (-1, 1, -2, 1), None),
}


def _pad(mode, pad, value):
    kwargs = {} if value is None else {"value": value}
    return lambda lib, x: lib.nn.functional.pad(x, pad, mode=mode, **kwargs)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode, shape, pad, value", CASES.values(), ids=CASES.keys())
def test_values_and_gradients_match_torch(torch, dtype, mode, shape, pad, value):
    compare(torch, _pad(mode, pad, value), [randn(*shape)], dtype)


@pytest.mark.parametrize("mode, shape, pad, value", CASES.values(), ids=CASES.keys())
def test_gradients_match_finite_differences(mode, shape, pad, value):
    x = tl.tensor(randn(*shape), requires_grad=True)
    kwargs = {} if value is None else {"value": value}
    assert gradcheck(lambda t: F.pad(t, pad, mode=mode, **kwargs), [x])


@pytest.mark.parametrize("mode, pad, values, grad", [
    ("reflect", (2, 2), [3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0], [2.0, 3.0, 2.0]),
    ("replicate", (2, 1), [1.0, 1.0, 1.0, 2.0, 3.0, 3.0], [3.0, 1.0, 2.0]),
    ("circular", (2, 3), [2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0], [2.0, 3.0, 3.0]),
    ("circular", (-1, 2), [2.0, 3.0, 2.0, 3.0], [0.0, 2.0, 2.0]),
    ("constant", (-1, 2), [2.0, 3.0, 0.0, 0.0], [0.0, 1.0, 1.0]),
])
def test_an_element_read_twice_gets_both_gradients(mode, pad, values, grad):
    """x = [1, 2, 3]: the gradient of out.sum() counts how often each element appears in out."""
    x = tl.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    out = F.pad(x, pad, mode=mode)
    assert out.tolist() == [values]
    out.sum().backward()
    assert x.grad.tolist() == [grad]


def _pytorch_is_self_consistent(mode: str, n: int, lo: int, hi: int) -> bool:
    """False where PyTorch's circular padding reads cropped-off or uninitialised elements (a left width
    larger than what a negative right width leaves), or pads from nothing: our documented deviation."""
    kept = n + min(lo, 0) + min(hi, 0)
    return mode != "circular" or not ((hi < 0 and lo > kept) or (kept <= 0 and n + lo + hi != 0) or kept < 0)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_every_width_of_a_grid_matches_torch(torch, mode):
    """Every (left, right) in [-7, 6]^2 on rows of 5: the same values, or an error of the same type."""
    x = np.arange(10.0).reshape(2, 5)
    for lo in range(-7, 7):
        for hi in range(-7, 7):
            if not _pytorch_is_self_consistent(mode, 5, lo, hi):
                continue
            want = error_of(lambda: torch.nn.functional.pad(torch.tensor(x), (lo, hi), mode=mode))
            got = error_of(lambda: F.pad(tl.tensor(x), (lo, hi), mode=mode))
            if isinstance(want, Exception) or isinstance(got, Exception):
                assert type(got) is type(want), f"{(lo, hi)}: {got!r}, PyTorch {want!r}"
                continue
            ours = F.pad(tl.tensor(x), (lo, hi), mode=mode).numpy()
            theirs = torch.nn.functional.pad(torch.tensor(x), (lo, hi), mode=mode).numpy()
            np.testing.assert_array_equal(ours, theirs, err_msg=f"pad={(lo, hi)}")


def test_circular_wraps_what_a_negative_width_leaves():
    """Where a width is larger than what the crop on the other side leaves, PyTorch's values (a left
    width) or its gradient (a right width) are wrong; ours wrap around what is left. (-3, 3) keeps
    [3, 4] and reads [3, 4, 3, 4, 3] (PyTorch too, for two rows), so 3 gets three gradients and 4 two (PyTorch's differ);
    (3, -2) keeps [0, 1, 2] and wraps it (PyTorch reads the cropped-off 3 as the first element)."""
    x = tl.arange(5.0).reshape(1, 5).requires_grad_()
    out = F.pad(x, (-3, 3), mode="circular")
    assert out.tolist() == [[3.0, 4.0, 3.0, 4.0, 3.0]]
    out.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0, 3.0, 2.0]]
    assert gradcheck(lambda t: F.pad(t, (-4, 5), mode="circular"), [tl.tensor(randn(2, 5), requires_grad=True)])
    x = x.detach()
    assert F.pad(x, (3, -2), mode="circular").tolist() == [[0.0, 1.0, 2.0, 0.0, 1.0, 2.0]]
    assert F.pad(x, (5, -1), mode="circular").tolist() == [[3.0, 0.0, 1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 3.0]]
    with pytest.raises(RuntimeError, match=r"crops all 5 elements, leaving nothing to wrap around: padding "
                                           r"\(2, -5\) at dimension 1 of input \[1, 5\]"):
        F.pad(x, (2, -5), mode="circular")


def test_integer_and_bool_tensors_pad_in_every_mode(torch):
    x = np.arange(6).reshape(2, 3)
    for mode in ("constant", "reflect", "replicate", "circular"):
        got = F.pad(tl.tensor(x), (2, 1), mode=mode)
        want = torch.nn.functional.pad(torch.tensor(x), (2, 1), mode=mode)
        assert got.dtype == tl.int64 and got.tolist() == want.tolist(), mode
    assert F.pad(tl.tensor([[True, False]]), (1, 1), mode="circular").tolist() == [[False, True, False, True]]


def test_pad_on_every_device_matches_the_cpu(device):
    x = randn(2, 3, 4)
    for mode in ("constant", "reflect", "replicate", "circular"):
        ours = tl.tensor(x, device=device, requires_grad=True)
        ref = tl.tensor(x, requires_grad=True)
        (F.pad(ours, (-1, 2, 2, 1), mode=mode) ** 2).sum().backward()
        (F.pad(ref, (-1, 2, 2, 1), mode=mode) ** 2).sum().backward()
        np.testing.assert_allclose(ours.grad.cpu().numpy(), ref.grad.numpy(), rtol=1e-12)


ERRORS = {  # name: (program(F, tensor factory), what our message must say)
    "odd length": (lambda F, m: F.pad(m.ones(2, 5), (1, 2, 3)), [r"\bpad\b", "divisible by 2", r"\[1, 2, 3\]"]),
    "too many widths": (lambda F, m: F.pad(m.ones(2, 5), (1,) * 6),
                        ["padding length 6", "input of dimension 2", r"\[2, 5\]"]),
    "unknown mode": (lambda F, m: F.pad(m.ones(2, 5), (1, 1), mode="mirror"), [r"\bpad\b", "'mirror'"]),
    "mode not a str": (lambda F, m: F.pad(m.ones(2, 5), (1, 1), mode=None), ["'mode'", "str", "NoneType"]),
    "value for reflect": (lambda F, m: F.pad(m.ones(2, 5), (1, 1), mode="reflect", value=1.0),
                          ['"reflect"', "value"]),
    "pad not a tuple": (lambda F, m: F.pad(m.ones(2, 5), 1), ["'pad'", "tuple of ints", "int"]),
    "pad of floats": (lambda F, m: F.pad(m.ones(2, 5), (1.5, 1)), ["'pad'", "tuple of ints", "float", "pos 0"]),
    "reflect as wide as the dim": (lambda F, m: F.pad(m.ones(2, 5), (5, 1), mode="reflect"),
                                   ["reflect", "less than", r"\(5, 1\)", "dimension 1", r"\[2, 5\]"]),
    "reflect 2-d too wide": (lambda F, m: F.pad(m.ones(1, 2, 3), (1, 1, 3, 0), mode="reflect"),
                             ["reflect", r"\(3, 0\)", "dimension 1", r"\[1, 2, 3\]"]),
    "reflect on 1-d input": (lambda F, m: F.pad(m.ones(5), (1, 1), mode="reflect"),
                             ["reflect", "padding size 2", "1D", r"\[5\]"]),
    "replicate 2-d on 2-d input": (lambda F, m: F.pad(m.ones(4, 5), (1, 1, 1, 1), mode="replicate"),
                                   ["replicate", "padding size 4", "2D", r"\[4, 5\]"]),
    "circular 1-d on 4-d input": (lambda F, m: F.pad(m.ones(1, 2, 4, 5), (1, 1), mode="circular"),
                                  ["circular", "padding size 2", "4D", r"\[1, 2, 4, 5\]"]),
    "reflect on an empty channel dim": (lambda F, m: F.pad(m.ones(0, 3), (1, 1), mode="reflect"),
                                        ["reflect", "non-zero dimensions", r"\[0, 3\]"]),
    "replicate crops everything": (lambda F, m: F.pad(m.ones(2, 5), (-4, -1), mode="replicate"),
                                   ["replicate", "too small", r"\(-4, -1\)", r"\[2, 5\]"]),
    "circular wraps twice": (lambda F, m: F.pad(m.ones(2, 5), (6, 0), mode="circular"),
                             ["circular", "more than once", r"\(6, 0\)", r"\[2, 5\]"]),
    "circular crops below 0": (lambda F, m: F.pad(m.ones(2, 5), (-3, -3), mode="circular"),
                               ["circular", "negative", r"\(-3, -3\)", r"\[2, 5\]"]),
    "constant crops below 0": (lambda F, m: F.pad(m.ones(2, 5), (-3, -3)),
                               [r"\bpad\b", r"\(-3, -3\)", "dimension 1", r"\[2, 5\]"]),
    "constant crops past the other side": (lambda F, m: F.pad(m.ones(2, 5), (-7, 3)),
                                           [r"\bpad\b", r"\(-7, 3\)", r"\[2, 5\]"]),
}


@pytest.mark.parametrize("program, says", ERRORS.values(), ids=ERRORS.keys())
def test_errors_name_what_was_wrong_in_pytorchs_types(torch, program, says):
    want = error_of(lambda: program(torch.nn.functional, torch))
    assert want is not None, "PyTorch accepts it"
    got = error_of(lambda: program(F, tl))
    assert type(got) is type(want), f"{got!r}, PyTorch raises {want!r}"
    for pattern in says:
        assert re.search(pattern, str(got)), f"{pattern!r} not in {str(got)!r}"
