"""ops/statistics.py: nansum, nanmean, aminmax, var_mean/std_mean, quantile/nanquantile, cov, corrcoef,
diff, trapezoid/cumulative_trapezoid, cdist, histogram. Values against PyTorch (skipped without it)
and against independent truths (NumPy's own functions, distances worked out by hand), gradients by
finite differences (gradcheck), and bad input raising PyTorch's exception types."""
from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.autograd import gradcheck

from .._helpers import bad_input_tests

NAN = float("nan")
RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 5))
B = RNG.standard_normal((2, 5))  # cdist's second set of rows
X_NAN = np.array([[1.0, NAN, 3.0, -2.0], [NAN, NAN, NAN, NAN], [0.5, 4.0, NAN, 2.5]])


def t64(a, requires_grad: bool = False):
    return tl.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def _numpy(out):
    return np.asarray(out.detach().numpy() if hasattr(out, "detach") else out)


def _flat(out) -> list:
    return [o for x in out for o in _flat(x)] if isinstance(out, (tuple, list)) else [out]


def both(torch, fn, rtol: float = 1e-7, atol: float = 1e-9):
    """fn(m) with m = tinygrad_lab and m = torch: the same dtypes, shapes and values (NaN == NaN)."""
    got, want = _flat(fn(tl)), _flat(fn(torch))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype.name == str(w.dtype).rsplit(".", 1)[-1], (g.dtype, w.dtype)
        assert tuple(g.shape) == tuple(w.shape), (tuple(g.shape), tuple(w.shape))
        loose = g.dtype.name == "float32"  # float32 results agree to float32's precision
        np.testing.assert_allclose(_numpy(g), _numpy(w), rtol=1e-6 if loose else rtol, atol=1e-6 if loose else atol,
                                   equal_nan=True)
    return got


def grads_both(torch, fn, *arrays):
    """The gradients of sum(fn(m, *leaves) * weights) in both libraries for float64 leaves: equal."""
    weights = None
    result = []
    for m in (tl, torch):
        leaves = [m.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
        out = fn(m, *leaves)
        weights = np.random.default_rng(1).standard_normal(tuple(out.shape)) if weights is None else weights
        (out * m.tensor(weights)).sum().backward()
        result.append([_numpy(leaf.grad) for leaf in leaves])
    for g, w in zip(*result):
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9)
    return result[0]


# ---------------------------------------------------------------- against PyTorch

