"""asarray and frombuffer: tensors that share memory with their source, as torch.asarray and
torch.frombuffer. Sharing is checked by writing through one side and reading the other; values,
dtypes and errors are compared with PyTorch (the `torch` fixture skips those without it)."""
from __future__ import annotations

import array
import warnings

import numpy as np
import pytest

import tinygrad_lab as tl

from ._devices import host
from ._helpers import assert_like_torch, bad_input_tests

# ================================================================ asarray of a tensor


def test_asarray_of_a_tensor_is_that_tensor_when_nothing_changes():
    t = tl.tensor([1.0, 2.0])
    assert tl.asarray(t) is t
    assert tl.asarray(t, copy=False) is t
    assert tl.asarray(t, dtype=tl.float32, device="cpu") is t


def test_asarray_copy_true_of_a_tensor_does_not_share():
    t = tl.tensor([1.0, 2.0])
    c = tl.asarray(t, copy=True)
    c[0] = 9.0
    assert t.tolist() == [1.0, 2.0] and c.tolist() == [9.0, 2.0]


def test_asarray_of_a_tensor_to_another_dtype_copies(torch):
    t, tt = tl.tensor([1.5, 2.5]), torch.tensor([1.5, 2.5])
    got = tl.asarray(t, dtype=tl.float64)
    assert_like_torch(got, torch.asarray(tt, dtype=torch.float64))
    got[0] = 0.0
    assert t.tolist() == [1.5, 2.5]


def test_asarray_keeps_a_tensors_history_unless_told(torch):
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert tl.asarray(y) is y and tl.asarray(y, requires_grad=True) is y
    for kw in ({"copy": True}, {"dtype": tl.float64}):  # differentiable copies, as PyTorch's clone/to
        out = tl.asarray(y, **kw)
        assert out.grad_fn is not None
        out.sum().backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0])
    cut = tl.asarray(y, requires_grad=False)
    assert not cut.requires_grad and cut.grad_fn is None
    cut[0] = 7.0  # still y's memory
    assert y.tolist()[0] == 7.0
    tx = torch.tensor([1.0, 2.0], requires_grad=True) * 2
    assert torch.asarray(tx, requires_grad=False).grad_fn is None


def test_asarray_requires_grad_true_shares_memory_and_leaves_obj_alone():
    t = tl.tensor([1.0, 2.0])
    leaf = tl.asarray(t, requires_grad=True)
    assert leaf.requires_grad and leaf.is_leaf and not t.requires_grad  # deviation: PyTorch flips t itself
    t[1] = 5.0
    assert leaf.detach().tolist() == [1.0, 5.0]


def test_asarray_of_a_tensor_to_another_device(other_device):
    t = tl.tensor([1.0, 2.0])
    moved = tl.asarray(t, device=other_device)
    assert moved.device == tl.device(other_device) and host(moved).tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="can't alias tensor from device 'cpu'"):
        tl.asarray(t, device=other_device, copy=False)


# ================================================================ asarray of NumPy arrays, buffers, Python data

@pytest.mark.parametrize("copy", [None, False])
def test_asarray_shares_memory_with_a_numpy_array(torch, copy):
    arr = np.arange(6.0).reshape(2, 3).T  # not contiguous: still shared
    t = tl.asarray(arr, copy=copy)
    assert_like_torch(t, torch.asarray(arr.copy()))
    arr[0, 1] = -1.0  # array -> tensor
    assert t[0, 1].item() == -1.0
    t[2, 0] = 50.0  # tensor -> array
    t.add_(1.0)
    assert arr[2, 0] == 51.0 and arr[0, 1] == 0.0


def test_asarray_copies_a_numpy_array_when_asked_or_converting(torch):
    arr = np.array([1.5, 2.5])
    for kw in ({"copy": True}, {"dtype": tl.float32}):
        t = tl.asarray(arr, **kw)
        t[0] = 0.0
        assert arr[0] == 1.5
    assert_like_torch(tl.asarray(arr, dtype=tl.float32), torch.asarray(arr, dtype=torch.float32))


