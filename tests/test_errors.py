"""Bad inputs raise PyTorch's exception type with a message naming what was wrong
(the shapes, sizes, dtypes, dims or op involved), never a bare NumPy error.

Each case is a program written once against a module (`tl` or `torch`): it runs
on tinygrad_lab for the type and message, and on PyTorch to confirm that the
expected exception type is PyTorch's.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import tinygrad_lab as tl

from .misuses import _iadd_leaf, _saved_input_modified, _saved_output_modified  # the corpus is their home

SAME = object()  # the oracle runs the same program on PyTorch


@dataclass(frozen=True)
class Case:
    exc: type
    match: str  # regex that tinygrad_lab's message must contain
    program: Callable  # program(module) raises
    oracle: object = SAME  # a program that raises the same way in PyTorch, SAME, or None (no counterpart)


def _second_backward(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


BROADCAST = r"size of tensor a \({a}\) must match the size of tensor b \({b}\) at non-singleton dimension {d}"
DIM_RANGE = r"Dimension out of range \(expected to be in range of \[{lo}, {hi}\], but got {got}\)"
OUT_OF_BOUNDS = r"index {i} is out of bounds for (dimension|axis) {d} with size {n}"

CASES = {
    # shapes
    "broadcast_add": Case(RuntimeError, BROADCAST.format(a=3, b=4, d=1), lambda m: m.zeros(2, 3) + m.zeros(4)),
    "broadcast_mul_3d": Case(RuntimeError, BROADCAST.format(a=3, b=5, d=1), lambda m: m.zeros(2, 3, 4) * m.zeros(5, 4)),
    "broadcast_sub_1d": Case(RuntimeError, BROADCAST.format(a=3, b=4, d=0), lambda m: m.zeros(3) - m.zeros(4)),
    "broadcast_shapes": Case(RuntimeError, BROADCAST.format(a=2, b=5, d=0) + r".*\[2, 3\], \[3\] and \[5, 1\]",
                             lambda m: m.broadcast_shapes((2, 3), (3,), (5, 1))),
    "broadcast_normal": Case(RuntimeError, BROADCAST.format(a=3, b=4, d=1) + r" \(in normal",
                             lambda m: m.normal(m.zeros(2, 3), m.ones(4))),
    "broadcast_masked_scatter": Case(RuntimeError, BROADCAST.format(a=3, b=4, d=1) + r" \(in masked_scatter",
                                     lambda m: m.zeros(2, 3).masked_scatter(m.ones(4, dtype=m.bool), m.ones(9))),
    "broadcast_solve_batches": Case(RuntimeError, BROADCAST.format(a=2, b=4, d=0) + r" \(in linalg.solve\b",
                                    lambda m: m.linalg.solve(m.eye(3).expand(2, 3, 3), m.ones(4, 3, 1))),
    "broadcast_solve_triangular_batches": Case(RuntimeError, BROADCAST.format(a=2, b=4, d=0),
                                               lambda m: m.linalg.solve_triangular(m.eye(3).expand(2, 3, 3),
                                                                                   m.ones(4, 3, 1), upper=True)),
    "broadcast_distribution": Case(RuntimeError, BROADCAST.format(a=3, b=4, d=0),
                                   lambda m: m.distributions.Normal(m.zeros(3), m.ones(4))),
    "matmul_2d": Case(RuntimeError, r"2x3 and 4x5", lambda m: m.zeros(2, 3) @ m.zeros(4, 5)),
    "matmul_batched": Case(RuntimeError, r"x3 and 4x5", lambda m: m.zeros(2, 2, 3) @ m.zeros(4, 5)),
    "matmul_matrix_vector": Case(RuntimeError, r"2x3.*\b4\b", lambda m: m.zeros(2, 3) @ m.zeros(4)),
    "matmul_vector_vector": Case(RuntimeError, r"\[3\].*\[4\]", lambda m: m.zeros(3) @ m.zeros(4)),
    "matmul_dtypes": Case(RuntimeError, r"float32.*float64",
                          lambda m: m.zeros(2, 2) @ m.zeros(2, 2, dtype=m.float64)),
    "reshape": Case(RuntimeError, r"shape '\[4\]' is invalid for input of size 6", lambda m: m.zeros(2, 3).reshape(4)),
    "reshape_inferred": Case(RuntimeError, r"shape '\[-1, 4\]' is invalid for input of size 6",
                             lambda m: m.zeros(2, 3).reshape(-1, 4)),
    "view": Case(RuntimeError, r"shape '\[5\]' is invalid for input of size 6", lambda m: m.zeros(2, 3).view(5)),
    "cat_sizes": Case(RuntimeError,
                      r"Sizes of tensors must match except in dimension 0\. Expected size 3 but got size 4",
                      lambda m: m.cat([m.zeros(2, 3), m.zeros(2, 4)])),
    "cat_ndims": Case(RuntimeError, r"same number of dimensions: got 2 and 1",
                      lambda m: m.cat([m.zeros(2, 3), m.zeros(3)])),
    "stack_sizes": Case(RuntimeError, r"equal size.*\[2, 3\].*\[3, 2\]",
                        lambda m: m.stack([m.zeros(2, 3), m.zeros(3, 2)])),
    # autograd misuse
    "backward_non_scalar": Case(RuntimeError, r"grad can be implicitly created only for scalar outputs",
                                lambda m: (m.ones(2, requires_grad=True) * 2).backward()),
    "backward_without_grad": Case(RuntimeError, r"does not require grad and does not have a grad_fn",
                                  lambda m: m.ones(2).sum().backward()),
    "second_backward": Case(RuntimeError, r"backward through the graph a second time", _second_backward),
    "in_place_on_leaf": Case(RuntimeError, r"leaf Variable that requires grad is being used in an in-place operation",
                             lambda m: m.ones(2, requires_grad=True).add_(1)),
    "augmented_assignment_on_leaf": Case(RuntimeError, r"leaf Variable that requires grad.*in-place", _iadd_leaf),
    "saved_input_modified": Case(RuntimeError, r"modified by an inplace operation.*version 1; expected version 0",
                                 _saved_input_modified),
    "saved_output_modified": Case(RuntimeError, r"modified by an inplace operation.*version 1; expected version 0",
                                  _saved_output_modified),
    "requires_grad_int": Case(RuntimeError, r"floating point", lambda m: m.tensor([1, 2], requires_grad=True)),
    "requires_grad__int": Case(RuntimeError, r"floating point", lambda m: m.zeros(2, dtype=m.int64).requires_grad_()),
    # indexing and dims
    "index_dim0": Case(IndexError, OUT_OF_BOUNDS.format(i=5, d=0, n=2), lambda m: m.zeros(2, 3)[5]),
    "index_dim1": Case(IndexError, OUT_OF_BOUNDS.format(i=7, d=1, n=3), lambda m: m.zeros(2, 3)[0, 7]),
    "index_negative": Case(IndexError, OUT_OF_BOUNDS.format(i=-4, d=0, n=3), lambda m: m.zeros(3)[-4]),
    "index_tensor": Case(IndexError, OUT_OF_BOUNDS.format(i=5, d=0, n=3), lambda m: m.zeros(3)[m.tensor([0, 5])]),
    "dim_sum": Case(IndexError, DIM_RANGE.format(lo=-2, hi=1, got=2), lambda m: m.zeros(2, 3).sum(2)),
    "dim_mean_negative": Case(IndexError, DIM_RANGE.format(lo=-2, hi=1, got=-3), lambda m: m.zeros(2, 3).mean(-3)),
    "dim_size": Case(IndexError, DIM_RANGE.format(lo=-2, hi=1, got=2), lambda m: m.zeros(2, 3).size(2)),
    "dim_transpose": Case(IndexError, DIM_RANGE.format(lo=-2, hi=1, got=3), lambda m: m.zeros(2, 3).transpose(0, 3)),
    "dim_unsqueeze": Case(IndexError, DIM_RANGE.format(lo=-3, hi=2, got=4), lambda m: m.zeros(2, 3).unsqueeze(4)),
    "dim_cat": Case(IndexError, DIM_RANGE.format(lo=-2, hi=1, got=2), lambda m: m.cat([m.zeros(2, 3)] * 2, dim=2)),
    # conversions
    "item_many": Case(RuntimeError, r"a Tensor with 4 elements cannot be converted to Scalar",
                      lambda m: m.zeros(2, 2).item()),
    "item_empty": Case(RuntimeError, r"a Tensor with 0 elements cannot be converted to Scalar",
                       lambda m: m.zeros(0).item()),
    "bool_many": Case(RuntimeError, r"Boolean value of Tensor with more than one value is ambiguous",
                      lambda m: bool(m.zeros(2))),
    # dtypes and operand types
    "unsupported_dtype_tensor": Case(TypeError, r"complex64", lambda m: m.tensor(np.zeros(2, np.complex64)),
                                     oracle=lambda m: m.tensor(np.array(["a"]))),
    "unsupported_dtype_from_numpy": Case(TypeError, r"uint16", lambda m: m.from_numpy(np.zeros(2, np.uint16)),
                                         oracle=lambda m: m.from_numpy(np.array(["a"]))),
    "operand_str": Case(TypeError, r"str", lambda m: m.zeros(2) + "a"),
    "operand_str_reflected": Case(TypeError, r"str", lambda m: "a" * m.zeros(2)),
    "operand_none": Case(TypeError, r"NoneType", lambda m: m.zeros(2) * None),
    "operand_object": Case(TypeError, r"object", lambda m: m.zeros(2) - object()),
    "operand_list": Case(TypeError, r"list", lambda m: m.zeros(2) + [1, 2]),
    "operand_complex": Case(TypeError, r"complex", lambda m: m.zeros(2) + 1j, oracle=None),  # PyTorch has complex
    "where_int_condition": Case(RuntimeError, r"where expected condition to be a boolean tensor.*int64",
                                lambda m: m.where(m.tensor([1, 0]), m.zeros(2), m.ones(2))),
    "where_float_condition": Case(RuntimeError, r"where expected condition to be a boolean tensor.*float32",
                                  lambda m: m.where(m.tensor([1.0, 0.0]), m.zeros(2), m.ones(2))),
    "in_place_result_type": Case(RuntimeError, r"float32 can't be cast to the desired output type int64",
                                 lambda m: m.tensor([1, 2]).add_(1.5)),
    "bool_subtraction": Case(RuntimeError, r"(?i)subtract.*bool",
                             lambda m: m.tensor([True, False]) - m.tensor([False, False])),
    "bool_negation": Case(RuntimeError, r"(?i)negat.*bool", lambda m: -m.tensor([True, False])),
}

# NumPy's own messages, as they would read if an error surfaced unwrapped
NUMPY_MESSAGES = [
    r"operands could not be broadcast together.*",
    r"matmul: Input operand \d+ has a mismatch.*",
    r"shapes \(.*\) and \(.*\) not aligned.*",
    r"cannot reshape array of size.*",
    r"axis -?\d+ is out of bounds for array of dimension \d+",
    r"index -?\d+ is out of bounds for axis \d+ with size \d+",
    r"(The )?numpy boolean (subtract|negative).*",
    r"all the input array(s| dimensions).*",
    r"ufunc '\w+' (not supported|did not contain).*",
]


def is_bare_numpy_message(msg: str) -> bool:
    return any(re.fullmatch(p, msg, flags=re.S) for p in NUMPY_MESSAGES)


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_error_type_and_message(case):
    with pytest.raises(case.exc, match=case.match) as info:
        case.program(tl)
    err = info.value
    assert type(err) is case.exc, f"raised {type(err).__module__}.{type(err).__name__}, not {case.exc.__name__}"
    assert not is_bare_numpy_message(str(err)), f"a bare NumPy error surfaced: {err}"


ORACLE_CASES = {k: c for k, c in CASES.items() if c.oracle is not None}


@pytest.mark.parametrize("case", ORACLE_CASES.values(), ids=ORACLE_CASES.keys())
def test_pytorch_raises_the_same_type(torch, case):
    program = case.program if case.oracle is SAME else case.oracle
    with pytest.raises(case.exc) as info:
        program(torch)
    assert type(info.value) is case.exc


@pytest.mark.parametrize("msg", [
    "operands could not be broadcast together with shapes (2,3) (4,) ",
    "index 5 is out of bounds for axis 0 with size 2",
    "cannot reshape array of size 6 into shape (4,)",
])
def test_bare_numpy_detector_recognises_numpy_messages(msg):
    assert is_bare_numpy_message(msg)