CASES = {
    "nansum": lambda m: m.nansum(m.tensor(X_NAN)),
    "nansum dim keepdim": lambda m: m.nansum(m.tensor(X_NAN), 1, keepdim=True),
    "nansum dim=()": lambda m: m.nansum(m.tensor(X_NAN), dim=()),
    "nansum int": lambda m: m.nansum(m.tensor([[1, 2], [3, 4]]), 0),
    "nansum dtype": lambda m: m.nansum(m.tensor(X_NAN, dtype=m.float32), dtype=m.float64),
    "nanmean": lambda m: m.nanmean(m.tensor(X_NAN), dim=1),
    "nanmean all": lambda m: m.tensor(X_NAN).nanmean(),
    "aminmax": lambda m: tuple(m.aminmax(m.tensor(X))),
    "aminmax dim": lambda m: tuple(m.tensor(X).aminmax(dim=0, keepdim=True)),
    "aminmax int": lambda m: tuple(m.aminmax(m.tensor([[3, 1], [2, 5]]), dim=1)),
    "var_mean": lambda m: m.var_mean(m.tensor(X), 1),
    "var_mean correction keepdim": lambda m: m.var_mean(m.tensor(X), (0, 1), correction=0, keepdim=True),
    "var_mean unbiased positional": lambda m: m.var_mean(m.tensor(X), False),
    "std_mean": lambda m: m.std_mean(m.tensor(X), dim=0, unbiased=False),
    "quantile float q": lambda m: m.quantile(m.tensor(X), 0.3),
    "quantile vector q dim keepdim": lambda m: m.quantile(m.tensor(X), m.tensor([0.0, 0.25, 0.9, 1.0],
                                                                             dtype=m.float64), dim=1, keepdim=True),
    "quantile 0-d q": lambda m: m.tensor(X).quantile(m.tensor(0.6, dtype=m.float64), dim=0),
    "quantile keepdim all": lambda m: m.quantile(m.tensor(X), 0.5, keepdim=True),
    "quantile with nan": lambda m: m.quantile(m.tensor(X_NAN), 0.5, dim=1),
    "nanquantile": lambda m: m.nanquantile(m.tensor(X_NAN), m.tensor([0.1, 0.5, 1.0], dtype=m.float64), dim=1),
    "nanquantile all": lambda m: m.tensor(X_NAN).nanquantile(0.75),
    "cov": lambda m: m.cov(m.tensor(X)),
    "cov 1-d": lambda m: m.cov(m.tensor(X[0])),
    "cov int": lambda m: m.cov(m.tensor([[1, 2, 4], [0, 3, 3]])),
    "cov weights": lambda m: m.cov(m.tensor(X), correction=2, fweights=m.tensor([1, 2, 1, 3, 1]),
                                   aweights=m.tensor([0.5, 1.0, 2.0, 0.1, 0.7], dtype=m.float64)),
    "cov dof <= 0": lambda m: m.cov(m.tensor(X[:, :2]), correction=2),
    "corrcoef": lambda m: m.corrcoef(m.tensor(X)),
    "corrcoef constant row": lambda m: m.tensor([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]]).corrcoef(),
    "diff": lambda m: m.diff(m.tensor(X), n=2),
    "diff dim prepend append": lambda m: m.diff(m.tensor(X), 1, 0, prepend=m.tensor(X[:1]),
                                                append=m.tensor(X[:2])),
    "diff n too big": lambda m: m.tensor(X).diff(9),
    "diff bool": lambda m: m.diff(m.tensor([True, False, False, True])),
    "diff uint8 wraps": lambda m: m.diff(m.tensor([1, 5, 2], dtype=m.uint8)),
    "trapezoid": lambda m: m.trapezoid(m.tensor(X)),
    "trapezoid dx dim": lambda m: m.trapezoid(m.tensor(X), dx=0.5, dim=0),
    "trapezoid x 1-d": lambda m: m.trapezoid(m.tensor(X), m.tensor([0.0, 0.5, 1.5, 1.7, 3.0], dtype=m.float64)),
    "trapezoid x broadcast": lambda m: m.trapezoid(m.tensor(X), m.tensor(np.cumsum(np.abs(X[:1]), 1))),
    "trapezoid int": lambda m: m.trapezoid(m.tensor([1, 2, 3])),
    "trapezoid empty": lambda m: m.trapezoid(m.zeros(2, 0)),
    "cumulative_trapezoid": lambda m: m.cumulative_trapezoid(m.tensor(X), dx=2.0),
    "cumulative_trapezoid x": lambda m: m.cumulative_trapezoid(m.tensor(X), m.tensor([0.0, 1, 2, 4, 8]).double()),
    "histogram": lambda m: tuple(m.histogram(m.tensor(X), 4)),
    "histogram range weight density": lambda m: tuple(m.histogram(
        m.tensor(X), 3, range=(-1.0, 1.0), weight=m.tensor(np.abs(X)), density=True)),
    "histogram edges": lambda m: tuple(m.tensor(X).histogram(m.tensor([-3.0, -1.0, 0.0, 0.5, 3.0]).double())),
    "histogram one value": lambda m: tuple(m.histogram(m.ones(3), 2)),
    "histogram empty": lambda m: tuple(m.histogram(m.zeros(0), 2)),
}
for _p in (0.0, 0.5, 1.0, 2.0, 3.0, math.inf):
    CASES[f"cdist p={_p}"] = (lambda p: lambda m: m.cdist(m.tensor(X), m.tensor(B), p=p))(_p)
_BATCH1, _BATCH2 = RNG.standard_normal((2, 1, 3, 4)), RNG.standard_normal((3, 2, 4))
CASES["cdist batch broadcast"] = lambda m: m.cdist(m.tensor(_BATCH1), m.tensor(_BATCH2))


@pytest.mark.parametrize("fn", CASES.values(), ids=CASES.keys())
def test_values_like_pytorch(fn, torch):
    with warnings.catch_warnings():  # cov's degrees-of-freedom warning, from both libraries
        warnings.simplefilter("ignore")
        both(torch, fn)


