"""PyTorch's other top-level names and Tensor methods: aliases (absolute, greater, ...), softmax and pdist at
the top level, trapz, the deprecated linalg names (cholesky, lu, lu_solve, triangular_solve), narrow_copy,
the complex-number API on real tensors, frexp/ldexp, the Bessel functions i0/i1 (and the scaled i0e/i1e),
igamma/igammac, poisson, renorm, select_scatter/slice_scatter, index_reduce, gradient and range.

PyTorch is the oracle: values, dtypes, shapes and the gradients of a random weighting of the outputs, in
float32 and float64; bad input raises PyTorch's exception type with a message naming the op and shapes."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_lab as tl

from .._helpers import bad_input_tests

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:.*(deprecated|index_reduce|beta).*:UserWarning")

DTYPES = ("float32", "float64")
TOL = {"float32": (2e-5, 2e-6), "float64": (1e-10, 1e-12)}
RNG = np.random.default_rng(11)


def _flat(out) -> list:
    if isinstance(out, (list, tuple)):
        return [x for o in out for x in _flat(o)]
    return [out]


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach().numpy())


def _same(got, want, dtype: str, what: str) -> None:
    assert isinstance(got, tl.Tensor), f"{what}: {type(got).__name__}, PyTorch gives a tensor"
    assert str(got.dtype).rsplit(".", 1)[-1] == str(want.dtype).rsplit(".", 1)[-1], f"{what}: {got.dtype} {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {tuple(got.shape)}, PyTorch {tuple(want.shape)}"
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(_np(got).astype(np.float64), _np(want).astype(np.float64), rtol=rtol, atol=atol,
                               equal_nan=True, err_msg=what)


def check(fn, *arrays, dtype: str = "float64", grad: tuple | bool = True):
    """fn(m, *tensors) in both libraries on the same data: every output alike, and (for the inputs `grad`
    names, all when True) the gradients of a random weighting of the float outputs alike."""
    wanted = range(len(arrays)) if grad is True else (grad or ())
    tls = [tl.tensor(np.asarray(a), requires_grad=i in wanted) for i, a in enumerate(arrays)]
    ths = [torch.tensor(np.asarray(a), requires_grad=i in wanted) for i, a in enumerate(arrays)]
    got, want = _flat(fn(tl, *tls)), _flat(fn(torch, *ths))
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        _same(g, w, dtype, f"output {i}")
    if not wanted:
        return
    weights = [RNG.standard_normal(tuple(w.shape)) for w in want]
    pairs = [(g, w, a) for g, w, a in zip(got, want, weights) if w.dtype.is_floating_point and w.requires_grad]
    loss_t = sum((w * torch.tensor(a, dtype=w.dtype)).sum() for _, w, a in pairs)
    loss_o = sum((g * tl.tensor(a, dtype=g.dtype)).sum() for g, _, a in pairs)
    inputs = list(wanted)
    grads_t = torch.autograd.grad(loss_t, [ths[k] for k in inputs], allow_unused=True)
    grads_o = tl.autograd.grad(loss_o, [tls[k] for k in inputs], allow_unused=True)
    for k, g, w in zip(inputs, grads_o, grads_t):
        w = torch.zeros_like(ths[k]) if w is None else w
        g = tl.zeros_like(tls[k]) if g is None else g
        _same(g, w, dtype, f"gradient of input {k}")


def rand(*shape, dtype: str = "float64", low: float = -2.0, high: float = 2.0):
    return RNG.uniform(low, high, shape).astype(dtype)


def spd(n: int, dtype: str, batch: tuple = ()):
    a = RNG.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


# ================================================================ aliases and thin wrappers

@pytest.mark.parametrize("name", ["absolute", "greater", "greater_equal", "less", "less_equal", "not_equal"])
def test_alias_functions_methods_and_in_place_forms(name):
    a, b = np.array([[1.0, -2.0, 3.0], [0.0, 5.0, -6.0]]), np.array([[1.0, 2.0, -3.0], [0.0, 4.0, -7.0]])
    args = (a,) if name == "absolute" else (a, b)
    check(lambda m, *t: getattr(m, name)(*t), *args, grad=name == "absolute")
    check(lambda m, x, *t: getattr(x, name)(*t), *args, grad=name == "absolute")
    check(lambda m, x, *t: getattr(x.clone(), name + "_")(*t), *args, grad=False)
    x = tl.tensor(a)
    assert getattr(x, name + "_")(*[tl.tensor(v) for v in args[1:]]) is x


IN_PLACE = {  # method -> extra arguments (x in (0.05, 0.95): every function is defined there)
    **{n: () for n in ("acos", "acosh", "arccos", "asin", "asinh", "arcsin", "arcsinh", "atan", "atanh", "arctan",
                       "arctanh", "cosh", "sinh", "erf", "erfc", "erfinv", "exp2", "expm1", "frac", "digamma", "lgamma",
                       "log10", "log2", "logit", "rsqrt", "sinc", "reciprocal", "deg2rad", "rad2deg", "fix", "negative",
                       "sgn")},
    "clip": (0.2, 0.6), "xlogy": (0.5,), "copysign": (-1.0,), "float_power": (2,), "polygamma": (0,), "mvlgamma": (1,),
    "cumsum": (0,), "cumprod": (0,), "subtract": (0.5,),
    "multiply": (3.0,), "divide": (4.0,), "true_divide": (4.0,), "floor_divide": (0.3,),
}


@pytest.mark.parametrize("name, args", IN_PLACE.items(), ids=IN_PLACE.keys())
def test_in_place_forms_as_pytorch(name, args):
    """x.f_(...) writes f(x, ...) into x and returns x; on an integer tensor where f gives floats, PyTorch's
    RuntimeError (acosh is left out there: it is defined from 1 up)."""
    a = RNG.uniform(0.05, 0.95, (2, 3)) + (1.0 if name in ("acosh",) else 0.0)
    check(lambda m, x: getattr(x.clone(), name + "_")(*args), a, grad=False)
    x = tl.tensor(a)
    assert getattr(x, name + "_")(*args) is x
    ints = lambda m: m.tensor([[1, 2, 3]])  # noqa: E731
    theirs = _error(lambda: getattr(ints(torch), name + "_")(*args))
    ours = _error(lambda: getattr(ints(tl), name + "_")(*args))
    assert ours == theirs


@pytest.mark.parametrize("name", ["atan2", "arctan2", "hypot"])
def test_in_place_forms_of_tensor_only_binary_ops(name):
    """Their other operand must be a tensor, as in PyTorch."""
    check(lambda m, x, y: getattr(x.clone(), name + "_")(y), RNG.uniform(0.05, 0.95, (2, 3)), np.full((2, 3), 0.5),
          grad=False)


def _error(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__
    return None


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_and_log_softmax_at_the_top_level(name, dtype):
    x = rand(3, 4, dtype=dtype)
    check(lambda m, t: getattr(m, name)(t, 1), x, dtype=dtype)
    check(lambda m, t: getattr(m, name)(t, dim=0, dtype=m.float64), x, dtype="float64")


@pytest.mark.parametrize("p", [1.0, 2.0, 3.5, float("inf")])
def test_pdist_at_the_top_level(p):
    check(lambda m, t: m.pdist(t, p), rand(5, 3))


@pytest.mark.parametrize("dtype", DTYPES)
def test_trapz_takes_sample_points_or_a_keyword_spacing(dtype):
    y, x = rand(3, 5, dtype=dtype), np.sort(rand(5, dtype=dtype))
    check(lambda m, a, b: m.trapz(a, b), y, x, dtype=dtype)
    check(lambda m, a: m.trapz(a, dx=0.5, dim=0), y, dtype=dtype)
    check(lambda m, a: m.trapz(a), y, dtype=dtype)


def test_narrow_copy_is_a_copy_not_a_view():
    check(lambda m, t: m.narrow_copy(t, 1, 1, 2), rand(3, 4))
    check(lambda m, t: t.narrow_copy(0, 1, 2), rand(3, 4))
    check(lambda m, t: t.narrow_copy(0, -2, 2), rand(3, 4), grad=False)  # (PyTorch's backward fails here)
    x = tl.tensor([[1.0, 2.0, 3.0]])
    y = x.narrow_copy(1, 0, 2)
    y[0, 0] = 9.0
    assert x.tolist() == [[1.0, 2.0, 3.0]]


# ================================================================ the deprecated linalg names

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_legacy(dtype, upper):
    a = spd(3, dtype, (2,))
    check(lambda m, t: m.cholesky(t, upper), a, dtype=dtype)
    check(lambda m, t: t.cholesky(upper=upper), a, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_legacy_and_lu_solve_legacy(dtype):
    a, b = rand(2, 3, 3, dtype=dtype), rand(2, 3, 2, dtype=dtype)
    check(lambda m, t: m.lu(t), a, dtype=dtype)
    check(lambda m, t: t.lu(get_infos=True), a, dtype=dtype)
    check(lambda m, t, c: m.lu_solve(c, *m.lu(t)), a, b, dtype=dtype)
    check(lambda m, t, c: c.lu_solve(*t.lu()), a, b, dtype=dtype)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]], dtype=dtype)
    check(lambda m, t: m.lu(t, get_infos=True), singular, dtype=dtype, grad=False)  # info 2, no error


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper, transpose, unitriangular", [(True, False, False), (False, False, False),
                                                             (True, True, False), (False, True, True)])
def test_triangular_solve_legacy(dtype, upper, transpose, unitriangular):
    a = rand(3, 3, dtype=dtype) + 4 * np.eye(3, dtype=dtype)
    b = rand(2, 1, 3, 2, dtype=dtype)  # batch dims broadcast against A's (4,)
    a = np.broadcast_to(a, (4, 3, 3)).copy()
    check(lambda m, c, t: m.triangular_solve(c, t, upper, transpose, unitriangular), b, a, dtype=dtype)
    result = tl.triangular_solve(tl.tensor(b), tl.tensor(a))
    assert type(result).__name__ == "TriangularSolveResult" and result.solution.shape == (2, 4, 3, 2)
    assert result.cloned_coefficient.shape == (2, 4, 3, 3)
    check(lambda m, c, t: c.triangular_solve(t, upper=upper), b, a, dtype=dtype)


@pytest.mark.parametrize("call", [lambda m, a: m.cholesky(a), lambda m, a: m.lu(a),
                                  lambda m, a: m.lu_solve(a[:, :1], *m.lu(a)),
                                  lambda m, a: m.triangular_solve(a[:, :1], a)],
                         ids=["cholesky", "lu", "lu_solve", "triangular_solve"])
def test_the_deprecated_linalg_names_warn_as_pytorch(call):
    """(PyTorch warns once per process, so its warning cannot be awaited here after other tests.)"""
    with pytest.warns(UserWarning, match="deprecated"):
        call(tl, tl.tensor(spd(2, "float64")))


# ================================================================ the complex-number API on real tensors

def test_complex_names_answer_for_real_tensors():
    x = tl.tensor([[1.0, -2.0], [0.0, 3.0]])
    for fn in (tl.conj, tl.real, tl.resolve_conj, tl.resolve_neg):
        assert fn(x) is x
    assert x.conj() is x and x.real is x and x.resolve_conj() is x and x.resolve_neg() is x
    assert not tl.is_complex(x) and not x.is_complex() and not x.is_conj() and not x.is_neg()
    assert not tl.is_conj(x) and not tl.is_neg(x)
    check(lambda m, t: m.isreal(t), np.array([1.0, 2.0]), grad=False)
    check(lambda m, t: t.isreal(), np.array([[1, 2]]), grad=False)
    for m in (tl, torch):
        with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
            m.imag(m.tensor([1.0]))
        with pytest.raises(RuntimeError, match="imag is not implemented"):
            m.tensor([1.0]).imag  # noqa: B018


@pytest.mark.parametrize("data, expected", [([2.5], True), ([[0.0]], False), ([float("nan")], True), (7, True)])
def test_is_nonzero_like_pytorch(data, expected):
    assert tl.is_nonzero(tl.tensor(data)) is expected
    assert tl.tensor(data).is_nonzero() is expected
    assert torch.is_nonzero(torch.tensor(data)) is expected


# ================================================================ frexp, ldexp

@pytest.mark.parametrize("dtype", DTYPES)
def test_frexp_splits_into_mantissa_and_exponent(dtype):
    x = np.array([0.0, -0.0, 1.0, -3.5, 1e-30, 7e20, np.inf, -np.inf, np.nan], dtype=dtype)
    check(lambda m, t: m.frexp(t), x, dtype=dtype, grad=False)
    check(lambda m, t: t.frexp(), rand(3, 4, dtype=dtype, low=-100, high=100), dtype=dtype)
    out = tl.frexp(tl.tensor([3.0]))
    assert out.mantissa.tolist() == [0.75] and out.exponent.tolist() == [2] and out.exponent.dtype == tl.int32


@pytest.mark.parametrize("a, b", [("float32", "int32"), ("float64", "int64"), ("float32", "float64"),
                                  ("int64", "int64"), ("float32", "float32")])
def test_ldexp_dtypes_values_and_gradients(a, b):
    x = rand(2, 3, dtype="float64")
    e = RNG.integers(0 if b.startswith("int") else -3, 4, (2, 3))  # (PyTorch's gradient is 0 for negative ints)
    grad = tuple(i for i, d in enumerate((a, b)) if d.startswith("float"))
    res = "float64" if "float64" in (a, b) else "float32"
    check(lambda m, t, s: m.ldexp(t, s), x.astype(a), e.astype(b), dtype=res, grad=grad)
    check(lambda m, t, s: t.ldexp(s), x.astype(a), e.astype(b), dtype=res, grad=grad)
    if a.startswith("float") and res == a:
        check(lambda m, t, s: t.clone().ldexp_(s), x.astype(a), e.astype(b), dtype=res, grad=grad)


# ================================================================ Bessel functions, incomplete gamma

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["i0", "special.i0", "special.i1", "special.i0e", "special.i1e"])
def test_bessel_functions_and_their_gradients(name, dtype):
    x = np.concatenate([rand(8, dtype=dtype, low=-6, high=6), np.array([0.0, -1.5, 1.5], dtype=dtype)])

    def fn(m, t):
        space, _, op = name.rpartition(".")
        return getattr(getattr(m, space) if space else m, op)(t)

    check(fn, x, dtype=dtype)


def test_ldexp_gradient_for_negative_integer_exponents_is_2_to_the_exponent():
    x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    tl.ldexp(x, tl.tensor([0, -2, 3], dtype=tl.int32)).sum().backward()
    assert x.grad.tolist() == [1.0, 0.25, 8.0]  # where PyTorch's is [1, 0, 8]: it takes 2**-2 in integers


def test_i0_method_in_place_integers_and_second_derivatives():
    check(lambda m, t: t.i0(), np.array([1, 2, 3]), dtype="float32", grad=False)  # the default float dtype
    check(lambda m, t: t.clone().i0_(), rand(4))
    for name in ("i1", "i1e"):  # the slope at 0, and the gradient of the gradient, by finite differences
        x = tl.tensor([0.0, 0.3, -1.2, 2.5], dtype=tl.float64, requires_grad=True)
        assert tl.autograd.gradcheck(getattr(tl.special, name), (x,))
        assert tl.autograd.gradgradcheck(getattr(tl.special, name), (x,))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["igamma", "igammac", "special.gammainc", "special.gammaincc"])
def test_incomplete_gamma_values_and_gradient_in_x(name, dtype):
    a, x = rand(3, 4, dtype=dtype, low=0.2, high=5.0), rand(4, dtype=dtype, low=0.1, high=6.0)

    def fn(m, s, t):
        space, _, op = name.rpartition(".")
        return getattr(getattr(m, space) if space else m, op)(s, t)

    check(fn, a, x, dtype=dtype, grad=(1,))


def test_incomplete_gamma_methods_and_the_gradient_in_a_raises():
    a, x = rand(5, low=0.5, high=3.0), rand(5, low=0.5, high=3.0)
    check(lambda m, s, t: s.igamma(t), a, x, grad=(1,))
    check(lambda m, s, t: s.clone().igammac_(t), a, x, grad=(1,))
    check(lambda m, s, t: m.igamma(s, t), np.array([0.0, -1.0, 1.0, 0.0]), np.array([0.5, 1.0, 0.0, 0.0]), grad=False)
    for m in (tl, torch):
        s = m.tensor(a, requires_grad=True)
        with pytest.raises(NotImplementedError, match="igamma"):
            m.igamma(s, m.tensor(x)).sum().backward()


# ================================================================ poisson

def test_poisson_draws_counts_reproducibly_with_a_zero_gradient():
    rates = tl.tensor([[0.0, 1.0, 4.5], [10.0, 100.0, 0.5]], requires_grad=True)
    tl.manual_seed(5)
    first = tl.poisson(rates)
    tl.manual_seed(5)
    again = tl.poisson(rates)
    assert first.dtype == tl.float32 and first.shape == (2, 3)
    np.testing.assert_array_equal(first.detach().numpy(), again.detach().numpy())
    values = first.detach().numpy()
    assert values[0, 0] == 0 and (values >= 0).all() and (values == np.round(values)).all()
    first.sum().backward()
    assert rates.grad.tolist() == [[0.0] * 3] * 2  # as PyTorch's: zeros
    g = tl.Generator().manual_seed(3)
    big = tl.poisson(tl.full((20000,), 3.0, dtype=tl.float64), generator=g)
    assert big.dtype == tl.float64 and abs(big.mean().item() - 3.0) < 0.05 and abs(big.var().item() - 3.0) < 0.15
    want = torch.poisson(torch.tensor([[0.0, 1.0], [2.0, 3.0]], requires_grad=True))
    assert want.requires_grad and tl.poisson(tl.tensor([[0.0, 1.0], [2.0, 3.0]], requires_grad=True)).requires_grad


# ================================================================ renorm

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p, dim, maxnorm", [(2, 0, 1.5), (1, 1, 2.0), (float("inf"), -1, 0.8), (3, 2, 1.0)])
def test_renorm_values_and_gradients(p, dim, maxnorm, dtype):
    x = rand(3, 4, 2, dtype=dtype)
    check(lambda m, t: m.renorm(t, p, dim, maxnorm), x, dtype=dtype)
    check(lambda m, t: t.renorm(p, dim, maxnorm), x, dtype=dtype)
    check(lambda m, t: t.clone().renorm_(p, dim, maxnorm), x, dtype=dtype)


# ================================================================ select_scatter, slice_scatter, index_reduce

@pytest.mark.parametrize("dtype", DTYPES)
def test_select_and_slice_scatter(dtype):
    x = rand(3, 5, 2, dtype=dtype)
    check(lambda m, t, s: m.select_scatter(t, s, 1, -2), x, rand(3, 2, dtype=dtype), dtype=dtype)
    check(lambda m, t, s: t.select_scatter(s, 0, 0), x, rand(5, 2, dtype=dtype), dtype=dtype)
    check(lambda m, t, s: m.slice_scatter(t, s, 1, 1, 5, 2), x, rand(3, 2, 2, dtype=dtype), dtype=dtype)
    check(lambda m, t, s: t.slice_scatter(s, dim=1, start=-2), x, rand(3, 2, 2, dtype=dtype), dtype=dtype)
    check(lambda m, t, s: m.slice_scatter(t, s), x, rand(3, 5, 2, dtype=dtype), dtype=dtype)
    check(lambda m, t, s: m.slice_scatter(t, s, 1, -10, 10), x, rand(3, 5, 2, dtype=dtype), dtype=dtype)
    check(lambda m, t, s: t.diagonal_scatter(s, 1, 0, 1), rand(3, 4, dtype=dtype), rand(3, dtype=dtype), dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_values_and_gradients(reduce, include_self, dtype):
    x = rand(4, 3, dtype=dtype)
    src = rand(5, 3, dtype=dtype)
    if reduce == "prod":  # zeros among the values: the gradient of a single zero is the product of the rest
        x[0, 0], src[1, 0], src[3, 1], src[4, 1] = 0.0, 0.0, 0.0, 0.0
    index = np.array([0, 2, 0, 3, 0])
    check(lambda m, t, i, s: m.index_reduce(t, 0, i, s, reduce, include_self=include_self), x, index, src,
          dtype=dtype, grad=(0, 2))
    check(lambda m, t, i, s: t.index_reduce(1, i, s, reduce), x, np.array([2, 2]), rand(4, 2, dtype=dtype),
          dtype=dtype, grad=(0, 2))
    check(lambda m, t, i, s: t.clone().index_reduce_(0, i, s, reduce, include_self=include_self), x, index, src,
          dtype=dtype, grad=(0, 2))


def test_index_reduce_of_integers_floors_the_mean():
    check(lambda m, t, i, s: m.index_reduce(t, 0, i, s, "mean"), np.arange(6).reshape(3, 2), np.array([0, 0]),
          np.full((2, 2), 3), grad=False)


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod_gradient_with_zeros(include_self):
    x = np.array([[0.0, 2.0, 3.0], [1.0, 0.0, 4.0]])
    src = np.array([[5.0, 0.0, 0.0, 2.0], [0.0, 3.0, 1.0, 0.0]])
    index = np.array([[0, 1, 1, 2], [1, 1, 0, 2]])
    check(lambda m, t, i, s: m.scatter_reduce(t, 1, i, s, "prod", include_self=include_self), x, index, src,
          grad=(0, 2))
    src[0, 2] = 1.5  # one zero of src per position: second derivatives are exact too
    xs, ss = tl.tensor(x, requires_grad=True), tl.tensor(src, requires_grad=True)
    fn = lambda a, b: tl.scatter_reduce(a, 1, tl.tensor(index), b, "prod", include_self=include_self)  # noqa: E731
    assert tl.autograd.gradcheck(fn, (xs, ss)) and tl.autograd.gradgradcheck(fn, (xs, ss))


# ================================================================ gradient

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kwargs", [
    {}, {"spacing": 2.0}, {"spacing": [2.0, 0.5]}, {"dim": 1, "edge_order": 2}, {"dim": (0, -1), "spacing": 3},
    {"edge_order": 2, "spacing": [1.5, 0.25]}, {"dim": [1]}, {"spacing": None, "dim": 0},
], ids=str)
def test_gradient_with_even_spacing(kwargs, dtype):
    check(lambda m, t: m.gradient(t, **kwargs), rand(4, 5, dtype=dtype), dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_with_sample_coordinates(edge_order, dtype):
    coords = (np.array([0.0, 0.5, 2.0, 2.2]), np.array([-1.0, 0.0, 3.0, 3.5, 7.0]))

    def fn(m, t, c0, c1):
        return m.gradient(t, spacing=[c0, c1], edge_order=edge_order)

    check(fn, rand(4, 5, dtype=dtype), *[c.astype(dtype) for c in coords], dtype=dtype)
    check(lambda m, t, c: m.gradient(t, spacing=(c,), dim=1, edge_order=edge_order), rand(2, 5, dtype=dtype),
          coords[1].astype(dtype), dtype=dtype)


def test_gradient_of_integers_and_of_a_0d_tensor():
    check(lambda m, t: m.gradient(t), np.array([1, 2, 4, 7]), dtype="float32", grad=False)
    assert tl.gradient(tl.tensor(1.0)) == () == torch.gradient(torch.tensor(1.0))


# ================================================================ range

@pytest.mark.parametrize("args, kwargs", [((1, 4), {}), ((0, 1, 0.1), {}), ((5, 1, -2), {}), ((1, 1), {}),
                                          ((0, 2.5), {"dtype": "int64"}), ((0, 1, 0.25), {"dtype": "float64"}),
                                          ((tl.tensor(0), tl.tensor(3)), {})], ids=str)
def test_range_includes_its_end_and_warns(args, kwargs):
    def call(m):
        conv = [torch.tensor(a.item()) if isinstance(a, tl.Tensor) and m is torch else a for a in args]
        kw = {k: getattr(m, v) for k, v in kwargs.items()}
        with pytest.warns(UserWarning, match="deprecated"):
            return m.range(*conv, **kw)

    got, want = call(tl), call(torch)
    _same(got, want, "float64", "range")


def test_range_requires_grad():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = tl.range(0, 5, 2, requires_grad=True)
    assert out.requires_grad and out.tolist() == [0.0, 2.0, 4.0]


# ================================================================ bad input: PyTorch's exception types, our words

BAD = {
    "frexp of integers": (lambda m: m.frexp(m.tensor([1, 2])), RuntimeError, r"frexp.*floating-point.*\[2\]"),
    "ldexp of a number": (lambda m: m.ldexp(m.tensor([1.0]), 2), TypeError, r"ldexp.*'other'.*Tensor"),
    "igamma of a number": (lambda m: m.igamma(m.tensor([1.0]), 2.0), TypeError, r"igamma.*'other'.*Tensor"),
    "imag of a real tensor": (lambda m: m.imag(m.ones(2)), RuntimeError, "imag is not implemented"),
    "is_nonzero of two": (lambda m: m.is_nonzero(m.ones(2)), RuntimeError, r"more than one value.*\[2\]"),
    "is_nonzero of none": (lambda m: m.is_nonzero(m.ones(0)), RuntimeError, r"no values.*\[0\]"),
    "poisson of integers": (lambda m: m.poisson(m.tensor([1, 2])), NotImplementedError, r"poisson.*\[2\]"),
    "poisson of a negative rate": (lambda m: m.poisson(m.tensor([-1.0, 2.0])), RuntimeError,
                                   r"invalid Poisson rate.*\[2\]"),
    "renorm of a vector": (lambda m: m.renorm(m.ones(3), 2, 0, 1.0), RuntimeError, r"renorm.*2 dimensions.*\[3\]"),
    "renorm with p=0": (lambda m: m.renorm(m.ones(3, 2), 0, 0, 1.0), RuntimeError, "renorm: non-positive-norm"),
    "renorm with maxnorm<0": (lambda m: m.renorm(m.ones(3, 2), 2, 0, -1.0), RuntimeError, "renorm.*maxnorm"),
    "select_scatter index": (lambda m: m.select_scatter(m.zeros(2, 3), m.ones(3), 0, 5), IndexError,
                             r"select_scatter.*index 5.*\[2, 3\]"),
    "select_scatter shape": (lambda m: m.select_scatter(m.zeros(2, 3), m.ones(2), 0, 0), RuntimeError,
                             r"select_scatter.*src size = \[2\], slice size = \[3\]"),
    "slice_scatter shape": (lambda m: m.slice_scatter(m.zeros(2, 3), m.ones(2, 1), 1, 0, 3, 2), RuntimeError,
                            r"slice_scatter.*src size = \[2, 1\], slice size = \[2, 2\]"),
    "select_scatter of a number": (lambda m: m.select_scatter(m.zeros(2, 3), 1.0, 0, 0), TypeError,
                                   r"select_scatter\(\): argument 'src'.*Tensor"),
    "slice_scatter step": (lambda m: m.slice_scatter(m.zeros(2, 3), m.ones(2, 3), 1, step=0), RuntimeError,
                           "slice step must be positive"),
    "index_reduce sum": (lambda m: m.index_reduce(m.ones(3, 2), 0, m.tensor([0]), m.ones(1, 2), "sum"),
                         RuntimeError, "index_reduce.*prod, mean, amax or amin but got sum"),
    "index_reduce float index": (lambda m: m.index_reduce(m.ones(3, 2), 0, m.tensor([0.0]), m.ones(1, 2), "prod"),
                                 RuntimeError, "index_reduce.*int32/int64"),
    "index_reduce out of range": (lambda m: m.index_reduce(m.ones(3, 2), 0, m.tensor([5]), m.ones(1, 2), "prod"),
                                  IndexError, r"index_reduce.*index 5.*size 3"),
    "index_reduce dtypes": (lambda m: m.index_reduce(m.ones(3, 2), 0, m.tensor([0]), m.ones(1, 2, dtype=m.float64),
                                                     "prod"), RuntimeError, "index_reduce.*same scalar type"),
    "index_reduce source shape": (lambda m: m.index_reduce(m.ones(3, 2), 0, m.tensor([0, 1]), m.ones(2, 3),
                                                           "prod"), RuntimeError, r"index_reduce.*\[2, 3\].*\[3, 2\]"),
    "gradient edge_order": (lambda m: m.gradient(m.ones(4), edge_order=3), RuntimeError,
                            "gradient only supports edge_order=1 and edge_order=2"),
    "gradient short dim": (lambda m: m.gradient(m.ones(2, 5), edge_order=2), RuntimeError,
                           r"gradient expected each dimension size to be at least edge_order\+1.*\[2, 5\]"),
    "gradient spacing count": (lambda m: m.gradient(m.ones(2, 5), spacing=[1.0, 2.0, 3.0]), RuntimeError,
                               r"gradient expected spacing.*\[2, 5\].*length 3"),
    "gradient repeated dim": (lambda m: m.gradient(m.ones(2, 5), dim=(0, 0)), RuntimeError, "multiple times"),
    "gradient 0-d coordinates": (lambda m: m.gradient(m.ones(4), spacing=[m.tensor(2.0)]), RuntimeError,
                                 r"gradient expected each element of spacing.*shape \[\]"),
    "triangular_solve b 1-d": (lambda m: m.triangular_solve(m.ones(3), m.eye(3)), RuntimeError,
                               "triangular_solve.*b to have at least 2 dimensions"),
    "triangular_solve sizes": (lambda m: m.triangular_solve(m.ones(3, 1), m.eye(2)), RuntimeError,
                               "triangular_solve: each A matrix is 2 by 2 but each b matrix is 3 by 1"),
    "triangular_solve square": (lambda m: m.triangular_solve(m.ones(3, 1), m.ones(3, 4)), RuntimeError,
                                "triangular_solve.*square matrices.*3 by 4"),
    "triangular_solve dtypes": (lambda m: m.triangular_solve(m.ones(3, 1, dtype=m.float64), m.eye(3)), RuntimeError,
                                "triangular_solve.*same dtype"),
    "lu of a vector": (lambda m: m.lu(m.ones(3)), RuntimeError, r"lu.*2 dimensions.*\[3\]"),
    "range step 0": (lambda m: m.range(0, 1, 0), RuntimeError, "step must be nonzero"),
    "range wrong way": (lambda m: m.range(0, 1, -1), RuntimeError, "upper bound and lower bound inconsistent"),
    "range infinite": (lambda m: m.range(0, float("inf")), RuntimeError, "unsupported range"),
}

test_bad_input_raises_with_its_words, test_pytorch_raises_the_same_type = bad_input_tests(BAD)


# ================================================================ on every device (CPU, the CuPy stand-in, CUDA)

DEVICE_CASES = {
    "frexp": lambda m, x, i, s: m.frexp(x),
    "ldexp": lambda m, x, i, s: m.ldexp(x, i[:1, :1]),
    "i0": lambda m, x, i, s: m.i0(x),
    "special.i1e": lambda m, x, i, s: m.special.i1e(x),
    "igammac": lambda m, x, i, s: m.igammac(m.abs(s[0]) + 0.5, m.abs(x) + 0.1),
    "isreal": lambda m, x, i, s: m.isreal(x),
    "renorm": lambda m, x, i, s: m.renorm(x, 2, 0, 1.0),
    "select_scatter": lambda m, x, i, s: m.select_scatter(x, s[0], 0, 1),
    "slice_scatter": lambda m, x, i, s: m.slice_scatter(x, s, 0, 0, 4, 2),
    "index_reduce": lambda m, x, i, s: m.index_reduce(x, 0, i[0], s, "amax", include_self=False),
    "gradient": lambda m, x, i, s: m.gradient(x, spacing=2.0, edge_order=2),
    "triangular_solve": lambda m, x, i, s: m.triangular_solve(s.t(), x[:3] + 3 * m.eye(3, device=x.device)),
    "narrow_copy": lambda m, x, i, s: m.narrow_copy(x, 1, 1, 2),
}


@pytest.mark.parametrize("name", DEVICE_CASES)
def test_on_every_device(name, device):
    x, s = rand(4, 3), rand(2, 3)
    i = np.array([[3, 1], [0, 2]])
    fn = DEVICE_CASES[name]
    want = _flat(fn(torch, torch.tensor(x), torch.tensor(i), torch.tensor(s)))
    xs = tl.tensor(x, device=device, requires_grad=True)
    got = _flat(fn(tl, xs, tl.tensor(i, device=device), tl.tensor(s, device=device)))
    for g, w in zip(got, want):
        assert g.device == xs.device
        _same(g.cpu(), w, "float64", name)
    floats = [g for g in got if g.dtype.is_floating_point and g.requires_grad]
    if floats:
        sum(f.sum() for f in floats).backward()
        assert xs.grad is not None and xs.grad.device == xs.device


def test_poisson_on_every_device(device):
    rates = tl.full((3, 4), 2.0, device=device)
    tl.manual_seed(1)
    out = tl.poisson(rates)
    assert out.device == rates.device and out.shape == (3, 4) and out.dtype == tl.float32
    assert bool((out >= 0).all())


@pytest.mark.parametrize("shape", [(2, 3), (2, 2, 3)])
@pytest.mark.parametrize("name", ["H", "mH", "adjoint"])
def test_conjugate_transposes_match_pytorch(name, shape):
    x = RNG.standard_normal(shape)

    def run(lib):
        try:
            attr = getattr(lib.tensor(x), name)
            return (attr() if callable(attr) else attr).numpy()
        except RuntimeError as e:
            return type(e).__name__ + str(e).split(".")[0]
    got, want = run(tl), run(torch)
    assert np.array_equal(got, want) if isinstance(want, np.ndarray) else got == want


def test_compile_gives_back_what_it_is_given():
    model = tl.nn.Linear(2, 2)
    assert tl.compile(model) is model and tl.compile(mode="reduce-overhead")(len) is len
