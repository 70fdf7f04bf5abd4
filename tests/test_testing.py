"""testing.assert_close: PyTorch's tolerances by dtype and its failure messages, word for word (checked
against torch.testing.assert_close when PyTorch is installed), and by hand."""
from __future__ import annotations

import math

import pytest

import tinygrad_lab as tl

CASES = {
    "a float mismatch": lambda m: m.testing.assert_close(m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 2.5, 3.0])),
    "dtypes differ": lambda m: m.testing.assert_close(m.tensor([1.0]), m.tensor([1.0], dtype=m.float64)),
    "dtypes ignored": lambda m: m.testing.assert_close(m.tensor([1.0, 2.0]), m.tensor([1.0, 2.1], dtype=m.float64),
                                                       check_dtype=False),
    "shapes differ": lambda m: m.testing.assert_close(m.tensor([1.0, 2.0]), m.tensor([1.0, 2.0, 3.0])),
    "integers are exact": lambda m: m.testing.assert_close(m.tensor([[1, 2], [3, 4]]), m.tensor([[1, 2], [3, 5]])),
    "within float32's tolerance": lambda m: m.testing.assert_close(m.tensor([1.0, 2.0]), m.tensor([1.0, 2.000001])),
    "Python floats": lambda m: m.testing.assert_close(1.0, 1.1),
    "an item of a list": lambda m: m.testing.assert_close([m.tensor(1.0), 2.0], [m.tensor(1.0), 2.5]),
    "an item of a dict": lambda m: m.testing.assert_close({"a": m.tensor(1.0)}, {"a": m.tensor(2.0)}),
    "keys differ": lambda m: m.testing.assert_close({"a": 1}, {"b": 1}),
    "lengths differ": lambda m: m.testing.assert_close((1, 2), (1, 2, 3)),
    "nan is not nan": lambda m: m.testing.assert_close(m.tensor([math.nan]), m.tensor([math.nan])),
    "unless equal_nan": lambda m: m.testing.assert_close(m.tensor([math.nan]), m.tensor([math.nan]), equal_nan=True),
    "inf is inf": lambda m: m.testing.assert_close(m.tensor([math.inf, 1.0]), m.tensor([math.inf, 1.0])),
    "inf is not -inf": lambda m: m.testing.assert_close(m.tensor([math.inf, 1.0]), m.tensor([-math.inf, 1.0])),
    "own tolerances": lambda m: m.testing.assert_close(m.tensor([0.0, 1.0]), m.tensor([1e-3, 1.0]), rtol=0, atol=1e-2),
    "rtol without atol": lambda m: m.testing.assert_close(m.tensor([1.0]), m.tensor([1.0]), rtol=1e-3),
    "msg replaces": lambda m: m.testing.assert_close(m.tensor([1.0]), m.tensor([2.0]), msg="custom"),
    "msg callable": lambda m: m.testing.assert_close(m.tensor([1.0]), m.tensor([2.0]),
                                                     msg=lambda text: "X " + text.splitlines()[0]),
}


def _outcome(case, lib) -> str:
    try:
        case(lib)
        return "passed"
    except (AssertionError, ValueError) as e:
        return f"{type(e).__name__}: {e}".replace("torch.", "").replace("tinygrad_lab.", "")


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch_testing(name, torch):
    assert _outcome(CASES[name], tl) == _outcome(CASES[name], torch)


def test_by_hand():
    tl.testing.assert_close(tl.tensor([1.0]), tl.tensor([1.0 + 9e-6]))  # float32: atol 1e-5
    with pytest.raises(AssertionError, match=r"Mismatched elements: 1 / 1 \(100.0%\)"):
        tl.testing.assert_close(tl.tensor([1.0]), tl.tensor([1.0 + 2e-5]))
    tl.testing.assert_close(tl.tensor([1.0], dtype=tl.float16), tl.tensor([1.0009], dtype=tl.float16))
    with pytest.raises(AssertionError, match=r"not equal!(.|\n)*at index \(1,\)"):
        tl.testing.assert_close(tl.tensor([1, 2]), tl.tensor([1, 3]))
    with pytest.raises(AssertionError, match=r"The failure occurred for item \[1\]\['w'\]"):
        tl.testing.assert_close([{}, {"w": 1.0}], [{}, {"w": 2.0}])
    with pytest.raises(AssertionError, match="No comparison of str and float"):
        tl.testing.assert_close("a", 1.0)