def test_aminmax_and_histogram_are_named_tuples():
    mm = tl.aminmax(t64(X))
    assert mm.min is mm[0] and mm.max is mm[1] and mm.min.item() == X.min() and mm.max.item() == X.max()
    h = tl.histogram(t64(X), 3)
    assert h.hist is h[0] and h.bin_edges is h[1]


# ---------------------------------------------------------------- against NumPy (independent truths)

def test_nansum_nanmean_like_numpy():
    np.testing.assert_allclose(tl.nansum(t64(X_NAN), 1).numpy(), np.nansum(X_NAN, 1))
    rows = X_NAN[[0, 2]]
    np.testing.assert_allclose(tl.nanmean(t64(rows), 0).numpy(), np.nanmean(rows, 0))


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_like_numpy(method):
    q = np.array([0.0, 0.125, 0.25, 0.5, 0.75, 1.0])  # exact in binary: the same ranks in any precision
    got = tl.quantile(t64(X), t64(q), dim=1, interpolation=method)
    np.testing.assert_allclose(got.numpy(), np.quantile(X, q, axis=1, method=method))
    got = tl.nanquantile(t64(X_NAN[[0, 2]]), 0.25, dim=1, interpolation=method)
    np.testing.assert_allclose(got.numpy(), np.nanquantile(X_NAN[[0, 2]], 0.25, axis=1, method=method))


def test_cov_and_corrcoef_like_numpy():
    f, a = np.array([1, 2, 1, 3, 1]), np.array([0.5, 1.0, 2.0, 0.1, 0.7])
    np.testing.assert_allclose(tl.cov(t64(X)).numpy(), np.cov(X))
    np.testing.assert_allclose(tl.cov(t64(X), correction=0).numpy(), np.cov(X, ddof=0))
    got = tl.cov(t64(X), fweights=tl.tensor(f), aweights=t64(a)).numpy()
    np.testing.assert_allclose(got, np.cov(X, fweights=f, aweights=a))
    np.testing.assert_allclose(tl.corrcoef(t64(X)).numpy(), np.corrcoef(X))


def test_diff_trapezoid_like_numpy():
    np.testing.assert_allclose(tl.diff(t64(X), 2, 0).numpy(), np.diff(X, 2, 0))
    got = tl.diff(t64(X), prepend=t64(X[:, :1]), append=t64(X[:, :2])).numpy()
    np.testing.assert_allclose(got, np.diff(X, prepend=X[:, :1], append=X[:, :2]))
    xs = np.array([0.0, 0.5, 1.5, 1.7, 3.0])
    trapezoid = getattr(np, "trapezoid", None) or np.trapz
    np.testing.assert_allclose(tl.trapezoid(t64(X), t64(xs)).numpy(), trapezoid(X, xs))
    np.testing.assert_allclose(tl.trapezoid(t64(X), dx=0.3, dim=0).numpy(), trapezoid(X, dx=0.3, axis=0))
    running = np.cumsum((X[:, 1:] + X[:, :-1]) / 2 * np.diff(xs), axis=1)  # by hand: the areas so far
    np.testing.assert_allclose(tl.cumulative_trapezoid(t64(X), t64(xs)).numpy(), running)
    np.testing.assert_allclose(running[:, -1], trapezoid(X, xs))


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 2.0, 3.0, math.inf])
def test_cdist_by_hand(p):
    a, b = X, B
    want = np.empty((3, 2))
    for i, j in itertools.product(range(3), range(2)):
        d = np.abs(a[i] - b[j])
        want[i, j] = (np.count_nonzero(d) if p == 0 else d.max() if p == math.inf else (d ** p).sum() ** (1 / p))
    np.testing.assert_allclose(tl.cdist(t64(a), t64(b), p=p).numpy(), want)


def test_histogram_like_numpy():
    for kwargs in ({}, {"range": (-1.0, 2.0)}, {"density": True}):
        hist, edges = tl.histogram(t64(X), 4, **kwargs)
        want, want_edges = np.histogram(X, 4, **kwargs)
        np.testing.assert_allclose(hist.numpy(), want)
        np.testing.assert_allclose(edges.numpy(), want_edges)
    w = np.abs(X)
    hist, _ = tl.histogram(t64(X), t64([-3.0, -1.0, 0.0, 0.5, 3.0]), weight=t64(w))
    np.testing.assert_allclose(hist.numpy(), np.histogram(X, [-3.0, -1.0, 0.0, 0.5, 3.0], weights=w)[0])
    assert hist.requires_grad is False


