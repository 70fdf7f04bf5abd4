"""kl_divergence(p, q): the Kullback-Leibler divergence KL(p ‖ q) = E_p[log p(x) - log q(x)], in closed
form for the pairs registered here (register_kl adds more)."""
from __future__ import annotations

from .. import linalg
from ..nn import functional as F
from ..ops import movement as mv
from ..ops import elementwise as ew
from ..ops import reduce as rd
from ..ops import special as sp
from ..ops.shapes import broadcast_shape
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import sum_rightmost
from .exponential import Exponential
from .gamma import Beta, Dirichlet, Gamma, Poisson
from .independent import Independent
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal, half_log_det
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .uniform import Uniform

__all__ = ["kl_divergence", "register_kl"]

_KL: dict = {}
_INF = float("inf")


def register_kl(type_p: type, type_q: type):
    """Decorator: @register_kl(P, Q) def kl(p, q): ... computes KL(p ‖ q) for those classes."""
    def decorate(fn):
        _KL[type_p, type_q] = fn
        return fn
    return decorate


def kl_divergence(p, q):
    """KL(p ‖ q), one value per batch element; the most specific registered rule for (type(p), type(q))."""
    for type_p in type(p).__mro__:
        for type_q in type(q).__mro__:
            fn = _KL.get((type_p, type_q))
            if fn is not None:
                return fn(p, q)
    raise NotImplementedError(f"No KL(p || q) is implemented for p = {type(p).__name__}, q = {type(q).__name__}")


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    """(σp²/σq² + (μp - μq)²/σq² - 1 - log(σp²/σq²)) / 2"""
    var_ratio = ew.pow(ew.div(p.scale, q.scale), 2)
    t1 = ew.pow(ew.div(ew.sub(p.loc, q.loc), q.scale), 2)
    return ew.mul(ew.sub(ew.sub(ew.add(var_ratio, t1), 1), ew.log(var_ratio)), 0.5)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    """p·log(p/q) + (1 - p)·log((1 - p)/(1 - q)), from the logits (softplus keeps it exact); inf where q
    gives probability 0 to an outcome p can produce."""
    t1 = ew.mul(p.probs, ew.sub(F.softplus(ew.neg(q.logits)), F.softplus(ew.neg(p.logits))))
    t1 = ew.where(ew.eq(p.probs, 0), 0.0, ew.where(ew.eq(q.probs, 0), _INF, t1))
    t2 = ew.mul(ew.sub(1, p.probs), ew.sub(F.softplus(q.logits), F.softplus(p.logits)))
    t2 = ew.where(ew.eq(p.probs, 1), 0.0, ew.where(ew.eq(q.probs, 1), _INF, t2))
    return ew.add(t1, t2)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    """Σ_k p_k·(log p_k - log q_k), with 0·log 0 = 0 and inf where q_k = 0 < p_k."""
    t = ew.mul(p.probs, ew.sub(p.logits, q.logits))
    t = ew.where(ew.eq(p.probs, 0), 0.0, ew.where(ew.eq(q.probs, 0), _INF, t))
    return rd.sum(t, -1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    """log((q.high - q.low)/(p.high - p.low)), inf unless [p.low, p.high] lies inside [q.low, q.high]."""
    result = ew.log(ew.div(ew.sub(q.high, q.low), ew.sub(p.high, p.low)))
    outside = ew.logical_or(ew.gt(q.low, p.low), ew.lt(q.high, p.high))
    return ew.where(outside, _INF, result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    """λq/λp - 1 - log(λq/λp)"""
    ratio = ew.div(q.rate, p.rate)
    return ew.sub(ew.sub(ratio, 1), ew.log(ratio))


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    """-log(bp/bq) + |μp - μq|/bq + (bp/bq)·exp(-|μp - μq|/bp) - 1"""
    scale_ratio = ew.div(p.scale, q.scale)
    distance = ew.abs(ew.sub(p.loc, q.loc))
    t3 = ew.mul(scale_ratio, ew.exp(ew.div(ew.neg(distance), p.scale)))
    return ew.sub(ew.add(ew.add(ew.neg(ew.log(scale_ratio)), ew.div(distance, q.scale)), t3), 1)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independents with different reinterpreted_batch_ndims")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    """(tr(Σq⁻¹ Σp) + (μq - μp)ᵀ Σq⁻¹ (μq - μp) - k) / 2 + log(det Σq / det Σp) / 2, with Σ = L Lᵀ:
    the trace is ‖Lq⁻¹ Lp‖² and the quadratic form ‖Lq⁻¹ (μq - μp)‖², two triangular solves."""
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         "computed")
    k = p.event_shape[0]
    batch = broadcast_shape([tuple(p.batch_shape), tuple(q.batch_shape)], "kl_divergence")
    lp, lq = (mv.expand(d._unbroadcasted_scale_tril, batch + (k, k)) for d in (p, q))
    a = linalg.solve_triangular(lq, lp, upper=False)
    b = linalg.solve_triangular(lq, mv.unsqueeze(mv.expand(ew.sub(q.loc, p.loc), batch + (k,)), -1), upper=False)
    squares = ew.add(rd.sum(ew.mul(a, a), (-2, -1)), rd.sum(ew.mul(b, b), (-2, -1)))
    return ew.add(ew.mul(ew.sub(squares, k), 0.5), ew.sub(half_log_det(lq), half_log_det(lp)))


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    """cq log(rp / rq) + log Γ(cq) - log Γ(cp) + (cp - cq) ψ(cp) + (rq - rp) cp / rp"""
    cp, rp, cq, rq = p.concentration, p.rate, q.concentration, q.rate
    return ew.add(ew.add(ew.mul(cq, ew.log(ew.div(rp, rq))), ew.sub(sp.lgamma(cq), sp.lgamma(cp))),
                  ew.add(ew.mul(ew.sub(cp, cq), sp.digamma(cp)), ew.mul(ew.sub(rq, rp), ew.div(cp, rp))))


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    """log Γ(Σ cp) - log Γ(Σ cq) - Σ (log Γ(cp) - log Γ(cq)) + Σ (cp - cq) (ψ(cp) - ψ(Σ cp))"""
    cp, cq = p.concentration, q.concentration
    total_p = rd.sum(cp, -1)
    t1 = ew.sub(sp.lgamma(total_p), sp.lgamma(rd.sum(cq, -1)))
    t2 = rd.sum(ew.sub(sp.lgamma(cp), sp.lgamma(cq)), -1)
    t3 = rd.sum(ew.mul(ew.sub(cp, cq), ew.sub(sp.digamma(cp), sp.digamma(mv.unsqueeze(total_p, -1)))), -1)
    return ew.add(ew.sub(t1, t2), t3)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    """the KL of the two Dirichlets ((a, b)) they are"""
    return _kl_dirichlet_dirichlet(p._dirichlet, q._dirichlet)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    """λp (log λp - log λq) - (λp - λq)"""
    return ew.sub(ew.mul(p.rate, ew.sub(ew.log(p.rate), ew.log(q.rate))), ew.sub(p.rate, q.rate))
