"""Issue 16's autograd misuses: a Function instance called, .grad read on a non-leaf."""
import warnings

import pytest

import tinygrad_lab as tl

from ..misuses import _function_class as _double  # class Double: x * 2, its backward g * 2

try:
    import torch
except ImportError:  # the oracle is optional
    torch = None

MODULES = [tl] + ([torch] if torch is not None else [])


@pytest.mark.parametrize("m", MODULES, ids=lambda m: m.__name__)
def test_calling_a_function_instance_says_to_use_apply(m):
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward method is deprecated"):
        _double(m)()(m.ones(2, requires_grad=True))
    assert _double(m).apply(m.ones(2)).tolist() == [2.0, 2.0]


def test_the_function_error_names_the_class_and_apply():
    with pytest.raises(RuntimeError, match=r"call Double\.apply\(\.\.\.\) on the class"):
        _double(tl)()(tl.ones(2))


@pytest.mark.parametrize("m", MODULES, ids=lambda m: m.__name__)
def test_grad_of_a_non_leaf_warns_at_the_callers_line(m):
    y = m.ones(2, requires_grad=True) * 2
    with pytest.warns(UserWarning, match=r"not a leaf.*retain_grad\(\)") as rec:
        assert y.grad is None
    if m is tl:
        assert rec[0].filename == __file__  # the learner's line, not the engine's


def test_grad_of_a_leaf_or_retained_non_leaf_does_not_warn():
    x = tl.ones(2, requires_grad=True)
    y = x * 2
    y.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is None and y.grad is None
        y.sum().backward()
        assert x.grad.tolist() == [2.0, 2.0] and y.grad.tolist() == [1.0, 1.0]
        assert tl.ones(2).grad is None