# ---------------------------------------------------------------- gradients: finite differences

GRADCHECKS = {
    "nansum": (lambda x: tl.nansum(x, 1), [X_NAN]),
    "nanmean": (lambda x: tl.nanmean(x, 1), [X_NAN[[0, 2]]]),
    "aminmax": (lambda x: tl.aminmax(x, dim=1).max * 2 + tl.aminmax(x, dim=1).min, [X]),
    "var_mean": (lambda x: tl.var_mean(x, 1)[0] + tl.var_mean(x, 1)[1], [X]),
    "std_mean": (lambda x: tl.std_mean(x, 0, correction=0)[0] * tl.std_mean(x, 0)[1], [X]),
    "quantile linear": (lambda x, q: tl.quantile(x, q, dim=1), [X, [0.1, 0.45, 0.8]]),
    "quantile midpoint": (lambda x: tl.quantile(x, 0.3, dim=0, interpolation="midpoint"), [X]),
    "quantile nearest": (lambda x: tl.quantile(x, 0.3, interpolation="nearest"), [X]),
    "nanquantile": (lambda x: tl.nanquantile(x, 0.3, dim=1), [X_NAN[[0, 2]]]),
    "cov weighted": (lambda x, a: tl.cov(x, fweights=tl.tensor([1, 2, 1, 3, 1]), aweights=a),
                     [X, [0.5, 1.0, 2.0, 0.1, 0.7]]),
    "corrcoef": (tl.corrcoef, [X]),
    "diff prepend": (lambda x, p: tl.diff(x, 2, prepend=p), [X, X[:, :2]]),
    "trapezoid x": (lambda y, x: tl.trapezoid(y, x), [X, [0.0, 0.5, 1.5, 1.7, 3.0]]),
    "cumulative_trapezoid x": (lambda y, x: tl.cumulative_trapezoid(y, x, dim=0), [X, [0.0, 1.0, 3.0]]),
}
for _p in (0.5, 1.0, 2.0, 3.0, math.inf):
    GRADCHECKS[f"cdist p={_p}"] = ((lambda p: lambda a, b: tl.cdist(a, b, p))(_p), [X, B])


@pytest.mark.parametrize("name", GRADCHECKS)
def test_gradients_by_finite_differences(name):
    fn, arrays = GRADCHECKS[name]
    assert gradcheck(fn, [t64(a, requires_grad=True) for a in arrays])


def test_gradients_like_pytorch(torch):
    grads_both(torch, lambda m, x, q: m.quantile(x, q, dim=0, keepdim=True), X, [0.2, 0.5, 0.95])
    grads_both(torch, lambda m, x: m.nanquantile(x, 0.6, dim=1, interpolation="midpoint"), X_NAN[[0, 2]])
    grads_both(torch, lambda m, x, a: m.cov(x, aweights=a), X, [0.5, 1.0, 2.0, 0.1, 0.7])
    grads_both(torch, lambda m, x: m.corrcoef(x), X)
    grads_both(torch, lambda m, y, x: m.cumulative_trapezoid(y, x), X, [0.0, 0.5, 1.5, 1.7, 3.0])
    grads_both(torch, lambda m, x: m.nansum(x) + m.nanmean(x), X_NAN[[0, 2]])


@pytest.mark.parametrize("p", [0.5, 1.0, 2.0, 3.0, math.inf])
def test_cdist_gradient_at_zero_distance_is_zero_like_pytorch(p, torch):
    """Equal rows: a distance of 0, where the p=2 norm's gradient x / |x| would be 0/0."""
    rows = [[0.0, 1.0], [2.0, 3.0]]
    g = grads_both(torch, lambda m, a, b: m.cdist(a, b, p=p), rows, rows)
    assert all(np.isfinite(x).all() for x in g)
    a = t64(rows, requires_grad=True)
    tl.cdist(a, t64([[0.0, 1.0]]), p=2.0)[0, 0].backward()
    assert a.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_cdist_inf_ties_each_get_the_whole_gradient(torch):
    grads_both(torch, lambda m, a, b: m.cdist(a, b, p=math.inf), [[0.0, 1.0], [2.0, 3.0]], [[2.0, 1.0], [1.0, 2.0]])


