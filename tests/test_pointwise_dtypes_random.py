"""The pointwise ops fmax/fmin, heaviside, nextafter, gcd/lcm, the shifts and the bitwise ops; PyTorch's dtype
functions (finfo, iinfo, promote_types, result_type, can_cast); the RNG state snapshot and the in-place samplers
(random_, exponential_, geometric_, cauchy_, log_normal_); set_printoptions; fill_diagonal_; byte/char/short.

Values are checked against NumPy's own functions (np.fmax, np.gcd, np.finfo, np.nextafter, ...) and, where
PyTorch is installed, against PyTorch (the `torch` fixture skips those tests without it). Samplers are checked
by their laws: seeded, with bounds of several standard errors for the sample size."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.autograd import gradcheck

NAN = float("nan")


def _np(t) -> np.ndarray:
    return np.asarray(t.detach().numpy()) if isinstance(t, tl.Tensor) else t.detach().numpy()


def _same(ours, theirs) -> None:
    """Same dtype name, shape and values (NaN where NaN) for one of our tensors and a torch or NumPy result."""
    want = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
    got = _np(ours)
    assert got.dtype == want.dtype, f"dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    np.testing.assert_array_equal(got, want)


# ================================================================ fmax / fmin

A = np.array([[1.0, NAN, 3.0, NAN, -0.5]], np.float32)
B = np.array([[2.0], [NAN], [-1.0]], np.float32)


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_ignore_nan_and_broadcast_as_numpy(name):
    got = getattr(tl, name)(tl.tensor(A), tl.tensor(B))
    _same(got, getattr(np, name)(A, B))
    assert np.isnan(_np(got)[1, 1])  # NaN only where both are NaN


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_match_pytorch_with_promotion(torch, name):
    a_i, b_f = np.array([1, 5, -3], np.int64), np.array(2.5, np.float32)
    cases = [(A, B), (a_i, np.array([4, 4, 4], np.int32)), (a_i, b_f), (np.array([True, False]), np.array([True]))]
    for a, b in cases:
        _same(getattr(tl, name)(tl.tensor(a), tl.tensor(b)), getattr(torch, name)(torch.tensor(a), torch.tensor(b)))
    x = tl.tensor(A)
    _same(getattr(x, name)(tl.tensor(B)), getattr(torch, name)(torch.tensor(A), torch.tensor(B)))


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_gradients_by_finite_differences(name):
    rng = np.random.default_rng(0)
    a = tl.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = tl.tensor(rng.standard_normal((4,)), requires_grad=True)  # broadcast: b's gradient is summed
    assert gradcheck(getattr(tl, name), (a, b))


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_gradients_at_ties_and_nan_match_pytorch(torch, name):
    a, b = [1.0, 2.0, 3.0, NAN, 4.0], [2.0, 2.0, NAN, 1.0, NAN]
    g = [1.0, 10.0, 100.0, 1000.0, 10000.0]
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    getattr(torch, name)(ta, tb).backward(torch.tensor(g))
    oa, ob = tl.tensor(a, requires_grad=True), tl.tensor(b, requires_grad=True)
    getattr(tl, name)(oa, ob).backward(tl.tensor(g))
    _same(oa.grad, ta.grad)
    _same(ob.grad, tb.grad)
    assert _np(oa.grad)[1] == 10.0  # a tie goes wholly to the first input (maximum would split it)


# ================================================================ heaviside, nextafter

def test_heaviside_values_and_nan_input(torch):
    x = np.array([-1.5, 0.0, 2.0, NAN, -0.0], np.float32)
    for values in (np.array([0.5], np.float32), np.array([[7.0], [0.25]], np.float32)):
        _same(tl.heaviside(tl.tensor(x), tl.tensor(values)), torch.heaviside(torch.tensor(x), torch.tensor(values)))
    xi = np.array([-3, 0, 4], np.int64)
    _same(tl.tensor(xi).heaviside(tl.tensor([9])), torch.heaviside(torch.tensor(xi), torch.tensor([9])))
    _same(tl.heaviside(tl.tensor([True, False]), tl.tensor([True])), np.array([True, True]))
    assert _np(tl.heaviside(tl.tensor([NAN]), tl.tensor([0.5])))[0] == 0.0  # PyTorch's 0, not np.heaviside's NaN


def test_heaviside_refuses_what_pytorch_refuses():
    with pytest.raises(RuntimeError, match="different dtypes.*float32.*int64"):
        tl.heaviside(tl.tensor([1.0]), tl.tensor([1]))
    with pytest.raises(TypeError, match=r"heaviside\(\): argument 'values' \(position 2\) must be Tensor, not float"):
        tl.heaviside(tl.tensor([1.0]), 0.5)
    x = tl.tensor([-1.0, 2.0], requires_grad=True)
    y = tl.heaviside(x, tl.tensor([0.5]))
    assert y.requires_grad  # as in PyTorch: the output is in the graph, and backward refuses
    with pytest.raises(RuntimeError, match="derivative for 'heaviside' is not implemented"):
        y.sum().backward()


def test_nextafter_against_numpy_and_pytorch(torch):
    a = np.array([0.0, 1.0, -1.0, 1e30, 2.0], np.float32)
    b = np.array([1.0, 0.0, -2.0, np.inf, 2.0], np.float32)
    _same(tl.nextafter(tl.tensor(a), tl.tensor(b)), np.nextafter(a, b))
    _same(tl.nextafter(tl.tensor(a), tl.tensor(b.astype(np.float64))),
          torch.nextafter(torch.tensor(a), torch.tensor(b.astype(np.float64))))  # promoted to float64
    ta, oa = torch.tensor(a, requires_grad=True), tl.tensor(a, requires_grad=True)
    torch.nextafter(ta, torch.tensor(b)).backward(torch.arange(5.0))
    tl.nextafter(oa, tl.tensor(b)).backward(tl.arange(5.0))
    _same(oa.grad, ta.grad)  # g where a moved, 0 where a == b
    with pytest.raises(NotImplementedError, match="nextafter_cpu.*Long"):
        tl.nextafter(tl.tensor([1]), tl.tensor([2]))


# ================================================================ gcd, lcm, shifts, bitwise ops

INTS = np.array([12, -18, 0, 7, 0, -100, 2 ** 40], np.int64)
INTS2 = np.array([8, 8, 5, 0, 0, 75, 2 ** 20], np.int64)


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm_against_numpy(name):
    _same(getattr(tl, name)(tl.tensor(INTS), tl.tensor(INTS2)), getattr(np, name)(INTS, INTS2))
    col = np.array([[6], [10]], np.int32)
    _same(getattr(tl.tensor(INTS[:4]), name)(tl.tensor(col)), getattr(np, name)(INTS[:4], col))


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm_match_pytorch(torch, name):
    pairs = [(INTS, INTS2), (INTS[:3].astype(np.int32), INTS2[:3].astype(np.int32)),
             (np.array([200, 30], np.uint8), np.array([12, 4], np.uint8)), (np.array([9, 6], np.uint8), INTS2[:2])]
    for a, b in pairs:
        _same(getattr(tl, name)(tl.tensor(a), tl.tensor(b)), getattr(torch, name)(torch.tensor(a), torch.tensor(b)))


@pytest.mark.parametrize("name", ["gcd", "lcm", "bitwise_left_shift", "bitwise_right_shift"])
def test_integer_ops_refuse_floats_and_bool_as_pytorch(name):
    with pytest.raises(NotImplementedError, match="not implemented for 'Float'.*shapes \\[2\\] and \\[1\\]"):
        getattr(tl, name)(tl.tensor([12.0, 18.0]), tl.tensor([8.0]))
    with pytest.raises(NotImplementedError, match="'Bool'"):
        getattr(tl, name)(tl.tensor([True]), tl.tensor([True]))


SHIFT_CASES = {
    "int64": (np.array([1, -8, 8, 3, -1], np.int64), np.array([1, 1, 70, -1, 63], np.int64)),
    "int32": (np.array([1, -8, 2 ** 30, 5], np.int32), np.array([31, 33, 1, -2], np.int32)),
    "uint8": (np.array([1, 200, 255, 3], np.uint8), np.array([1, 7, 8, 9], np.uint8)),
    "mixed": (np.array([1, 2], np.uint8), np.array([1, 9], np.int64)),
}


@pytest.mark.parametrize("case", SHIFT_CASES.values(), ids=SHIFT_CASES.keys())
def test_shifts_match_pytorch_including_out_of_range_counts(torch, case):
    a, b = case
    for name in ("bitwise_left_shift", "bitwise_right_shift"):
        _same(getattr(tl, name)(tl.tensor(a), tl.tensor(b)), getattr(torch, name)(torch.tensor(a), torch.tensor(b)))
    _same(tl.tensor(a) << tl.tensor(b), torch.tensor(a) << torch.tensor(b))
    _same(tl.tensor(a) >> tl.tensor(b), torch.tensor(a) >> torch.tensor(b))
    _same(tl.tensor(a) << 3, torch.tensor(a) << 3)  # a Python int keeps the tensor's dtype


def test_shifts_on_their_own_terms():
    x = tl.tensor([1, -8, 5])
    _same(x << 2, np.array([4, -32, 20]))
    _same(x >> 1, np.array([0, -4, 2]))
    _same(x >> 64, np.array([0, -1, 0]))  # by the width or more: the sign
    _same(x << -1, np.array([0, 0, 0]))   # by a negative count: 0
    _same(1 << tl.tensor([0, 3]), np.array([1, 8]))  # the reflected operators
    _same(64 >> tl.tensor([0, 3]), np.array([64, 8]))
    _same(tl.tensor([True, False]) << 1, np.array([2, 0]))  # bool and an int: int64, as PyTorch
    y = tl.tensor([1, 2, 3])
    y <<= 2
    _same(y, np.array([4, 8, 12]))
    y >>= 1
    _same(y, np.array([2, 4, 6]))


def test_bitwise_functions_and_operators(torch):
    a, b = np.array([12, -7, 0, 255], np.int64), np.array([10, 3, -1, 1], np.int64)
    for name, op in (("bitwise_and", "__and__"), ("bitwise_or", "__or__"), ("bitwise_xor", "__xor__")):
        want = getattr(np, name)(a, b)
        _same(getattr(tl, name)(tl.tensor(a), tl.tensor(b)), want)
        _same(getattr(tl.tensor(a), op)(tl.tensor(b)), want)
        _same(getattr(tl, name)(tl.tensor(a), tl.tensor(b)), getattr(torch, name)(torch.tensor(a), torch.tensor(b)))
    _same(tl.bitwise_not(tl.tensor(a)), ~a)
    _same(~tl.tensor([True, False]), np.array([False, True]))
    _same(tl.logical_xor(tl.tensor([1.0, 0.0, 2.0]), tl.tensor([1, 1, 0])), np.array([False, True, True]))


def test_bitwise_ops_refuse_floats():
    with pytest.raises(NotImplementedError, match="bitwise_and_cpu.*'Float'"):  # PyTorch's type and words
        tl.bitwise_and(tl.tensor([1.5]), tl.tensor([1.0]))
    with pytest.raises(NotImplementedError, match="lshift_cpu.*'Float'"):
        tl.tensor([1.0, 2.0]) << 1


def test_in_place_logical_and_bitwise_variants():
    x = tl.tensor([0.0, 2.0, -1.0])
    assert x.logical_not_() is x
    _same(x, np.array([1.0, 0.0, 0.0], np.float32))  # a float tensor keeps its dtype, as in PyTorch
    y = tl.tensor([12, 5, 7])
    y.bitwise_and_(tl.tensor([10, 4, 1]))
    _same(y, np.array([8, 4, 1]))
    y.gcd_(tl.tensor([6, 6, 6]))
    _same(y, np.array([2, 2, 1]))
    y.bitwise_not_()
    _same(y, np.array([-3, -3, -2]))
    m = tl.tensor([True, False])
    m.logical_xor_(tl.tensor([True, True]))
    _same(m, np.array([False, True]))


# ================================================================ dtype functions

FLOATS = [tl.float16, tl.float32, tl.float64]
INT_TYPES = [tl.uint8, tl.int32, tl.int64]
ALL = [tl.bool, *INT_TYPES, *FLOATS]


@pytest.mark.parametrize("d", FLOATS, ids=str)
def test_finfo_against_numpy(d):
    f, n = tl.finfo(d), np.finfo(d.np)
    assert (f.bits, f.eps, f.max, f.min) == (n.bits, float(n.eps), float(n.max), float(n.min))
    assert f.tiny == f.smallest_normal == float(n.smallest_normal)
    assert f.resolution == 10.0 ** -n.precision == pytest.approx(float(n.resolution), rel=1e-3)
    assert f.dtype == d.name and isinstance(f.max, float)


@pytest.mark.parametrize("d", INT_TYPES, ids=str)
def test_iinfo_against_numpy(d):
    i, n = tl.iinfo(d), np.iinfo(d.np)
    assert (i.bits, i.max, i.min, i.dtype) == (n.bits, int(n.max), int(n.min), d.name)


def test_finfo_iinfo_match_pytorch(torch):
    for d in FLOATS:
        assert repr(tl.finfo(d)) == repr(torch.finfo(getattr(torch, d.name)))
    for d in INT_TYPES:
        assert repr(tl.iinfo(d)) == repr(torch.iinfo(getattr(torch, d.name)))


def test_finfo_defaults_and_errors():
    assert tl.finfo() == tl.finfo(tl.float32) and tl.finfo(float).dtype == "float64"
    tl.set_default_dtype(tl.float64)
    try:
        assert tl.finfo().dtype == "float64"
    finally:
        tl.set_default_dtype(tl.float32)
    with pytest.raises(TypeError, match="floating point.*int32.*iinfo"):
        tl.finfo(tl.int32)
    with pytest.raises(TypeError, match="integer dtype.*float32.*finfo"):
        tl.iinfo(tl.float32)
    with pytest.raises(TypeError, match="bool is not supported by iinfo"):
        tl.iinfo(tl.bool)
    with pytest.raises(TypeError, match="argument 'type' \\(position 1\\) must be a dtype"):
        tl.finfo("float32")


def test_promote_types_result_type_can_cast_match_pytorch(torch):
    t = {d: getattr(torch, d.name) for d in ALL}
    for a in ALL:
        for b in ALL:
            assert tl.promote_types(a, b).name == str(torch.promote_types(t[a], t[b])).split(".")[1]
            assert tl.can_cast(a, b) == torch.can_cast(t[a], t[b]), (a, b)
    operands = [(np.array([1, 2], np.uint8), True), (np.array([1, 2], np.uint8), 1000), (np.array([1, 2]), 1.5),
                (np.array([1.0], np.float16), np.array(1.0)), (np.array(1.0), np.array([1], np.int32)),
                (np.array([True]), np.array(5, np.int32)), (np.array(5), 2.5), (1, 2.0), (1, True), (True, False)]
    for a, b in operands:
        ours = tl.result_type(*(tl.tensor(x) if isinstance(x, np.ndarray) else x for x in (a, b)))
        theirs = torch.result_type(*(torch.tensor(x) if isinstance(x, np.ndarray) else x for x in (a, b)))
        assert ours.name == str(theirs).split(".")[1], (a, b)


def test_dtype_functions_on_their_own_terms():
    assert tl.promote_types(tl.uint8, tl.int32) is tl.int32 and tl.promote_types(float, tl.float16) is tl.float64
    assert tl.result_type(tl.tensor([1, 2]), 1.0) is tl.float32
    assert tl.result_type(tl.tensor([1], dtype=tl.uint8), 1000) is tl.uint8  # a number never widens the dtype
    assert tl.can_cast(tl.float64, tl.float16) and tl.can_cast(tl.bool, tl.uint8) and tl.can_cast(tl.int64, tl.uint8)
    assert not tl.can_cast(tl.float32, tl.int64) and not tl.can_cast(tl.int32, tl.bool)


def test_dtype_functions_refuse_non_dtypes():
    with pytest.raises(TypeError, match=r"can_cast\(\): argument 'from_' \(position 1\) must be a dtype.*not int"):
        tl.can_cast(1, tl.int32)
    with pytest.raises(TypeError, match=r"can_cast\(\): argument 'to' \(position 2\) must be a dtype.*not str"):
        tl.can_cast(tl.int32, "float")
    with pytest.raises(TypeError, match=r"promote_types\(\): argument 'type2' \(position 2\)"):
        tl.promote_types(tl.int64, 1)
    with pytest.raises(TypeError, match=r"result_type\(\): argument 'other' \(position 2\) must be a Tensor"):
        tl.result_type(tl.tensor([1]), "a")
    with pytest.raises(TypeError, match=r"result_type\(\): argument 'tensor'.*list"):
        tl.result_type([1], tl.tensor([1]))


# ================================================================ byte / char / short

def test_byte_char_and_short(torch):
    x = np.array([1.7, 100.2, -3.0, 0.0], np.float32)
    _same(tl.tensor(x).byte(), torch.tensor(x).byte())
    _same(tl.tensor(x).char(), torch.tensor(x).char())
    _same(tl.tensor(x).short(), torch.tensor(x).short())


# ================================================================ the RNG state

def test_rng_state_round_trips_exactly():
    tl.manual_seed(123)
    tl.rand(5)
    state = tl.get_rng_state()
    assert state.dtype is tl.uint8 and state.dim() == 1
    first = (tl.rand(4), tl.randn(3), tl.randint(0, 100, (6,)), tl.empty(5).exponential_())
    tl.set_rng_state(state)
    again = (tl.rand(4), tl.randn(3), tl.randint(0, 100, (6,)), tl.empty(5).exponential_())
    assert all(tl.equal(a, b) for a, b in zip(first, again))
    assert tl.equal(tl.get_rng_state(), tl.get_rng_state())  # reading the state does not move the stream


def test_rng_state_is_a_snapshot_not_a_view():
    state = tl.get_rng_state()
    kept = state.clone()
    tl.rand(10)
    assert tl.equal(state, kept) and not tl.equal(tl.get_rng_state(), kept)


def test_generator_state_round_trips_as_a_uint8_tensor():
    g = tl.Generator().manual_seed(9)
    state = g.get_state()
    assert state.dtype is tl.uint8
    a = tl.empty(6).cauchy_(generator=g)
    g.set_state(state)
    assert tl.equal(tl.empty(6).cauchy_(generator=g), a)


def test_set_rng_state_refuses_what_is_not_a_state():
    n = tl.get_rng_state().numel()
    with pytest.raises(TypeError, match="uint8 tensor.*float32"):
        tl.set_rng_state(tl.zeros(n))
    with pytest.raises(TypeError, match="got list"):
        tl.set_rng_state([1, 2])
    with pytest.raises(RuntimeError, match=f"expected an RNG state of {n} bytes.*got 5"):
        tl.set_rng_state(tl.zeros(5, dtype=tl.uint8))


# ================================================================ the in-place samplers

N = 40_000


def _within(sample: np.ndarray, mean: float, var: float, k: float = 5.0) -> bool:
    """The sample mean within k standard errors (sqrt(var / n)) of the law's mean."""
    return abs(float(sample.mean()) - mean) <= k * math.sqrt(var / sample.size)


