"""tinygrad_lab.distributions against torch.distributions: log_prob, entropy, mean, mode, variance,
stddev, cdf/icdf and their gradients on the same float64 parameters; rsample gradients against
finite differences; seeded sample statistics; shapes (batch, event, sample_shape, expand);
kl_divergence; validation with PyTorch's ValueErrors."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import distributions as D

RTOL, ATOL = 1e-12, 1e-14
_rng = np.random.default_rng(20)


def _t(lib, a, grad=False):
    return lib.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


# name -> (constructor(lib, *params), parameter arrays, values to evaluate log_prob/cdf at)
_LOC, _SCALE = _rng.standard_normal((2, 3)), _rng.uniform(0.5, 2.0, (2, 3))
_PROBS = _rng.dirichlet(np.ones(4), size=3)
CASES = {
    "Normal": (lambda m, a, b: m.distributions.Normal(a, b), [_LOC, _SCALE], _rng.standard_normal((5, 2, 3)) * 2),
    "Normal broadcast": (lambda m, a, b: m.distributions.Normal(a, b), [_LOC[0], _SCALE[:, :1]],
                         _rng.standard_normal((2, 3))),
    "Laplace": (lambda m, a, b: m.distributions.Laplace(a, b), [_LOC, _SCALE], _rng.standard_normal((4, 2, 3)) * 2),
    "Exponential": (lambda m, r: m.distributions.Exponential(r), [_SCALE], _rng.exponential(1.0, (4, 2, 3))),
    "Uniform": (lambda m, lo, hi: m.distributions.Uniform(lo, hi), [_LOC - 3, _LOC + _SCALE + 2],
                _LOC + _rng.uniform(-0.5, 0.5, (4, 2, 3))),
    "Bernoulli probs": (lambda m, p: m.distributions.Bernoulli(probs=p), [_rng.uniform(0.05, 0.95, (2, 3))],
                        _rng.integers(0, 2, (4, 2, 3)).astype(np.float64)),
    "Bernoulli logits": (lambda m, lg: m.distributions.Bernoulli(logits=lg), [_rng.standard_normal((2, 3)) * 3],
                         _rng.integers(0, 2, (4, 2, 3)).astype(np.float64)),
    "Categorical probs": (lambda m, p: m.distributions.Categorical(probs=p), [_PROBS], _rng.integers(0, 4, (5, 3))),
    "Categorical logits": (lambda m, lg: m.distributions.Categorical(logits=lg), [_rng.standard_normal((3, 4))],
                           _rng.integers(0, 4, (5, 3))),
    "Categorical unnormalised": (lambda m, p: m.distributions.Categorical(p), [_PROBS * 7],
                                 _rng.integers(0, 4, (2, 3))),
    "OneHotCategorical": (lambda m, p: m.distributions.OneHotCategorical(p), [_PROBS],
                          np.eye(4)[_rng.integers(0, 4, (5, 3))]),
    "Independent Normal": (lambda m, a, b: m.distributions.Independent(m.distributions.Normal(a, b), 1),
                           [_LOC, _SCALE], _rng.standard_normal((4, 2, 3))),
    "Independent Bernoulli 2": (lambda m, p: m.distributions.Independent(m.distributions.Bernoulli(p), 2),
                                [_rng.uniform(0.1, 0.9, (2, 3))], _rng.integers(0, 2, (2, 3)).astype(np.float64)),
}
PROPERTIES = ["mean", "mode", "variance", "stddev"]
CONTINUOUS = ("Normal", "Normal broadcast", "Laplace", "Exponential", "Uniform")


def _build(lib, name, grad=True):
    make, params, _ = CASES[name]
    leaves = [_t(lib, a, grad) for a in params]
    return make(lib, *leaves), leaves


def _assert_close(ours, theirs, what):
    assert tuple(ours.shape) == tuple(theirs.shape), f"{what}: shape {tuple(ours.shape)} vs {tuple(theirs.shape)}"
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=RTOL, atol=ATOL, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("name", CASES)
def test_shapes_and_properties_match_torch(torch, name):
    ours, _ = _build(tl, name)
    theirs, _ = _build(torch, name)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    if name != "Uniform":  # (its support's bounds are the parameter tensors, printed by each library)
        assert repr(ours.support) == repr(theirs.support)
    assert repr(ours).replace("tinygrad_lab.", "") == repr(theirs).replace("torch.Size", "Size")
    for prop in PROPERTIES:
        _assert_close(getattr(ours, prop), getattr(theirs, prop), f"{name}.{prop}")


@pytest.mark.parametrize("name", CASES)
def test_log_prob_entropy_and_their_gradients_match_torch(torch, name):
    value = CASES[name][2]
    results = []
    for lib in (tl, torch):
        dist, leaves = _build(lib, name)
        v = lib.tensor(value) if value.dtype.kind == "i" else _t(lib, value)
        log_prob, entropy = dist.log_prob(v), dist.entropy()
        w = np.random.default_rng(3).standard_normal(tuple(log_prob.shape))
        ((log_prob * lib.tensor(w)).sum() + (entropy * 0.7).sum()).backward()
        results.append((log_prob, entropy, [p.grad for p in leaves]))
    (lp, ent, grads), (tlp, tent, tgrads) = results
    _assert_close(lp, tlp, f"{name}.log_prob")
    _assert_close(ent, tent, f"{name}.entropy")
    for i, (g, h) in enumerate(zip(grads, tgrads)):
        _assert_close(g, h, f"{name}: gradient of parameter {i}")


@pytest.mark.parametrize("name", [n for n in CONTINUOUS if n != "Normal broadcast"])
def test_cdf_and_icdf_match_torch(torch, name):
    value = CASES[name][2]
    for method, arg in (("cdf", value), ("icdf", _rng.uniform(0.01, 0.99, value.shape))):
        out = [getattr(_build(lib, name)[0], method)(_t(lib, arg)) for lib in (tl, torch)]
        np.testing.assert_allclose(_np(out[0]), _np(out[1]), rtol=1e-10, atol=1e-14, err_msg=f"{name}.{method}")


@pytest.mark.parametrize("name", ["Normal", "Laplace", "Exponential", "Uniform", "Independent Normal"])
def test_rsample_gradients_match_finite_differences(name):
    # the same noise for every evaluation (reseeded), so a sample is a smooth function of the parameters
    _, params, _ = CASES[name]

    def total(arrays, grad=False):
        tl.manual_seed(7)
        dist, leaves = _build_from(name, arrays, grad)
        out = dist.rsample((3,))
        return (out * tl.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))).sum(), leaves

    value, leaves = total(params, grad=True)
    value.backward()
    h = 1e-6
    for i, (p, leaf) in enumerate(zip(params, leaves)):
        numeric = np.zeros_like(p)
        for idx in np.ndindex(p.shape):
            up, down = [a.copy() for a in params], [a.copy() for a in params]
            up[i][idx] += h
            down[i][idx] -= h
            numeric[idx] = (total(up)[0].item() - total(down)[0].item()) / (2 * h)
        np.testing.assert_allclose(leaf.grad.numpy(), numeric, rtol=1e-6, atol=1e-8, err_msg=f"{name} param {i}")


def _build_from(name, arrays, grad):
    make = CASES[name][0]
    leaves = [_t(tl, a, grad) for a in arrays]
    return make(tl, *leaves), leaves


SAMPLE_STATS = ["Normal", "Laplace", "Exponential", "Uniform", "Bernoulli probs", "Categorical probs",
                "OneHotCategorical"]


@pytest.mark.parametrize("name", SAMPLE_STATS)
def test_seeded_samples_have_the_right_statistics(name):
    dist, _ = _build(tl, name, grad=False)
    tl.manual_seed(0)
    samples = dist.sample((40000,))
    assert tuple(samples.shape) == (40000,) + tuple(dist.batch_shape) + tuple(dist.event_shape)
    assert not samples.requires_grad
    tl.manual_seed(0)
    np.testing.assert_array_equal(dist.sample((40000,)).numpy(), samples.numpy())  # seeded: reproducible
    x = samples.numpy().astype(np.float64)
    if name.startswith("Categorical"):
        counts = np.stack([(x == k).mean(axis=0) for k in range(4)], -1)  # empirical class frequencies
        np.testing.assert_allclose(counts, _PROBS, atol=0.015)
        return
    # the sample mean and variance within 5 standard errors of the distribution's
    mean, var = dist.mean.numpy(), dist.variance.numpy()
    se = np.sqrt(var / x.shape[0])
    assert np.all(np.abs(x.mean(axis=0) - mean) < 5 * se + 1e-12), (x.mean(axis=0), mean)
    np.testing.assert_allclose(x.var(axis=0), var, rtol=0.05)


def test_sample_and_rsample_dtypes_and_graph():
    loc = tl.zeros(2, requires_grad=True)
    d = D.Normal(loc, 1.0)
    assert d.rsample((3,)).requires_grad and not d.sample((3,)).requires_grad
    assert D.Categorical(tl.ones(3)).sample((2,)).dtype == tl.int64
    assert D.Bernoulli(tl.tensor([0.5])).sample().dtype == tl.float32
    assert D.Normal(0.0, 1.0).sample().dtype == tl.float32 and D.Normal(0.0, 1.0).sample().shape == ()
    with pytest.raises(NotImplementedError):
        D.Categorical(tl.ones(3)).rsample()


def test_expand_and_enumerate_support_match_torch(torch):
    for lib in (tl, torch):
        lib.manual_seed(0)
    pairs = [(lambda m: m.distributions.Normal(m.zeros(3), m.ones(3)).expand((2, 3)), "Normal"),
             (lambda m: m.distributions.Categorical(m.ones(2, 4)).expand((5, 2)), "Categorical"),
             (lambda m: m.distributions.Bernoulli(m.tensor([0.3, 0.6])).expand((4, 2)), "Bernoulli"),
             (lambda m: m.distributions.Independent(m.distributions.Normal(m.zeros(3, 2), 1.0), 1).expand((4, 3)),
              "Independent")]
    for make, name in pairs:
        ours, theirs = make(tl), make(torch)
        assert tuple(ours.batch_shape) == tuple(theirs.batch_shape), name
        assert tuple(ours.sample((2,)).shape) == tuple(theirs.sample((2,)).shape), name
        value = theirs.sample()
        np.testing.assert_allclose(ours.log_prob(tl.tensor(value.numpy())).detach().numpy(),
                                   theirs.log_prob(value).detach().numpy(), rtol=1e-6, err_msg=f"{name} expanded")
    for make in (lambda m: m.distributions.Categorical(m.ones(2, 3)), lambda m: m.distributions.Bernoulli(
            m.tensor([0.2, 0.7])), lambda m: m.distributions.OneHotCategorical(m.ones(2, 3))):
        for expand in (True, False):
            a, b = make(tl).enumerate_support(expand), make(torch).enumerate_support(expand)
            assert tuple(a.shape) == tuple(b.shape)
            np.testing.assert_array_equal(a.numpy(), b.numpy())


# ---------------------------------------------------------------- KL divergence

_Q_LOGITS = _rng.standard_normal((3, 4))
KL_PAIRS = [
    (lambda m: m.distributions.Normal(_t(m, _LOC, True), _t(m, _SCALE, True)),
     lambda m: m.distributions.Normal(_t(m, _LOC[::-1].copy()), _t(m, _SCALE * 1.5))),
    (lambda m: m.distributions.Laplace(_t(m, _LOC, True), _t(m, _SCALE, True)),
     lambda m: m.distributions.Laplace(0.3, 2.0)),
    (lambda m: m.distributions.Exponential(_t(m, _SCALE, True)), lambda m: m.distributions.Exponential(1.3)),
    (lambda m: m.distributions.Uniform(_t(m, _LOC, True), _t(m, _LOC + 1, True)),
     lambda m: m.distributions.Uniform(_t(m, _LOC - np.array([[0.5, 0.5, -0.1]] * 2)),
                                       _t(m, _LOC + np.array([[2.0, 0.8, 2.0], [1.0, 3.0, 1.5]])))),
    (lambda m: m.distributions.Bernoulli(_t(m, [0.0, 0.3, 1.0, 0.5], True)),
     lambda m: m.distributions.Bernoulli(_t(m, [0.2, 0.0, 0.9, 1.0]))),
    (lambda m: m.distributions.Bernoulli(logits=_t(m, [-3.0, 0.3, 5.0], True)),
     lambda m: m.distributions.Bernoulli(logits=_t(m, [2.0, -1.0, 0.0]))),
    (lambda m: m.distributions.Categorical(_t(m, _PROBS, True)),
     lambda m: m.distributions.Categorical(logits=_t(m, _Q_LOGITS))),
    (lambda m: m.distributions.Categorical(_t(m, [[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])),
     lambda m: m.distributions.Categorical(_t(m, [[0.4, 0.0, 0.6], [0.3, 0.3, 0.4]]))),
    (lambda m: m.distributions.OneHotCategorical(_t(m, _PROBS, True)),
     lambda m: m.distributions.OneHotCategorical(_t(m, _PROBS[::-1].copy()))),
    (lambda m: m.distributions.Independent(m.distributions.Normal(_t(m, _LOC, True), 1.0), 1),
     lambda m: m.distributions.Independent(m.distributions.Normal(0.0, _t(m, _SCALE)), 1)),
]


@pytest.mark.parametrize("index", range(len(KL_PAIRS)))
def test_kl_divergence_matches_torch(torch, index):
    make_p, make_q = KL_PAIRS[index]
    ours, theirs = (lib.distributions.kl_divergence(make_p(lib), make_q(lib)) for lib in (tl, torch))
    _assert_close(ours, theirs, "kl")


def test_kl_divergence_gradients_match_torch(torch):
    grads = []
    for lib in (tl, torch):
        loc, scale = _t(lib, _LOC, True), _t(lib, _SCALE, True)
        kl = lib.distributions.kl_divergence(lib.distributions.Normal(loc, scale), lib.distributions.Normal(0.5, 2.0))
        kl.sum().backward()
        grads.append((loc.grad, scale.grad))
    for a, b in zip(*grads):
        _assert_close(a, b, "kl gradient")


def test_kl_matches_monte_carlo():
    # KL(p || q) = E_p[log p - log q], estimated from 200k seeded samples
    p, q = D.Laplace(0.3, 1.2), D.Laplace(-0.5, 0.7)
    tl.manual_seed(3)
    x = p.sample((200000,))
    estimate = (p.log_prob(x) - q.log_prob(x)).mean().item()
    assert abs(estimate - D.kl_divergence(p, q).item()) < 0.01


def test_kl_errors_and_registration():
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p = Normal, q = Bernoulli"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.3))

    class Wide(D.Normal):
        pass

    assert D.kl_divergence(Wide(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 0.0  # a subclass uses its base's rule

    @D.register_kl(Wide, D.Normal)
    def _always_one(p, q):
        return tl.ones(())

    assert D.kl_divergence(Wide(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 1.0


# ---------------------------------------------------------------- validation

ERRORS = [
    (lambda m: m.distributions.Normal(0.0, -1.0),
     "Expected parameter scale (Tensor of shape ()) of distribution Normal(loc: 0.0, scale: -1.0) to satisfy the "
     "constraint GreaterThan(lower_bound=0.0), but found invalid values:\n-1.0"),
    (lambda m: m.distributions.Uniform(1.0, 0.0),
     "Expected parameter low (Tensor of shape ()) of distribution Uniform(low: 1.0, high: 0.0) to satisfy the "
     "constraint LessThan(upper_bound=0.0), but found invalid values:\n1.0"),
    (lambda m: m.distributions.Uniform(0.0, 1.0).log_prob(m.tensor(2.0)),
     "Expected value argument (Tensor of shape ()) to be within the support (Interval(lower_bound=0.0, "
     "upper_bound=1.0)) of the distribution Uniform(low: 0.0, high: 1.0), but found invalid values:\n2.0"),
    (lambda m: m.distributions.Categorical(m.tensor([0.2, -0.8])), "to satisfy the constraint Simplex()"),
    (lambda m: m.distributions.Categorical(probs=m.tensor([0.2, 0.8]), logits=m.tensor([0.2, 0.8])),
     "Either `probs` or `logits` must be specified, but not both."),
    (lambda m: m.distributions.Categorical(m.tensor([0.2, 0.8])).log_prob(m.tensor(2)),
     "to be within the support (IntegerInterval(lower_bound=0, upper_bound=1))"),
    (lambda m: m.distributions.Bernoulli(logits=m.tensor([0.2, 0.8])).log_prob(m.tensor([0.5, 1.0])),
     "to be within the support (Boolean())"),
    (lambda m: m.distributions.Bernoulli(m.tensor([1.5])), "to satisfy the constraint Interval(lower_bound=0.0, "
                                                           "upper_bound=1.0)"),
    (lambda m: m.distributions.Exponential(m.tensor([1.0, 0.0])), "GreaterThan(lower_bound=0.0)"),
    (lambda m: m.distributions.Normal(0.0, 1.0).log_prob(3), "The value argument to log_prob must be a Tensor"),
    (lambda m: m.distributions.Normal(m.zeros(2), 1.0).log_prob(m.zeros(3)),
     "Value is not broadcastable with batch_shape+event_shape"),
    (lambda m: m.distributions.OneHotCategorical(m.ones(3)).log_prob(m.zeros(2)),
     "The right-most size of value must match event_shape"),
    (lambda m: m.distributions.Normal(m.zeros(2), m.ones(2)).log_prob(m.tensor([[1.0, float("nan")]])),
     "to be within the support (Real())"),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_validation_errors_match_torch(torch, index):
    make, message = ERRORS[index]
    for lib in (tl, torch):
        with pytest.raises(ValueError) as info:
            make(lib)
        text = str(info.value).replace("torch.Size", "Size")
        assert message in text, f"{lib.__name__}: {text}"


def test_validation_can_be_turned_off():
    d = D.Normal(0.0, -1.0, validate_args=False)       # no error: the caller asked for none
    assert math.isnan(d.log_prob(tl.tensor(0.0)).item())
    D.Distribution.set_default_validate_args(False)
    try:
        D.Uniform(1.0, 0.0)
        assert D.Uniform(0.0, 1.0).log_prob(tl.tensor(2.0)).item() == -math.inf
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Uniform(1.0, 0.0)


def test_a_reinforce_step_runs():
    # the pytorch/examples REINFORCE pattern: sample an action, then -log_prob * return as the loss
    policy = tl.nn.Linear(4, 2)
    tl.manual_seed(0)
    state = tl.randn(4)
    dist = D.Categorical(logits=policy(state))
    action = dist.sample()
    loss = -dist.log_prob(action) * 1.5
    loss.backward()
    assert policy.weight.grad is not None and policy.weight.grad.shape == (2, 4)


def test_validation_records_no_graph():
    """The parameter and support checks are not part of any gradient: with validation on, a Categorical
    on probs that require grad records only its normalisation (sum, div), and log_prob only its own ops."""
    from tinygrad_lab.autograd import events
    probs = tl.tensor([0.2, 0.3, 0.5], requires_grad=True)
    recorded = []

    def seen(event):
        if isinstance(event, events.OpEvent) and event.node is not None:
            recorded.append(event.fn.__name__)

    with events.subscribe(seen):
        d = D.Categorical(probs)
        created = list(recorded)
        d.log_prob(tl.tensor(2))
    assert created == ["Sum", "Div"]
    assert not {"Sub", "Abs", "Remainder"} & set(recorded), recorded


_CHECKED = np.array([[-1.5, 0.0, 0.25, 0.75], [1.0, 2.0, np.nan, 0.0], [0.1, 0.2, 0.3, 0.4]])
CONSTRAINTS = {
    "real": lambda c: c.real, "boolean": lambda c: c.boolean, "positive": lambda c: c.positive,
    "nonnegative": lambda c: c.nonnegative, "unit_interval": lambda c: c.unit_interval,
    "simplex": lambda c: c.simplex, "one_hot": lambda c: c.one_hot, "real_vector": lambda c: c.real_vector,
    "greater_than(0.1)": lambda c: c.greater_than(0.1), "greater_than_eq(0.1)": lambda c: c.greater_than_eq(0.1),
    "less_than(0.5)": lambda c: c.less_than(0.5), "interval(0, 1)": lambda c: c.interval(0.0, 1.0),
    "half_open_interval(0, 1)": lambda c: c.half_open_interval(0.0, 1.0),
    "integer_interval(0, 2)": lambda c: c.integer_interval(0, 2),
    "independent(positive, 1)": lambda c: c.independent(c.positive, 1),
}


@pytest.mark.parametrize("make", CONSTRAINTS.values(), ids=CONSTRAINTS)
def test_constraint_checks_match_pytorch(make, torch):
    """Each constraint's check, computed on the backend's arrays, against PyTorch's on the same values
    (negative, zero, fractional, whole, nan; rows that are and are not a simplex or one-hot)."""
    values = [_CHECKED, np.eye(4)[[0, 2]], np.array([[0.0, 1.0, 1.0, 0.0]])]
    for v in values:
        ours = make(D.constraints).check(tl.tensor(v))
        theirs = make(torch.distributions.constraints).check(torch.tensor(v))
        assert ours.dtype == tl.bool and ours.shape == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_interval_check_with_tensor_bounds_by_hand():
    """A Uniform's support has the parameter tensors as its bounds: compared elementwise."""
    support = D.Uniform(tl.tensor([0.0, 1.0]), tl.tensor([1.0, 3.0])).support
    assert support.check(tl.tensor([0.5, 0.5])).tolist() == [True, False]