# ---------------------------------------------------------------- bad input: PyTorch's exception types

BAD = {
    "quantile q > 1": (lambda m: m.quantile(m.tensor([1.0, 2.0]), 1.5), RuntimeError, r"range \[0, 1\]"),
    "quantile q < 0 tensor": (lambda m: m.quantile(m.tensor([1.0, 2.0]), m.tensor([0.1, -0.1])), RuntimeError,
                              r"range \[0, 1\]"),
    "quantile int input": (lambda m: m.quantile(m.tensor([1, 2]), 0.5), RuntimeError, "float or double"),
    "quantile q dtype": (lambda m: m.quantile(m.tensor([1.0, 2.0]), m.tensor([0.5], dtype=m.float64)),
                         RuntimeError, "same dtype"),
    "quantile q 2-d": (lambda m: m.quantile(m.tensor([1.0, 2.0]), m.tensor([[0.5]])), RuntimeError, "1D"),
    "quantile interpolation": (lambda m: m.quantile(m.tensor([1.0]), 0.5, interpolation="cubic"), RuntimeError,
                               "cubic"),
    "quantile empty": (lambda m: m.nanquantile(m.zeros(2, 0), 0.5, dim=1), RuntimeError, "non-empty"),
    "quantile q list": (lambda m: m.quantile(m.tensor([1.0]), [0.5]), TypeError, "q"),
    "nanmean int": (lambda m: m.nanmean(m.tensor([1, 2])), RuntimeError, "floating point"),
    "aminmax empty": (lambda m: m.aminmax(m.zeros(0)), RuntimeError, "empty"),
    "aminmax empty dim": (lambda m: m.aminmax(m.zeros(2, 0), dim=1), IndexError, "dim 1"),
    "cov 3-d": (lambda m: m.cov(m.zeros(2, 2, 2)), RuntimeError, "3 dimensions"),
    "cov float fweights": (lambda m: m.cov(m.zeros(2, 3), fweights=m.ones(3)), RuntimeError, "integral"),
    "cov int aweights": (lambda m: m.cov(m.zeros(2, 3), aweights=m.tensor([1, 1, 1])), RuntimeError,
                         "floating point"),
    "cov weights length": (lambda m: m.cov(m.zeros(2, 3), fweights=m.tensor([1, 1])), RuntimeError, "2 != 3"),
    "cov negative weights": (lambda m: m.cov(m.zeros(2, 3), aweights=m.tensor([1.0, -1.0, 1.0])), RuntimeError,
                             "negative"),
    "cov weights sum to zero": (lambda m: m.cov(m.zeros(2, 3), fweights=m.tensor([0, 0, 0])), RuntimeError,
                                "sum to zero"),
    "diff 0-d": (lambda m: m.diff(m.tensor(1.0)), RuntimeError, "one-dimensional"),
    "diff negative n": (lambda m: m.diff(m.zeros(3), -1), RuntimeError, "non-negative"),
    "diff prepend dims": (lambda m: m.diff(m.zeros(2, 3), prepend=m.zeros(3)), RuntimeError, "same dimension"),
    "diff prepend shape": (lambda m: m.diff(m.zeros(2, 3), prepend=m.zeros(3, 1)), RuntimeError, r"size\(0\)"),
    "diff prepend number": (lambda m: m.diff(m.zeros(3), prepend=1.0), TypeError, "prepend"),
    "trapezoid x length": (lambda m: m.trapezoid(m.zeros(3), m.zeros(2)), RuntimeError, "one `x` value"),
    "trapezoid x shape": (lambda m: m.trapezoid(m.zeros(2, 3), m.ones(3, 3)), RuntimeError, "3"),
    "trapezoid 0-d": (lambda m: m.trapezoid(m.tensor(2.0)), IndexError, "no dimensions"),
    "cumulative_trapezoid x length": (lambda m: m.cumulative_trapezoid(m.zeros(3), m.zeros(2)), RuntimeError,
                                      "one `x` value"),
    "cdist 1-d": (lambda m: m.cdist(m.zeros(3), m.zeros(2, 3)), RuntimeError, "2D"),
    "cdist columns": (lambda m: m.cdist(m.zeros(2, 3), m.zeros(2, 4)), RuntimeError, "X1: 3 X2: 4"),
    "cdist int": (lambda m: m.cdist(m.zeros(2, 3).long(), m.zeros(2, 3).long()), RuntimeError, "floating"),
    "cdist negative p": (lambda m: m.cdist(m.zeros(2, 3), m.zeros(2, 3), p=-1.0), RuntimeError, "non-negative"),
    "cdist dtypes": (lambda m: m.cdist(m.zeros(2, 3), m.zeros(2, 3).double()), RuntimeError, "same dtype"),
    "cdist batch": (lambda m: m.cdist(m.zeros(2, 2, 3), m.zeros(3, 2, 3)), RuntimeError, "2"),
    "cdist compute_mode": (lambda m: m.cdist(m.zeros(2, 3), m.zeros(2, 3), compute_mode="fast"), ValueError, "fast"),
    "histogram int": (lambda m: m.histogram(m.tensor([1, 2]), 2), NotImplementedError, "Long|int64"),
    "histogram bins 0": (lambda m: m.histogram(m.zeros(3), 0), RuntimeError, "bins must be > 0"),
    "histogram range": (lambda m: m.histogram(m.zeros(3), 2, range=(1.0, 0.0)), RuntimeError, "min"),
    "histogram not finite": (lambda m: m.histogram(m.tensor([1.0, float("inf")]), 2), RuntimeError, "not finite"),
    "histogram weight shape": (lambda m: m.histogram(m.zeros(3), 2, weight=m.ones(2)), RuntimeError, "weight"),
    "histogram edges 2-d": (lambda m: m.histogram(m.zeros(3), m.zeros(1, 3)), RuntimeError, "one dimension"),
    "histogram edges dtype": (lambda m: m.histogram(m.zeros(3), m.zeros(3).double()), RuntimeError, "dtype"),
}