def test_exponential_law():
    tl.manual_seed(0)
    s = _np(tl.empty(N, dtype=tl.float64).exponential_(2.5))
    assert s.min() >= 0 and _within(s, 1 / 2.5, 1 / 2.5 ** 2)
    assert tl.empty(3).exponential_(lambd=1.0).dtype is tl.float32


def test_geometric_law_on_floats_and_integers():
    tl.manual_seed(1)
    p = 0.3
    for dt in (tl.float32, tl.int64):
        s = _np(tl.empty(N, dtype=dt).geometric_(p)).astype(np.float64)
        assert s.min() >= 1 and np.all(s == np.floor(s)) and _within(s, 1 / p, (1 - p) / p ** 2)
        assert abs(np.mean(s == 1) - p) <= 5 * math.sqrt(p * (1 - p) / N)  # P(first trial succeeds) = p


def test_log_normal_law():
    tl.manual_seed(2)
    mu, sigma = 0.5, 0.4
    s = _np(tl.empty(N, dtype=tl.float64).log_normal_(mu, sigma))
    mean, var = math.exp(mu + sigma ** 2 / 2), (math.exp(sigma ** 2) - 1) * math.exp(2 * mu + sigma ** 2)
    assert s.min() > 0 and _within(s, mean, var)
    assert _within(np.log(s), mu, sigma ** 2)


