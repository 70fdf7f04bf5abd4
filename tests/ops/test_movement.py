"""Movement semantics the op table does not cover: split/chunk piece sizes, cat's dtype
promotion, views sharing memory, and the errors of stack/cat/expand/view/reshape/
permute/t. Checked against PyTorch (skipped without it) or by hand."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl

from .op_table import TL, check_against_torch, error_of, torch_lib

# ---------------------------------------------------------------- split / chunk piece sizes

PIECES = {
    "chunk(3) of 5": lambda m: m.arange(5).chunk(3),
    "chunk(4) of 5": lambda m: m.arange(5).chunk(4),
    "chunk(6) of 5": lambda m: m.arange(5).chunk(6),
    "chunk(2) of 6": lambda m: m.arange(6).chunk(2),
    "chunk(4) of 6": lambda m: m.arange(6).chunk(4),
    "chunk(1) of 3": lambda m: m.arange(3).chunk(1),
    "chunk(3) of 0": lambda m: m.zeros(0).chunk(3),
    "chunk(3, dim=1) of 2x7": lambda m: m.arange(14).reshape(2, 7).chunk(3, dim=1),
    "chunk(2, dim=-1) of 3x1": lambda m: m.arange(3).reshape(3, 1).chunk(2, dim=-1),
    "split(2) of 5": lambda m: m.arange(5).split(2),
    "split(5) of 5": lambda m: m.arange(5).split(5),
    "split(7) of 5": lambda m: m.arange(5).split(7),
    "split(1) of 3": lambda m: m.arange(3).split(1),
    "split([1, 4])": lambda m: m.arange(5).split([1, 4]),
    "split([0, 5, 0])": lambda m: m.arange(5).split([0, 5, 0]),
    "split([5])": lambda m: m.arange(5).split([5]),
    "split(2, dim=1) of 3x5": lambda m: m.arange(15).reshape(3, 5).split(2, dim=1),
    "split(2) of 0": lambda m: m.zeros(0).split(2),
    "torch.split function": lambda m: m.split(m.arange(5), 2),
    "torch.chunk function": lambda m: m.chunk(m.arange(5), 3),
    "unbind(1)": lambda m: m.arange(6).reshape(2, 3).unbind(1),
    "unbind(-1) of 2x3x1": lambda m: m.arange(6).reshape(2, 3, 1).unbind(-1),
    "unbind(0) of 0x3": lambda m: m.zeros(0, 3).unbind(0),
    "torch.unbind function": lambda m: m.unbind(m.arange(6).reshape(3, 2), 1),
}


@pytest.mark.parametrize("case", PIECES.values(), ids=PIECES.keys())
def test_split_and_chunk_pieces_match_pytorch(case, torch):
    got, want = case(TL), case(torch_lib())
    assert [tuple(p.shape) for p in got] == [tuple(p.shape) for p in want]
    check_against_torch(case)


def test_chunk_sizes_by_hand():
    assert [len(p) for p in tl.arange(5).chunk(3)] == [2, 2, 1]
    assert [len(p) for p in tl.arange(5).chunk(4)] == [2, 2, 1]  # ceil(5/4) = 2 per chunk: only 3 chunks
    assert [len(p) for p in tl.arange(5).split(2)] == [2, 2, 1]


def test_split_sizes_must_sum_like_pytorch(torch):
    ref = error_of(lambda: torch.arange(5).split([1, 2]))
    assert ref is not None
    with pytest.raises(type(ref), match="sum"):
        tl.arange(5).split([1, 2])


# ---------------------------------------------------------------- cat / stack dtypes and shapes

CAT = {
    "cat int64 + float32 -> float32": lambda m: m.cat([m.tensor([1, 2]), m.tensor([0.5])]),
    "cat int32 + int64 -> int64": lambda m: m.cat([m.tensor([1], dtype=m.int32), m.tensor([2, 3])]),
    "cat float16 + float64 -> float64": lambda m: m.cat([m.tensor([1.5], dtype=m.float16),
                                                         m.tensor([2.5], dtype=m.float64)]),
    "cat bool + int64 -> int64": lambda m: m.cat([m.tensor([True, False]), m.tensor([7])]),
    "cat uint8 + int32 -> int32": lambda m: m.cat([m.tensor([200], dtype=m.uint8), m.tensor([-1], dtype=m.int32)]),
    "cat skips legacy empty (0,) tensors": lambda m: m.cat([m.ones(2, 3), m.zeros(0), m.ones(1, 3)]),
    "cat of one tensor": lambda m: m.cat([m.arange(3)]),
    "cat along dim=-1": lambda m: m.cat([m.ones(2, 1), m.zeros(2, 2)], dim=-1),
    "stack int64 + float32 -> float32": lambda m: m.stack([m.tensor([1, 2]), m.tensor([0.5, 1.5])]),
    "stack 0-d tensors": lambda m: m.stack([m.tensor(1.0), m.tensor(2.0)]),
    "stack dim=-1": lambda m: m.stack([m.ones(2, 3), m.zeros(2, 3)], dim=-1),
    "concat alias": lambda m: m.concat([m.ones(1), m.zeros(1)]),
}


@pytest.mark.parametrize("case", CAT.values(), ids=CAT.keys())
def test_cat_and_stack_match_pytorch(case, torch):
    check_against_torch(case, rtol=1e-6, atol=0)


def test_cat_promotes_by_hand():
    out = tl.cat([tl.tensor([1, 2]), tl.tensor([0.5])])
    assert out.dtype is tl.float32
    assert out.tolist() == [1.0, 2.0, 0.5]


def test_cat_gradient_reaches_promoted_inputs(torch):
    """The float64 part of a promoted cat gets its gradient back in float64."""
    def run(m):
        a = m.tensor([1.0, 2.0], dtype=m.float32, requires_grad=True)
        b = m.tensor([3.0], dtype=m.float64, requires_grad=True)
        out = m.cat([a, b])
        (out * m.tensor([1.0, 2.0, 3.0], dtype=m.float64)).sum().backward()
        return out, a.grad, b.grad

    check_against_torch(run)


# ---------------------------------------------------------------- errors like PyTorch's

ERRORS = {
    "stack of different shapes": (lambda m: m.stack([m.ones(2, 3), m.ones(3, 2)]), "stack expects each tensor"),
    "stack of nothing": (lambda m: m.stack([]), "stack expects a non-empty TensorList"),
    "cat with mismatched sizes": (lambda m: m.cat([m.ones(2, 3), m.ones(2, 4)]),
                                  "Sizes of tensors must match except in dimension 0"),
    "cat with different ndim": (lambda m: m.cat([m.ones(2, 3), m.ones(3)]), "same number of dimensions"),
    "cat of nothing": (lambda m: m.cat([]), "non-empty"),
    "cat dim out of range": (lambda m: m.cat([m.ones(2), m.ones(2)], dim=1), "Dimension out of range"),
    "expand to a smaller size": (lambda m: m.ones(3).expand(2), "must match the existing size"),
    "expand a non-singleton dim": (lambda m: m.ones(2, 3).expand(2, 4), r"expanded size of the tensor \(4\)"),
    "expand to fewer dims": (lambda m: m.ones(2, 3).expand(3), "number of sizes provided"),
    "view on a transposed tensor": (lambda m: m.ones(2, 3).t().view(6), "reshape"),
    "view to the wrong size": (lambda m: m.ones(2, 3).view(4, 2), r"shape '\[4, 2\]' is invalid for input of size 6"),
    "reshape with two -1": (lambda m: m.ones(2, 3).reshape(-1, -1), "only one dimension can be inferred"),
    "reshape to the wrong size": (lambda m: m.ones(2, 3).reshape(5), r"shape '\[5\]' is invalid for input of size 6"),
    "t() of a 3-d tensor": (lambda m: m.ones(2, 3, 4).t(), "2 dimensions"),
    "permute with too few dims": (lambda m: m.ones(2, 3, 4).permute(1, 0), "number of dimensions"),
    "permute with a repeated dim": (lambda m: m.ones(2, 3).permute(1, 1), "repeated dim|duplicate"),
    "squeeze dim out of range": (lambda m: m.ones(2, 1).squeeze(2), "Dimension out of range"),
    "unsqueeze dim out of range": (lambda m: m.ones(2).unsqueeze(3), "Dimension out of range"),
    "flatten start after end": (lambda m: m.ones(2, 3, 4).flatten(2, 1), "start_dim"),
    "chunk into 0": (lambda m: m.ones(4).chunk(0), "chunk"),
    "split size 0": (lambda m: m.ones(4).split(0), "split"),
}


@pytest.mark.parametrize("fn, message", ERRORS.values(), ids=ERRORS.keys())
def test_errors_like_pytorch(fn, message, torch):
    """Same exception type as PyTorch, and a message saying what is wrong."""
    ref = error_of(lambda: fn(torch_lib()))
    assert ref is not None, "PyTorch accepts this; the case is wrong"
    with pytest.raises(type(ref), match=message):
        fn(TL)


def test_view_error_suggests_reshape_and_reshape_works():
    x = tl.arange(6.0).reshape(2, 3).t()
    assert not x.is_contiguous()
    with pytest.raises(RuntimeError, match=r"reshape"):
        x.view(6)
    assert x.reshape(6).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert x.contiguous().view(6).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]


STRIDED_RESHAPES = {  # (the tensor, the new shape): views where PyTorch's strides allow one, copies elsewhere
    "every other column, merged": (lambda m: m.arange(24.0).reshape(2, 3, 4)[..., ::2], (12,)),
    "every other column, rows merged": (lambda m: m.arange(24.0).reshape(2, 3, 4)[..., ::2], (6, 2)),
    "first columns, rows merged": (lambda m: m.arange(24.0).reshape(2, 3, 4)[:, :, :2], (6, 2)),
    "first columns, flattened": (lambda m: m.arange(24.0).reshape(2, 3, 4)[:, :, :2], (12,)),
    "transpose, flattened": (lambda m: m.arange(6.0).reshape(2, 3).t(), (6,)),
    "transpose, split": (lambda m: m.arange(6.0).reshape(2, 3).t(), (3, 2, 1)),
}


@pytest.mark.parametrize("make, shape", STRIDED_RESHAPES.values(), ids=STRIDED_RESHAPES.keys())
def test_reshape_and_view_of_strided_tensors_as_pytorch(make, shape, torch):
    """reshape of a non-contiguous tensor is a view where the strides allow one and a copy elsewhere, and view
    refuses exactly where reshape copies, as in PyTorch; a copy is no view (it may be changed in place while
    recording) and both carry the gradient back."""
    def run(lib):
        x = make(lib).detach().requires_grad_()  # a strided leaf
        out = x.reshape(shape)
        viewed = out._base is not None
        if not viewed:
            with pytest.raises(RuntimeError, match="reshape"):
                x.view(shape)
            out.mul_(2)  # a copy: changed in place while recording (a view of a leaf would be refused)
        else:
            assert x.view(shape).tolist() == out.tolist()
        (out * lib.arange(float(out.numel())).reshape(shape)).sum().backward()
        return viewed, out.tolist(), x.grad.tolist()

    assert run(tl) == run(torch)


# ---------------------------------------------------------------- views and contiguity

CONTIGUITY = {
    "transpose": lambda x: x.transpose(0, 1),
    "permute": lambda x: x.permute(2, 0, 1),
    "expand": lambda x: x[:, :1].expand(2, 5, 4),
    "basic slice with a step": lambda x: x[:, ::2],
    "reshape": lambda x: x.reshape(6, 4),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "contiguous of a transpose": lambda x: x.transpose(0, 2).contiguous(),
}


@pytest.mark.parametrize("op", CONTIGUITY.values(), ids=CONTIGUITY.keys())
def test_is_contiguous_matches_pytorch(op, torch):
    assert op(tl.ones(2, 3, 4)).is_contiguous() == op(torch.ones(2, 3, 4)).is_contiguous()


VIEWS = {
    "view": lambda x: x.view(3, 2),
    "reshape of contiguous": lambda x: x.reshape(6),
    "transpose": lambda x: x.t(),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "basic index": lambda x: x[1],
    "expand": lambda x: x[:1].expand(4, 3),
    "split piece": lambda x: x.split(1)[1],
}


@pytest.mark.parametrize("op", VIEWS.values(), ids=VIEWS.keys())
def test_views_share_memory_with_their_base(op, torch):
    """An in-place write to the base shows through the view, as in PyTorch."""
    def run(m):
        base = m.zeros(2, 3)
        view = op(base)
        base.add_(1.0)
        return view

    check_against_torch(run)


# ---------------------------------------------------------------- odd shapes

ODD_SHAPES = {
    "flatten of 0-d": lambda m: m.tensor(3.0).flatten(),
    "squeeze of 0-d": lambda m: m.tensor(3.0).squeeze(),
    "unsqueeze(-1) of 0-d": lambda m: m.tensor(3.0).unsqueeze(-1),
    "reshape 0-d to (1, 1)": lambda m: m.tensor(3.0).reshape(1, 1),
    "reshape (1, 1) to ()": lambda m: m.ones(1, 1).reshape(()),
    "reshape with -1 and 0 elements": lambda m: m.zeros(0, 3).reshape(-1, 3),
    "t of 1-d": lambda m: m.arange(3).t(),
    "T of 2-d": lambda m: m.arange(6).reshape(2, 3).T,
    "mT of 3-d": lambda m: m.arange(24).reshape(2, 3, 4).mT,
    "expand with -1": lambda m: m.arange(3).reshape(3, 1).expand(-1, 4),
    "expand adds leading dims": lambda m: m.arange(3).expand(2, 2, 3),
    "squeeze a tuple of dims": lambda m: m.ones(1, 2, 1, 1).squeeze((0, 2)),
    "squeeze a non-1 dim is a no-op": lambda m: m.ones(2, 3).squeeze(0),
    "flip of several dims": lambda m: m.arange(24).reshape(2, 3, 4).flip((0, 2)),
    "swapaxes alias": lambda m: m.arange(6).reshape(2, 3).swapaxes(0, 1),
    "view_as / expand_as": lambda m: (m.arange(6).view_as(m.ones(3, 2)), m.ones(3, 1).expand_as(m.ones(3, 4))),
}


@pytest.mark.parametrize("case", ODD_SHAPES.values(), ids=ODD_SHAPES.keys())
def test_odd_shapes_match_pytorch(case, torch):
    check_against_torch(case)


PAD = {
    "last dim": lambda m: m.pad(m.arange(6.0).reshape(2, 3), (1, 2)),
    "last two dims, value": lambda m: m.pad(m.arange(6.0).reshape(2, 3), (1, 0, 0, 2), value=-1.0),
    "all dims of 3-d": lambda m: m.pad(m.arange(8.0).reshape(2, 2, 2), (1, 1, 0, 1, 2, 0)),
    "zero padding": lambda m: m.pad(m.arange(3.0), (0, 0)),
    "int tensor": lambda m: m.pad(m.arange(3), (1, 1), value=7),
}


@pytest.mark.parametrize("case", PAD.values(), ids=PAD.keys())
def test_pad_matches_pytorch(case, torch):
    check_against_torch(case)


def test_pad_with_odd_length_raises_like_pytorch(torch):
    ref = error_of(lambda: torch_lib().pad(torch.ones(2, 3), (1, 2, 3)))
    assert ref is not None
    with pytest.raises(type(ref)):
        TL.pad(tl.ones(2, 3), (1, 2, 3))


def test_pad_by_hand():
    out = TL.pad(tl.tensor([[1.0, 2.0]]), (1, 0, 0, 1), value=9.0)
    assert out.tolist() == [[9.0, 1.0, 2.0], [9.0, 9.0, 9.0]]
    np.testing.assert_array_equal(out.numpy().shape, (2, 3))


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_matches_pytorch(torch, indexing):
    def run(m):
        a, b, c = m.tensor([1.0, 2.0, 3.0], requires_grad=True), m.tensor([4.0, 5.0], requires_grad=True), m.tensor(7.0)
        grids = m.meshgrid(a, b, c, indexing=indexing)
        sum((g * (k + 1.0)).sum() for k, g in enumerate(grids)).backward()
        return [g.detach().numpy() for g in grids] + [a.grad.numpy(), b.grad.numpy()]
    for ours, theirs in zip(run(tl), run(torch)):
        np.testing.assert_array_equal(ours, theirs)
    X, Y = tl.meshgrid([tl.arange(3), tl.arange(2)], indexing="xy")  # one list, as for plotting: (rows, columns)
    assert X.shape == Y.shape == (2, 3) and X[1].tolist() == [0, 1, 2] and Y[:, 0].tolist() == [0, 1]


def test_meshgrid_warns_and_refuses_as_pytorch(torch):
    for lib in (tl, torch):
        with pytest.warns(UserWarning, match="indexing argument"):
            lib.meshgrid(lib.ones(2), lib.ones(3))
        with pytest.raises(RuntimeError, match="indexing must be one of"):
            lib.meshgrid(lib.ones(2), indexing="yx")
        with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor"):
            lib.meshgrid(lib.ones(2, 2), indexing="ij")


# ---------------------------------------------------------------- atleast_1d/2d/3d: one tensor, several, or a list

ATLEAST_CALLS = {
    "one tensor": lambda f, ts: f(ts[0]),
    "separate tensors": lambda f, ts: f(*ts),
    "a list": lambda f, ts: f(list(ts)),
    "a tuple of one": lambda f, ts: f((ts[1],)),
}


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("call", ATLEAST_CALLS.values(), ids=ATLEAST_CALLS.keys())
def test_atleast_nd_forms_match_pytorch(name, call, torch):
    arrays = (np.float64(2.0), np.arange(3.0), np.ones((2, 3)), np.ones((1, 2, 3, 1)))
    check_against_torch(lambda m: call(getattr(m, name), [m.tensor(a) for a in arrays]))


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
def test_atleast_nd_of_a_list_gives_numpys_shapes(name):
    arrays = (np.float64(2.0), np.arange(3.0), np.ones((2, 3)))
    got = getattr(tl, name)([tl.tensor(a) for a in arrays])
    assert isinstance(got, tuple) and isinstance(getattr(tl, name)(tl.tensor(arrays[1])), tl.Tensor)
    assert [tuple(g.shape) for g in got] == [getattr(np, name)(a).shape for a in arrays]


# ---------------------------------------------------------------- diagonal: a view, as in PyTorch

DIAGONALS = {
    "main": (lambda m: m.diagonal(), [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]),
    "offset 1": (lambda m: m.diagonal(1), [[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]),
    "offset -1": (lambda m: tl.diagonal(m, -1), [[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0]]),
    "dims swapped": (lambda m: m.diagonal(0, 1, 0), [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]),
    "linalg.diagonal": (lambda m: tl.linalg.diagonal(m), [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]),
}


@pytest.mark.parametrize("take, expected", DIAGONALS.values(), ids=DIAGONALS.keys())
def test_diagonal_is_a_view_that_writes_through(take, expected, device):
    """K.diagonal().add_(eps), the usual jitter on a covariance, must change K (a copy made it a no-op)."""
    m = tl.zeros(3, 4, device=device)
    d = take(m)
    d.add_(1.0)
    assert m.tolist() == expected
    m.mul_(3.0)
    assert d.tolist() == [3.0] * d.shape[0]


def test_the_diagonal_of_a_read_only_array_stays_read_only():
    """from_numpy shares a read-only array read-only: writing into its diagonal is refused with the
    same error as writing into the tensor, not done behind the array owner's back."""
    a = np.zeros((2, 2), dtype=np.float32)
    a.setflags(write=False)
    with pytest.raises(RuntimeError, match="read-only"):
        tl.from_numpy(a).diagonal().add_(1.0)
    assert not a.any()


