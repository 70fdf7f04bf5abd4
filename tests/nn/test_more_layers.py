"""More layers and functions against PyTorch and against independent truths: cosine similarity and pairwise
distance (broadcast inputs), the in-place activation functions, max unpooling, local response norm, channel
shuffle, Gumbel-softmax, RReLU, pdist, LazyLinear and nn.Buffer. Comparisons with PyTorch use the `torch`
fixture (it skips without torch); the independent checks run everywhere."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn
from tinygrad_lab.autograd import gradcheck
from tinygrad_lab.nn import functional as F

from ._pairs import build_pair, compare, randn


def _leaf(a: np.ndarray):
    return tl.tensor(a, requires_grad=True)


# ------------------------------------------------------------------ cosine similarity and pairwise distance

@pytest.mark.parametrize("s1,s2,dim", [((1, 2, 3), (2, 1, 3), -1), ((1, 2, 3), (2, 1, 3), -2), ((2, 3), (2, 1, 3), -1),
                                       ((4, 1), (1, 5), 0), ((3, 4), (3, 4), 1), ((5,), (5,), 0), ((), (), 0)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cosine_similarity_broadcasts_like_pytorch(torch, s1, s2, dim, dtype):
    compare(torch, lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b, dim=dim),
            [randn(*s1, seed=1), randn(*s2, seed=2)], dtype)


def test_cosine_similarity_eps_and_zero_vectors(torch):
    x, y = randn(4, 3, seed=3), randn(4, 3, seed=4)
    x[1] = 0.0  # a zero vector: its norm is raised to eps, and the norm's gradient there is 0
    y[2] *= 1e-3
    compare(torch, lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b, dim=1, eps=0.5), [x, y])
    compare(torch, lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b), [x, y])


def test_cosine_similarity_independent_truth():
    a = tl.tensor([[1.0, 0.0], [1.0, 1.0]], dtype=tl.float64)
    b = tl.tensor([[0.0, 2.0], [3.0, 3.0]], dtype=tl.float64)
    np.testing.assert_allclose(F.cosine_similarity(a, b).numpy(), [0.0, 1.0], atol=1e-15)
    # (2, 1, 2) against (1, 2, 2): every pair of rows; each norm is taken over the broadcast vectors
    got = F.cosine_similarity(a.unsqueeze(1), b.unsqueeze(0), dim=-1).numpy()
    np.testing.assert_allclose(got, [[0.0, 1 / math.sqrt(2)], [1 / math.sqrt(2), 1.0]], atol=1e-15)


def test_cosine_similarity_refuses_bad_inputs():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(2\) at "
                                           r"non-singleton dimension 0"):
        F.cosine_similarity(tl.randn(3, 4), tl.randn(2, 4))
    with pytest.raises(RuntimeError, match="expected common dtype to be floating point, yet common dtype is Long"):
        F.cosine_similarity(tl.ones(3, 4, dtype=tl.int64), tl.ones(3, 4, dtype=tl.int64))
    with pytest.raises(IndexError):
        F.cosine_similarity(tl.randn(3, 4), tl.randn(3, 4), dim=2)


@pytest.mark.parametrize("make,shapes", [
    (lambda nn: nn.CosineSimilarity(), [(3, 4), (3, 4)]),
    (lambda nn: nn.CosineSimilarity(dim=-1, eps=0.1), [(2, 1, 5), (1, 3, 5)]),
    (lambda nn: nn.PairwiseDistance(), [(3, 4), (3, 4)]),
    (lambda nn: nn.PairwiseDistance(p=1.0, eps=1e-3, keepdim=True), [(3, 4), (1, 4)]),
    (lambda nn: nn.PairwiseDistance(p=3.0), [(5,), (5,)]),
])
def test_distance_modules_match_pytorch(torch, make, shapes):
    ours, theirs = build_pair(torch, make)
    assert repr(ours) == repr(theirs)
    compare(torch, lambda lib, a, b: (ours if lib is tl else theirs)(a, b),
            [randn(*s, seed=i) for i, s in enumerate(shapes)])


def test_distance_modules_keep_their_arguments():
    m = nn.PairwiseDistance(1.5, 1e-4, True)
    assert (m.norm, m.eps, m.keepdim) == (1.5, 1e-4, True)
    c = nn.CosineSimilarity(2, 0.5)
    assert (c.dim, c.eps) == (2, 0.5)


# ------------------------------------------------------------------ in-place functional activations

INPLACE = [("relu_", (), {}), ("elu_", (0.5,), {}), ("celu_", (), {"alpha": 2.0}), ("selu_", (), {}),
           ("leaky_relu_", (0.2,), {}), ("hardtanh_", (-0.5, 0.5), {}), ("threshold_", (0.1, -3.0), {}),
           ("rrelu_", (0.1, 0.3), {})]


@pytest.mark.parametrize("name,args,kwargs", INPLACE)
def test_inplace_functions_match_pytorch_and_bump_the_version(torch, name, args, kwargs):
    a = randn(3, 4, seed=5)
    x, t = tl.tensor(a), torch.tensor(a)
    v0 = x._version
    out = getattr(F, name)(x, *args, **kwargs)
    getattr(torch.nn.functional, name)(t, *args, **kwargs)
    assert out is x
    assert x._version == v0 + 1
    np.testing.assert_allclose(x.numpy(), t.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name,args,kwargs", INPLACE)
def test_inplace_functions_inside_a_graph_match_pytorch(torch, name, args, kwargs):
    def run(lib, x):
        y = x * 2.0  # not a leaf: an in-place op may overwrite it
        getattr(lib.nn.functional, name)(y, *args, **kwargs)
        return y
    compare(torch, run, [randn(3, 4, seed=6)])


@pytest.mark.parametrize("name,args,kwargs", INPLACE)
def test_inplace_functions_refuse_a_leaf_that_requires_grad(torch, name, args, kwargs):
    msg = "a leaf Variable that requires grad is being used in an in-place operation"
    with pytest.raises(RuntimeError, match=msg):
        getattr(F, name)(tl.randn(3, requires_grad=True), *args, **kwargs)
    with pytest.raises(RuntimeError, match=msg):
        getattr(torch.nn.functional, name)(torch.randn(3, requires_grad=True), *args, **kwargs)


def test_inplace_function_writes_through_a_view():
    base = tl.tensor([[-1.0, 2.0], [3.0, -4.0]])
    F.relu_(base[1])
    np.testing.assert_array_equal(base.numpy(), [[-1.0, 2.0], [3.0, 0.0]])


# ------------------------------------------------------------------ max pooling with indices and max unpooling

def test_max_pool_with_indices_aliases_always_return_indices(torch):
    a = randn(2, 3, 6, 5, seed=7)
    out, idx = F.max_pool2d_with_indices(tl.tensor(a), 2, return_indices=False)
    t_out, t_idx = torch.nn.functional.max_pool2d_with_indices(torch.tensor(a), 2)
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())
    np.testing.assert_array_equal(out.numpy(), t_out.numpy())
    out1, idx1 = F.max_pool1d_with_indices(tl.tensor(a[0]), 3, 2, 1)
    t_out1, t_idx1 = torch.nn.functional.max_pool1d_with_indices(torch.tensor(a[0]), 3, 2, 1)
    np.testing.assert_array_equal(idx1.numpy(), t_idx1.numpy())
    np.testing.assert_array_equal(out1.numpy(), t_out1.numpy())


def test_max_unpool2d_inverts_max_pool_on_distinct_values():
    x = np.random.default_rng(8).permutation(2 * 3 * 4 * 6).reshape(2, 3, 4, 6).astype(np.float64)
    pooled, idx = F.max_pool2d(tl.tensor(x), 2, return_indices=True)
    back = F.max_unpool2d(pooled, idx, 2).numpy()
    windows = x.reshape(2, 3, 2, 2, 3, 2)
    is_max = windows == windows.max(axis=(3, 5), keepdims=True)  # distinct values: one max per window
    np.testing.assert_array_equal(back, np.where(is_max, windows, 0.0).reshape(x.shape))
    again, idx2 = F.max_pool2d(tl.tensor(back), 2, return_indices=True)  # pooling the unpooled is the identity
    np.testing.assert_array_equal(again.numpy(), pooled.numpy())
    np.testing.assert_array_equal(idx2.numpy(), idx.numpy())


def test_max_unpool1d_inverts_max_pool_on_distinct_values():
    x = np.array([[[3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0]]])
    pooled, idx = F.max_pool1d(tl.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), [[[0, 2, 5]]])
    back = F.max_unpool1d(pooled, idx, 2, output_size=[7])
    np.testing.assert_array_equal(back.numpy(), [[[3.0, 0.0, 4.0, 0.0, 0.0, 9.0, 0.0]]])


@pytest.mark.parametrize("spatial,shape,kwargs,output_size", [
    (2, (2, 3, 4, 6), {"kernel_size": 2}, None),
    (2, (2, 3, 5, 7), {"kernel_size": 3, "stride": 2, "padding": 1}, (5, 7)),
    (2, (3, 6, 6), {"kernel_size": (2, 3), "stride": (2, 1)}, None),
    (2, (1, 2, 7, 7), {"kernel_size": 3, "stride": 2}, (1, 2, 8, 8)),
    (1, (2, 3, 9), {"kernel_size": 3, "stride": 2, "padding": 1}, None),
    (1, (3, 8), {"kernel_size": 2}, (9,)),
])
def test_max_unpool_matches_pytorch(torch, spatial, shape, kwargs, output_size):
    pool = f"max_pool{spatial}d"
    unpool = f"max_unpool{spatial}d"

    def run(lib, x):
        f = lib.nn.functional
        pooled, idx = getattr(f, pool)(x, return_indices=True, **kwargs)
        return getattr(f, unpool)(pooled, idx, output_size=output_size, **kwargs)
    compare(torch, run, [randn(*shape, seed=9)])


@pytest.mark.parametrize("spatial,kernel,stride,padding,shape", [(1, 2, None, 0, (2, 3, 8)),
                                                                  (2, 2, 1, 0, (2, 2, 4, 5)),
                                                                  (2, (3, 2), 2, (1, 0), (1, 2, 5, 6))])
def test_max_unpool_modules_match_pytorch(torch, spatial, kernel, stride, padding, shape):
    pool, unpool = f"MaxPool{spatial}d", f"MaxUnpool{spatial}d"
    ours, theirs = build_pair(torch, lambda nn: getattr(nn, unpool)(kernel, stride, padding))
    assert repr(ours) == repr(theirs)

    def run(lib, x):
        m = getattr(lib.nn, pool)(kernel, stride, padding, return_indices=True)
        pooled, idx = m(x)
        return (ours if lib is tl else theirs)(pooled, idx, output_size=x.shape)
    compare(torch, run, [randn(*shape, seed=10)])


def test_max_unpool_gradient_by_finite_differences():
    x = _leaf(randn(1, 2, 2, 3, seed=11))
    idx = tl.tensor(np.array([[[[0, 3, 4], [13, 10, 17]], [[6, 1, 2], [12, 15, 11]]]]))
    assert gradcheck(lambda v: F.max_unpool2d(v, idx, 2, output_size=(3, 6)), (x,))
    x1 = _leaf(randn(2, 3, seed=12))
    idx1 = tl.tensor(np.array([[1, 2, 5], [0, 3, 4]]))
    assert gradcheck(lambda v: F.max_unpool1d(v, idx1, 2), (x1,))
    # the gradient reads the upstream gradient back at the indices
    g = tl.arange(36, dtype=tl.float64).reshape(1, 2, 3, 6)
    F.max_unpool2d(x, idx, 2, output_size=(3, 6)).backward(g)
    np.testing.assert_array_equal(x.grad.numpy(), idx.numpy() + np.array([0, 18]).reshape(1, 2, 1, 1))


def test_max_unpool_refuses_bad_arguments():
    x, idx = tl.randn(1, 2, 2, 2), tl.zeros(1, 2, 2, 2, dtype=tl.int64)
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 40 \(output volumes are of size 4x4\)"):
        F.max_unpool2d(x, idx + 40, 2)
    with pytest.raises(RuntimeError, match="Found an invalid max index: -1"):
        F.max_unpool2d(x, idx - 1, 2)
    with pytest.raises(RuntimeError, match="elements in indices should be type int64 but got: Int"):
        F.max_unpool2d(x, idx.int(), 2)
    with pytest.raises(RuntimeError, match="Expected shape of indices to be same as that of the input tensor"):
        F.max_unpool2d(x, tl.zeros(1, 2, 2, 3, dtype=tl.int64), 2)
    with pytest.raises(ValueError, match=r'invalid output_size "\(9, 9\)" \(dim 0 must be between 2 and 6\)'):
        F.max_unpool2d(x, idx, 2, output_size=(9, 9))
    with pytest.raises(ValueError, match="output_size should be a sequence containing 2 or 4 elements"):
        F.max_unpool2d(x, idx, 2, output_size=(1, 4, 4))
    with pytest.raises(RuntimeError, match="max_unpool2d: expected a 3d or 4d input"):
        F.max_unpool2d(tl.randn(2, 2), tl.zeros(2, 2, dtype=tl.int64), 2)
    with pytest.raises(RuntimeError, match="max_unpool1d: expected a 2d or 3d input"):
        nn.MaxUnpool1d(2)(tl.randn(2), tl.zeros(2, dtype=tl.int64))


# ------------------------------------------------------------------ local response norm

def test_local_response_norm_by_hand():
    x = np.array([[[1.0], [2.0], [3.0]]])  # (N=1, C=3, L=1)
    size, alpha, beta, k = 2, 0.5, 1.0, 1.0
    # size 2: channel c averages the squares of channels c - 1 and c (channel -1 is 0)
    expected = [1.0 / (k + alpha * (0 + 1) / 2), 2.0 / (k + alpha * (1 + 4) / 2), 3.0 / (k + alpha * (4 + 9) / 2)]
    got = F.local_response_norm(tl.tensor(x), size, alpha, beta, k).numpy()
    np.testing.assert_allclose(got.ravel(), expected, rtol=1e-15)
    # size 3 is centred: channel c averages c - 1, c and c + 1
    got3 = nn.LocalResponseNorm(3, alpha=0.3, beta=0.5, k=2.0)(tl.tensor(x)).numpy()
    sums = [0 + 1 + 4, 1 + 4 + 9, 4 + 9 + 0]
    np.testing.assert_allclose(got3.ravel(), [v / (2.0 + 0.3 * s / 3) ** 0.5 for v, s in zip([1, 2, 3], sums)],
                               rtol=1e-15)


@pytest.mark.parametrize("shape,size", [((2, 6, 3), 2), ((2, 5, 3, 4), 3), ((1, 4, 2, 3, 2), 5), ((2, 3, 4), 1)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_local_response_norm_matches_pytorch(torch, shape, size, dtype):
    ours, theirs = build_pair(torch, lambda nn: nn.LocalResponseNorm(size, alpha=0.1, beta=0.6, k=1.5), dtype)
    assert repr(ours) == repr(theirs)
    compare(torch, lambda lib, x: (ours if lib is tl else theirs)(x), [randn(*shape, seed=13)], dtype)
    compare(torch, lambda lib, x: lib.nn.functional.local_response_norm(x, size), [randn(*shape, seed=14)], dtype)


def test_local_response_norm_gradient_and_errors():
    assert gradcheck(lambda v: F.local_response_norm(v, 3, alpha=0.5, beta=0.75, k=1.0), (_leaf(randn(2, 4, 3)),))
    with pytest.raises(ValueError, match=r"Expected 3D or higher dimensionality input \(got 2 dimensions\)"):
        F.local_response_norm(tl.randn(3, 4), 2)
    with pytest.raises(RuntimeError, match="size should be greater than zero"):
        nn.LocalResponseNorm(0)(tl.randn(2, 3, 4))
    empty = tl.randn(0, 2, 3)
    assert F.local_response_norm(empty, 2) is empty


# ------------------------------------------------------------------ channel shuffle

def test_channel_shuffle_by_hand():
    x = tl.arange(6, dtype=tl.float64).reshape(1, 6, 1)
    # groups of (0 1 2) and (3 4 5): interleaved as 0 3 1 4 2 5
    np.testing.assert_array_equal(F.channel_shuffle(x, 2).numpy().ravel(), [0, 3, 1, 4, 2, 5])
    np.testing.assert_array_equal(nn.ChannelShuffle(3)(x).numpy().ravel(), [0, 2, 4, 1, 3, 5])


@pytest.mark.parametrize("shape,groups", [((1, 4, 3, 3), 2), ((2, 6, 4), 3), ((2, 8, 2, 2, 2), 4), ((2, 5, 3), 1)])
def test_channel_shuffle_matches_pytorch(torch, shape, groups):
    ours, theirs = build_pair(torch, lambda nn: nn.ChannelShuffle(groups))
    assert repr(ours) == repr(theirs)
    compare(torch, lambda lib, x: (ours if lib is tl else theirs)(x), [randn(*shape, seed=15)])


def test_channel_shuffle_refuses_bad_arguments(torch):
    cases = [((2, 5, 3), 2, "Number of channels must be divisible by groups. Got 5 channels and 2 groups."),
             ((2, 4), 2, r"channel_shuffle expects input with > 2 dims, but got input with sizes \[2, 4\]"),
             ((2, 4, 3), 0, "Number of groups to divide channels in must be positive. Value of groups:0")]
    for shape, groups, msg in cases:
        with pytest.raises(RuntimeError, match=msg):
            F.channel_shuffle(tl.randn(*shape), groups)
        with pytest.raises(RuntimeError, match=msg):
            torch.nn.functional.channel_shuffle(torch.randn(*shape), groups)


# ------------------------------------------------------------------ Gumbel-softmax

def test_gumbel_softmax_is_seeded_and_sums_to_one():
    logits = tl.randn(5, 4, dtype=tl.float64)
    tl.manual_seed(3)
    a = F.gumbel_softmax(logits, tau=0.5)
    tl.manual_seed(3)
    b = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_allclose(a.numpy().sum(-1), 1.0, rtol=1e-12)
    c = F.gumbel_softmax(logits, dim=0)
    np.testing.assert_allclose(c.numpy().sum(0), 1.0, rtol=1e-12)
    assert a.dtype == tl.float64 and F.gumbel_softmax(tl.randn(2, 3)).dtype == tl.float32


def test_gumbel_softmax_hard_is_one_hot_with_the_soft_gradient():
    logits = _leaf(randn(6, 5, seed=16))
    tl.manual_seed(4)
    hard = F.gumbel_softmax(logits, tau=0.7, hard=True)
    tl.manual_seed(4)
    soft = F.gumbel_softmax(logits, tau=0.7)
    h = hard.detach().numpy()
    assert set(np.unique(h)) == {0.0, 1.0} and (h.sum(-1) == 1).all()
    np.testing.assert_array_equal(h.argmax(-1), soft.detach().numpy().argmax(-1))
    w = tl.tensor(randn(6, 5, seed=17))
    (g_hard,) = tl.autograd.grad((hard * w).sum(), [logits])
    (g_soft,) = tl.autograd.grad((soft * w).sum(), [logits])
    np.testing.assert_allclose(g_hard.numpy(), g_soft.numpy(), rtol=1e-12, atol=1e-14)  # straight-through


def test_gumbel_softmax_samples_follow_the_softmax():
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    logits = tl.tensor(np.tile(np.log(probs), (20000, 1)))
    tl.manual_seed(5)
    picks = F.gumbel_softmax(logits, hard=True).numpy().mean(0)
    np.testing.assert_allclose(picks, probs, atol=0.015)  # the Gumbel-max trick samples softmax(logits)


def test_gumbel_softmax_warns_about_eps():
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated and has no effect."):
        F.gumbel_softmax(tl.randn(2, 3), eps=1e-5)


# ------------------------------------------------------------------ RReLU

@pytest.mark.parametrize("lower,upper,inplace", [(1 / 8, 1 / 3, False), (0.1, 0.3, True), (0.2, 0.2, False)])
def test_rrelu_eval_matches_pytorch(torch, lower, upper, inplace):
    ours, theirs = build_pair(torch, lambda nn: nn.RReLU(lower, upper, inplace))
    assert repr(ours) == repr(theirs)
    ours.eval()
    theirs.eval()
    # in place on a leaf is refused, so the module gets a computed tensor
    compare(torch, lambda lib, x: (ours if lib is tl else theirs)(x * 1.0), [randn(4, 5, seed=18)])
    compare(torch, lambda lib, x: lib.nn.functional.rrelu(x, lower, upper), [randn(4, 5, seed=19)])


def test_rrelu_training_draws_slopes_in_range():
    x = _leaf(randn(200, 30, seed=20))
    tl.manual_seed(6)
    y = nn.RReLU(0.1, 0.3)(x)  # a module trains by default
    a, out = x.detach().numpy(), y.detach().numpy()
    pos = a > 0
    np.testing.assert_array_equal(out[pos], a[pos])
    slopes = out[~pos] / a[~pos]
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.01 and slopes.std() > 0.05  # U(0.1, 0.3): sd 0.058
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(pos, 1.0, out / np.where(pos, 1.0, a)), rtol=1e-12)
    tl.manual_seed(6)
    np.testing.assert_array_equal(F.rrelu(x, 0.1, 0.3, training=True).detach().numpy(), out)  # seeded


def test_rrelu_checks_its_bounds(torch):
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        F.rrelu(tl.randn(3), 0.5, 0.1, training=True)
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        torch.nn.functional.rrelu(torch.randn(3), 0.5, 0.1, training=True)
    m = nn.RReLU(0.5, 0.1)  # as PyTorch, the module checks when it runs
    with pytest.raises(RuntimeError, match="Lower bound"):
        m(tl.randn(3))


# ------------------------------------------------------------------ pdist

@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 0.5, 3.0, math.inf])
@pytest.mark.parametrize("shape", [(5, 4), (1, 3), (4, 1)])
def test_pdist_matches_pytorch(torch, p, shape):
    compare(torch, lambda lib, x: lib.nn.functional.pdist(x, p), [randn(*shape, seed=21)])


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, math.inf])
def test_pdist_of_equal_rows_has_gradient_zero_as_pytorch(torch, p):
    a = randn(4, 3, seed=22)
    a[2] = a[0]
    compare(torch, lambda lib, x: lib.nn.functional.pdist(x, p), [a])


@pytest.mark.parametrize("p", [0.5, 1.5, 3.0])
def test_a_nan_coordinate_gives_a_nan_distance_not_zero(p):
    """The root of a p-norm is flat (value and gradient 0) only where the sum is 0: a NaN stays NaN."""
    nan_row = tl.tensor([[float("nan"), 1.0]])
    assert math.isnan(F.pairwise_distance(nan_row, tl.zeros(1, 2), p=p).item())
    assert math.isnan(F.pdist(tl.tensor([[float("nan"), 1.0], [0.0, 0.0]]), p=p).item())
    assert np.isnan(F.normalize(nan_row, p=p).numpy()).all()
    assert math.isnan(tl.cdist(nan_row, tl.zeros(1, 2), p=p).item())


def test_pdist_by_hand_and_by_finite_differences():
    x = tl.tensor([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]], dtype=tl.float64)
    np.testing.assert_allclose(F.pdist(x).numpy(), [5.0, 10.0, 5.0])  # pairs (0,1), (0,2), (1,2)
    np.testing.assert_allclose(F.pdist(x, 1).numpy(), [7.0, 14.0, 7.0])
    assert gradcheck(lambda v: F.pdist(v, 3.0), (_leaf(randn(4, 3, seed=23)),))


def test_pdist_refuses_bad_inputs():
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 3D"):
        F.pdist(tl.randn(3, 4, 2))
    with pytest.raises(RuntimeError, match="pdist only supports non-negative p values"):
        F.pdist(tl.randn(3, 4), p=-1)
    with pytest.raises(RuntimeError, match="pdist only supports floating-point dtypes"):
        F.pdist(tl.ones(3, 4, dtype=tl.int64))
    assert F.pdist(tl.randn(0, 4)).shape == (0,)


# ------------------------------------------------------------------ LazyLinear

def test_lazy_linear_materialises_at_the_first_call():
    m = nn.LazyLinear(3)
    assert repr(m) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert isinstance(m, nn.Linear)
    weight, bias = m.weight, m.bias
    y = m(tl.randn(4, 7))
    assert y.shape == (4, 3)
    assert type(m) is nn.Linear and repr(m) == "Linear(in_features=7, out_features=3, bias=True)"
    assert m.weight is weight and m.bias is bias  # the same Parameter objects, now shaped
    assert m.weight.shape == (3, 7) and m.bias.shape == (3,)
    bound = 1 / math.sqrt(7)  # Linear's initialisation
    assert np.abs(m.weight.detach().numpy()).max() <= bound and np.abs(m.bias.detach().numpy()).max() <= bound
    assert m(tl.randn(2, 5, 7)).shape == (2, 5, 3)
    no_bias = nn.LazyLinear(2, bias=False, dtype=tl.float64)
    assert no_bias(tl.randn(3, 4, dtype=tl.float64)).dtype == tl.float64 and no_bias.bias is None
    assert no_bias.weight.shape == (2, 4)


def test_lazy_linear_trains_with_an_optimizer_made_after_the_first_call():
    tl.manual_seed(0)
    model = nn.Sequential(nn.LazyLinear(8), nn.Tanh(), nn.LazyLinear(1))
    x = tl.randn(64, 3)
    target = (x[:, :1] * 2.0 - x[:, 1:2]).detach()
    model(x)
    assert [tuple(p.shape) for p in model.parameters()] == [(8, 3), (8,), (1, 8), (1,)]
    opt = tl.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = F.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.1 * losses[0]
    assert len(model.state_dict()) == 4


def test_lazy_linear_matches_pytorch_once_materialised(torch):
    ours, theirs = nn.LazyLinear(4).double(), torch.nn.LazyLinear(4).double()
    a = randn(3, 6, seed=24)
    ours(tl.tensor(a))
    theirs(torch.tensor(a))
    assert repr(ours) == repr(theirs)
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    compare(torch, lambda lib, x: (ours if lib is tl else theirs)(x), [a], modules=(ours, theirs))


# ------------------------------------------------------------------ nn.Buffer

class _WithBuffers(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.steps = nn.Buffer(tl.zeros(1))
        self.scratch = nn.Buffer(tl.ones(3), persistent=False)
        self.plain = tl.ones(2)  # a plain tensor is neither a parameter nor a buffer


def test_buffer_registers_on_assignment():
    m = _WithBuffers()
    assert [n for n, _ in m.named_buffers()] == ["steps", "scratch"]
    assert list(m.state_dict()) == ["steps", "lin.weight", "lin.bias"]  # own first (as PyTorch); not scratch
    assert [n for n, _ in m.named_parameters()] == ["lin.weight", "lin.bias"]
    assert isinstance(m.steps, nn.Buffer) and not isinstance(m.plain, nn.Buffer)
    assert type(m.steps) is tl.Tensor and m.steps.persistent and not m.scratch.persistent
    m.double()
    assert m.steps.dtype == tl.float64  # buffers follow to()
    m.steps = tl.full((1,), 5.0)  # a plain tensor assigned to a buffer's name replaces the buffer
    assert m.state_dict()["steps"].item() == 5.0
    m.scratch = nn.Buffer(tl.zeros(2), persistent=True)  # a Buffer again: its persistence is taken
    assert "scratch" in m.state_dict()


def test_buffer_shares_memory_and_keeps_requires_grad(torch):
    t = tl.zeros(3)
    b = nn.Buffer(t)
    b.add_(1.0)
    np.testing.assert_array_equal(t.numpy(), [1.0, 1.0, 1.0])
    assert nn.Buffer(tl.zeros(2, requires_grad=True)).requires_grad
    assert nn.Buffer().shape == (0,)
    assert torch.nn.Buffer(torch.zeros(2, requires_grad=True)).requires_grad
    with pytest.raises(TypeError):
        nn.Buffer(np.zeros(3))


def test_buffer_assignment_errors_like_pytorch(torch):
    for lib in (tl, torch):
        m = lib.nn.Linear(2, 2)
        with pytest.raises(TypeError, match="cannot assign"):
            m.weight = lib.nn.Buffer(lib.zeros(2, 2))  # a parameter's name takes only a Parameter
        m.extra = 3
        with pytest.raises(KeyError, match="attribute 'extra' already exists"):
            m.extra = lib.nn.Buffer(lib.zeros(1))