def test_cauchy_law_by_its_quartiles():
    tl.manual_seed(3)
    median, sigma = 2.0, 0.5
    s = _np(tl.empty(N, dtype=tl.float64).cauchy_(median, sigma))
    # the quartiles are median -/+ sigma; a sample quantile's standard error is sqrt(q (1 - q) / n) / density
    for q, x in ((0.25, median - sigma), (0.5, median), (0.75, median + sigma)):
        density = 1 / (math.pi * sigma * (1 + ((x - median) / sigma) ** 2))
        assert abs(np.quantile(s, q) - x) <= 5 * math.sqrt(q * (1 - q) / N) / density


def test_random_ranges_and_uniformity():
    tl.manual_seed(4)
    s = _np(tl.empty(N).random_(-3, 5))
    assert set(np.unique(s)) == set(range(-3, 5))
    counts = np.bincount((s + 3).astype(int), minlength=8) / N
    assert np.all(np.abs(counts - 1 / 8) <= 5 * math.sqrt((1 / 8) * (7 / 8) / N))
    assert set(np.unique(_np(tl.empty(2000, dtype=tl.int64).random_(3)))) == {0, 1, 2}
    assert set(np.unique(_np(tl.empty(2000).random_(to=2)))) == {0, 1}
    assert set(np.unique(_np(tl.empty(2000, dtype=tl.bool).random_()))) == {False, True}
    u8 = _np(tl.empty(N, dtype=tl.uint8).random_())
    assert u8.min() == 0 and u8.max() == 255
    f = _np(tl.empty(N).random_())
    assert f.min() >= 0 and f.max() <= 2 ** 24 and np.all(f == np.floor(f)) and f.max() > 2 ** 23
    lo = _np(tl.empty(1000, dtype=tl.int32).random_(**{"from": 2 ** 31 - 5}))
    assert lo.min() >= 2 ** 31 - 5