def test_asarray_of_a_numpy_array_requiring_grad_still_shares(torch):
    arr = np.arange(3.0)
    t = tl.asarray(arr, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    arr[0] = 9.0
    assert t.detach().tolist()[0] == 9.0
    assert torch.asarray(np.arange(3.0), requires_grad=True).requires_grad


def test_asarray_reads_a_buffer_in_the_dtype_asked_for(torch):
    buf = array.array("f", [1.0, 2.0, 3.0])
    t = tl.asarray(buf)  # default float dtype: float32, the buffer's own here
    assert_like_torch(t, torch.asarray(array.array("f", [1.0, 2.0, 3.0])))
    buf[0] = 5.0
    t[2] = -1.0
    assert t.tolist() == [5.0, 2.0, -1.0] and buf.tolist() == [5.0, 2.0, -1.0]
    raw = bytearray(range(8))
    assert_like_torch(tl.asarray(raw, dtype=tl.int32), torch.asarray(bytearray(range(8)), dtype=torch.int32))
    assert_like_torch(tl.asarray(array.array("d", [1.0, 2.0])), torch.asarray(array.array("d", [1.0, 2.0])))


@pytest.mark.parametrize("data", [[1, 2, 3], [1.5, 2], [[True, False]], 3.5, 7, np.float32(2.0), np.int16(3)],
                         ids=repr)
def test_asarray_of_python_data_infers_as_tensor_does(torch, data):
    assert_like_torch(tl.asarray(data), torch.asarray(data))


def test_asarray_follows_the_default_dtype_and_device_for_python_data():
    tl.set_default_dtype(tl.float64)
    try:
        assert tl.asarray([1.5]).dtype is tl.float64 and tl.asarray(bytearray(16)).dtype is tl.float64
    finally:
        tl.set_default_dtype(tl.float32)


def test_asarray_of_a_numpy_array_on_another_device_copies(other_device):
    arr = np.arange(3.0)
    t = tl.asarray(arr, device=other_device)
    assert t.device == tl.device(other_device)
    arr[0] = 9.0
    assert host(t).tolist() == [0.0, 1.0, 2.0]


def test_asarray_requires_grad_of_python_data(torch):
    assert tl.asarray([1.0, 2.0], requires_grad=True).requires_grad
    assert torch.asarray([1.0, 2.0], requires_grad=True).requires_grad


# ================================================================ frombuffer

def test_frombuffer_writes_through_both_ways(torch):
    buf = bytearray(range(8))
    t = tl.frombuffer(buf, dtype=tl.int32)
    assert_like_torch(t, torch.frombuffer(bytearray(range(8)), dtype=torch.int32))
    buf[0] = 100  # buffer -> tensor
    assert t[0].item() == 100 + (1 << 8) + (2 << 16) + (3 << 24)
    t[1] = -1  # tensor -> buffer
    assert buf[4:] == b"\xff\xff\xff\xff"


@pytest.mark.parametrize("count, offset", [(-1, 0), (-1, 2), (1, 0), (3, 2), (6, 2), (1, 7)])
def test_frombuffer_count_and_offset_match_pytorch(torch, count, offset):
    got = tl.frombuffer(bytearray(range(8)), dtype=tl.uint8, count=count, offset=offset)
    assert_like_torch(got, torch.frombuffer(bytearray(range(8)), dtype=torch.uint8, count=count, offset=offset))


def test_frombuffer_of_an_array_and_numpy_memory(torch):
    buf = array.array("d", [1.0, 2.0, 3.0])
    t = tl.frombuffer(buf, dtype=tl.float64, offset=8)
    assert_like_torch(t, torch.frombuffer(array.array("d", [1.0, 2.0, 3.0]), dtype=torch.float64, offset=8))
    buf[2] = 30.0
    assert t.tolist() == [2.0, 30.0]
    grid = np.arange(4, dtype=np.int16).reshape(2, 2)  # contiguous memory of any shape: read flat
    flat = tl.frombuffer(grid, dtype=tl.int16)
    assert flat.tolist() == [0, 1, 2, 3]
    flat[3] = 9
    assert grid[1, 1] == 9


def test_frombuffer_requires_grad(torch):
    t = tl.frombuffer(bytearray(8), dtype=tl.float32, requires_grad=True)
    assert t.requires_grad and t.is_leaf and tuple(t.shape) == (2,)


def test_frombuffer_warns_on_a_read_only_buffer():
    # PyTorch warns too, once a program (so it is not asked here: an earlier test may have used its warning)
    with pytest.warns(UserWarning, match="not writable"):
        t = tl.frombuffer(b"abcd", dtype=tl.uint8)
    assert t.tolist() == [97, 98, 99, 100]
    with pytest.raises(RuntimeError, match="read-only"):  # deviation: PyTorch lets the write through
        t[0] = 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tl.frombuffer(bytearray(b"abcd"), dtype=tl.uint8)  # writable: no warning


# ================================================================ errors

BAD = {
    "asarray: copy=False to another dtype (tensor)": (
        lambda m: m.asarray(m.tensor([1.0]), dtype=m.float64, copy=False), ValueError,
        r"can't alias tensor with dtype 'float32' into dtype 'float64'"),
    "asarray: copy=False to another dtype (NumPy)": (
        lambda m: m.asarray(np.arange(3.0), dtype=m.float32, copy=False), ValueError, r"can't alias tensor with dtype"),
    "asarray: copy=False of a list": (lambda m: m.asarray([1.0, 2.0], copy=False), ValueError,
                                      r"can't alias arbitrary sequence"),
    "asarray: copy=False of a NumPy scalar": (lambda m: m.asarray(np.float64(1.0), copy=False), RuntimeError,
                                              r"can't alias NumPy scalars"),
    "asarray: requires_grad on integers": (lambda m: m.asarray([1, 2], requires_grad=True), RuntimeError,
                                           r"(?i)only Tensors of floating point"),
    "asarray: a buffer not a multiple of the element": (lambda m: m.asarray(bytearray(6)), ValueError,
                                                        r"must be a multiple of element size \(4\)"),
    "asarray: a string": (lambda m: m.asarray("abc"), TypeError, r"invalid data type 'str'"),
    "frombuffer: not a buffer": (lambda m: m.frombuffer([1, 2], dtype=m.uint8), ValueError,
                                 r"does not implement Python buffer protocol"),
    "frombuffer: no dtype": (lambda m: m.frombuffer(bytearray(4)), TypeError, r"dtype"),
    "frombuffer: dtype None": (lambda m: m.frombuffer(bytearray(4), dtype=None), TypeError,
                               r"argument 'dtype' must be"),
    "frombuffer: negative offset": (lambda m: m.frombuffer(bytearray(8), dtype=m.uint8, offset=-1), ValueError,
                                    r"offset \(-1 bytes\) must be non-negative and no greater than buffer length"),
    "frombuffer: offset at the end": (lambda m: m.frombuffer(bytearray(8), dtype=m.uint8, offset=8), ValueError,
                                      r"offset \(8 bytes\) must be non-negative"),
    "frombuffer: float offset": (lambda m: m.frombuffer(bytearray(8), dtype=m.uint8, offset=1.0), TypeError,
                                 r"'offset' must be int"),
    "frombuffer: float count": (lambda m: m.frombuffer(bytearray(8), dtype=m.uint8, count=2.0), TypeError,
                                r"'count' must be int"),
    "frombuffer: count 0": (lambda m: m.frombuffer(bytearray(8), dtype=m.uint8, count=0), ValueError,
                            r"both buffer length \(8\) and count \(0\) must not be 0"),
    "frombuffer: empty buffer": (lambda m: m.frombuffer(bytearray(), dtype=m.uint8), ValueError,
                                 r"both buffer length \(0\)"),
    "frombuffer: count too large": (lambda m: m.frombuffer(bytearray(8), dtype=m.int32, count=3), ValueError,
                                    r"requested buffer length \(3 \* 4 bytes\) after offset \(0 bytes\) must not be "
                                    r"greater than actual buffer length \(8 bytes\)"),
    "frombuffer: rest not a multiple": (lambda m: m.frombuffer(bytearray(8), dtype=m.int32, offset=1), ValueError,
                                        r"buffer length \(7 bytes\) after offset \(1 bytes\) must be a multiple"),
    "frombuffer: non-contiguous memory": (lambda m: m.frombuffer(np.arange(4, dtype=np.int16)[::2], dtype=m.int16),
                                          RuntimeError, r"could not retrieve buffer from object"),
    "frombuffer: requires_grad on integers": (
        lambda m: m.frombuffer(bytearray(8), dtype=m.int32, requires_grad=True), RuntimeError,
        r"(?i)only Tensors of floating point"),
}

test_bad_input_raises, test_pytorch_raises_the_same_type = bad_input_tests(BAD)