def test_diag_of_a_matrix_is_a_copy_as_in_pytorch():
    m = tl.zeros(3, 3)
    d = tl.diag(m)
    d.add_(1.0)
    assert m.sum().item() == 0.0 and d.tolist() == [1.0, 1.0, 1.0]
    x = tl.ones(3, 3, requires_grad=True)
    (tl.diag(x, 1) * tl.tensor([2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [[0.0, 2.0, 0.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]]


# ---------------------------------------------------------------- ops whose result is a new tensor, never x's memory

NEW_TENSORS = {  # NumPy's flip and rot90 are views, and cat of one tensor was x itself: writes went into x
    "flip": lambda m: m.flip(0),
    "flip two dims": lambda m: tl.flip(m, (0, 1)),
    "fliplr": lambda m: tl.fliplr(m),
    "flipud": lambda m: tl.flipud(m),
    "rot90": lambda m: tl.rot90(m, 1, (0, 1)),
    "rot90 twice": lambda m: tl.rot90(m, 2, (0, 1)),
    "rot90 -1": lambda m: tl.rot90(m, -1, (0, 1)),
    "cat of one": lambda m: tl.cat([m]),
    "cat with a legacy empty": lambda m: tl.cat([m, tl.zeros(0)]),
    "hstack of one": lambda m: tl.hstack([m]),
    "vstack of one": lambda m: tl.vstack([m]),
    "diag": lambda m: tl.diag(m),
}


@pytest.mark.parametrize("make", NEW_TENSORS.values(), ids=NEW_TENSORS.keys())
def test_a_copying_op_gives_memory_of_its_own(make, device):
    m = tl.arange(12.0, device=device).reshape(3, 4)
    out = make(m)
    out.add_(100.0)
    assert m.flatten().tolist() == [float(i) for i in range(12)]
    assert m._version == 0  # nor shares its version counter (a view's add_ would count for m too)


def test_reshapes_in_place_decides_as_numpy():
    """Whether a reshape can be a view is decided from shape and strides alone (no trial reshape); on random
    strided arrays (slices with steps, transposes, size-1 dims) and random target shapes it agrees with whether
    NumPy's own reshape shares memory."""
    from tinygrad_lab.ops.shapes import reshapes_in_place
    rng = np.random.default_rng(0)
    for _ in range(2000):
        dims = [int(d) for d in rng.choice([1, 2, 3, 4, 6], rng.integers(1, 5))]
        a = np.zeros([2 * d for d in dims], np.float32)[tuple(slice(None, None, 2) if rng.random() < 0.5
                                                              else slice(0, d) for d in dims)]
        a = a[tuple(slice(0, d) for d in dims)].transpose(rng.permutation(len(dims)))
        target, rest = [], a.size
        while rest > 1:
            f = int(rng.choice([d for d in range(2, rest + 1) if rest % d == 0]))
            target, rest = target + [f] + ([1] if rng.random() < 0.2 else []), rest // f
        target = tuple(rng.permutation(target)) if target else (1,)
        assert reshapes_in_place(a.shape, a.strides, target) == np.shares_memory(a.reshape(target), a), \
            (a.shape, a.strides, target)