def test_samplers_take_a_generator():
    for fill in (lambda t, g: t.random_(0, 10, generator=g), lambda t, g: t.exponential_(generator=g),
                 lambda t, g: t.geometric_(0.5, generator=g), lambda t, g: t.cauchy_(generator=g),
                 lambda t, g: t.log_normal_(generator=g)):
        a = fill(tl.empty(8), tl.Generator().manual_seed(5))
        tl.manual_seed(0)
        b = fill(tl.empty(8), tl.Generator().manual_seed(5))
        assert tl.equal(a, b)


def test_samplers_refuse_bad_parameters_and_dtypes():
    x = tl.empty(3)
    cases = [(lambda: x.exponential_(0), RuntimeError, "lambda > 0.0"),
             (lambda: x.geometric_(1.0), RuntimeError, "p to be in \\(0, 1\\)"),
             (lambda: x.cauchy_(0, -1), RuntimeError, "sigma > 0.0"),
             (lambda: x.log_normal_(1, 0), RuntimeError, "std > 0.0"),
             (lambda: tl.empty(3, dtype=tl.int64).exponential_(), RuntimeError, "continuous.*int64"),
             (lambda: tl.empty(3, dtype=tl.int64).log_normal_(), RuntimeError, "continuous.*int64"),
             (lambda: tl.empty(3, dtype=tl.bool).geometric_(0.5), NotImplementedError, "'Bool'"),
             (lambda: x.random_(5, 3), RuntimeError, "from=5 >= to=3"),
             (lambda: tl.empty(3, dtype=tl.uint8).random_(-3, 5), RuntimeError, "out of bounds for tinygrad_lab.uint8"),
             (lambda: tl.empty(3, dtype=tl.int32).random_(0, 2 ** 32), RuntimeError, "out of bounds"),
             (lambda: x.random_(2.5, 7), TypeError, "must be integers"),
             (lambda: tl.empty(3, requires_grad=True).exponential_(), RuntimeError, "leaf Variable")]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()