test_bad_input_raises, test_bad_input_raises_what_pytorch_raises = bad_input_tests(BAD)


def test_not_a_tensor_names_the_op():
    with pytest.raises(TypeError, match="quantile"):
        tl.quantile(np.array([1.0, 2.0]), 0.5)
    with pytest.raises(TypeError, match="cdist"):
        tl.cdist([[1.0]], tl.zeros(1, 1))


def test_cov_warns_when_degrees_of_freedom_run_out():
    with pytest.warns(UserWarning, match="degrees of freedom"):
        out = tl.cov(t64(X[:, :2]), correction=2)
    assert np.isinf(out.numpy()).all()


NAN_ROWS = [[float("nan"), 1.0, 2.0, 3.0], [1.0, float("nan"), 5.0, 4.0], [4.0, 3.0, 2.0, 1.0]]
ORDER_STATISTICS = {  # each with NaN among the values (no ties among the numbers, so the indices are defined)
    **{f"kthvalue k={k}": (lambda m, k=k: m.kthvalue(m.tensor(NAN_ROWS), k, 1)) for k in (1, 2, 3, 4)},
    "median": lambda m: m.median(m.tensor(NAN_ROWS), 1),
    "nanmedian": lambda m: m.nanmedian(m.tensor(NAN_ROWS), 1),
    "sort": lambda m: m.sort(m.tensor(NAN_ROWS), 1),
    "sort descending": lambda m: m.sort(m.tensor(NAN_ROWS), 1, descending=True),
    "topk": lambda m: m.topk(m.tensor(NAN_ROWS), 2, 1),
    "max": lambda m: m.max(m.tensor(NAN_ROWS), 1),
    "argmin": lambda m: m.argmin(m.tensor(NAN_ROWS), 1),
}


@pytest.mark.parametrize("op", ORDER_STATISTICS.values(), ids=ORDER_STATISTICS.keys())
def test_order_statistics_place_nan_as_pytorch(op, torch):
    """NaN is larger than every number for kthvalue, sort and topk, wins for median, max and argmin, and is left
    out by nanmedian, as in PyTorch (kthvalue returned the NaN, as median does)."""
    def run(m):
        out = op(m)
        return [t.tolist() for t in (out if isinstance(out, tuple) else (out,))]

    assert str(run(tl)) == str(run(torch))