# ================================================================ set_printoptions

@pytest.fixture
def printoptions(torch):
    """Leaves both libraries' print options at their defaults afterwards."""
    yield torch
    tl.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


@pytest.fixture
def our_printoptions():
    yield
    tl.set_printoptions(profile="default")


PRINT_CASES = [dict(precision=2), dict(precision=7), dict(threshold=5), dict(threshold=5, edgeitems=1),
               dict(linewidth=30), dict(profile="short"), dict(profile="full"), dict(sci_mode=True),
               dict(sci_mode=False), dict(profile="short", precision=6)]


@pytest.mark.parametrize("options", PRINT_CASES, ids=[str(o) for o in PRINT_CASES])
def test_printoptions_change_repr_as_in_pytorch(printoptions, options):
    torch = printoptions
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(12).astype(np.float32) * 100, rng.standard_normal((4, 9)).astype(np.float32),
              np.arange(2000, dtype=np.float32).reshape(40, 50), np.array([1e-6, 1.0, 1e6], np.float32),
              np.arange(20), np.array([3.0, 4.0], np.float32)]
    tl.set_printoptions(**options)
    torch.set_printoptions(**options)
    for a in arrays:
        assert repr(tl.tensor(a)) == repr(torch.tensor(a)), options


def test_printoptions_are_restored_by_the_default_profile(our_printoptions):
    x = tl.tensor([1.23456789, 2.0])
    before = repr(x)
    tl.set_printoptions(precision=2, sci_mode=True)
    assert repr(x) == "tensor([1.23e+00, 2.00e+00])" != before
    tl.set_printoptions(linewidth=20, threshold=1, edgeitems=1)  # sci_mode is reset by every call, as in PyTorch
    assert repr(tl.tensor([1.23456789, 2.0, 3.0])) == "tensor([1.23,  ...,\n        3.00])"
    tl.set_printoptions(profile="default")
    assert repr(x) == before == "tensor([1.2346, 2.0000])"
    with pytest.raises(ValueError, match="unknown profile 'long'"):
        tl.set_printoptions(profile="long")


# ================================================================ fill_diagonal_

@pytest.mark.parametrize("shape, wrap", [((3, 3), False), ((7, 3), False), ((7, 3), True), ((3, 7), True),
                                         ((3, 3, 3), False), ((1, 1), False)])
def test_fill_diagonal_against_numpy(shape, wrap):
    a = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    want = a.copy()
    np.fill_diagonal(want, -1.5, wrap=wrap)
    x = tl.tensor(a)
    assert x.fill_diagonal_(-1.5, wrap=wrap) is x
    _same(x, want)


def test_fill_diagonal_matches_pytorch(torch):
    for shape, wrap, value in [((7, 3), True, 2.5), ((7, 3), False, -1), ((3, 5), False, 9), ((4, 4, 4), False, 0.5)]:
        a = np.arange(math.prod(shape)).reshape(shape)
        for arr in (a, a.astype(np.float64)):  # a float value into an integer tensor is cast, as PyTorch casts it
            _same(tl.tensor(arr).fill_diagonal_(value, wrap), torch.tensor(arr).fill_diagonal_(value, wrap))


def test_fill_diagonal_gradient_and_errors():
    w = tl.tensor(np.ones((3, 3)), requires_grad=True)
    y = w * 2
    y.fill_diagonal_(0.0)
    y.sum().backward()
    _same(w.grad, 2 * (1 - np.eye(3)))  # nothing flows through the overwritten diagonal
    with pytest.raises(RuntimeError, match="dimensions must be larger than 1.*\\[3\\]"):
        tl.zeros(3).fill_diagonal_(1)
    with pytest.raises(RuntimeError, match="equal length.*\\[2, 3, 3\\]"):
        tl.zeros(2, 3, 3).fill_diagonal_(1)


# ================================================================ on every device

def test_new_ops_on_each_device(device):
    x = tl.tensor([[1.0, NAN], [3.0, -4.0]], device=device)
    _same(tl.fmax(x, 0.0).cpu(), np.fmax(_np(x.cpu()), np.float32(0)))
    _same(tl.gcd(tl.tensor([12, 18], device=device), tl.tensor([8, 4], device=device)).cpu(), np.array([4, 2]))
    _same((tl.tensor([1, 2], device=device) << 3).cpu(), np.array([8, 16]))
    _same(tl.zeros(2, 2, device=device).fill_diagonal_(1).cpu(), np.eye(2, dtype=np.float32))
    for fill in (lambda t: t.exponential_(), lambda t: t.geometric_(0.5), lambda t: t.random_(0, 3),
                 lambda t: t.cauchy_(), lambda t: t.log_normal_()):
        assert fill(tl.empty(4, device=device)).device == tl.empty(1, device=device).device
